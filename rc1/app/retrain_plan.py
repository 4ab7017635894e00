"""What `rc1 audit --retrain` trains again, from which checkpoint, on which config, and what it compares with: a pure
function of the log's events (docs/rollouts-and-audit.md, "Retraining a checkpoint").

A checkpoint is named by its folder (`checkpoints/local/step_00012`), or by its step (`step_12`, `12`) where one line
of training has it. Its files are those of the folder's last `checkpoint_saved` (a rollback that trained a step again
published it again in the same folder). It is retrained from the newest checkpoint of its line saved before it (or the
one `--from` names; `step_0`: the line's base), and compared with the `train_step` events the log kept for those steps
(the last of each step before the target was saved) and with every checkpoint of the line saved in between.
"""

from __future__ import annotations

import re

import msgspec

from rc1.core.errors import BadInput
from rc1.run import events as ev
from rc1.run.projection import CheckpointRef

_STEP = re.compile(r"^(?:step_)?(\d+)$")


class RetrainPlan(msgspec.Struct, frozen=True, kw_only=True):
    seed: int | None  # the line's seed (None: a log from before seeds were lines)
    line: str  # the line's checkpoint folder, relative to the workspace (checkpoints/<run>[/seed_<s>])
    start: CheckpointRef | None  # None: from the line's base, as a fresh line starts
    target: CheckpointRef
    between: list[CheckpointRef]  # the line's checkpoints after start and before target, compared on the way
    steps: dict[int, ev.TrainStep]  # step -> the train_step the log kept for it, start.step + 1 … target.step
    amendments: dict[str, float | None]  # a rollback's keys in force where the target was trained
    amended: list[str]  # those whose value replaces what the start checkpoint holds (the resume after the rollback)
    exact: bool  # every segment that trained those steps recorded `exact_resume`
    # Steps the log holds more than once (a segment killed or rolled back, and the steps trained again): the retrain
    # is compared with the last, which made the checkpoint. With the seq of the training_started that trained them
    # last, and whether it recorded an exact resume.
    trained_again: list[int] = msgspec.field(default_factory=list)
    again_by: list[tuple[int, bool]] = msgspec.field(default_factory=list)
    processes: int  # the processes they were trained on (the retrain needs as many)
    engine: str
    strategy: str


class _Saved(msgspec.Struct, frozen=True):
    ref: CheckpointRef
    segment: ev.TrainingStarted


def plan_retrain(events: list[ev.Event], target: str, start: str | None = None) -> RetrainPlan:
    """The plan to retrain the checkpoint `target` names from the one `start` names (default: its predecessor). A
    name that matches nothing, or a pair that the log cannot join (an amendment in between that the target's segment
    did not resume across), is BadInput naming what would."""
    saved = _saved_checkpoints(events)
    aim = _resolve(saved, target, "--retrain")
    line = _line_of(aim.ref)
    earlier = [s for s in saved if _line_of(s.ref) == line and s.ref.step < aim.ref.step and s.ref.seq < aim.ref.seq]
    if start is None:
        begin = max(earlier, key=lambda s: s.ref.step, default=None)
    elif _step_of(start) == 0:
        begin = None
    else:
        begin = _resolve(earlier, start, "--from", among=f"the checkpoints of {line} saved before {aim.ref.dir}")
    begin_ref = begin.ref if begin is not None else None
    first = begin_ref.step if begin_ref is not None else 0
    seed = aim.segment.seed
    kept = _kept_steps(events, seed, aim.ref.seq)
    missing = [step for step in range(first + 1, aim.ref.step + 1) if step not in kept]
    if missing:
        raise BadInput(
            f"--retrain {target}: the log keeps no train_step of step {missing[0]} of {line}'s line: there is "
            "nothing to compare its retrained step with"
        )
    steps = {step: kept[step][0] for step in range(first + 1, aim.ref.step + 1)}
    again = [step for step in steps if kept[step][2] > 1]
    again_by = sorted({(kept[step][1].seq, kept[step][1].exact_resume) for step in again})
    segments = {kept[step][1].seq: kept[step][1] for step in steps}.values()
    processes = {segment.processes for segment in segments}
    if len(processes) > 1:
        raise BadInput(
            f"--retrain {target}: steps {first + 1}…{aim.ref.step} were trained on {sorted(processes)} processes in "
            "different segments; retrain from a checkpoint after the change (--from)"
        )
    amendments, amended = _amendments(events, aim, begin_ref, target)
    return RetrainPlan(
        seed=seed,
        line=line,
        start=begin_ref,
        target=aim.ref,
        between=sorted(
            (s.ref for s in earlier if s.ref.step > first and (begin_ref is None or s.ref.seq > begin_ref.seq)),
            key=lambda ref: ref.step,
        ),
        steps=steps,
        amendments=amendments,
        amended=amended,
        exact=all(segment.exact_resume for segment in segments),
        trained_again=again,
        again_by=again_by,
        processes=processes.pop(),
        engine=aim.segment.engine,
        strategy=aim.segment.strategy,
    )


def retrainable(events: list[ev.Event]) -> list[str]:
    """The folders of every checkpoint the log vouches for (each one's last save), in the order they were saved:
    what `--retrain all` draws from."""
    return [s.ref.dir for s in sorted(_saved_checkpoints(events), key=lambda s: s.ref.seq)]


def _saved_checkpoints(events: list[ev.Event]) -> list[_Saved]:
    """Each checkpoint folder's last save, with the segment of training that saved it."""
    segment, last = None, {}
    for event in events:
        if isinstance(event, ev.TrainingStarted):
            segment = event
        elif isinstance(event, ev.CheckpointSaved) and segment is not None:
            ref = CheckpointRef(step=event.step, dir=event.dir, files=event.files, seq=event.seq)
            last[event.dir] = _Saved(ref, segment)
    return list(last.values())


def _resolve(saved: list[_Saved], name: str, flag: str, among: str = "the log's checkpoints") -> _Saved:
    wanted = name.rstrip("/")
    step = _step_of(wanted)
    found = [s for s in saved if s.ref.dir == wanted or (step is not None and s.ref.step == step)]
    if len(found) == 1:
        return found[0]
    if not found:
        known = ", ".join(s.ref.dir for s in sorted(saved, key=lambda s: (s.ref.dir, s.ref.step))) or "none"
        raise BadInput(f"{flag} {name}: no checkpoint of {among} is named so (there: {known})")
    raise BadInput(
        f"{flag} {name}: more than one line of training has it ({', '.join(s.ref.dir for s in found)}); name the folder"
    )


def _step_of(name: str) -> int | None:
    matched = _STEP.match(name.rstrip("/"))
    return int(matched.group(1)) if matched else None


def _line_of(ref: CheckpointRef) -> str:
    return ref.dir.rsplit("/", 1)[0]


def _kept_steps(events: list[ev.Event], seed: int | None, before_seq: int) -> dict:
    """step -> (the last train_step of the line of `seed` before `before_seq`, the segment that trained it, how many
    times the line trained it)."""
    segment, kept = None, {}
    for event in events:
        if event.seq >= before_seq:
            break
        if isinstance(event, ev.TrainingStarted):
            segment = event
        elif isinstance(event, ev.TrainStep) and segment is not None and segment.seed == seed:
            kept[event.step] = (event, segment, kept[event.step][2] + 1 if event.step in kept else 1)
    return kept


def _amendments(
    events: list[ev.Event], aim: _Saved, begin: CheckpointRef | None, target: str
) -> tuple[dict[str, float | None], list[str]]:
    """The amended keys in force where the target was trained, and those the resume from `begin` put over what its
    checkpoint held. An amendment between `begin` and the target is a rollback: the target's segment must have
    resumed from `begin` itself, after it (else the retrained steps would run on two configs)."""
    amendments = [e for e in events if isinstance(e, ev.TrainingAmended)]
    in_force: dict[str, float | None] = {}
    for event in amendments:
        if event.seq < aim.segment.seq:
            in_force.update({key: change.new for key, change in event.changes.items()})
    after = begin.seq if begin is not None else -1
    crossed = [e for e in amendments if after < e.seq < aim.ref.seq]
    begin_step = begin.step if begin is not None else 0
    for event in crossed:
        if event.seq > aim.segment.seq or aim.segment.resume_from_step != begin_step:
            raise BadInput(
                f"--retrain {target}: training was amended at seq {event.seq} ({', '.join(event.changes)}) after "
                f"step {begin_step}, and the segment that trained {aim.ref.dir} resumed from step "
                f"{aim.segment.resume_from_step}: retrain from there (--from step_{aim.segment.resume_from_step})"
            )
    amended = sorted({key for event in crossed for key in event.changes}) if begin is not None else []
    return in_force, amended
