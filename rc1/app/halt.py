"""A halted run and the ways out of it, chosen by a person and recorded with their reason (halt_acknowledged):

- go on (`rc1 advance --because TEXT`): from the newest checkpoint, the rule that halted quiet for the line until it
  clears past the halt's step (resume is exact: going on unchanged replays the same steps, and would halt again);
- roll back (`--from best|latest|step_N|start`, with `--set` on the amendable training keys, rc1/app/amend.py):
  from that checkpoint of the halted line (start: the line starts over from the base, as a line halted before its
  first checkpoint must), the amendment recorded first (training_amended); with nothing amended it goes on from there
  as above;
- stop the line (`--stop --because TEXT`): it completes here, and its release verdict runs on the checkpoint the shadow
  set chose.

A non-finite step is never gone past unchanged: it replays exactly, so only a rollback with an amended key is taken.
"""

from __future__ import annotations

import sys

from rc1.app.amend import AMENDABLE, amended, changes_of, check_amended
from rc1.app.session import Session
from rc1.core.errors import BadInput, GateClosed, Halted
from rc1.run.monitors.rules import MONITORS, NON_FINITE
from rc1.run.projection import CheckpointRef, Projection
from rc1.train import checkpoints

WAYS = (
    "go on from the newest checkpoint: rc1 advance --because TEXT",
    "roll back: rc1 advance --from best|latest|step_N|start [--set train.learning_rate=…] --because TEXT",
    "stop the line and take its best checkpoint to the verdict: rc1 advance --stop --because TEXT",
)


def halt_line(p: Projection, run: str) -> str:
    """One line: the rule, the step, what it measured, and the ways forward."""
    h = p.halt
    return (
        f"run {run} is HALTED by {h.rule} at step {h.step}: {h.detail}. The way forward is yours to choose and is "
        f"recorded with your reason: {'; '.join(WAYS)}"
    )


def runbook_of(rule: str) -> str:
    return f"{rule}:\n{MONITORS[rule].runbook.text()}"


def halted(p: Projection, run: str) -> Halted:
    """The error a halting command ends with (exit 3), its runbook printed before it."""
    print(runbook_of(p.halt.rule), file=sys.stderr)
    return Halted(halt_line(p, run))


def acknowledge(
    session: Session, because: str | None, *, rollback_to: str | None, stop: bool, amendments: dict[str, object]
) -> None:
    """Record the way forward from the halt the run is in (nothing is appended when it is refused)."""
    p = session.projection
    if p.halt is None:
        raise GateClosed(
            f"run {session.ws.run} is not halted (state {p.state}); --because, --from and --stop choose the "
            "way forward from a halt"
        )
    if not because:
        raise halted(p, session.ws.run)
    if amendments and rollback_to is None:
        raise BadInput(
            f"--set {', '.join(amendments)}: an amended key takes effect from a checkpoint; add --from "
            "best|latest|step_N"
        )
    if stop:
        if rollback_to is not None or amendments:
            raise BadInput("--stop: the line ends at the halt; --from and --set choose a rollback instead")
        if not any(c.step <= p.halt.step for c in p.checkpoints):
            raise GateClosed(
                f"--stop: the line halted at step {p.halt.step}, before its first checkpoint: there is "
                "nothing to take to the verdict; begin it again: rc1 advance --from start [--set …] "
                "--because TEXT (nothing was appended)"
            )
        session.append(session.run.acknowledge_halt("stop", because, None, None, silenced=False))
        return
    if p.halt.rule == NON_FINITE and not amendments:
        where = "latest" if p.checkpoints else "start"
        raise GateClosed(
            f"{NON_FINITE} at step {p.halt.step}: the same step from the same checkpoint replays the same "
            f"fault exactly; roll back with an amended key: rc1 advance --from {where} --set "
            "train.learning_rate=<lower> --because TEXT (nothing was appended)"
        )
    target = _checkpoint(session, rollback_to or "latest")
    if amendments:
        trains_with = amended(session.loaded, _in_force(p))  # the kept config and the amendments made before
        changes = changes_of(trains_with, amendments)
        if not changes:
            raise BadInput(f"--set {', '.join(amendments)}: the same values the run trains with; nothing to amend")
        check_amended(amended(trains_with, amendments))
        session.append(session.run.amend_training(changes))
    choice = "rollback" if rollback_to is not None else "continue"
    session.append(
        session.run.acknowledge_halt(
            choice, because, target.dir if target else None, target.step if target else 0, silenced=not amendments
        )
    )


def _in_force(p: Projection) -> dict[str, object]:
    return {key: view.value for key, view in p.amendments.items()}


def _checkpoint(session: Session, name: str) -> CheckpointRef | None:
    """The halted line's checkpoint `name` (best, latest, step_N), its files verified against its checkpoint_saved;
    None for start (the line starts over)."""
    p = session.projection
    line = p.checkpoints
    if name == "start":
        return None
    if name == "latest":
        chosen = line[-1] if line else None
    elif name == "best":
        chosen = next((c for c in line if c.step == p.best_step), None)
        if chosen is None:
            raise BadInput(
                f"--from best: no checkpoint of this line was promoted to best/ (its checkpoints: "
                f"{', '.join(f'step_{c.step}' for c in line) or 'none'}); name one with --from step_N"
            )
    elif name.startswith("step_") and name[5:].isdigit():
        chosen = next((c for c in line if c.step == int(name[5:])), None)
    else:
        raise BadInput(f"--from {name}: expected best, latest, step_N or start")
    if chosen is None:
        raise BadInput(
            f"--from {name}: the halted line has no such checkpoint (its checkpoints: "
            f"{', '.join(f'step_{c.step}' for c in line) or 'none: --from start begins it again'})"
        )
    problems = checkpoints.verify(session.ws.root / chosen.dir, chosen.files)
    if problems:
        raise BadInput(f"--from {name}: {chosen.dir} fails verification against its checkpoint_saved: {problems[0]}")
    return chosen


def amendable_keys() -> str:
    return ", ".join(AMENDABLE)
