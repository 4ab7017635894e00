"""The `trl` engine: TRL's trainers (`GRPOTrainer`, `RLOOTrainer`, `OnlineDPOTrainer`, `SFTTrainer`) training a
LoRA adapter (`finetune.method` lora, qlora) or the whole model (full), bridged to rc1's hooks. GRPO is the
production default. Which trainer runs, on which arguments, measured by which probe, is the strategy's TRL
recipe (rc1/registry/strategies/): this engine decides nothing by a strategy's name.

The reference policy: with an adapter, the base with the adapter switched off. Full fine-tuning has no adapter
to switch off, so TRL 1.16 builds a frozen one beside the policy when β > 0: GRPOTrainer and RLOOTrainer load it
again from the policy's `config._name_or_path` (the directory or hub id `load_policy` read, so the same weights),
in the policy's dtype and attention; OnlineDPOTrainer deep-copies the policy it is given. Either way it is a
second copy of the model in memory.

Exact resume is a design goal (DESIGN §5), and it holds because:
- the data order is ours: the dataset is the whole schedule, one row per prompt of every step, fed
  unshuffled, so the run is one trainer "epoch" and a resume only skips batches (TRL's sampler would
  restart its permutation in a later epoch); each row's item comes from rc1's sampler
  (rc1/train/sampler.py) when the trainer fetches it, and the sampler's state is in every checkpoint;
- `steps_per_generation == gradient_accumulation_steps`, so every optimizer step generates afresh and a
  checkpoint at any step boundary holds everything the next step needs;
- the trainer saves and restores the python/numpy/torch RNG with each checkpoint, and `evaluate` puts
  back every RNG state it touches.
"""

from __future__ import annotations

import contextlib
import copy
import math
import shutil
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
from datasets import Dataset
from transformers import PreTrainedModel, PreTrainedTokenizerBase, TrainerCallback, TrainingArguments
from transformers.trainer_callback import PrinterCallback

from rc1.config.schema import Config, TrainConfig
from rc1.core import distributed
from rc1.core.errors import BadInput, TrainingError
from rc1.data.environment import wiki_view
from rc1.data.task import TaskItem, episode_messages
from rc1.data.user_tools import ToolOfYours
from rc1.registry.spec import load
from rc1.registry.strategies import STRATEGIES
from rc1.scoring.functions import BatchContext, StepState
from rc1.scoring.rules import gold_reply
from rc1.train import divergence, layout
from rc1.train.drift import DriftProbe, Reference, adapter_off, frozen_copy
from rc1.train.engines import shared_setup
from rc1.train.generation import evaluate_policy
from rc1.train.launch import launch_accumulation, rollout_backend
from rc1.train.layout import TRAINER_STATE  # without it HF would restart at step 0 on the loaded weights
from rc1.train.live_tools import ITEM_COLUMN, live_environment_class, with_tool_calling
from rc1.train.metrics import DIAGNOSTICS, EvalResult, Sampling, StepMetrics
from rc1.train.model_loading import lora_config
from rc1.train.protocols import RewardFn, StepProbe, TrainingHooks
from rc1.train.runtime import memory_mb
from rc1.train.sampler import Sampler
from rc1.train.sampler_gap import SamplerGap
from rc1.train.schedule import set_peak_lr
from rc1.train.skipped_update import SkippedUpdate
from rc1.train.strategies.adaptive_kl import AdaptiveKL
from rc1.train.tied_weights import tied_keys_explained
from rc1.train.together import decide_together
from rc1.train.trainer_rollouts import around_trainer_generate, left_as_loaded
from rc1.train.vllm_sync import keep_base_at_sync

# The TRL 1.16 log keys one optimizer step reports (logging_steps=1, one generation per step).
KEY_LOSS = "loss"
KEY_LR = "learning_rate"
KEY_KL = "kl"  # only logged when beta > 0
KEY_REWARD = "reward"
KEY_REWARD_STD = "reward_std"
KEY_COMPLETION_LEN = "completions/mean_length"
KEY_GRAD_NORM = "grad_norm"  # transformers' Trainer: the norm before clipping


class TrlEngine:
    """The strategy's TRL trainer (grpo → GRPOTrainer, rloo → RLOOTrainer, dpo → OnlineDPOTrainer, sft →
    SFTTrainer on gold replies); the same data order, reward, hooks and checkpoint layout. A probe reads
    `config`, `sampler`, `prompts_for`, `tokenizer`, `reward_fn`, `eos_ids`, `device` and `trainer`, as the
    torch engine's strategies read that engine."""

    def __init__(
        self,
        config: Config,
        items: list[TaskItem],
        reward_fn: RewardFn,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        staging_dir: Path,
        device: str,
        make_sampler: Callable[[int], Sampler],
        tools: Sequence[ToolOfYours] = (),
    ):
        if config.finetune.method == "full" and model.dtype == torch.float16:
            # The fp16 loss scaler unscales fp32 gradients only (torch: "Attempting to unscale FP16 gradients"):
            # peft keeps a LoRA adapter in fp32 over an fp16 base; a fully trained model has no fp32 weights.
            raise BadInput(
                "model.dtype: finetune.method full trains every weight, and fp16 weights cannot be trained "
                "under the fp16 loss scaler; use model.dtype bf16 or fp32, or finetune.method lora"
            )
        setup = shared_setup(config, items, model, tokenizer, staging_dir, make_sampler)
        self.config = config
        self.reward_fn = reward_fn
        self.tokenizer = tokenizer
        self.device = device
        self.eos_ids = setup.eos_ids
        self.sampler = setup.sampler
        self.truncated_prompts = setup.prompts.truncated
        self._spec = setup.spec
        self._staging_dir = Path(staging_dir)
        self._prompt = setup.prompts
        self._per_step = setup.prompts_per_step
        # Live episodes (data.episodes: live; config allows them on trl×grpo only): conversational rows with the
        # item's id, the tool-calling tokenizer, and one environment per rollout from TRL's environment_factory. The
        # environments look items up in `_live_items`, the pool and every fresh item a row has drawn.
        self.live = config.data.episodes == "live"
        self._live_items: dict[str, TaskItem] = {item.id: item for item in items}
        self._tools = tuple(tools)  # yours (data.tools_of_yours): methods of the environment class TRL sees
        self.trainer_tokenizer = with_tool_calling(tokenizer) if self.live else tokenizer
        recipe = self._spec.trl
        args = trl_args(config, self._staging_dir, device, model.dtype)
        positions = config.train.max_steps * self._per_step
        self._kl = AdaptiveKL(config.train.beta if self._spec.uses_beta else 0.0, config.train.target_kl)
        probe: StepProbe | None = load(recipe.probe)(self, model) if recipe.probe is not None else None
        if self._spec.trains_on == "gold":  # SFTTrainer tokenizes its dataset up front: the schedule is fixed (passes)
            scheduled = [self._at(position) for position in range(positions)]
            dataset = Dataset.from_dict(
                {
                    "prompt": [self._prompt(item) for item in scheduled],
                    "completion": [gold_reply(item) for item in scheduled],
                }
            )
            trainer_kwargs = {}
        else:
            # Row k is prompt k % P of step k // P + 1, drawn from the sampler only when the trainer fetches it,
            # so a priority sampler can draw from what the policy failed in the steps before.
            dataset = Dataset.from_dict({"position": list(range(positions))}).with_transform(self._rows)
            trainer_kwargs = {"reward_funcs": [self._make_trl_reward(probe)]}
            if self.live:
                live_items = self._live_items
                environment = live_environment_class(self._tools, wiki_view(config.data))
                trainer_kwargs["environment_factory"] = lambda: environment(live_items)
        sampler_state = lambda step: self.sampler.state_dict(next_step=step + 1)  # noqa: E731
        self._bridge = _HookBridge(
            self._staging_dir, device, setup.replies_per_step, self._kl, self._set_beta, sampler_state, probe
        )
        # The step-0 policy the drift monitor measures against: the adapter switched off; for a full fine-tune, the
        # frozen reference TRL builds at β > 0, else a copy of the base taken now, before any step.
        watch_drift = config.monitors.drift is not None
        full = config.finetune.method == "full"
        # Every rank evaluates its share of the items, so every rank holds the reference.
        base_copy = (
            copy.deepcopy(model).eval().requires_grad_(False)
            if watch_drift and full and not (self._spec.uses_beta and config.train.beta > 0)
            else None
        )
        with _quiet_renamed_property():
            self.trainer = load(recipe.trainer)(
                model=model,
                args=args,
                train_dataset=dataset,
                processing_class=self.trainer_tokenizer,
                peft_config=None if config.finetune.method == "full" else lora_config(config.model),
                callbacks=[self._bridge],
                **trainer_kwargs,
            )
        self.trainer.remove_callback(PrinterCallback)  # rc1 reports steps through its hooks
        if self._spec.trains_on != "gold":
            if rollout_backend(config, device) == "hf":  # the trainer was given top_p 1.0 (rc1/registry/spec.py)
                t = config.train
                self._bridge.gap = around_trainer_generate(
                    self.trainer, t.temperature, t.top_k, t.top_p, gap=config.monitors.sampler_mismatch is not None
                )
            else:  # vLLM: every sync sends the adapter merged out of place, the base untouched (vllm_sync.py)
                keep_base_at_sync(self.trainer)
        if config.finetune.method == "qlora":
            adapter_in_fp32(self.trainer.model)
        self._bridge.advantages = self._step_advantages
        self._reference: Reference | None = None
        if watch_drift:
            self._reference = (
                adapter_off if not full else frozen_copy(base_copy if base_copy is not None else self.trainer.ref_model)
            )

    def _step_advantages(self) -> list[float]:
        """The advantages GRPO's and RLOO's trainers gave the step's completions, in the order rc1's reward function
        scored them: what their own `log_completions` prints, kept for the last generation batch. [] elsewhere."""
        logged = self.trainer.__dict__.get("_logs")
        return [float(a) for a in logged["advantages"]] if logged is not None and "advantages" in logged else []

    def _set_beta(self, beta: float) -> None:
        if self._spec.target_kl == "adapts_beta":
            self.trainer.beta = beta  # GRPO's and RLOO's trainers read it every step (in the loss, in the reward)

    @property
    def model(self) -> torch.nn.Module:
        """The trained policy: a peft model (base weights frozen, LoRA adapter trainable), or with
        `finetune.method` full the model itself, every weight trainable."""
        return self.trainer.model

    def prompts_for(self, items: list[TaskItem]) -> list[str]:
        return [self._prompt(item) for item in items]

    def train(self, hooks: TrainingHooks, resume_from: Path | None, amended: frozenset[str] = frozenset()) -> None:
        """Train to `config.train.max_steps`, from scratch or from a published checkpoint directory; `amended` keys
        take the config's value over the checkpoint's (TrainingEngine.train)."""
        self._clear_stale_staging()
        self._bridge.peak_lr = self.config.train.learning_rate if "train.learning_rate" in amended else None
        if resume_from is not None:
            resume_from = Path(resume_from)
            absent = layout.missing(resume_from, self.config.finetune.method) + [
                n for n in (TRAINER_STATE,) if not (resume_from / n).is_file()
            ]
            if absent:
                raise TrainingError(f"{resume_from}: not an rc1 checkpoint (missing {', '.join(absent)})")
            self.sampler.load_state_dict(layout.read_sampler(resume_from), str(resume_from / layout.SAMPLER))
            self._kl.load_state_dict(torch.load(resume_from / layout.STRATEGY, weights_only=True)["kl"])
            if "train.beta" in amended:
                self._kl.beta = self.config.train.beta
            self._set_beta(self._kl.beta)
            # Outside the staging folder and one per rank: no rank's cleanup can remove another's view.
            resume_from = layout.trainer_view(
                resume_from, self._staging_dir.parent / f".resume-view-rank{distributed.rank()}"
            )
        self._bridge.hooks = hooks
        try:
            with _quiet_renamed_property(), tied_keys_explained(self.trainer.model):
                self.trainer.train(resume_from_checkpoint=str(resume_from) if resume_from is not None else None)
        except RuntimeError as e:
            if divergence.NON_FINITE_SAMPLING not in str(e):
                raise
            raise divergence.sampling_failed(self.trainer.state.global_step + 1) from e
        finally:
            self._bridge.hooks = None

    def close(self) -> None:
        """Let go of the trainer and the policy: the trainer holds this engine (its reward function, its callback's
        view of the advantages) and this engine the trainer, a cycle that only Python's cyclic collector would break,
        leaving a line's model, optimizer and (on CUDA) its memory to whenever that runs."""
        self._bridge.advantages = list
        self._bridge.hooks = None
        self._bridge.drop_probe()
        self._bridge.gap = None
        self._reference = None
        if self.trainer is not None:
            left_as_loaded(self.trainer)  # its generate's wrapper holds the trainer: another such cycle
        self.trainer = None

    def evaluate(
        self, items: list[TaskItem], max_new_tokens: int, sampling: Sampling | None = None, drift: int = 0
    ) -> EvalResult:
        """Greedy (or `sampling`'s sampled) completions of `items`; leaves every RNG and the model's mode as found.
        With `drift` (sampled replies, the drift monitor on), their KL to the step-0 policy too, from that many replies
        per item."""
        batch_size = self.config.train.per_device_batch_size * self.config.train.gradient_accumulation_steps
        probe = (
            DriftProbe(self._reference, sampling.temperature, drift) if drift and sampling and self._reference else None
        )
        return evaluate_policy(
            self.trainer.model,
            self.trainer_tokenizer,
            items,
            max_prompt_tokens=self.config.train.max_prompt_tokens,
            max_new_tokens=max_new_tokens,
            eos_ids=self.eos_ids,
            batch_size=batch_size,
            device=self.trainer.args.device,
            sampling=sampling,
            drift=probe,
            live_rounds=self.config.data.max_tool_rounds if self.live else None,
            live_tools=self._tools,
            live_wiki=wiki_view(self.config.data),
        )

    def _at(self, position: int) -> TaskItem:
        return self.sampler.batch(position // self._per_step + 1)[position % self._per_step]

    def _rows(self, rows: dict) -> dict:
        if not self.live:
            return {
                "prompt": [self._prompt(self._at(p)) for p in rows["position"]],
                "item_index": list(rows["position"]),
            }
        items = [self._at(p) for p in rows["position"]]
        for item in items:
            self._live_items.setdefault(item.id, item)
        return {
            "prompt": [episode_messages(item) for item in items],
            ITEM_COLUMN: [item.id for item in items],
            "item_index": list(rows["position"]),
        }

    def _make_trl_reward(self, probe: StepProbe | None):
        reward_fn, sampler, per_step = self.reward_fn, self.sampler, self._per_step

        max_steps = self.config.train.max_steps

        live = self.live

        def rc1_reward(prompts, completions, item_index, completion_ids, environments=None, **_context) -> list[float]:
            lengths = [len(ids) for ids in completion_ids]
            items = [self._at(position) for position in item_index]
            # What a reward function of yours reads beside the completions, as TRL hands it: the token ids, and the
            # steps done before this batch (from the batch's own step, so rescoring from the archive gives the same).
            context = BatchContext(
                completion_ids=[list(map(int, ids)) for ids in completion_ids],
                trainer_state=StepState(global_step=item_index[0] // per_step, max_steps=max_steps),
            )
            # Live: the completions are message lists, read with each rollout's environment (make_reward_fn).
            extra = {"environments": environments} if live else {}
            rewards = [float(r) for r in reward_fn(items, list(completions), lengths, context, **extra)]
            # One call scores one step's replies, each rank its share: every rank's sampler observes them all, so
            # all draw the same next batches (as TRL gathers the rewards right after this call).
            shares = distributed.gather((items, rewards))
            sampler.observe(
                item_index[0] // per_step + 1,
                [item for mine, _ in shares for item in mine],
                [reward for _, theirs in shares for reward in theirs],
            )
            if probe is not None:
                probe.rewarded(rewards, lengths)
            return rewards

        return rc1_reward

    def _clear_stale_staging(self) -> None:
        """Staged checkpoints left by a crash were never published: they do not exist, so drop them (rank 0's
        job: the others' staged files are rank 0's to publish). A resume reads a published checkpoint, which
        never lies in the staging folder."""
        if not distributed.is_writer():
            return
        for path in self._staging_dir.glob("checkpoint-*"):
            shutil.rmtree(path)


def adapter_in_fp32(model: torch.nn.Module) -> None:
    """Keep a QLoRA adapter's weights, and so AdamW's master weights and moments, in fp32. Over a 4-bit base TRL 1.16
    casts them to bf16 ("the PEFT adapter weights are converted to bf16", GRPOTrainer.__init__; peft's own default
    keeps them in fp32), and bf16 holds 8 bits of mantissa: at a learning rate of 1e-5 an update is below half a
    bf16 step of most weights and rounds away (tests/unit/test_adapter_precision.py measures it). The optimizer does
    not exist yet (the trainer builds it in `train`), so it is built on these. Under the Trainer's bf16 autocast the
    adapter's products run in bf16 as before; without autocast peft's LoRA layers cast their input to the adapter's
    dtype and the result back (peft/tuners/lora/bnb.py)."""
    for param in model.parameters():
        if param.requires_grad and param.dtype != torch.float32:
            param.data = param.data.float()


def trl_args(
    config: Config, staging_dir: Path, device: str, dtype: torch.dtype, backend: str | None = None
) -> TrainingArguments:
    """The arguments of the strategy's TRL trainer: what every trainer is given, from rc1's config, and what
    the strategy's recipe adds (rc1/registry/strategies/). `backend`: who samples the rollouts (`rollout_backend`
    of the config unless given)."""
    train: TrainConfig = config.train
    recipe = STRATEGIES[config.engine.strategy].trl
    shared = dict(
        output_dir=str(staging_dir),
        max_steps=train.max_steps,
        save_strategy="steps",
        save_steps=train.save_steps,
        save_total_limit=None,
        logging_strategy="steps",
        logging_steps=1,
        logging_nan_inf_filter=False,  # a non-finite loss must reach our callback, not be papered over
        learning_rate=train.learning_rate,
        warmup_steps=train.warmup_steps,
        per_device_train_batch_size=train.per_device_batch_size,
        gradient_accumulation_steps=launch_accumulation(train),
        max_grad_norm=train.max_grad_norm,
        seed=config.run.seed,
        report_to="none",
        dataloader_num_workers=0,
        disable_tqdm=not sys.stderr.isatty(),
        bf16=dtype == torch.bfloat16,
        fp16=dtype == torch.float16,
        use_cpu=device == "cpu",
    )
    backend = backend or rollout_backend(config, device)
    options = recipe.options(train, config.run.seed, backend != "hf")
    if backend == "vllm":
        # vLLM would otherwise size its KV cache for the model's own context (262,144 tokens for Qwen3-4B-Thinking-2507)
        # and refuse to start in TRL's default share of the GPU: a reply is never longer than the prompt and completion.
        options.update(
            vllm_max_model_length=train.max_prompt_tokens + train.max_completion_tokens,
            vllm_gpu_memory_utilization=train.vllm_gpu_memory_utilization,
        )
    if config.data.episodes == "live":  # config allows it on trl×grpo only: GRPOConfig has the key
        options.update(max_tool_calling_iterations=config.data.max_tool_rounds)
    if backend == "vllm_server":  # the recipe asks for colocated vLLM; the server is TRL's other mode
        options.update(vllm_mode="server", vllm_server_base_url=train.vllm_server_url)
    # The dataset is already the seeded schedule (see `schedule`): the recipe's arguments keep its order.
    return load(recipe.arguments)(**{**shared, **options})


class _HookBridge(TrainerCallback):
    """Turns trainer events into `StepMetrics` and staged-checkpoint notices."""

    def __init__(
        self,
        staging_dir: Path,
        device: str,
        completions_per_step: int,
        kl: AdaptiveKL,
        set_beta: Callable[[float], None],
        sampler: Callable[[int], dict],
        probe: StepProbe | None = None,
    ):
        self.hooks: TrainingHooks | None = None
        self._sampler = sampler
        self._probe = probe
        self._kl = kl
        self._set_beta = set_beta
        self._staging_dir = staging_dir
        self._device = device
        self._completions_per_step = completions_per_step
        self._step_started = time.perf_counter()
        self._last_step = -1
        self.advantages: Callable[[], list[float]] = list
        self.gap: SamplerGap | None = None  # where transformers samples: rc1 measures what TRL measures under vLLM
        self.peak_lr: float | None = None  # an amended learning rate, put over the resumed checkpoint's
        self._skipped = SkippedUpdate()  # a test hook (rc1/train/skipped_update.py), idle in real runs

    def drop_probe(self) -> None:
        """Let go of the step probe (it holds the policy: rc1/train/sft_probe.py, online_dpo.py)."""
        self._probe = None

    def on_train_begin(self, args, state, control, optimizer=None, lr_scheduler=None, **kwargs):
        # The trainer has loaded the checkpoint's optimizer and scheduler, whose learning rate is the one they were
        # trained with: an amended one replaces it here, on the schedule's current step.
        if self.peak_lr is not None:
            set_peak_lr(optimizer, lr_scheduler, self.peak_lr)

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        # The gradients are clipped and about to be applied: a non-finite one halts here, the weights untouched. In
        # fp16 the loss scaler skips such a step itself (an overflow is how it finds its scale).
        if not args.fp16:
            divergence.check_gradients(model.parameters(), state.global_step + 1)
        self._skipped.before(model, state.global_step + 1)

    def on_optimizer_step(self, args, state, control, model=None, **kwargs):
        self._skipped.after(model)

    def on_step_begin(self, args, state, control, model=None, **kwargs):
        self._step_started = time.perf_counter()
        if self._device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        if self._probe is not None:
            self._probe.before_step(state.global_step + 1, model)

    def on_step_end(self, args, state, control, model=None, **kwargs):
        divergence.check_weights(model, state.global_step)
        if state.global_step >= state.max_steps:
            control.should_save = True  # the last step is always checkpointed

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs is None or KEY_LOSS not in logs or state.global_step == self._last_step:
            return  # the end-of-training summary, or a step already reported
        measured = self._probe.measured if self._probe is not None else None
        if measured is not None:  # what the trainer does not log (SFT: all but loss and lr), the probe measured
            logs = {
                **logs,
                **{
                    KEY_KL: measured["kl"],
                    KEY_REWARD: measured["reward"],
                    KEY_REWARD_STD: measured["reward_std"],
                    KEY_COMPLETION_LEN: measured["tokens"] / self._completions_per_step,
                },
            }
        metrics = StepMetrics(
            step=state.global_step,
            loss=float(logs[KEY_LOSS]),
            kl=float(logs.get(KEY_KL) or 0.0),
            # π_θ/π_old: TRL's GRPO and RLOO score each generation with the weights that drew it and update
            # once (num_iterations 1), so the importance ratio is exactly 1; DPO and SFT: π_θ/π_ref.
            ratio=measured["ratio"] if measured is not None else 1.0,
            lr=float(logs[KEY_LR]),
            reward=_float(logs.get(KEY_REWARD)),
            reward_std=_float(logs.get(KEY_REWARD_STD)),
            mem_used_mb=memory_mb(self._device),
            sec_per_step=time.perf_counter() - self._step_started,
            tokens=round(float(logs[KEY_COMPLETION_LEN]) * self._completions_per_step),
            kl_coef=self._kl.beta,
            diagnostics=self._diagnostics(logs),
            advantages=self.advantages(),
            grad_norm=_float(logs[KEY_GRAD_NORM]) if isinstance(logs.get(KEY_GRAD_NORM), (int, float)) else None,
        )
        divergence.check_metrics(metrics)
        self._last_step = state.global_step
        self._kl.update(metrics.kl)
        self._set_beta(self._kl.beta)
        decide_together(lambda: self.hooks.on_step(metrics) if self.hooks is not None else None)

    def _diagnostics(self, logs: dict) -> dict[str, float]:
        found = {
            name: float(logs[key])
            for name, key in DIAGNOSTICS.items()
            if isinstance(logs.get(key), (int, float)) and math.isfinite(logs[key])
        }
        gap = self.gap.step_mean() if self.gap is not None else None  # every rank, together
        if gap is not None:
            found["sampling_logp_difference"] = gap
        return found

    def on_save(self, args, state, control, **kwargs):
        # Every rank has written its share (its RNG state) once all are here; then rank 0 alone publishes, and every
        # rank generates its share of the evaluation (the hooks of ranks other than 0 record nothing).
        distributed.barrier()
        staged = self._staging_dir / f"checkpoint-{state.global_step}"

        def publish():
            if distributed.is_writer():
                layout.from_trainer(staged, self._sampler(state.global_step), {"kl": self._kl.state_dict()})
            return self.hooks.on_checkpoint(state.global_step, staged) if self.hooks is not None else None

        decide_together(publish)


@contextlib.contextmanager
def _quiet_renamed_property():
    """TRL 1.16 and peft 0.21 read a property transformers 5.23 renamed; that warning is theirs, not the user's."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated")
        yield


def _float(value) -> float:
    return float("nan") if value is None else float(value)
