"""The training stage: check the round-2 gate, pick the checkpoint to resume, train, record. The policy it
trains is loaded by rc1/app/policy.py.

Every optimizer step becomes a train_step event; every checkpoint is published
atomically, hashed, recorded as checkpoint_saved, and only then linked as `latest`.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

from rc1.app.amend import apply_amendments
from rc1.app.fresh import FreshItems
from rc1.app.gate import ensure_inputs_unchanged, require_allowed
from rc1.app.halt import halted
from rc1.app.policy import line_session, load_run_policy
from rc1.app.release import evaluate_release, evaluate_release_across_seeds, join_release
from rc1.app.rollouts import RolloutRecorder
from rc1.app.scoring import open_scoring, policy_thinking
from rc1.app.session import Session
from rc1.app.train_hooks import EvalWorker, EventHooks, record_trips
from rc1.core import distributed
from rc1.core.errors import DiskFull, GateClosed, Halted, TrainingError
from rc1.core.failure import write_error_report
from rc1.data.task import TaskItem, read_items
from rc1.run.monitors.rules import NON_FINITE
from rc1.run.monitors.sections import watched
from rc1.run.projection import CheckpointRef
from rc1.run.replay import pending_seed
from rc1.scoring.control import with_shuffled_answers
from rc1.scoring.pipeline import make_reward_fn
from rc1.train import checkpoints
from rc1.train.divergence import NonFiniteStep
from rc1.train.launch import exact_resume, refuse_unsupported_launch, rollout_backend
from rc1.train.protocols import TrainingEnded, Verdict
from rc1.train.runtime import free_memory
from rc1.train.sampler import PassSampler, PrioritySampler, Sampler
from rc1.train.together import decide_together


def pick_resume(session: Session, explicit: Path | None) -> CheckpointRef | None:
    """The newest checkpoint the log vouches for and whose files still match their hashes."""
    root = session.ws.root
    candidates = list(reversed(session.projection.checkpoints))
    if explicit is not None:
        wanted = explicit.resolve()
        candidates = [c for c in candidates if (root / c.dir).resolve() == wanted]
        if not candidates:
            raise GateClosed(
                f"{explicit}: no checkpoint_saved event vouches for this directory; it cannot be resumed from"
            )
    for ref in candidates:
        problems = checkpoints.verify(root / ref.dir, ref.files)
        if not problems:
            return ref
        print(f"warning: checkpoint {ref.dir} fails verification, not resuming from it: {problems[0]}", file=sys.stderr)
        if explicit is not None:
            raise GateClosed(f"{explicit}: checkpoint fails verification: {'; '.join(problems)}")
    return None


def run_training(session: Session, explicit_resume: Path | None = None) -> None:
    """Train (or resume) the next unfinished line of training: one per seed of `run.seeds`, in order. The monitors
    watch it (rc1/run/monitors/): a halt ends the command with exit 3 (the run HALTED), a stop ends the line early."""
    if session.projection.halt is not None:
        raise halted(session.projection, session.ws.run)
    require_allowed(session, "training_started", "training")
    ensure_inputs_unchanged(session, session.projection.gates["round2"].fingerprints, "round 2")
    seeds = list(session.config.run.seeds)
    seed, new_line = _next_line(session.projection, seeds)
    if new_line and explicit_resume is not None:
        raise GateClosed(f"{explicit_resume}: seed {seed}'s line of training starts fresh; there is nothing to resume")
    base_seed = session.config.run.seed  # the data's seed builds the built-in base model, shared by every line
    session = line_session(session, seed, seeds)
    config = session.config
    refuse_unsupported_launch(config)  # this line's config, before anything of it is appended
    p = session.projection
    writer = distributed.is_writer()
    if p.resume_step is not None and explicit_resume is not None:
        raise GateClosed(
            f"{explicit_resume}: the halt's way forward chose step {p.resume_step} to resume from; drop --resume"
        )
    restart = p.resume_step == 0  # a halt's way forward: the line starts over from the base
    if p.resume_step:  # a halt's way forward named the checkpoint
        explicit_resume = session.ws.root / next(c for c in p.checkpoints if c.step == p.resume_step).dir
    resume = None if new_line or restart else pick_resume(session, explicit_resume)
    if not new_line and p.monitor.stopping is not None:  # a stop recorded, its line not completed yet
        if writer:
            _complete(
                session, _final_before(p, p.monitor.stopping.step), seeds, base_seed, _stopped(p.monitor.stopping)
            )
        else:
            join_release(session, base_seed)
        return
    if resume is not None and resume.step >= config.train.max_steps:
        if writer:  # crashed after the final checkpoint, before run_completed
            _complete(session, resume, seeds, base_seed)
        else:
            join_release(session, base_seed)
        return

    from rc1.train.device import deterministic_kernels, select_device
    from rc1.train.engines import build_engine

    deterministic_kernels(select_device(), config.train.deterministic)  # before the policy's first CUDA kernel
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
    trains_with = apply_amendments(session.loaded, {k: a.value for k, a in p.amendments.items()}).config
    engine = build_engine(trains_with, pool, reward_fn, model, tokenizer, session.ws.staging_dir, device, sampling.make)
    if engine.truncated_prompts:
        print(
            f"note: {engine.truncated_prompts} of {len(pool)} prompts were cut to fit train.max_prompt_tokens "
            f"({config.train.max_prompt_tokens}); their earliest turns are left out",
            file=sys.stderr,
        )
    # The trips of the line's last check at or before where it resumes, if a kill (or a failure) came between that
    # check and its trips: rank 0 records them and every rank learns the verdict (the engine has joined the ranks).
    owed = record_trips(session, up_to_step=resume.step if resume else 0) if writer and not new_line else None
    owed = distributed.share(owed)
    if owed is not None:
        engine.close()
        del engine, model
        free_memory(device)
        if writer:
            _end(session, owed, seeds, base_seed)
        elif owed.action == "halt":
            raise Halted(
                f"rank {distributed.rank()}: halted by {owed.rule} at step {owed.step} (rank 0 says how to go on)"
            )
        else:
            join_release(session, base_seed)
        return
    backend = rollout_backend(config, device)
    session.append(
        session.run.start_training(
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
            generation=backend,
            exact_resume=exact_resume(config, device, backend),
            thinking=thinking,
            monitors=watched(config.monitors),
            weights=dict(scoring.weights or {}),
            processes=distributed.world_size(),
        )
    )
    _note_unread_rules(config, trains_with)
    # An amendment made after the checkpoint was saved replaces what the checkpoint holds (its learning rate, its β).
    amended_keys = frozenset(key for key, a in p.amendments.items() if resume is None or a.seq > resume.seq)
    hooks = (
        EventHooks(session, engine, shadow, scoring, lambda step: sampling.sampler.mix(step), recorder)
        if writer
        else EvalWorker(config, engine, shadow, recorder)
    )
    # The untrained policy is evaluated first (what the release gate measures the gain from), unless the log has it:
    # rank 0's log decides, and every rank generates its share.
    evaluate_first = distributed.share(resume is None and not any(e.step == 0 for e in session.projection.evals))
    verdict = None
    try:
        if evaluate_first:
            decide_together(partial(_check_first, session, hooks, writer))  # not a closure: hooks is deleted below
        engine.train(hooks, session.ws.root / resume.dir if resume else None, amended=amended_keys)
    except TrainingEnded as ended:
        verdict = ended.verdict
    except NonFiniteStep as fault:  # every rank meets it (the gradients are all-reduced); rank 0 records it
        if writer:
            session.append(session.run.trip_non_finite(fault.step, fault.measured, fault.what))
        verdict = Verdict(action="halt", rule=NON_FINITE, step=fault.step, message=fault.what)
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
        raise TrainingError(
            f"training failed at step {session.projection.step}: {error} ({details}){unlogged}"
        ) from error
    finally:
        hooks.close()
        engine.close()
    # The verdict loads the checkpoint it measures from disk, and the next line its own trainer: the trained policy,
    # its optimizer and what the accelerator cached for them are let go of first.
    del engine, model, hooks
    free_memory(device)
    if not writer:
        if verdict is not None and verdict.action == "halt":
            raise Halted(
                f"rank {distributed.rank()}: halted by {verdict.rule} at step {verdict.step} (rank 0 says how to go on)"
            )
        join_release(session, base_seed)  # rank 0 completes the line; this rank generates its share of the verdict
        return
    if verdict is not None:
        _end(session, verdict, seeds, base_seed)
        return
    latest = session.projection.latest_checkpoint
    if latest is None or latest.step != config.train.max_steps:
        raise TrainingError(
            f"training stopped at step {session.projection.step} without a checkpoint at max_steps "
            f"{config.train.max_steps}"
        )
    _complete(session, latest, seeds, base_seed)


def _check_first(session: Session, hooks, writer: bool) -> Verdict | None:
    """The step-0 evaluation and (rank 0) the monitors' check of it."""
    hooks.evaluate(0)
    return record_trips(session) if writer else None


def _end(session: Session, verdict: Verdict, seeds: list[int], base_seed: int) -> None:
    """Training ended on a monitor's verdict: a halt leaves the run HALTED (exit 3); a stop completes the line from its
    newest checkpoint at or before the step, and the release verdict runs as at max_steps."""
    p = session.projection
    if verdict.action == "halt":
        raise halted(p, session.ws.run)
    _complete(session, _final_before(p, verdict.step), seeds, base_seed, _stopped(p.monitor.stopping))


def _final_before(p, step: int) -> CheckpointRef:
    final = [c for c in p.checkpoints if c.step <= step]
    if not final:
        raise TrainingError(
            f"the line stopped at step {step} before its first checkpoint: nothing to take to the "
            "verdict; resume it (rc1 advance) or start a new run"
        )
    return final[-1]


def _stopped(trip) -> str:
    """run_completed's reason for a line that ended early: a `stop` trip, or a person's choice at a halt."""
    if trip is None:
        return "stopped"
    if trip.reason:
        return f"stopped after {trip.rule}'s halt at step {trip.step}: {trip.reason}"
    return f"stopped by {trip.rule} at step {trip.step}"


def _note_unread_rules(config, trains_with) -> None:
    """Say which watched rules read a signal this engine and strategy do not record (they never trip here)."""
    from rc1.registry.strategies import STRATEGIES

    spec = STRATEGIES[config.engine.strategy]
    if spec.trains_on == "gold":
        unread = [rule for rule in ("entropy_floor", "truncation", "no_signal") if getattr(config.monitors, rule)]
        if unread:
            print(
                f"note: {config.engine.strategy} samples no replies to train on: monitors {', '.join(unread)} read "
                "nothing and never trip",
                file=sys.stderr,
            )


def _next_line(p, seeds: list[int]) -> tuple[int, bool]:
    """The seed to train now, and whether its line starts fresh (another seed's line was the current one)."""
    current = p.seed if p.seed is not None else (seeds[0] if p.training_segments else None)  # a log from before seeds
    seed = pending_seed(p, seeds, current)
    return seed, seed != current


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
            self.sampler = PrioritySampler(
                self._pool, prompts_per_step, config.run.seed, config.priority_sampling, fresh
            )
        return self.sampler


def _complete(
    session: Session, final: CheckpointRef, seeds: list[int], base_seed: int, reason: str = "max_steps"
) -> None:
    p = session.projection
    evaluate_release(session, final, base_seed)  # every rank joins it (nothing to do when the verdict is logged)
    session.append(session.run.complete_line(final.step, p.best_step, final.dir, p.seed, reason))
    if len(seeds) > 1 and p.complete:
        evaluate_release_across_seeds(session)
