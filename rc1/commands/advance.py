"""`rc1 advance`: ask the machine what comes next and do it; `--until STATE` / `--all` repeat."""

from __future__ import annotations

import importlib

from rc1.commands._run_config import config_of
from rc1.errors import BadInput
from rc1.machine import STATES
from rc1.session import Session

# The stage that produces each trigger of the machine's STAGE_TRIGGERS. Each is imported when it runs: asking
# a finished run what comes next imports no training stack.
STAGES = {"round1_passed": ("round 1", "preflight:run_round1"), "round2_passed": ("round 2", "preflight:run_round2"),
          "training_started": ("training", "train:run_training")}


def _stage(name: str):
    module, function = name.split(":")
    return getattr(importlib.import_module(f"rc1.stages.{module}"), function)


def next_stage(session: Session):
    """The stage whose trigger the machine allows now, or None when it allows none (a complete run)."""
    stage = session.replayer.machine.next_stage()
    if stage is None:
        return None
    trigger, resuming = stage
    name, action = STAGES[trigger]
    return ("resume training" if resuming else name), _stage(action)


def run(args) -> int:
    if args.until and args.until not in STATES:
        raise BadInput(f"--until {args.until!r}: expected one of {', '.join(STATES)}")
    loaded = config_of(args)
    with Session.open(loaded, accept_changed_inputs=args.accept_changed_inputs) as session:
        while True:
            stage = next_stage(session)
            if stage is None:
                print(f"run {session.ws.run} is complete at step {session.projection.step}")
                break
            name, action = stage
            print(f"[{session.projection.state}] {name} …", flush=True)
            action(session)
            print(f"[{session.projection.state}] {name} done", flush=True)
            if args.until and STATES.index(session.projection.state) >= STATES.index(args.until):
                break
            if not args.all and not args.until:
                break
        _print_where(session)
    return 0


def _print_where(session: Session) -> None:
    ws = session.ws
    p = session.projection
    print(f"state {p.state}{' (complete)' if p.complete else ''}, step {p.step}/{p.max_steps or '-'}, {p.events} events")
    print(f"  log          {ws.log_path.relative_to(ws.root)}")
    if p.latest_checkpoint:
        print(f"  checkpoints  {ws.checkpoints_dir.relative_to(ws.root)}/ (latest step {p.latest_checkpoint.step})")
    print(f"  reports      {ws.reports_dir.relative_to(ws.root)}/  logs {ws.logs_dir.relative_to(ws.root)}/train.log")
