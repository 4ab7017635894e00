"""`rc1 advance`: ask the machine what comes next and do it; `--until STATE` / `--all` repeat. In HALTED, the way
forward is chosen first: `--because TEXT` goes on, `--from CHECKPOINT` rolls back (with `--set` on the amendable
training keys), `--stop` ends the line (rc1/app/halt.py)."""

from __future__ import annotations

import argparse
import importlib

from rc1.app.session import Session
from rc1.cli.args import config_args
from rc1.config.kept import load_run_config
from rc1.core.errors import BadInput
from rc1.run.machine import STATES

# The stage that produces each trigger of the machine's STAGE_TRIGGERS. Each is imported when it runs: asking
# a finished run what comes next imports no training stack.
STAGES = {
    "round1_passed": ("round 1", "preflight:run_round1"),
    "round2_passed": ("round 2", "preflight:run_round2"),
    "training_started": ("training", "train:run_training"),
}


HELP = "do the next stage the state machine allows"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--until", metavar="STATE", help="repeat until the run reaches STATE")
    group.add_argument("--all", action="store_true", help="repeat until the run is complete")
    halt = parser.add_argument_group("a halted run's way forward (recorded as halt_acknowledged)")
    halt.add_argument(
        "--because",
        metavar="TEXT",
        help="why: required to go on past a halt; alone, training goes on "
        "from the newest checkpoint with the rule quiet until it clears",
    )
    halt.add_argument(
        "--from",
        dest="rollback_to",
        metavar="best|latest|step_N|start",
        help="roll back to this checkpoint of the halted line (start: begin the line again); --set may "
        "amend train.learning_rate, train.beta, train.temperature, train.max_grad_norm, "
        "train.target_kl",
    )
    halt.add_argument(
        "--stop",
        action="store_true",
        help="end the halted line here; its release verdict runs on the checkpoint the shadow set chose",
    )


def _stage(name: str):
    module, function = name.split(":")
    return getattr(importlib.import_module(f"rc1.app.{module}"), function)


def next_stage(session: Session):
    """The stage whose trigger the machine allows now, or None when it allows none (a complete run)."""
    stage = session.replayer.machine.next_stage()
    if stage is None:
        return None
    trigger, resuming = stage
    name, action = STAGES[trigger]
    if resuming and session.projection.monitor.stopping is not None:
        return "complete the stopped line", _stage(action)
    return ("resume training" if resuming else name), _stage(action)


def run(args) -> int:
    if args.until and args.until not in STATES:
        raise BadInput(f"--until {args.until!r}: expected one of {', '.join(STATES)}")
    choosing = args.because is not None or args.rollback_to is not None or args.stop
    overrides, amendments = args.overrides, {}
    if choosing:  # the amendable keys are the rollback's to record, not a change of the kept config
        from rc1.app.amend import split_overrides

        overrides, amendments = split_overrides(args.overrides)
    loaded = load_run_config(args.config, overrides, args.run, args.accept_changed_inputs)
    with Session.open(loaded, accept_changed_inputs=args.accept_changed_inputs) as session:
        if choosing or session.projection.halt is not None:
            from rc1.app.halt import acknowledge

            acknowledge(session, args.because, rollback_to=args.rollback_to, stop=args.stop, amendments=amendments)
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
    print(
        f"state {p.state}{' (complete)' if p.complete else ''}, step {p.step}/{p.max_steps or '-'}, {p.events} events"
    )
    print(f"  log          {ws.log_path.relative_to(ws.root)}")
    if p.latest_checkpoint:
        print(f"  checkpoints  {ws.checkpoints_dir.relative_to(ws.root)}/ (latest step {p.latest_checkpoint.step})")
    print(f"  reports      {ws.reports_dir.relative_to(ws.root)}/  logs {ws.logs_dir.relative_to(ws.root)}/train.log")
