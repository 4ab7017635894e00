"""A sequence-classification reward model as a reward component (rc1/scoring/reward_models.py), on a tiny one built
offline (tests/reward_model_builder.py): its scores are TRL's own for the same model, the same alone as in a padded
batch, the same across loads and builds; its fingerprint follows its weights and config, never the network."""

from __future__ import annotations

import shutil
import socket

import pytest
import torch
from reward_model_builder import build_tiny_reward_model

from rc1.core.errors import BadInput
from rc1.core.model_files import weights_sha256
from rc1.scoring.reward_models import RewardModel

SYSTEM = {"role": "system", "content": "Be brief. End with a line 'Answer: ...'."}
PROMPTS = [
    [SYSTEM, {"role": "user", "content": "What is 17 plus 25?"}],
    [{"role": "user", "content": "Is the sky green?"}],
    [SYSTEM, {"role": "user", "content": "Which river flows through Paris?"}],
    [{"role": "user", "content": "What is 17 plus 25?"}],
    [SYSTEM, {"role": "user", "content": "Is the sky green?"}],
]
COMPLETIONS = [
    "17 + 25 = 42.\nAnswer: 42",
    "No: on a clear day the sky is blue, and green only in rare light at sunset. Answer: no",
    "Answer: the Seine",
    "Answer: 41",
    "yes",
]
TEXT_PROMPTS = ["Q: What is 17 plus 25?\nA: ", "Q: Is the sky green?\nA: ", "Q: Which river?\nA: "] * 2
TEXT_COMPLETIONS = [*COMPLETIONS, "The Seine, which flows through Paris."]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_tiny_reward_model(tmp_path_factory.mktemp("reward-model") / "tiny-rm", seed=0)


@pytest.fixture(scope="module")
def reward_model(model_dir):
    return RewardModel.load(str(model_dir), "cpu")


def test_a_score_is_the_same_alone_as_in_a_padded_batch(reward_model, model_dir):
    texts = reward_model.texts(PROMPTS, COMPLETIONS)
    lengths = [len(ids) for ids in reward_model._tokenizer(text=texts, add_special_tokens=False)["input_ids"]]
    assert len(set(lengths)) == len(lengths), f"the texts must differ in length, so a batch pads: {lengths}"
    alone = reward_model.score(PROMPTS, COMPLETIONS, batch_size=1)
    _assert_close(reward_model.score(PROMPTS, COMPLETIONS, batch_size=len(PROMPTS)), alone)
    _assert_close(reward_model.score(PROMPTS, COMPLETIONS, batch_size=2), alone)
    assert len({round(s, 3) for s in alone}) == len(alone), f"different completions, different scores: {alone}"
    # The control: pooling finds the last token by pad_token_id; pointed at another token, it reads the padding.
    misled = RewardModel.load(str(model_dir), "cpu")
    misled._model.config.pad_token_id = misled._tokenizer.convert_tokens_to_ids("<|im_end|>")
    padded = misled.score(PROMPTS, COMPLETIONS, batch_size=len(PROMPTS))
    longest = lengths.index(max(lengths))
    assert padded[longest] == pytest.approx(alone[longest], abs=1e-5)  # the longest row has no padding
    assert all(abs(p - a) > 1e-3 for i, (p, a) in enumerate(zip(padded, alone)) if i != longest), (padded, alone)


@pytest.mark.parametrize("bf16", [False, True], ids=["fp32", "bf16-autocast"])
def test_scores_are_trls_own(model_dir, tmp_path_factory, bf16):
    """GRPOTrainer loads the same directory given in `reward_funcs` and scores through its own `_calculate_rewards`:
    for chat prompts and text prompts, under the policy's precision, the numbers are the same to the bit."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer
    from trl.data_utils import apply_chat_template

    from rc1.train.tiny_model import build_tiny_qwen3

    policy = build_tiny_qwen3(TEXT_COMPLETIONS * 4, tmp_path_factory.mktemp("policy") / "tiny", seed=3)
    args = GRPOConfig(
        output_dir=str(tmp_path_factory.mktemp("trl")),
        report_to=[],
        use_cpu=True,
        bf16=bf16,
        per_device_train_batch_size=len(PROMPTS),
        num_generations=len(PROMPTS),
        max_completion_length=8,
    )
    trainer = GRPOTrainer(
        model=str(policy), reward_funcs=str(model_dir), args=args, train_dataset=Dataset.from_dict({"prompt": PROMPTS})
    )
    ours = RewardModel.load(str(model_dir), "cpu", torch.bfloat16 if bf16 else torch.float32)
    tokenizer = trainer.reward_processing_classes[0]
    trl_texts = [
        apply_chat_template({"messages": p + [{"role": "assistant", "content": c}]}, tokenizer)["text"]
        for p, c in zip(PROMPTS, COMPLETIONS)
    ]
    assert ours.texts(PROMPTS, COMPLETIONS) == trl_texts
    for prompts, completions, as_trl in (
        (PROMPTS, COMPLETIONS, [[{"role": "assistant", "content": c}] for c in COMPLETIONS]),
        (TEXT_PROMPTS, TEXT_COMPLETIONS, TEXT_COMPLETIONS),
    ):
        inputs = [{"prompt": p} for p in prompts]
        theirs = trainer._calculate_rewards(inputs, prompts, as_trl, [[0]] * len(prompts))[:, 0].tolist()
        assert ours.score(prompts, completions, batch_size=len(prompts)) == theirs
        _assert_close(ours.score(prompts, completions, batch_size=1), theirs, bf16=bf16)


def test_scores_are_the_same_across_loads_and_builds(reward_model, model_dir, tmp_path):
    first = reward_model.score(PROMPTS, COMPLETIONS, batch_size=2)
    again = RewardModel.load(str(model_dir), "cpu")
    assert not again._model.training
    assert again.score(PROMPTS, COMPLETIONS, batch_size=2) == first
    rebuilt = build_tiny_reward_model(tmp_path / "same-seed", seed=0)
    assert weights_sha256(str(rebuilt)) == weights_sha256(str(model_dir))
    assert RewardModel.load(str(rebuilt), "cpu").score(PROMPTS, COMPLETIONS, batch_size=2) == first
    other = build_tiny_reward_model(tmp_path / "other-seed", seed=1)
    assert weights_sha256(str(other)) != weights_sha256(str(model_dir))
    assert RewardModel.load(str(other), "cpu").score(PROMPTS, COMPLETIONS, batch_size=2) != first


def test_weights_sha256_follows_the_weights_config_and_tokenizer_only(model_dir, tmp_path):
    copy = shutil.copytree(model_dir, tmp_path / "copy")
    original = weights_sha256(str(model_dir))
    assert weights_sha256(str(copy)) == original
    (copy / "README.md").write_text("# a tiny reward model\n")
    (copy / "trainer_state.json").write_text("{}\n")
    assert weights_sha256(str(copy)) == original

    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    assert weights_sha256(str(copy)) != original
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    assert weights_sha256(str(copy)) == original

    config = copy / "config.json"
    config.write_text(config.read_text().replace('"num_hidden_layers": 2', '"num_hidden_layers": 1'))
    assert weights_sha256(str(copy)) != original
    shutil.copy(model_dir / "config.json", config)
    (copy / "extra.bin").write_bytes(b"\0" * 16)
    assert weights_sha256(str(copy)) != original
    (copy / "extra.bin").unlink()
    assert weights_sha256(str(copy)) == original
    # The tokenizer and its chat template change a score too (transformers keeps the template in its own file).
    template = copy / "chat_template.jinja"
    assert template.exists()
    template.write_text(template.read_text().replace("<|im_start|>", "<|im_start|> "))
    assert weights_sha256(str(copy)) != original


def test_weights_sha256_of_a_hub_id_is_its_id_whether_or_not_the_cache_holds_it(tmp_path, monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("weights_sha256 tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    cache = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    before = weights_sha256("org/tiny-rm")
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = cache / "models--org--tiny-rm"  # round 1's probe downloads it: the fingerprint must not move
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "snapshots" / commit / "config.json").write_text("{}")
    assert before == weights_sha256("org/tiny-rm") == "hub:org/tiny-rm"
    with pytest.raises(BadInput, match="neither a local directory nor a hub id"):
        weights_sha256(str(tmp_path / "no" / "such" / "dir"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput, match=r"no weight files \(\*\.safetensors, \*\.bin\)"):
        weights_sha256(str(tmp_path / "empty"))


def test_chat_prompts_need_a_chat_template_and_inputs_must_pair(reward_model, model_dir, tmp_path):
    bare = shutil.copytree(model_dir, tmp_path / "no-template")
    (bare / "chat_template.jinja").unlink()
    plain = RewardModel.load(str(bare), "cpu")
    with pytest.raises(BadInput, match="no chat template.*format: text"):
        plain.score(PROMPTS, COMPLETIONS, batch_size=2)
    assert plain.score(TEXT_PROMPTS, TEXT_COMPLETIONS, 2) == reward_model.score(TEXT_PROMPTS, TEXT_COMPLETIONS, 2)
    with pytest.raises(ValueError, match="5 prompts but 4 completions"):
        reward_model.score(PROMPTS, COMPLETIONS[:4], batch_size=2)
    assert reward_model.score([], [], batch_size=2) == []


def _assert_close(actual: list[float], expected: list[float], bf16: bool = False) -> None:
    """Alone against in a batch: fp32's rounding, or bf16's (8 bits of mantissa) under its autocast."""
    tolerance = {"rtol": 2e-2, "atol": 2e-2} if bf16 else {}
    torch.testing.assert_close(torch.tensor(actual), torch.tensor(expected), **tolerance)


def test_a_reward_model_is_a_gated_component_that_trains_and_passes_audit_rescore(model_dir, tmp_path):
    """A config entry with `model:` beside its weight: round 1 loads and probes it, its fingerprint is the model's
    files, training scores every completion with it (its logits scaled into [-1, 1]), and audit --rescore passes
    (its score is taken as recorded, like a judge's)."""
    import json

    from conftest import events, make_workspace, rc1_here

    weights = {"correctness": 0.4, "f1": 0.15, "format": 0.2, "length": 0.15, "preference": 0.1}
    root = make_workspace(
        tmp_path,
        **{
            "reward.functions": [{"name": "preference", "model": "tiny-rm", "weight": 0.1, "scale": 8.0, "clip": True}],
            "reward.weights": "weights_rm.json",
            "train.max_steps": 4,
        },
    )
    shutil.copytree(model_dir, root / "configs/tiny-rm")
    (root / "configs/weights_rm.json").write_text(json.dumps(weights))
    assert rc1_here(root, "advance", "--until", "R1_PASSED").returncode == 0
    probe = next(e for e in events(root) if e["type"] == "check_passed" and e["name"] == "reward_functions")
    assert "preference" in probe["detail"]
    done = rc1_here(root, "advance", "--all")
    assert done.returncode == 0, done.stderr
    steps = [e for e in events(root) if e["type"] == "train_step"]
    assert steps and all(set(e["components"]) == set(weights) for e in steps)
    rows = json.loads(rc1_here(root, "rollouts", "--step", "1", "--json").stdout)
    scores = [row["components"]["preference"] for row in rows]
    assert all(-1.0 <= s <= 1.0 for s in scores) and len(set(scores)) > 1
    rescored = rc1_here(root, "audit", "--rescore")
    assert rescored.returncode == 0 and "audit passed" in rescored.stdout, rescored.stdout

    weight_file = root / "configs/tiny-rm/model.safetensors"  # the model is part of the config's fingerprint
    data = bytearray(weight_file.read_bytes())
    data[-1] ^= 1
    weight_file.write_bytes(bytes(data))
    audit = rc1_here(root, "audit")
    assert audit.returncode == 3 and "config changed" in audit.stdout
