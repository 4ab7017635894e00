"""The training stage: check the round-2 gate, pick the checkpoint to resume, train, record.

Every optimizer step becomes a train_step event; every checkpoint is published
atomically, hashed, recorded as checkpoint_saved, and only then linked as `latest`.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from rc1.data.task import TaskItem, read_items
from rc1.errors import BadInput, GateClosed, TrainingError
from rc1.events import schema as ev
from rc1.events.replay import CheckpointRef
from rc1.failure import write_error_report
from rc1.fsutil import sha256_file
from rc1.scoring.pipeline import make_reward_fn, rewards_of
from rc1.scoring.rules import gold_reply
from rc1.session import Session
from rc1.stages.gate import ensure_inputs_unchanged, require_allowed
from rc1.stages.scoring import RunScoring, open_scoring, policy_thinking
from rc1.train import checkpoints
from rc1.train.metrics import StepMetrics
from rc1.workspace import Workspace


def pick_resume(session: Session, explicit: Path | None) -> CheckpointRef | None:
    """The newest checkpoint the log vouches for and whose files still match their hashes."""
    root = session.ws.root
    candidates = list(reversed(session.projection.checkpoints))
    if explicit is not None:
        wanted = explicit.resolve()
        candidates = [c for c in candidates if (root / c.dir).resolve() == wanted]
        if not candidates:
            raise GateClosed(f"{explicit}: no checkpoint_saved event vouches for this directory; it cannot be resumed from")
    for ref in candidates:
        problems = checkpoints.verify(root / ref.dir, ref.files)
        if not problems:
            return ref
        print(f"warning: checkpoint {ref.dir} fails verification, not resuming from it: {problems[0]}", file=sys.stderr)
        if explicit is not None:
            raise GateClosed(f"{explicit}: checkpoint fails verification: {'; '.join(problems)}")
    return None


def run_training(session: Session, explicit_resume: Path | None = None) -> None:
    require_allowed(session, "training_started", "training")
    ensure_inputs_unchanged(session, session.projection.gates["round2"].fingerprints, "round 2")
    config = session.config
    resume = pick_resume(session, explicit_resume)
    if resume is not None and resume.step >= config.train.max_steps:
        _complete(session, resume)  # crashed after the final checkpoint, before run_completed
        return

    from rc1.train.device import select_device, select_dtype
    from rc1.train.engine_trl import TrlGrpoEngine
    from rc1.train.model_loading import load_policy

    if not sys.stderr.isatty():
        _quiet_library_progress_bars()

    pool = read_items(session.ws.balanced_pool_path)  # training uses the difficulty-balanced pool
    shadow = read_items(session.ws.shadow_path)
    device = select_device()
    dtype = select_dtype(device, config.model.dtype)
    builtin_dir = _builtin_model(session, pool) if config.model.name.startswith("builtin:") else None
    model, tokenizer = load_policy(config.model, config.finetune.method, device, dtype, builtin_dir)
    thinking = policy_thinking(session.loaded, tokenizer.chat_template, template_known=True)
    scoring = open_scoring(session.loaded, session.ws, thinking)
    reward_fn = make_reward_fn(config.reward, scoring.weights, scoring.pipeline)
    shutil.rmtree(session.ws.staging_dir, ignore_errors=True)  # leftovers of a killed save are never resumed from
    engine = TrlGrpoEngine(config, pool, reward_fn, model, tokenizer, session.ws.staging_dir, device)
    if engine.truncated_prompts:
        print(f"note: {engine.truncated_prompts} of {len(pool)} prompts were cut to fit train.max_prompt_tokens "
              f"({config.train.max_prompt_tokens}); their earliest turns are left out", file=sys.stderr)
    session.append(ev.TrainingStarted(
        resume_from_step=resume.step if resume else 0,
        resume_from_dir=resume.dir if resume else None,
        max_steps=config.train.max_steps,
        engine=config.engine.name,
        strategy=config.engine.strategy,
        model=config.model.name,
        device=device,
        dtype=str(dtype).removeprefix("torch."),
    ))
    hooks = EventHooks(session, engine, shadow, scoring)
    try:
        engine.train(hooks, session.ws.root / resume.dir if resume else None)
    except Exception as error:
        report = write_error_report(error, session.ws.root, step=session.projection.step)
        session.append(ev.TrainingFailed(error=f"{type(error).__name__}: {error}", report=str(report), step=session.projection.step))
        raise TrainingError(f"training failed at step {session.projection.step}: {error} (details in {report})") from error
    latest = session.projection.latest_checkpoint
    if latest is None or latest.step != config.train.max_steps:
        raise TrainingError(f"training stopped at step {session.projection.step} without a checkpoint at max_steps {config.train.max_steps}")
    _complete(session, latest)


def _quiet_library_progress_bars() -> None:
    """transformers/datasets draw bars for shard writes and loads; in a log file they are noise."""
    import datasets
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    datasets.disable_progress_bars()


def _complete(session: Session, final: CheckpointRef) -> None:
    session.append(ev.RunCompleted(step=final.step, best_step=session.projection.best_step, final_checkpoint=final.dir))


def builtin_model_dir(ws: Workspace, seed: int) -> Path:
    """Where the built-in tiny model of this run's balanced pool and seed is (or will be) built."""
    return ws.model_cache_dir / f"tiny-qwen3-{sha256_file(ws.balanced_pool_path)[:12]}-seed{seed}"


def _builtin_model(session: Session, pool: list[TaskItem]) -> Path:
    """The tiny model built on the training pool, then warm-started on its gold replies (both cached)."""
    from transformers import AutoTokenizer

    from rc1.train.prompts import fit_prompt
    from rc1.train.tiny_model import build_tiny_qwen3
    from rc1.train.warm_start import warm_start, warm_start_losses

    config = session.config
    texts = [f"{item.prompt}\nAnswer: {item.answer}" for item in pool]
    base = build_tiny_qwen3(texts, builtin_model_dir(session.ws, config.run.seed), config.run.seed)
    steps = config.model.warm_start_steps
    if not steps:
        return base
    tokenizer = AutoTokenizer.from_pretrained(base)
    pairs = [(fit_prompt(tokenizer, item, config.train.max_prompt_tokens)[0], gold_reply(item)) for item in pool]
    out = warm_start(base, base.with_name(f"{base.name}-sft{steps}"), pairs, steps=steps, seed=config.run.seed)
    losses = warm_start_losses(out)
    print(f"  warm start: {steps} SFT steps on {len(pairs)} gold replies of the training pool, "
          f"loss {losses[0]:.3f} -> {losses[-1]:.3f}", flush=True)
    return out


class EventHooks:
    """Turns engine callbacks into events, published checkpoints, evaluations and best promotions."""

    def __init__(self, session: Session, engine, shadow: list[TaskItem], scoring: RunScoring):
        self.session = session
        self.engine = engine
        self.shadow = shadow
        self.scoring = scoring
        self.best_value: float | None = session.projection.best_value
        self.interactive = sys.stdout.isatty()
        self._scope(f"step {session.projection.step + 1}")

    def _scope(self, scope: str) -> None:
        if self.scoring.judge is not None:
            self.scoring.judge.ledger.scope = scope

    def _judge_calls(self) -> ev.ScoringSummary:
        return self.scoring.judge.ledger.drain() if self.scoring.judge is not None else ev.ScoringSummary()

    def on_step(self, m: StepMetrics) -> None:
        self.session.append(ev.TrainStep(
            step=m.step, loss=m.loss, kl=m.kl, ratio=m.ratio, lr=m.lr, reward=m.reward, reward_std=m.reward_std,
            mem_used_mb=m.mem_used_mb, sec_per_step=m.sec_per_step, tokens=m.tokens, scoring=self._judge_calls(),
        ))
        self._scope(f"step {m.step + 1}")
        max_steps = self.session.config.train.max_steps
        if m.step % max(1, max_steps // 10) == 0 or m.step == max_steps:
            print(f"  step {m.step}/{max_steps}  loss {m.loss:+.4f}  kl {m.kl:.4f}  reward {m.reward:.4f}  "
                  f"{m.sec_per_step:.2f}s/step", flush=True)

    def on_checkpoint(self, step: int, staged_dir: Path) -> None:
        ws = self.session.ws
        final = ws.checkpoint_dir(step)
        seq, digest = self.session.log.head
        meta = {
            "run": ws.run, "step": step, "config_sha256": self.session.loaded.sha256,
            "log_seq": seq, "log_hash": digest,
        }
        files = checkpoints.publish(staged_dir, final, meta)
        rel = str(final.relative_to(ws.root))
        self.session.append(ev.CheckpointSaved(step=step, dir=rel, files=files))
        checkpoints.update_latest(ws.checkpoints_dir, final)
        self._evaluate(step, final)

    def _evaluate(self, step: int, final: Path) -> None:
        result = self.engine.evaluate(self.shadow, self.session.config.train.max_completion_tokens)
        self._scope(f"eval {step}")
        scored = self.scoring.pipeline.score(self.shadow, result.completions, result.completion_tokens)
        rewards = rewards_of(self.session.config.reward, self.scoring.weights, self.shadow, scored)
        mean_reward = sum(rewards) / len(rewards) if rewards else 0.0
        correct: dict[str, list[float]] = {}
        for item, s in zip(self.shadow, scored, strict=True):
            correct.setdefault(item.task, []).append(s.components["correctness"])
        every = [c for values in correct.values() for c in values]
        accuracy = sum(every) / len(every) if every else 0.0
        self.session.append(ev.EvalCompleted(
            step=step, n=len(result.item_ids), mean_reward=mean_reward, accuracy=accuracy,
            per_task_accuracy={task: sum(v) / len(v) for task, v in sorted(correct.items())},
            scoring=self._judge_calls(),
        ))
        self._scope(f"step {step + 1}")
        if self.best_value is None or mean_reward > self.best_value:
            best_dir = self.session.ws.checkpoints_dir / "best"
            checkpoints.promote_best(final, best_dir)
            self.best_value = mean_reward
            self.session.append(ev.BestPromoted(
                step=step, dir=str(best_dir.relative_to(self.session.ws.root)), metric="shadow_mean_reward", value=mean_reward,
            ))
