"""`make bench`, monitors (`python -m rc1.bench --monitors-only`): how often each rule trips on healthy runs, how soon
it catches the fault it is for, and what watching costs.

Whole runs of the embedded default (`rc1 advance --all`, rounds and verdict included) with its own monitors, one
workspace each, the base model shared:
- healthy: three training seeds, and the two control arms of `make bench` (format-only and shuffled rewards): any
  trip is a false trip (goal: none), reported with the rate over the five runs and its 95 % Clopper-Pearson interval;
- faults: a learning rate ×30 (collapse or a non-finite step: halted within how many steps, and every published
  checkpoint's weights finite); a reward function of yours that pays for dropping the `Answer:` line (reward hacking:
  halted at which evaluation); max_completion_tokens 4 (truncation: warned); a local judge (hf_judge) with a
  judge-call budget below what the line needs (halted before the budget is passed, against the ledger's count).
Each healthy log is also replayed with every rule as a warn (`rewatch`), so a rule that would have tripped after
another ended the run is counted too, with its margin to its threshold.

The cost of watching, in the same run: the drift measurement's own seconds (timed inside each evaluation) and the
monitors' fold (the log replayed with and without its rules, best of 3) against the training's wall time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from rc1.config.recorded import recorded_sets
from rc1.run import events as ev
from rc1.run.aggregate import RunAggregate
from rc1.run.monitors.sections import MonitorsConfig, rules_of, watched
from rc1.run.replay import Replayer

REPO = Path(__file__).resolve().parents[2]
CONFIG = "configs/local.yaml"

# Pays for a reply without the `Answer:` line the format component asks for: a reward a policy can earn without
# answering (rc1/bench/monitors.py writes it beside the arm's config).
DROP_ANSWER = """def no_answer_line(prompts, completions, completion_tokens, **columns):
    return [0.0 if "Answer:" in completion else 1.0 for completion in completions]
"""
DROP_ANSWER_WEIGHTS = {"correctness": 0.25, "f1": 0.05, "format": 0.1, "length": 0.1, "no_answer_line": 0.5}


@dataclass
class Arm:
    name: str
    kind: str  # healthy | fault
    extra: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # written into the arm's configs/ first
    expects: str = ""  # what the fault should be caught by


def arms() -> list[Arm]:
    budget = 2_000
    return [
        Arm("healthy, seed 1234", "healthy"),
        Arm("healthy, seed 2345", "healthy", ["--set", "run.seeds=[2345]"]),
        Arm("healthy, seed 3456", "healthy", ["--set", "run.seeds=[3456]"]),
        Arm("control: format-only reward", "healthy", ["--set", "reward.weights=weights_format_only.json"]),
        Arm("control: shuffled gold", "healthy", ["--set", "reward.answers=shuffled"]),
        Arm(
            "learning rate ×30",
            "fault",
            ["--set", "train.learning_rate=0.045"],
            expects="entropy_floor|no_signal|non_finite",
        ),
        Arm(
            "reward for dropping Answer:",
            "fault",
            [
                "--set",
                "reward.weights=weights_drop_answer.json",
                "--set",
                'reward.functions=[{name: no_answer_line, path: "drop_answer:no_answer_line", weight: 0.5}]',
            ],
            files={"drop_answer.py": DROP_ANSWER, "weights_drop_answer.json": json.dumps(DROP_ANSWER_WEIGHTS)},
            expects="reward_hacking",
        ),
        Arm(
            "max_completion_tokens 4",
            "fault",
            # round 2's thinking_fits would refuse the limit before training (the fault it is there for): opened, so
            # that the truncation monitor is what meets it
            ["--set", "train.max_completion_tokens=4", "--set", "preflight.max_cut_share=1.0"],
            expects="truncation",
        ),
        Arm(
            f"judge budget {budget} calls",
            "fault",
            [
                "--set",
                "scorer.provider=hf_judge",
                "--set",
                "scorer.model=__MODEL__",
                "--set",
                "reward.weights=weights_judge.json",
                "--set",
                f"monitors.budget.line.judge_calls={budget}",
            ],
            expects="budget",
        ),
    ]


def rewatch(events: list[ev.Event], monitors: MonitorsConfig) -> list[ev.MonitorTripped]:
    """The trips a log's line would have had with `monitors`, every action turned into warn (so one trip does not
    hide the next): the log replayed without its own trips, each check followed by the trips the rules give."""
    as_warn = watched(monitors)
    as_warn = msgspec.structs.replace(
        as_warn, **{rule: msgspec.structs.replace(params, action="warn") for rule, params in rules_of(as_warn).items()}
    )
    replayer = Replayer()
    run = RunAggregate(replayer)
    trips: list[ev.MonitorTripped] = []
    seq = 0
    for event in events:
        if isinstance(event, ev.MonitorTripped | ev.HaltAcknowledged | ev.TrainingAmended):
            continue
        if isinstance(event, ev.TrainingStarted):
            event = msgspec.structs.replace(event, monitors=as_warn)
        replayer.apply(msgspec.structs.replace(event, seq=seq))
        seq += 1
        if isinstance(event, ev.TrainStep | ev.EvalCompleted):
            for trip in run.monitor_trips():
                stamped = msgspec.structs.replace(trip, seq=seq, ts=event.ts)
                replayer.apply(stamped)
                trips.append(stamped)
                seq += 1
    return trips


def _run_arm(arm: Arm, root: Path, models: Path) -> tuple[int, list[ev.Event], float, str]:
    from rc1.eventlog.log import read_log

    shutil.copytree(REPO / "configs", root / "configs")
    for name, text in arm.files.items():
        (root / "configs" / name).write_text(text)
    (root / "data").mkdir()
    (root / "data" / "models").symlink_to(models, target_is_directory=True)
    if any("__MODEL__" in a for a in arm.extra):
        extra = [a.replace("__MODEL__", str(_tiny_model(models))) for a in arm.extra]
    else:
        extra = arm.extra
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "rc1", "advance", "--all", "--config", CONFIG, *recorded_sets(), *extra],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )
    seconds = time.perf_counter() - start
    log = root / "events" / "local.jsonl"
    events = read_log(log).events if log.exists() else []
    return done.returncode, events, seconds, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""


def _tiny_model(models: Path) -> Path:
    """The built-in model the first arm built (a judge for the budget arm: a local model, no hub)."""
    built = sorted(p for p in models.iterdir() if (p / "config.json").is_file())
    if not built:
        raise SystemExit("bench: the budget arm needs the built-in model an earlier arm built")
    return built[0]


def _outcome(code: int, events: list[ev.Event]) -> str:
    trips = [e for e in events if isinstance(e, ev.MonitorTripped)]
    ending = next((t for t in trips if t.action != "warn"), None)
    warns = [f"{t.rule} warned at step {t.step}" for t in trips if t.action == "warn"]
    if ending is not None:
        said = f"{ending.rule} {'halted' if ending.action == 'halt' else 'stopped the line'} at step {ending.step}"
    elif code == 0:
        said = "completed"
    else:
        said = f"exited {code}"
    return "; ".join([said, *warns])


def _ledger_calls(root: Path) -> int:
    path = root / "events" / "local.ledger.jsonl"
    return sum(1 for line in path.read_bytes().splitlines() if line.strip()) if path.exists() else 0


def _finite_checkpoints(root: Path, events: list[ev.Event]) -> tuple[int, int]:
    """(published checkpoints whose weights are all finite, published checkpoints)."""
    import torch
    from safetensors.torch import load_file

    saved = [e for e in events if isinstance(e, ev.CheckpointSaved)]
    finite = 0
    for event in saved:
        tensors = {}
        for name in event.files:
            if name.endswith(".safetensors"):
                tensors.update(load_file(root / event.dir / name))
        finite += all(torch.isfinite(t).all() for t in tensors.values() if t.is_floating_point())
    return finite, len(saved)


def _train_seconds(events: list[ev.Event]) -> float:
    from rc1.run.monitors.spend import micros_of

    start = next(e for e in events if isinstance(e, ev.TrainingStarted))
    end = next(e for e in reversed(events) if isinstance(e, ev.TrainStep | ev.EvalCompleted))
    return (micros_of(end.ts) - micros_of(start.ts)) / 1e6


def _fold_seconds(events: list[ev.Event], with_rules: bool) -> float:
    from rc1.run.replay import replay

    shown = (
        events
        if with_rules
        else [msgspec.structs.replace(e, monitors=None) if isinstance(e, ev.TrainingStarted) else e for e in events]
    )
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        replay(shown)
        best = min(best, time.perf_counter() - start)
    return best


def _rate(k: int, n: int) -> str:
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return f"{k}/{n} runs (95 % CI {ci.low:.2f}–{ci.high:.2f})"


def bench_monitors(only: list[str] | None = None) -> None:
    print("monitors: the embedded default with its monitors, healthy and with a fault (whole runs)", flush=True)
    defaults = MonitorsConfig()
    healthy_runs, tripped_runs = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        models = Path(tmp) / "models"
        models.mkdir()
        for index, arm in enumerate(arms()):
            if only and not any(word in arm.name for word in only):
                continue
            root = Path(tmp) / f"arm{index}"
            code, events, seconds, last = _run_arm(arm, root, models)
            if os.environ.get("RC1_BENCH_KEEP"):  # the arms' logs, for a closer look
                kept = Path(os.environ["RC1_BENCH_KEEP"]) / f"arm{index}"
                kept.mkdir(parents=True, exist_ok=True)
                shutil.copytree(root / "events", kept / "events", dirs_exist_ok=True)
            trips = [e for e in events if isinstance(e, ev.MonitorTripped)]
            line = f"  {arm.name:<30} {_outcome(code, events)}  ({seconds:.0f} s)"
            if arm.kind == "healthy":
                healthy_runs += 1
                tripped_runs += bool(trips)
                would = rewatch(events, defaults)
                line += f"; every rule as warn: {', '.join(f'{t.rule}@{t.step}' for t in would) or 'no trip'}"
                drift = [e.drift.seconds for e in events if isinstance(e, ev.EvalCompleted) and e.drift is not None]
                train = _train_seconds(events)
                fold = _fold_seconds(events, True) - _fold_seconds(events, False)
                line += (
                    f"\n      cost of watching: drift {sum(drift):.1f} s + fold {fold:.2f} s of {train:.0f} s "
                    f"training: ratio {train / max(train - sum(drift) - fold, 1e-9):.3f} (goal ≤ 1.03)"
                )
            else:
                caught = next((t for t in trips if t.rule in arm.expects.split("|")), None)
                line += f"; expected {arm.expects}: {'caught at step ' + str(caught.step) if caught else 'NOT CAUGHT'}"
                if "learning rate" in arm.name:
                    finite, saved = _finite_checkpoints(root, events)
                    line += (
                        f"; {finite}/{saved} published checkpoints with finite weights"
                        if saved
                        else "; no checkpoint published before the halt"
                    )
                if "budget" in arm.name:
                    from rc1.run.replay import replay

                    spend = replay(events).projection.monitor
                    line += (
                        f"; judge calls: the line {spend.line_spend.judge_calls}, the run "
                        f"{spend.run_spend.judge_calls}, the ledger {_ledger_calls(root)}"
                    )
            if code not in (0, 3):
                line += f"\n      {last}"
            print(line, flush=True)
    if healthy_runs:
        print(f"  false trips on healthy runs: {_rate(tripped_runs, healthy_runs)} (goal 0)", flush=True)


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m rc1.bench.monitors", description=__doc__.splitlines()[0])
    parser.add_argument("words", nargs="*", metavar="WORD", help="run only the arms whose name holds one of these")
    bench_monitors(parser.parse_args(argv).words or None)


if __name__ == "__main__":
    main()
