"""Training on the real tiny model: no mocks. One uninterrupted run is shared by several tests."""

from __future__ import annotations

import copy
import math
import os
import re
from pathlib import Path

import msgspec
import pytest
import torch
from transformers import TrainerControl, TrainerState

from rc1.config.schema import Config
from rc1.core.errors import BadInput
from rc1.core.fsutil import hash_tree
from rc1.data.task import TaskItem
from rc1.registry.strategies import pairs, with_target_kl
from rc1.train import checkpoints, layout
from rc1.train.device import select_device, select_dtype
from rc1.train.divergence import NonFiniteStep
from rc1.train.engine_trl import TrlEngine, _HookBridge
from rc1.train.engines import build_engine
from rc1.train.metrics import StepMetrics
from rc1.train.model_loading import load_policy
from rc1.train.schedule import schedule
from rc1.train.strategies.adaptive_kl import AdaptiveKL
from rc1.train.tiny_model import build_tiny_qwen3

# rc1's layout (rc1/train/layout.py) plus the trl engine's own trainer_state.json
STAGED_FILES = {
    "adapter_model.safetensors",
    "adapter_config.json",
    "optimizer.pt",
    "scheduler.pt",
    "rng.pt",
    "sampler.json",
    "strategy.pt",
    "trainer_state.json",
}


def make_items() -> list[TaskItem]:
    items = []
    for i in range(12):
        a, b = (i * 7) % 19, (i * 5) % 13
        items.append(
            TaskItem(
                id=f"gsm8k-{i:06d}",
                task="gsm8k",
                question=f"What is {a} + {b}?",
                answer=str(a + b),
                difficulty="easy",
                prompt=f"Question: Tom has {a} apples and buys {b} more. How many apples now? Answer:",
            )
        )
    return items


def digit_reward(
    items: list[TaskItem], completions: list[str], completion_tokens: list[int] | None = None, context=None
) -> list[float]:
    """Deterministic and varied: the gold answer scores 1, otherwise the share of digit characters. (`context`: what
    the engines hand a reward, the batch's token ids and step, unread here.)"""
    return [
        1.0 if item.answer in completion.split() else len(re.findall(r"\d", completion)) / (1 + len(completion))
        for item, completion in zip(items, completions, strict=True)
    ]


def make_config(max_steps: int, save_steps: int, **train) -> Config:
    raw = {
        "profile": "local",
        "run": {"name": "t", "seed": 5},
        "data": {"pool_size": 12, "shadow_size": 2},
        "model": {"name": "builtin:tiny-qwen3", "lora": {"r": 4, "alpha": 8, "dropout": 0.05}},
        "train": {
            "max_steps": max_steps,
            "save_steps": save_steps,
            "learning_rate": 5e-3,
            "per_device_batch_size": 8,
            "num_generations": 4,
            "max_prompt_tokens": 48,
            "max_completion_tokens": 16,
            **train,
        },
    }
    return msgspec.convert(raw, Config)


class Recorder:
    """Hooks that publish each staged checkpoint the way the train stage does."""

    def __init__(self, checkpoints_dir: Path, engine_ref: list, evaluate_at_checkpoint: bool = False):
        self.steps: list[StepMetrics] = []
        self.staged: dict[int, set[str]] = {}
        self.published: dict[int, tuple[Path, dict[str, str]]] = {}
        self._dir = checkpoints_dir
        self._engine_ref = engine_ref
        self._evaluate = evaluate_at_checkpoint

    def on_step(self, metrics: StepMetrics) -> None:
        self.steps.append(metrics)

    def on_checkpoint(self, step: int, staged_dir: Path) -> None:
        self.staged[step] = {p.name for p in staged_dir.iterdir()}
        if self._evaluate:  # must not disturb the run (checked by the resume test)
            self._engine_ref[0].evaluate(make_items()[:3], max_new_tokens=8)
        final = self._dir / f"step_{step:05d}"
        files = checkpoints.publish(staged_dir, final, {"step": step})
        checkpoints.update_latest(self._dir, final)
        self.published[step] = (final, files)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    texts = [item.prompt + " " + item.answer for item in make_items()] * 4
    return build_tiny_qwen3(texts, tmp_path_factory.mktemp("models") / "tiny-qwen3", seed=3)


def make_engine(config: Config, model_dir: Path, root: Path) -> TrlEngine:
    model, tokenizer = load_policy(config.model, config.finetune.method, "cpu", torch.float32, model_dir)
    return build_engine(config, make_items(), digit_reward, model, tokenizer, root / "staging", "cpu")


@pytest.fixture(scope="module")
def full_run(model_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("full")
    engine_ref: list = []
    engine = make_engine(make_config(6, 2), model_dir, root)
    engine_ref.append(engine)
    before = {name: p.detach().clone() for name, p in engine.model.named_parameters()}
    hooks = Recorder(root / "checkpoints", engine_ref, evaluate_at_checkpoint=True)
    engine.train(hooks, resume_from=None)
    after = {name: p.detach().clone() for name, p in engine.model.named_parameters()}
    return {"engine": engine, "hooks": hooks, "before": before, "after": after, "root": root}


def test_lora_weights_moved_and_base_weights_did_not(full_run):
    before, after = full_run["before"], full_run["after"]
    lora = [n for n in before if "lora_" in n]
    base = [n for n in before if "lora_" not in n]
    assert lora and base
    assert any(not torch.equal(before[n], after[n]) for n in lora if "lora_B" in n)
    assert any(not torch.equal(before[n], after[n]) for n in lora if "lora_A" in n)
    for name in base:
        torch.testing.assert_close(after[name], before[name], rtol=0, atol=0, msg=name)
    trainable = {n for n, p in full_run["engine"].model.named_parameters() if p.requires_grad}
    assert trainable == set(lora)


def test_one_finite_step_report_per_optimizer_step(full_run):
    steps = full_run["hooks"].steps
    assert [m.step for m in steps] == [1, 2, 3, 4, 5, 6]
    for m in steps:
        for field in ("loss", "kl", "ratio", "lr", "reward", "reward_std", "mem_used_mb", "sec_per_step"):
            assert math.isfinite(getattr(m, field)), (m.step, field)
        assert m.lr > 0 and m.mem_used_mb > 0 and m.sec_per_step > 0
        assert 0 < m.tokens <= 8 * 16  # 8 completions of at most 16 tokens
    assert any(m.kl > 0 for m in steps[1:])  # the policy moved away from the reference


def test_staged_checkpoints_are_complete_and_published(full_run):
    hooks = full_run["hooks"]
    assert sorted(hooks.staged) == [2, 4, 6]
    for step, names in hooks.staged.items():
        assert STAGED_FILES <= names, (step, STAGED_FILES - names)
        final, files = hooks.published[step]
        assert checkpoints.verify(final, files) == []
        assert files[checkpoints.META_NAME]
    latest = full_run["root"] / "checkpoints" / "latest"
    assert latest.is_symlink() and os.readlink(latest) == "step_00006"
    assert not list((full_run["root"] / "staging").glob("checkpoint-*"))  # all renamed away


def test_resume_from_step_4_is_exact(full_run, model_dir, tmp_path):
    published_4, _files = full_run["hooks"].published[4]
    engine = make_engine(make_config(6, 2), model_dir, tmp_path)
    hooks = Recorder(tmp_path / "checkpoints", [engine])
    engine.train(hooks, resume_from=published_4)
    resumed = {m.step: m for m in hooks.steps}
    assert sorted(resumed) == [5, 6]
    for original in full_run["hooks"].steps[4:]:
        again = resumed[original.step]
        for field in ("loss", "kl", "ratio", "lr", "reward", "reward_std"):
            torch.testing.assert_close(
                getattr(again, field), getattr(original, field), msg=f"step {original.step} {field}"
            )
        assert again.tokens == original.tokens
    assert sorted(hooks.staged) == [6]


def test_evaluate_is_greedy_and_leaves_rng_alone(full_run):
    engine = full_run["engine"]
    items = make_items()[:5]
    torch_state, training = torch.random.get_rng_state(), engine.model.training
    first = engine.evaluate(items, max_new_tokens=8)
    assert torch.equal(torch.random.get_rng_state(), torch_state)
    assert engine.model.training == training
    second = engine.evaluate(items, max_new_tokens=8)
    assert first.completions == second.completions and len(first.completions) == 5
    assert first.item_ids == [item.id for item in items]
    assert all(0 < n <= 8 for n in first.completion_tokens) and len(first.completion_tokens) == 5


def test_last_step_is_saved_when_not_a_multiple_of_save_steps(model_dir, tmp_path):
    engine = make_engine(make_config(3, 2), model_dir, tmp_path)
    hooks = Recorder(tmp_path / "checkpoints", [engine])
    engine.train(hooks, resume_from=None)
    assert [m.step for m in hooks.steps] == [1, 2, 3]
    assert sorted(hooks.staged) == [2, 3]


def test_a_diverged_policy_is_a_non_finite_step_before_its_checkpoint(model_dir, tmp_path):
    engine = make_engine(make_config(4, 2), model_dir, tmp_path)

    class Poison(Recorder):
        def on_step(self, metrics):
            super().on_step(metrics)
            with torch.no_grad():  # a real divergence, forced: every LoRA weight becomes NaN
                for name, param in engine.model.named_parameters():
                    if "lora_" in name:
                        param.fill_(float("nan"))

    hooks = Poison(tmp_path / "checkpoints", [engine])
    with pytest.raises(NonFiniteStep, match="step 2: sampling met non-finite probabilities") as caught:
        engine.train(hooks, resume_from=None)
    assert caught.value.step == 2 and math.isnan(caught.value.measured["sampling_probabilities"])
    assert [m.step for m in hooks.steps] == [1]
    assert hooks.staged == {}  # the diverged step was never checkpointed


def test_non_finite_loss_or_weights_stop_the_step_report(tmp_path):
    bridge = _HookBridge(tmp_path, "cpu", 8, AdaptiveKL(0.04, None), lambda beta: None, lambda step: {})
    reported: list = []
    bridge.hooks = Recorder(tmp_path, [])
    bridge.hooks.on_step = reported.append
    state, control = TrainerState(global_step=3, max_steps=10), TrainerControl()
    logs = {
        "loss": 0.5,
        "learning_rate": 1e-3,
        "kl": 0.01,
        "clip_ratio/region_mean": 0.0,
        "reward": 0.2,
        "reward_std": 0.1,
        "completions/mean_length": 12.5,
    }
    bridge.on_log(None, state, control, logs=dict(logs))
    assert [(m.step, m.tokens) for m in reported] == [(3, 100)]
    bridge.on_log(None, state, control, logs={"train_loss": 0.5, "train_runtime": 1.0})  # end-of-run summary
    assert len(reported) == 1
    state.global_step = 4
    with pytest.raises(NonFiniteStep, match="step 4: loss is nan") as caught:
        bridge.on_log(None, state, control, logs={**logs, "loss": float("nan")})
    assert math.isnan(caught.value.measured["loss"])
    layer = torch.nn.Linear(2, 2)
    with torch.no_grad():
        layer.weight[0, 0] = float("inf")
    with pytest.raises(NonFiniteStep, match="step 4: trainable weight weight is not finite") as caught:
        bridge.on_step_end(None, state, control, model=layer)
    assert math.isinf(caught.value.measured["weight_norm"])
    assert len(reported) == 1


def test_schedule_is_seeded_passes_over_all_items():
    order = schedule(5, 12, seed=1)
    assert len(order) == 12 and sorted(order[:5]) == [0, 1, 2, 3, 4] and sorted(order[5:10]) == [0, 1, 2, 3, 4]
    assert order == schedule(5, 12, seed=1) and order != schedule(5, 12, seed=2)
    assert schedule(5, 7, seed=1) == order[:7]


def test_tiny_model_build_is_deterministic_and_cached(tmp_path):
    texts = [item.prompt for item in make_items()] * 3
    first = build_tiny_qwen3(texts, tmp_path / "a" / "m", seed=9)
    second = build_tiny_qwen3(texts, tmp_path / "b" / "m", seed=9)
    assert hash_tree(first) == hash_tree(second)
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= set(hash_tree(first))
    mtime = (first / "model.safetensors").stat().st_mtime_ns
    assert build_tiny_qwen3(texts, first, seed=9) == first
    assert (first / "model.safetensors").stat().st_mtime_ns == mtime  # reused, not rebuilt
    other = build_tiny_qwen3(texts, tmp_path / "c" / "m", seed=10)
    assert hash_tree(other)["model.safetensors"] != hash_tree(first)["model.safetensors"]
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["m"]  # no temp dirs left behind


def test_device_and_dtype_selection():
    device = select_device()
    assert device in {"cuda", "mps", "cpu"}
    assert select_dtype("cpu", "auto") == torch.float32
    assert select_dtype("cpu", "fp32") == torch.float32
    assert select_dtype("mps", "auto") == torch.float16
    with pytest.raises(BadInput, match=r"model\.dtype: fp16 is not supported on CPU; use fp32 or auto"):
        select_dtype("cpu", "fp16")
    with pytest.raises(BadInput, match=r"model\.dtype: bf16 is not supported on CPU"):
        select_dtype("cpu", "bf16")


def test_qlora_off_cuda_is_bad_input(model_dir):
    with pytest.raises(BadInput, match="qlora needs a CUDA GPU"):
        load_policy(make_config(1, 1).model, "qlora", "cpu", torch.float32, model_dir)


def test_publish_verify_latest_and_best(tmp_path):
    ckpts = tmp_path / "checkpoints"
    staged = tmp_path / "staging" / "checkpoint-2"
    (staged / "sub").mkdir(parents=True)
    (staged / "adapter.bin").write_bytes(b"\x00\x01\x02weights")
    (staged / "sub" / "state.json").write_text("{}")
    final = ckpts / "step_00002"
    final.mkdir(parents=True)
    (final / "stale").write_text("orphan from a crash before its event")

    files = checkpoints.publish(staged, final, {"step": 2, "config_sha256": "abc"})
    assert not staged.exists() and not (final / "stale").exists()
    assert set(files) == {"adapter.bin", "sub/state.json", "rc1_meta.json"}
    assert not [p for p in ckpts.iterdir() if "orphan" in p.name]
    assert checkpoints.verify(final, files) == []

    (final / "extra.txt").write_text("extra files are fine")
    assert checkpoints.verify(final, files) == []
    data = bytearray((final / "adapter.bin").read_bytes())
    data[3] ^= 0x01
    (final / "adapter.bin").write_bytes(bytes(data))
    (final / "sub" / "state.json").unlink()
    problems = checkpoints.verify(final, files)
    assert len(problems) == 2
    assert "adapter.bin: sha256 mismatch" in problems[0] and "state.json: missing" in problems[1]
    assert checkpoints.verify(tmp_path / "nowhere", files) == [
        f"{tmp_path / 'nowhere'}: checkpoint directory is missing"
    ]

    checkpoints.update_latest(ckpts, final)
    assert os.readlink(ckpts / "latest") == "step_00002"
    later = ckpts / "step_00004"
    later.mkdir()
    checkpoints.update_latest(ckpts, later)
    assert os.readlink(ckpts / "latest") == "step_00004"
    assert (ckpts / "latest").resolve() == later.resolve()

    checkpoints.promote_best(final, ckpts / "best")
    assert hash_tree(ckpts / "best") == hash_tree(final)
    checkpoints.promote_best(later, ckpts / "best")
    assert hash_tree(ckpts / "best") == {}
    assert sorted(p.name for p in ckpts.iterdir()) == ["best", "latest", "step_00002", "step_00004"]


# --- the torch engine: every strategy, resumed exactly ----------------------------------------------------


def torch_config(strategy: str, max_steps: int, save_steps: int, engine: str = "torch", **train) -> Config:
    rl = {"update_epochs": 2 if engine == "torch" else 1, "target_kl": 0.03} if strategy in with_target_kl() else {}
    if (engine, strategy) == ("trl", "dpo"):
        rl = {"num_generations": 2}  # OnlineDPOTrainer samples two replies per prompt
    config = make_config(max_steps, save_steps, **{**rl, **train})
    return msgspec.structs.replace(
        config, engine=msgspec.structs.replace(config.engine, name=engine, strategy=strategy)
    )


def make_torch_engine(config: Config, model_dir: Path, root: Path):
    model, tokenizer = load_policy(config.model, config.finetune.method, "cpu", torch.float32, model_dir)
    return build_engine(config, make_items(), digit_reward, model, tokenizer, root / "staging", "cpu")


class Interrupted(Exception):
    pass


class StopAtFirstCheckpoint(Recorder):
    """Publishes the first checkpoint, then stops the run as a crash would."""

    def on_checkpoint(self, step, staged_dir):
        super().on_checkpoint(step, staged_dir)
        raise Interrupted


def step_record(m: StepMetrics) -> tuple:
    return (m.step, m.loss, m.kl, m.ratio, m.lr, m.reward, m.reward_std, m.tokens, m.epochs, m.kl_coef)


def interrupted_then_resumed(build, tmp_path: Path) -> tuple[Recorder, Recorder]:
    """An engine from `build(root)` stopped at its first checkpoint, and a new one resumed from that checkpoint."""
    first = StopAtFirstCheckpoint(tmp_path / "part", [])
    with pytest.raises(Interrupted):
        build(tmp_path / "b").train(first, resume_from=None)
    second = Recorder(tmp_path / "part", [])
    build(tmp_path / "c").train(second, resume_from=first.published[min(first.published)][0])
    return first, second


def assert_resumed_exactly(first: Recorder, second: Recorder, whole: Recorder) -> None:
    """The same steps as the uninterrupted run, and every file of the final checkpoint bit for bit (the trl
    trainer's own state logs wall-clock times)."""
    assert [step_record(m) for m in first.steps + second.steps] == [step_record(m) for m in whole.steps]
    timed = {"trainer_state.json"}
    last = max(whole.published)
    assert {k: v for k, v in second.published[last][1].items() if k not in timed} == {
        k: v for k, v in whole.published[last][1].items() if k not in timed
    }


@pytest.mark.parametrize("engine_name, strategy", pairs())
def test_every_pair_resumes_exactly(engine_name, strategy, model_dir, tmp_path):
    config = torch_config(strategy, max_steps=4, save_steps=2, engine=engine_name)
    whole = Recorder(tmp_path / "whole", [])
    engine = make_torch_engine(config, model_dir, tmp_path / "a")
    whole._engine_ref.append(engine)
    whole._evaluate = True  # evaluating at checkpoints must not change the run
    engine.train(whole, resume_from=None)

    first, second = interrupted_then_resumed(lambda root: make_torch_engine(config, model_dir, root), tmp_path)
    assert_resumed_exactly(first, second, whole)
    assert [m.step for m in second.steps] == [3, 4]
    assert set(whole.staged[2]) >= set(layout.required("lora"))  # rc1's layout, whichever engine wrote it
    # The step report is real: finite, and the ratio an importance ratio (exactly 1 where the trl engine
    # updates once on the weights that sampled), never a constant 0.
    assert all(math.isfinite(m.loss) and m.tokens > 0 for m in whole.steps)
    assert all(m.ratio > 0 for m in whole.steps)
    assert any(m.ratio != 1.0 for m in whole.steps) or engine_name == "trl"


def test_ppo_stops_its_update_passes_at_target_kl(model_dir, tmp_path):
    def epochs(target_kl):
        hooks = Recorder(tmp_path / f"ck-{target_kl}", [])
        make_torch_engine(
            torch_config("ppo", 2, 2, update_epochs=4, target_kl=target_kl), model_dir, tmp_path / f"e-{target_kl}"
        ).train(hooks, resume_from=None)
        return [m.epochs for m in hooks.steps]

    assert epochs(None) == [4, 4]
    assert epochs(1e-9) == [1, 1]  # any update leaves a 1e-9 trust region at once


def test_grpo_adapts_beta_to_target_kl_in_both_engines(model_dir, tmp_path):
    target = 1e-4
    for name, build in (("torch", make_torch_engine), ("trl", make_engine)):
        config = torch_config("grpo", 4, 4, target_kl=target, update_epochs=1)
        if name == "trl":
            config = msgspec.structs.replace(config, engine=msgspec.structs.replace(config.engine, name="trl"))
        hooks = Recorder(tmp_path / f"ck-{name}", [])
        build(config, model_dir, tmp_path / name).train(hooks, resume_from=None)
        steps = hooks.steps
        assert steps[0].kl_coef == config.train.beta, name
        for now, after in zip(steps, steps[1:]):  # Schulman et al.'s rule, applied to the KL each step measured
            factor = 2.0 if now.kl > 1.5 * target else 0.5 if now.kl < target / 1.5 else 1.0
            assert after.kl_coef == pytest.approx(now.kl_coef * factor), (name, [(m.kl, m.kl_coef) for m in steps])
        assert len({m.kl_coef for m in steps}) > 1, name  # it acted


@pytest.mark.parametrize("strategy", ["grpo", "ppo", "dpo", "sft"])
def test_micro_batches_bound_memory_and_leave_the_step_unchanged(strategy, model_dir, tmp_path):
    def run(per_device, accumulation):
        hooks = Recorder(tmp_path / f"ck-{per_device}", [])
        config = torch_config(
            strategy, 2, 2, per_device_batch_size=per_device, gradient_accumulation_steps=accumulation
        )
        # without dropout: its masks are drawn per forward pass, so they differ with the split by design
        lora = msgspec.structs.replace(config.model.lora, dropout=0.0)
        config = msgspec.structs.replace(config, model=msgspec.structs.replace(config.model, lora=lora))
        make_torch_engine(config, model_dir, tmp_path / f"e-{per_device}").train(hooks, resume_from=None)
        return torch.tensor([[m.loss, m.kl, m.ratio, m.reward, m.tokens] for m in hooks.steps], dtype=torch.float64)

    torch.testing.assert_close(run(4, 2), run(8, 1), rtol=1e-4, atol=1e-5)


# --- finetune.method full: the whole model trained by the trl engine, no adapter ---------------------------


def full_config(max_steps: int, save_steps: int) -> Config:
    config = torch_config("grpo", max_steps, save_steps, engine="trl")
    return msgspec.structs.replace(config, finetune=msgspec.structs.replace(config.finetune, method="full"))


@pytest.fixture(scope="module")
def full_weights_run(model_dir, tmp_path_factory):
    """trl×grpo with finetune.method full, 4 steps, checkpoints at 2 and 4, uninterrupted."""
    root = tmp_path_factory.mktemp("full-weights")
    engine = make_engine(full_config(4, 2), model_dir, root)
    before = {name: p.detach().clone() for name, p in engine.model.named_parameters()}
    hooks = Recorder(root / "checkpoints", [engine], evaluate_at_checkpoint=True)
    engine.train(hooks, resume_from=None)
    return {"engine": engine, "hooks": hooks, "before": before}


def test_full_fine_tuning_moves_every_weight_and_checkpoints_the_model_not_an_adapter(full_weights_run):
    engine, hooks, before = full_weights_run["engine"], full_weights_run["hooks"], full_weights_run["before"]
    params = dict(engine.model.named_parameters())
    assert not any("lora_" in name for name in params)
    assert {n for n, p in params.items() if p.requires_grad} == set(before)  # every weight is trained
    assert [n for n, p in params.items() if torch.equal(p.detach(), before[n])] == []  # and every one moved
    assert any(m.kl > 0 for m in hooks.steps[1:])  # against a reference: TRL's frozen copy of the start
    for step in (2, 4):
        final, _files = hooks.published[step]
        names = hooks.staged[step]
        assert {layout.FULL_WEIGHTS, layout.MODEL_CONFIG, "generation_config.json"} <= names
        assert not {layout.ADAPTER, layout.ADAPTER_CONFIG} & names
        assert layout.missing(final, "full") == []
        assert layout.missing(final, "lora") == [layout.ADAPTER, layout.ADAPTER_CONFIG]


def test_full_fine_tuning_resumes_exactly(full_weights_run, model_dir, tmp_path):
    whole = full_weights_run["hooks"]
    config = full_config(4, 2)
    first, second = interrupted_then_resumed(lambda root: make_engine(config, model_dir, root), tmp_path)
    assert_resumed_exactly(first, second, whole)
    assert [m.step for m in second.steps] == [3, 4]
    assert layout.FULL_WEIGHTS in second.published[4][1]


def _logits(model, tokenizer) -> torch.Tensor:
    was_training = model.training
    model.eval()  # dropout off: the same weights give the same logits
    try:
        with torch.no_grad():
            return model(**tokenizer(make_items()[0].prompt, return_tensors="pt")).logits
    finally:
        model.train(was_training)


@pytest.mark.parametrize("method", ["full", "lora"])
def test_policy_at_a_checkpoint_is_the_trained_policy(method, full_weights_run, full_run, model_dir):
    from rc1.train.checkpoint_policy import policy_at

    run = full_weights_run if method == "full" else full_run
    final, _files = run["hooks"].published[max(run["hooks"].published)]
    base, tokenizer = load_policy(make_config(1, 1).model, method, "cpu", torch.float32, model_dir)
    untrained = _logits(base, tokenizer)
    policy = policy_at(base, final, method)
    torch.testing.assert_close(_logits(policy, tokenizer), _logits(run["engine"].model, tokenizer), rtol=0, atol=0)
    assert not torch.equal(_logits(policy, tokenizer), untrained)
    other = {"full": "lora", "lora": "full"}[method]
    with pytest.raises(BadInput, match=f"holds no weights of a finetune.method {other} run"):
        policy_at(load_policy(make_config(1, 1).model, other, "cpu", torch.float32, model_dir)[0], final, other)


def test_policy_at_refuses_full_weights_of_another_model(model_dir, tmp_path):
    from safetensors.torch import save_file

    from rc1.train.checkpoint_policy import policy_at

    (tmp_path / layout.MODEL_CONFIG).write_text("{}")
    base, _tokenizer = load_policy(make_config(1, 1).model, "full", "cpu", torch.float32, model_dir)
    save_file({"model.embed_tokens.weight": torch.zeros(3, 3)}, tmp_path / layout.FULL_WEIGHTS)
    with pytest.raises(
        BadInput,
        match=r"model\.safetensors: not the weights of this model \(other shapes: "
        r"model\.embed_tokens\.weight\); evaluate it with the model\.name",
    ):
        policy_at(base, tmp_path, "full")
    save_file({"model.norm.weight": torch.zeros(64), "other.weight": torch.zeros(1)}, tmp_path / layout.FULL_WEIGHTS)
    with pytest.raises(
        BadInput,
        match=r"not the weights of this model \(missing lm_head\.weight, .* and 19 more; "
        r"unexpected other\.weight\)",
    ):
        policy_at(base, tmp_path, "full")


def test_full_fine_tuning_in_fp16_is_refused(model_dir, tmp_path):
    config = full_config(1, 1)
    model, tokenizer = load_policy(config.model, "full", "cpu", torch.float16, model_dir)
    with pytest.raises(BadInput, match=r"model\.dtype: finetune\.method full trains every weight, and fp16 weights"):
        build_engine(config, make_items(), digit_reward, model, tokenizer, tmp_path / "staging", "cpu")


# --- priority sampling: the sampler's state resumes the same batches ---------------------------------------


@pytest.mark.parametrize("engine_name", ["trl", "torch"])
def test_priority_sampling_resumes_the_same_batches_from_the_sampler_state_in_the_checkpoint(
    engine_name, model_dir, tmp_path
):
    import json

    from rc1.config.schema import PrioritySamplingConfig
    from rc1.train.sampler import PrioritySampler

    config = torch_config("grpo", max_steps=6, save_steps=3, engine=engine_name)
    policy = PrioritySamplingConfig(
        by_difficulty={"easy": 0.2, "medium": 0.3, "hard": 0.5},
        low_perf_cap=0.5,
        seed_ratio_schedule=[(0, 1.0), (4, 0.5)],
    )
    items = [msgspec.structs.replace(item, difficulty=DIFFICULTY_CYCLE[i % 3]) for i, item in enumerate(make_items())]

    def fresh(step, count, difficulties):
        return [
            TaskItem(
                id=f"fresh-{step}-{k}",
                task="gsm8k",
                question=f"What is {step} + {k}?",
                answer=str(step + k),
                difficulty=d,
                prompt=f"Question: Ann has {step} pens and finds {k} more. How many pens? Answer:",
            )
            for k, d in enumerate(difficulties)
        ]

    def run(root, hooks, resume_from=None):
        made = []

        def make_sampler(per_step):
            made.append(PrioritySampler(items, per_step, config.run.seed, policy, fresh))
            return made[-1]

        model, tokenizer = load_policy(config.model, "lora", "cpu", torch.float32, model_dir)
        engine = build_engine(config, items, digit_reward, model, tokenizer, root / "staging", "cpu", make_sampler)
        try:
            engine.train(hooks, resume_from=resume_from)
        finally:
            hooks.batches = {m.step: [i.id for i in made[0].batch(m.step)] for m in hooks.steps}
            hooks.mixes = {m.step: made[0].mix(m.step) for m in hooks.steps}

    whole = Recorder(tmp_path / "whole", [])
    run(tmp_path / "a", whole)

    first = StopAtFirstCheckpoint(tmp_path / "part", [])
    with pytest.raises(Interrupted):
        run(tmp_path / "b", first)
    second = Recorder(tmp_path / "part", [])
    run(tmp_path / "c", second, resume_from=first.published[3][0])

    assert [step_record(m) for m in first.steps + second.steps] == [step_record(m) for m in whole.steps]
    assert {**first.batches, **second.batches} == whole.batches  # the same prompts, step by step
    assert [whole.mixes[s].seed_share for s in range(1, 7)] == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5]
    assert any(whole.mixes[s].low_perf for s in range(3, 7))  # digit_reward fails most items: they come back
    state = json.loads((first.published[3][0] / layout.SAMPLER).read_text())
    assert state["kind"] == "priority" and state["next_step"] == 4 and state["seen"]


DIFFICULTY_CYCLE = ("easy", "medium", "hard")


@pytest.mark.parametrize("engine_name", ["trl", "torch"])
def test_gradient_checkpointing_comes_from_config_and_switches_the_kv_cache_off(engine_name, model_dir, tmp_path):
    config = torch_config("grpo", max_steps=1, save_steps=1, engine=engine_name, gradient_checkpointing=True)
    engine = make_torch_engine(config, model_dir, tmp_path)
    hooks = Recorder(tmp_path / "ck", [])
    engine.train(hooks, resume_from=None)
    assert engine.model.config.use_cache is False
    assert engine.model.base_model.model.is_gradient_checkpointing
    assert [m.step for m in hooks.steps] == [1] and math.isfinite(hooks.steps[0].loss)


def test_rollouts_are_sampled_by_vllm_only_for_trl_grpo_and_rloo_on_cuda_with_vllm_installed():
    from rc1.train.launch import generation_backend

    assert generation_backend("trl", "grpo", "cpu") == "hf"
    assert generation_backend("torch", "grpo", "cuda") == "hf"
    assert generation_backend("trl", "dpo", "cuda") == "hf"
    import importlib.util

    expected = "vllm" if importlib.util.find_spec("vllm") else "hf"
    assert generation_backend("trl", "grpo", "cuda") == expected
    assert generation_backend("trl", "rloo", "cuda") == expected
    assert generation_backend("trl", "grpo", "cuda", "transformers") == "hf"


@pytest.mark.parametrize(
    "engine, strategy, device, why",
    [
        ("trl", "dpo", "cuda", "only the trl engine's grpo, rloo trainers"),
        ("torch", "grpo", "cuda", "only the trl engine's grpo, rloo trainers"),
        ("trl", "grpo", "cpu", "needs CUDA GPUs (this run trains on cpu)"),
    ],
)
@pytest.mark.parametrize("choice", ["vllm", "vllm_server"])
def test_vllm_asked_for_where_it_cannot_sample_is_refused_by_name(engine, strategy, device, why, choice):
    from rc1.train.launch import generation_backend

    with pytest.raises(BadInput, match=rf"train.rollouts: {choice} .*{re.escape(why)}"):
        generation_backend(engine, strategy, device, choice)


def test_the_server_mode_is_trls_own_vllm_server_at_the_configured_url(tmp_path):
    """What TRL's GRPOConfig is given for `rollouts: vllm_server`: on this CPU the choice itself is exit 2, so the
    arguments are built for the backend it would pick on a GPU with vllm installed."""
    from rc1.train.engine_trl import trl_args

    config = torch_config("grpo", 2, 2, engine="trl")
    config = msgspec.structs.replace(
        config,
        train=msgspec.structs.replace(config.train, rollouts="vllm_server", vllm_server_url="http://10.0.0.7:8000"),
    )
    with pytest.raises(BadInput, match="train.rollouts: vllm_server needs CUDA GPUs"):
        trl_args(config, tmp_path, "cpu", torch.float32)
    args = trl_args(config, tmp_path, "cpu", torch.float32, backend="vllm_server")
    assert (args.use_vllm, args.vllm_mode, args.vllm_server_base_url) == (True, "server", "http://10.0.0.7:8000")


def test_full_fine_tuning_with_sft_moves_every_weight_and_measures_its_drift_from_a_frozen_start(model_dir, tmp_path):
    config = full_config(2, 2)
    config = msgspec.structs.replace(
        config,
        engine=msgspec.structs.replace(config.engine, strategy="sft"),
        train=msgspec.structs.replace(config.train, target_kl=None),
    )
    engine = make_engine(config, model_dir, tmp_path)
    before = {name: p.detach().clone() for name, p in engine.model.named_parameters()}
    hooks = Recorder(tmp_path / "checkpoints", [engine])
    engine.train(hooks, resume_from=None)
    assert [n for n, p in engine.model.named_parameters() if torch.equal(p.detach(), before[n])] == []
    assert hooks.steps[0].kl == 0 and hooks.steps[1].kl > 0  # the probe's reference stayed where training began


def load_in_4bit(model_dir: Path):
    """The tiny model's base in 4 bits (NF4, double quantization, bf16 compute), as rc1 loads a QLoRA base on CUDA
    (rc1/train/model_loading.py), here on the CPU (bitsandbytes 0.50 quantizes there). bitsandbytes repacks a CPU
    Linear4bit's weights into another layout at its first no-grad forward in eval mode on CPUs with AVX512-BF16,
    after which its gradients stop: switched off, as nothing of this test is about that CPU kernel."""
    import bitsandbytes as bnb
    from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig

    quantization = BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.bfloat16,
    )
    model = AutoModelForCausalLM.from_pretrained(
        model_dir, dtype=torch.bfloat16, quantization_config=quantization, device_map={"": "cpu"}
    )
    for module in model.modules():
        if isinstance(module, bnb.nn.Linear4bit):
            module.support_avx512bf16_for_cpu = False
    return model, AutoTokenizer.from_pretrained(model_dir, padding_side="left", truncation_side="left")


def test_a_qlora_adapter_trains_in_fp32_over_its_4bit_base(model_dir, tmp_path):
    """TRL 1.16 casts the adapter of a 4-bit model to bf16, where AdamW at 1e-5 rounds most updates away
    (tests/unit/test_adapter_precision.py); the engine puts it back in fp32 before the optimizer is built."""
    config = make_config(2, 2, learning_rate=1e-5)
    config = msgspec.structs.replace(config, finetune=msgspec.structs.replace(config.finetune, method="qlora"))
    model, tokenizer = load_in_4bit(model_dir)
    assert model.is_loaded_in_4bit
    engine = build_engine(config, make_items(), digit_reward, model, tokenizer, tmp_path / "staging", "cpu")
    trainable = {name: p for name, p in engine.model.named_parameters() if p.requires_grad}
    assert trainable and {p.dtype for p in trainable.values()} == {torch.float32}
    before = {name: p.detach().clone() for name, p in trainable.items()}
    engine.train(Recorder(tmp_path / "checkpoints", [engine]), resume_from=None)
    moved = {name: float((p.detach() != before[name]).float().mean()) for name, p in trainable.items()}
    # lora_B starts at 0, so lora_A has a gradient from the second step; at 1e-5 bf16 would round most of its moves away
    assert all(share > 0.9 for share in moved.values()), moved
    assert {p.dtype for p in trainable.values()} == {torch.float32}


@pytest.mark.parametrize("engine_name", ["trl", "torch"])
def test_a_closed_engine_is_freed_as_soon_as_it_is_let_go_of(engine_name, model_dir, tmp_path):
    """The trainer holds the engine (its reward function, its callback) and the engine the trainer: a cycle only the
    cyclic collector would break, keeping a line's model and optimizer (on CUDA, its memory) until it runs. A closed
    engine is freed by reference counting alone, before `train --all` loads the next line."""
    import gc
    import weakref

    engine = make_torch_engine(torch_config("grpo", 1, 1, engine=engine_name), model_dir, tmp_path)
    engine.train(Recorder(tmp_path / "checkpoints", []), resume_from=None)
    policy, trainer = weakref.ref(engine.model), weakref.ref(engine.trainer if engine_name == "trl" else engine)
    gc.disable()
    try:
        engine.close()
        del engine
        assert policy() is None and trainer() is None
    finally:
        gc.enable()


def test_sampling_with_a_top_k_of_one_is_the_greedy_reply(full_run):
    """The configured cut reaches generation: top_k 1 leaves the argmax, whatever the temperature and seed."""
    from rc1.train.metrics import Sampling

    engine, items = full_run["engine"], make_items()[:4]
    greedy = engine.evaluate(items, max_new_tokens=8)
    sampled = engine.evaluate(items, 8, Sampling(samples=2, temperature=1.3, seed=7, top_k=1))
    assert sampled.completions == [text for text in greedy.completions for _ in range(2)]
    assert len(sampled.ended) == 8 and sampled.mem_peak_mb > 0
    wide = engine.evaluate(items, 8, Sampling(samples=2, temperature=1.3, seed=7))
    assert wide.completions != sampled.completions


def test_a_top_p_of_one_in_a_million_is_the_greedy_reply_in_evaluations_and_torch_rollouts(full_run):
    """The configured top-p reaches both of rc1's own samplers, as rc1/train/nucleus.py's cut: at 1e-6 only the argmax
    is left, whatever the temperature and seed."""
    from rc1.train.metrics import Sampling
    from rc1.train.policy_math import sample_rollout

    engine, items = full_run["engine"], make_items()[:4]
    greedy = engine.evaluate(items, max_new_tokens=8)
    sampled = engine.evaluate(items, 8, Sampling(samples=2, temperature=1.3, seed=7, top_p=1e-6))
    assert sampled.completions == [text for text in greedy.completions for _ in range(2)]

    def rollout(top_p: float) -> list[str]:
        torch.manual_seed(3)
        prompts = engine.prompts_for(items)
        kept = dict(per_prompt=2, max_new_tokens=8, temperature=1.3, eos_ids=engine.eos_ids, device="cpu")
        return sample_rollout(engine.model, engine.tokenizer, items, prompts, top_p=top_p, **kept).texts

    cut, uncut = rollout(1e-6), rollout(1.0)
    assert cut[::2] == cut[1::2] and cut != uncut  # each prompt's two replies the same argmax path; the cut acted


def test_the_trl_trainer_samples_with_rc1_s_cut_draw_for_draw_as_transformers_top_p(model_dir, tmp_path):
    """TRL's trainer is given top_p 1.0 and its model's generate gets rc1's cut, for calls carrying the trainer's own
    generation config: the draws equal those of transformers' top-p at the configured value, and any other call on
    the model (rc1's evaluations bring their own cut) is not cut again."""
    config = torch_config("grpo", max_steps=1, save_steps=1, engine="trl", temperature=0.7, top_k=8, top_p=0.8)
    engine = make_torch_engine(config, model_dir, tmp_path)
    trainer = engine.trainer
    assert trainer.args.top_p == 1.0 and trainer.generation_config.top_p == 1.0
    trainer.model.eval()
    prompts = engine.tokenizer(
        [item.prompt for item in make_items()[:4]], return_tensors="pt", padding=True, padding_side="left"
    )

    def draws(generation_config) -> torch.Tensor:
        torch.manual_seed(5)
        with torch.no_grad():
            return trainer.model.generate(**prompts, generation_config=generation_config)

    transformers_cut = copy.deepcopy(trainer.generation_config)
    transformers_cut.top_p = 0.8
    another = copy.deepcopy(trainer.generation_config)  # top_p 1.0, not the trainer's: no cut
    assert torch.equal(draws(trainer.generation_config), draws(transformers_cut))
    assert not torch.equal(draws(another), draws(transformers_cut))
