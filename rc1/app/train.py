"""The training stage: check the round-2 gate, pick the checkpoint to resume, train, record. The policy it
trains is loaded by rc1/app/policy.py.

Every optimizer step becomes a train_step event; every checkpoint is published
atomically, hashed, recorded as checkpoint_saved, and only then linked as `latest`.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

import msgspec

from rc1.app.gate import ensure_inputs_unchanged, require_allowed
from rc1.app.halt import halted
from rc1.app.line_engine import build_line_engine
from rc1.app.line_roles import role_of
from rc1.app.policy import line_session
from rc1.app.session import Session
from rc1.core import distributed
from rc1.core.errors import GateClosed
from rc1.run.monitors.sections import reading_sampled_replies, watched
from rc1.run.projection import CheckpointRef
from rc1.run.replay import pending_seed
from rc1.train import checkpoints
from rc1.train.divergence import NonFiniteStep
from rc1.train.frozen_base import frozen_sha256
from rc1.train.launch import exact_resume, refuse_unsupported_launch, rollout_backend
from rc1.train.protocols import TrainingEnded, Verdict
from rc1.train.runtime import free_memory
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
    line = TrainingLine(session, explicit_resume)
    if line.settle() or not line.setup():
        return
    line.finish(line.train())


class TrainingLine:
    """One line of training as a recipe, in the order its methods run:

    - `__init__` prepares: which line (the next unfinished seed), on which config, resumed from which checkpoint;
    - `settle` ends a line whose end the log already holds (a recorded stop, the final checkpoint saved);
    - `setup` builds the policy, its scoring and the engine, and records the trips the log owes (which may end the
      line); then training_started;
    - `train` evaluates the untrained policy first (unless the log has it) and trains to a verdict or max_steps;
    - `finish` lets go of the trainer and ends the line: the release verdict, or the halt.

    What differs between the process that records (rank 0) and the others is its role (rc1/app/line_roles.py),
    chosen once here."""

    def __init__(self, session: Session, explicit_resume: Path | None):
        if session.projection.halt is not None:
            raise halted(session.projection, session.ws.run)
        require_allowed(session, "training_started", "training")
        ensure_inputs_unchanged(session, session.projection.gates["round2"].fingerprints, "round 2")
        seeds = list(session.config.run.seeds)
        self.seed, self.new_line = _next_line(session.projection, seeds)
        if self.new_line and explicit_resume is not None:
            raise GateClosed(
                f"{explicit_resume}: seed {self.seed}'s line of training starts fresh; there is nothing to resume"
            )
        self.base_seed = session.config.run.seed  # the data's seed builds the built-in base model, shared by every line
        self.seeds = seeds
        self.session = line_session(session, self.seed, seeds)
        self.config = self.session.config
        refuse_unsupported_launch(self.config)  # this line's config, before anything of it is appended
        self.role = role_of(self.session, seeds, self.base_seed)
        self.resume = self._resume_from(explicit_resume)

    def _resume_from(self, explicit: Path | None) -> CheckpointRef | None:
        """The checkpoint this line resumes from: none for a new line or a halt's start over, the one a halt's way
        forward named, else the newest that verifies (or the one --resume names)."""
        p = self.session.projection
        if p.resume_step is not None and explicit is not None:
            raise GateClosed(
                f"{explicit}: the halt's way forward chose step {p.resume_step} to resume from; drop --resume"
            )
        if self.new_line or p.resume_step == 0:  # a halt's way forward may start the line over from the base
            return None
        if p.resume_step:  # a halt's way forward named the checkpoint
            explicit = self.session.ws.root / next(c for c in p.checkpoints if c.step == p.resume_step).dir
        return pick_resume(self.session, explicit)

    def settle(self) -> bool:
        """End the line now if the log already holds its end; True when it did."""
        p = self.session.projection
        if not self.new_line and p.monitor.stopping is not None:  # a stop recorded, its line not completed yet
            stop = p.monitor.stopping
            self.role.end(Verdict(action="stop", rule=stop.rule, step=stop.step, message=stop.reason))
            return True
        if self.resume is not None and self.resume.step >= self.config.train.max_steps:
            self.role.complete(self.resume)  # crashed after the final checkpoint, before run_completed
            return True
        return False

    def setup(self) -> bool:
        """The policy, its scoring and the engine; then the trips the log owes, and training_started. False when an
        owed trip ended the line."""
        from rc1.train.device import deterministic_kernels, select_device

        session, p = self.session, self.session.projection
        deterministic_kernels(select_device(), self.config.train.deterministic)  # before the policy's first CUDA kernel
        built = build_line_engine(
            session, self.base_seed, {k: a.value for k, a in p.amendments.items()}, session.ws.staging_dir
        )
        self.engine, self.shadow, self.scoring = built.engine, built.shadow, built.scoring
        self.recorder, self.sampling, self.device = built.recorder, built.sampling, built.device
        thinking, dtype, tokenizer = built.thinking, built.dtype, built.tokenizer
        del built  # the engine holds the policy; `_let_go` lets go of both
        # The trips of the line's last check at or before where it resumes, if a kill (or a failure) came between that
        # check and its trips: rank 0 records them and every rank learns the verdict (the engine has joined the ranks).
        owed = None if self.new_line else self.role.owed_trips(self.resume.step if self.resume else 0)
        owed = distributed.share(owed)
        if owed is not None:
            self.engine.close()
            self._let_go()
            self.role.end(owed)
            return False
        moved = self._start(thinking, dtype, _tool_template_sha256(self.config, tokenizer))
        if moved is not None:  # the base this segment loaded is not the one the line started on
            self.engine.close()
            self._let_go()
            self.role.end(moved)
            return False
        return True

    def _start(self, thinking: bool, dtype, tool_template_sha256: str | msgspec.UnsetType) -> Verdict | None:
        """training_started: what the line trains, from where, and what watches it; the frozen_base guard's halt
        where the base it loaded is not the one the line started on (recorded by rank 0, learnt by every rank)."""
        config, resume = self.config, self.resume
        backend = rollout_backend(config, self.device)
        frozen = frozen_sha256(self.engine.model)
        self.session.append(
            self.session.run.start_training(
                resume_from_step=resume.step if resume else 0,
                resume_from_dir=resume.dir if resume else None,
                max_steps=config.train.max_steps,
                engine=config.engine.name,
                strategy=config.engine.strategy,
                model=config.model.name,
                device=self.device,
                dtype=str(dtype).removeprefix("torch."),
                seed=self.seed,
                seeds=self.seeds,
                generation=backend,
                exact_resume=exact_resume(config, self.device, backend),
                thinking=thinking,
                tool_template_sha256=tool_template_sha256,
                monitors=watched(config.monitors),
                weights=dict(self.scoring.weights or {}),
                processes=distributed.world_size(),
                frozen_sha256=frozen or msgspec.UNSET,
            )
        )
        _note_unread_rules(config)
        return distributed.share(self.role.base_moved(frozen, resume.step if resume else 0))

    def train(self) -> Verdict | None:
        """Train to max_steps (None), or to the verdict a monitor or a non-finite step gives; a failure is recorded
        by the writer and raised."""
        p, resume, sampling = self.session.projection, self.resume, self.sampling
        # An amendment made after the checkpoint was saved replaces what the checkpoint holds (its learning rate, β).
        amended_keys = frozenset(key for key, a in p.amendments.items() if resume is None or a.seq > resume.seq)
        hooks = self.role.hooks(
            self.engine, self.shadow, self.scoring, lambda step: sampling.sampler.mix(step), self.recorder
        )
        # The untrained policy is evaluated first (what the release gate measures the gain from), unless the log has
        # it: rank 0's log decides, and every rank generates its share.
        evaluate_first = distributed.share(resume is None and not any(e.step == 0 for e in p.evals))
        try:
            if evaluate_first:
                decide_together(partial(self.role.check_first, hooks))
            self.engine.train(hooks, self.session.ws.root / resume.dir if resume else None, amended=amended_keys)
        except TrainingEnded as ended:
            return ended.verdict
        except NonFiniteStep as fault:  # every rank meets it (the gradients are all-reduced)
            return self.role.non_finite(fault)
        except Exception as error:
            self.role.failed(error)
        finally:
            hooks.close()
            self.engine.close()
        return None

    def finish(self, verdict: Verdict | None) -> None:
        """The verdict loads the checkpoint it measures from disk, and the next line its own trainer: the trained
        policy, its optimizer and what the accelerator cached for them are let go of first."""
        self._let_go()
        self.role.finish(verdict, self.config.train.max_steps)

    def _let_go(self) -> None:
        """Drop the closed engine (and with it the policy) and what the accelerator cached for them."""
        del self.engine
        free_memory(self.device)


def _note_unread_rules(config) -> None:
    """Say which watched rules read a signal this engine and strategy do not record (they never trip here)."""
    from rc1.registry.strategies import STRATEGIES

    spec = STRATEGIES[config.engine.strategy]
    if spec.trains_on == "gold":
        unread = reading_sampled_replies(config.monitors)
        if unread:
            print(
                f"note: {config.engine.strategy} samples no replies to train on: monitors {', '.join(unread)} read "
                "nothing and never trip",
                file=sys.stderr,
            )


def _tool_template_sha256(config, tokenizer) -> str | msgspec.UnsetType:
    """A live line's chat template's sha256, the one the engine's tool tokenizer renders with (`with_tool_calling`
    picks it by the same `tool_chat_template`); UNSET for a recorded line, whose training_started is as before."""
    if config.data.episodes != "live":
        return msgspec.UNSET
    from rc1.train.live_tools import tool_template_sha256

    return tool_template_sha256(tokenizer.chat_template)


def _next_line(p, seeds: list[int]) -> tuple[int, bool]:
    """The seed to train now, and whether its line starts fresh (another seed's line was the current one)."""
    current = p.seed if p.seed is not None else (seeds[0] if p.training_segments else None)  # a log from before seeds
    seed = pending_seed(p, seeds, current)
    return seed, seed != current
