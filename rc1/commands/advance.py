"""`rc1 advance`: ask the machine what comes next and do it; `--until STATE` / `--all` repeat."""

from __future__ import annotations

from rc1.config import load_config
from rc1.errors import BadInput
from rc1.machine import STATES
from rc1.session import Session
from rc1.stages.preflight import run_round1, run_round2
from rc1.stages.train import run_training


def next_stage(session: Session):
    """The stage the current state leads to, or None when the run is complete."""
    p = session.projection
    if p.complete:
        return None
    return {
        "INIT": ("round 1", run_round1),
        "R1_PASSED": ("round 2", run_round2),
        "R2_PASSED": ("training", run_training),
        "TRAINING": ("resume training", run_training),  # we hold the lock, so no live writer: a crash
        "CHECKPOINTED": ("resume training", run_training),
    }[p.state]


def run(args) -> int:
    if args.until and args.until not in STATES:
        raise BadInput(f"--until {args.until!r}: expected one of {', '.join(STATES)}")
    loaded = load_config(args.config, args.overrides)
    with Session.open(loaded) as session:
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
