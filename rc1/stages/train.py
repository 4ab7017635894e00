"""The training stage: check the round-2 gate, pick the checkpoint to resume, train, record. The policy it
trains is loaded by rc1/stages/policy.py.

Every optimizer step becomes a train_step event; every checkpoint is published
atomically, hashed, recorded as checkpoint_saved, and only then linked as `latest`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rc1.data.task import TaskItem, read_items
from rc1 import distributed
from rc1.errors import BadInput, DiskFull, GateClosed, TrainingError
from rc1.events.replay import CheckpointRef, pending_seed
from rc1.failure import write_error_report
from rc1.registry.engines import ENGINES
from rc1.scoring.control import with_shuffled_answers
from rc1.scoring.pipeline import make_reward_fn
from rc1.stages.rollouts import RolloutRecorder
from rc1.session import Session
from rc1.stages.gate import ensure_inputs_unchanged, require_allowed
from rc1.stages.policy import line_session, load_run_policy
from rc1.stages.release import evaluate_release, evaluate_release_across_seeds
from rc1.stages.scoring import open_scoring, policy_thinking
from rc1.stages.fresh import FreshItems
from rc1.stages.train_hooks import EventHooks
from rc1.train import checkpoints
from rc1.train.protocols import NoHooks
from rc1.train.sampler import PassSampler, PrioritySampler, Sampler


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
    """Train (or resume) the next unfinished line of training: one per seed of `run.seeds`, in order."""
    require_allowed(session, "training_started", "training")
    ensure_inputs_unchanged(session, session.projection.gates["round2"].fingerprints, "round 2")
    seeds = list(session.config.run.seeds)
    seed, new_line = _next_line(session.projection, seeds)
    if new_line and explicit_resume is not None:
        raise GateClosed(f"{explicit_resume}: seed {seed}'s line of training starts fresh; there is nothing to resume")
    base_seed = session.config.run.seed  # the data's seed builds the built-in base model, shared by every line
    session = line_session(session, seed, seeds)
    config = session.config
    _refuse_unsupported_launch(config)
    resume = None if new_line else pick_resume(session, explicit_resume)
    if resume is not None and resume.step >= config.train.max_steps:
        _complete(session, resume, seeds, base_seed)  # crashed after the final checkpoint, before run_completed
        return

    from rc1.train.generation import generation_backend
    from rc1.train.engines import build_engine

    pool = read_items(session.ws.balanced_pool_path)  # training uses the difficulty-balanced pool
    shadow = read_items(session.ws.shadow_path)
    model, tokenizer, device, dtype = load_run_policy(session, pool, base_seed)
    thinking = policy_thinking(session.loaded, tokenizer.chat_template, template_known=True)
    scoring = open_scoring(session.loaded, session.ws, thinking)
    recorder = RolloutRecorder(config, scoring.weights)
    reward_fn = make_reward_fn(config.reward, scoring.weights, scoring.pipeline, record=recorder.record)
    if config.reward.answers == "shuffled":  # a control arm: rewarded against another item's gold
        reward_fn = with_shuffled_answers(reward_fn, pool, base_seed)
    sampling = _Sampling(session, pool, shadow + read_items(session.ws.gate_path))
    engine = build_engine(config, pool, reward_fn, model, tokenizer, session.ws.staging_dir, device, sampling.make)
    if engine.truncated_prompts:
        print(f"note: {engine.truncated_prompts} of {len(pool)} prompts were cut to fit train.max_prompt_tokens "
              f"({config.train.max_prompt_tokens}); their earliest turns are left out", file=sys.stderr)
    session.append(session.run.start_training(
        resume_from_step=resume.step if resume else 0,
        resume_from_dir=resume.dir if resume else None,
        max_steps=config.train.max_steps,
        engine=config.engine.name,
        strategy=config.engine.strategy,
        model=config.model.name,
        device=device,
        dtype=str(dtype).removeprefix("torch."),
        seed=seed,
        seeds=seeds,
        generation=generation_backend(config.engine.name, config.engine.strategy, device),
    ))
    writer = distributed.is_writer()
    hooks = (EventHooks(session, engine, shadow, scoring, lambda step: sampling.sampler.mix(step), recorder) if writer
             else NoHooks())
    try:
        if writer and resume is None and not any(e.step == 0 for e in session.projection.evals):
            hooks.evaluate(0)  # the untrained policy: what the release gate measures the gain from
        engine.train(hooks, session.ws.root / resume.dir if resume else None)
    except Exception as error:
        if not writer:
            raise
        report = write_error_report(error, session.ws, step=session.projection.step)
        unlogged = ""
        try:
            session.append(session.run.fail_training(f"{type(error).__name__}: {error}", str(report or "")))
        except DiskFull as full:  # the log is still whole: it ends at its last event
            unlogged = f"; training_failed could not be logged: {full}"
        details = f"details in {report}" if report else "no error report: it could not be written"
        raise TrainingError(f"training failed at step {session.projection.step}: {error} ({details}){unlogged}") from error
    finally:
        hooks.close()
    if not writer:
        return  # rank 0 publishes, evaluates and completes
    latest = session.projection.latest_checkpoint
    if latest is None or latest.step != config.train.max_steps:
        raise TrainingError(f"training stopped at step {session.projection.step} without a checkpoint at max_steps {config.train.max_steps}")
    del engine, model, hooks  # the verdict loads the checkpoint it measures from disk; free the trained policy first
    _complete(session, latest, seeds, base_seed)


def _next_line(p, seeds: list[int]) -> tuple[int, bool]:
    """The seed to train now, and whether its line starts fresh (another seed's line was the current one)."""
    current = p.seed if p.seed is not None else (seeds[0] if p.training_segments else None)  # a log from before seeds
    seed = pending_seed(p, seeds, current)
    return seed, seed != current


def _refuse_unsupported_launch(config) -> None:
    distributed.require_supported_sharding()
    if distributed.world_size() > 1 and not ENGINES[config.engine.name].multi_process:
        launchable = ", ".join(name for name, spec in ENGINES.items() if spec.multi_process)
        raise BadInput(f"engine.name: {config.engine.name} trains in one process; a multi-process launch needs an "
                       f"engine whose trainers run on accelerate ({launchable})")
    if distributed.world_size() > 1 and config.priority_sampling is not None:
        raise BadInput("priority_sampling: each rank sees only its own replies' rewards, so the ranks would draw "
                       "different batches; train it in one process")


class _Sampling:
    """Builds the sampler the engine draws its batches from, for the engine's prompts per step, and keeps
    it for the train_step events (the batch mix)."""

    def __init__(self, session: Session, pool: list[TaskItem], held_out: list[TaskItem]):
        self._session, self._pool, self._held_out = session, pool, held_out
        self.sampler: Sampler | None = None

    def make(self, prompts_per_step: int) -> Sampler:
        config = self._session.config
        if config.priority_sampling is None:
            self.sampler = PassSampler(self._pool, prompts_per_step, config.train.max_steps, config.run.seed)
        else:
            fresh = FreshItems(self._session, self._pool, self._held_out)
            self.sampler = PrioritySampler(self._pool, prompts_per_step, config.run.seed, config.priority_sampling, fresh)
        return self.sampler


def _complete(session: Session, final: CheckpointRef, seeds: list[int], base_seed: int) -> None:
    p = session.projection
    if p.release is None:
        evaluate_release(session, final, base_seed)
    session.append(session.run.complete_line(final.step, p.best_step, final.dir, p.seed))
    if len(seeds) > 1 and p.complete:
        evaluate_release_across_seeds(session)
