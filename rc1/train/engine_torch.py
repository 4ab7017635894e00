"""The `torch` engine: a plain PyTorch loop rc1 owns, on the same model, data order, reward, evaluation
and checkpoint publishing as the `trl` engine, running the objective the strategy's spec names
(rc1/registry/strategies/ → rc1/train/strategies/).

It trains a LoRA adapter (`finetune.method` lora or qlora), and its strategies take the reference policy by
switching the adapter off; `full` is the trl engine's, and config refuses torch × full (rc1/registry/engines.py).
Its checkpoints are rc1's layout (rc1/train/layout.py), written by rc1 itself.
Resume restores every one of them, so step N+1 after a resume is the step N+1 of an uninterrupted run.
"""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
import peft
import torch
from safetensors.torch import load_file
from transformers import PreTrainedModel, PreTrainedTokenizerBase, get_linear_schedule_with_warmup, set_seed

from rc1.config.schema import Config
from rc1.core.errors import BadInput, TrainingError
from rc1.data.task import TaskItem
from rc1.registry.spec import load
from rc1.scoring.functions import BatchContext, StepState
from rc1.train import divergence, layout
from rc1.train.drift import DriftProbe, adapter_off
from rc1.train.engines import shared_setup
from rc1.train.generation import evaluate_policy
from rc1.train.metrics import EvalResult, Sampling, StepMetrics
from rc1.train.model_loading import lora_config
from rc1.train.policy_math import Rollout
from rc1.train.protocols import RewardFn, Strategy, TrainingEnded, TrainingHooks
from rc1.train.runtime import capture_rng, memory_mb, restore_rng
from rc1.train.sampler import Sampler
from rc1.train.schedule import set_peak_lr
from rc1.train.strategies.common import AdaptiveKLStrategy


class TorchEngine:
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
    ):
        if model.dtype == torch.float16:
            # fp16 LoRA weights cannot be unscaled by a GradScaler; the trl engine handles fp16 (MPS)
            raise BadInput("model.dtype: the torch engine trains in fp32 or bf16; use engine.name trl for fp16")
        self.config = config
        self.train_cfg = config.train
        self.reward_fn = reward_fn
        self.tokenizer = tokenizer
        self.device = device
        self._staging_dir = Path(staging_dir)
        set_seed(config.run.seed)  # the adapter's initial weights, and the first step's samples, follow the seed
        self._model = peft.get_peft_model(model, lora_config(config.model))
        if config.train.gradient_checkpointing:
            self._model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            self._model.enable_input_require_grads()  # the frozen embeddings' output must carry grad for LoRA
        setup = shared_setup(config, items, model, tokenizer, staging_dir, make_sampler)
        self.eos_ids = setup.eos_ids
        self._prompts = setup.prompts
        self.truncated_prompts = setup.prompts.truncated
        self.prompts_per_step = setup.prompts_per_step
        self.sampler = setup.sampler
        self._step = 0  # the step being trained: the sampler's observations are filed under it
        self._grad_norm: float | None = None  # the last update pass's gradient norm, before clipping
        self.strategy: Strategy = load(setup.spec.torch.objective)(config.train)
        self.strategy.attach_engine(self)
        self.setup()

    @property
    def model(self) -> torch.nn.Module:
        return self._model

    def close(self) -> None:
        """Let go of the policy, its optimizer and the strategy (which holds this engine: a cycle)."""
        self.strategy = None
        self._model = self.optimizer = self.scheduler = None
        self._params = []

    # -- what strategies use ---------------------------------------------------------------------------

    def prompts_for(self, items: list[TaskItem]) -> list[str]:
        return [self._prompts(item) for item in items]

    def rewards(self, rollout: Rollout) -> torch.Tensor:
        completion = rollout.ids[:, -rollout.completion_width :]
        context = BatchContext(  # what TRL would hand a reward function of yours (rc1/scoring/functions.py)
            completion_ids=[completion[row, :count].tolist() for row, count in enumerate(rollout.counts)],
            trainer_state=StepState(global_step=self._step - 1, max_steps=self.train_cfg.max_steps),
        )
        values = self.reward_fn(rollout.items, rollout.texts, rollout.counts, context)
        self.sampler.observe(self._step, rollout.items, values)
        return torch.tensor([float(v) for v in values], dtype=torch.float32, device=self.device)

    def micro_batches(self, rollout: Rollout) -> list[slice]:
        """`gradient_accumulation_steps` contiguous slices of the rollout's rows (the last may be shorter)."""
        rows = rollout.ids.size(0)
        size = max(1, math.ceil(rows / self.train_cfg.gradient_accumulation_steps))
        return [slice(start, min(start + size, rows)) for start in range(0, rows, size)]

    def optimizer_step(self) -> None:
        # A non-finite gradient halts here, before the weights take it (the non_finite monitor).
        self._grad_norm = divergence.check_gradients(self._params, self._step)
        torch.nn.utils.clip_grad_norm_(self._params, self.train_cfg.max_grad_norm)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    def discard_gradients(self) -> None:
        self.optimizer.zero_grad(set_to_none=True)

    # -- the seed's engine interface -------------------------------------------------------------------

    def setup(self) -> None:
        t = self.train_cfg
        self._params = [p for p in self._model.parameters() if p.requires_grad] + list(self.strategy.parameters())
        self.optimizer = torch.optim.AdamW(self._params, lr=t.learning_rate)
        self.scheduler = get_linear_schedule_with_warmup(self.optimizer, t.warmup_steps, t.max_steps)
        self._model.train()

    def train_step(self, step: int) -> StepMetrics:
        started = time.perf_counter()
        if self.device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        self._step = step
        items = self.sampler.batch(step)
        lr = self.scheduler.get_last_lr()[0]
        self._grad_norm = None
        metrics = msgspec.structs.replace(self.strategy.on_batch(items), step=step, lr=lr)
        self.scheduler.step()
        divergence.check_metrics(metrics)
        divergence.check_weights(self._model, step)
        return msgspec.structs.replace(
            metrics,
            mem_used_mb=memory_mb(self.device),
            grad_norm=self._grad_norm,
            sec_per_step=time.perf_counter() - started,
        )

    def eval_step(
        self, items: list[TaskItem], max_new_tokens: int, sampling: Sampling | None = None, drift: int = 0
    ) -> EvalResult:
        """Replies to `items`, greedy or sampled; with `drift` (sampled), their KL to the step-0 policy (the adapter
        switched off) too."""
        probe = DriftProbe(adapter_off, sampling.temperature, drift) if drift and sampling is not None else None
        return evaluate_policy(
            self._model,
            self.tokenizer,
            items,
            max_prompt_tokens=self.train_cfg.max_prompt_tokens,
            max_new_tokens=max_new_tokens,
            eos_ids=self.eos_ids,
            batch_size=self.train_cfg.per_device_batch_size,
            device=self.device,
            sampling=sampling,
            drift=probe,
        )

    evaluate = eval_step

    def state_dict(self) -> dict:
        return {
            "adapter": peft.get_peft_model_state_dict(self._model),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "rng": capture_rng(),
            "strategy": self.strategy.state_dict(),
            "sampler": self.sampler.state_dict(next_step=self.scheduler.last_epoch + 1),
        }

    def load_state_dict(self, state: dict) -> None:
        peft.set_peft_model_state_dict(self._model, state["adapter"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.strategy.load_state_dict(state["strategy"])
        restore_rng(state["rng"])

    # -- the loop --------------------------------------------------------------------------------------

    def train(self, hooks: TrainingHooks, resume_from: Path | None, amended: frozenset[str] = frozenset()) -> None:
        shutil.rmtree(self._staging_dir, ignore_errors=True)  # a staged save never published does not exist
        self._staging_dir.mkdir(parents=True, exist_ok=True)
        start = 0
        if resume_from is not None:
            state = read_checkpoint(Path(resume_from))
            sampler = layout.read_sampler(Path(resume_from))
            self.sampler.load_state_dict(sampler, str(Path(resume_from) / layout.SAMPLER))
            self.load_state_dict(state)
            self._amend(amended)
            start = self.scheduler.last_epoch
            if sampler["next_step"] != start + 1:
                raise TrainingError(
                    f"{resume_from}: sampler at step {sampler['next_step']} but the scheduler after "
                    f"step {start}; the checkpoint is inconsistent"
                )
        t = self.train_cfg
        for step in range(start + 1, t.max_steps + 1):
            try:
                metrics = self.train_step(step)
            except RuntimeError as e:
                if divergence.NON_FINITE_SAMPLING not in str(e):
                    raise
                raise divergence.sampling_failed(step) from e
            verdict = hooks.on_step(metrics)
            if verdict is None and (step % t.save_steps == 0 or step == t.max_steps):
                verdict = hooks.on_checkpoint(step, self._save(step))
            if verdict is not None:
                raise TrainingEnded(verdict)

    def _amend(self, amended: frozenset[str]) -> None:
        """A rollback's amended keys over what the checkpoint restored (its optimizer's learning rate, its β)."""
        if "train.learning_rate" in amended:
            set_peak_lr(self.optimizer, self.scheduler, self.train_cfg.learning_rate)
        if "train.beta" in amended and isinstance(self.strategy, AdaptiveKLStrategy):  # its β is checkpointed
            self.strategy.kl.beta = self.train_cfg.beta

    def _save(self, step: int) -> Path:
        staged = self._staging_dir / f"step-{step}"
        shutil.rmtree(staged, ignore_errors=True)
        self._model.save_pretrained(staged)
        state = self.state_dict()
        torch.save(state["optimizer"], staged / layout.OPTIMIZER)
        torch.save(state["scheduler"], staged / layout.SCHEDULER)
        torch.save(state["rng"], staged / layout.RNG)
        layout.write_state(staged, state["sampler"], state["strategy"])
        return staged


def read_checkpoint(directory: Path) -> dict:
    """The state a torch-engine checkpoint holds, as `TorchEngine.load_state_dict` takes it."""
    absent = layout.missing(directory, "lora")  # an adapter checkpoint: lora and qlora write the same files
    if absent:
        raise TrainingError(f"{directory}: not an rc1 checkpoint (missing {', '.join(absent)})")
    return {
        "adapter": load_file(directory / layout.ADAPTER),
        "optimizer": torch.load(directory / layout.OPTIMIZER, weights_only=True),
        "scheduler": torch.load(directory / layout.SCHEDULER, weights_only=True),
        # python's and numpy's RNG states are not tensors; the file is ours and its sha256 is in the log
        "rng": torch.load(directory / layout.RNG, weights_only=False),
        "strategy": torch.load(directory / layout.STRATEGY, weights_only=True),
        "sampler": json.loads((directory / layout.SAMPLER).read_text(encoding="utf-8")),
    }
