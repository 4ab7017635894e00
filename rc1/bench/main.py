"""`make bench`: timings as ratios against a baseline measured in the same run (never asserted).

replay: read + verify + fold a 100k-event log, against the baseline of merely parsing
the same lines with the standard json module.
round1: the real `rc1 preflight --round 1` on the production-size pool (30k) and on 10× that, in
fresh temp workspaces; the 30k run is the baseline, the 300k run is reported as a growth ratio
(near-linear checks keep it near 10; the target is ≤ 12, and ≤ 60 s for 30k).
training: rc1's GRPO loop and `rc1 train` against a bare TRL GRPOTrainer (rc1/bench/training.py).
arms: the embedded default trained on its reward, a format-only one and a shuffled-gold one, each with its release
verdict, and the true reward's gain against the format-only arm's on the same gate items (rc1/bench/arms.py).
live arms: the embedded default recorded, live, and live with wiki showing no pages, each with its verdict, the live
arms' tool use at step 0 and at the selected checkpoint, the live gain against the control's (rc1/bench/live_arms.py).
copy probe: what the built-in models copy from their prompts before and after the reader (rc1/bench/copy_probe.py).
monitors and processes: rc1/bench/monitors.py, rc1/bench/processes.py.
`python -m rc1.bench --help` lists each part's `--<part>-only` flag.
"""

from __future__ import annotations

import functools
import importlib
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from rc1.bench.synthetic import append_training
from rc1.config.recorded import recorded_raw
from rc1.eventlog.log import EventLog, read_log
from rc1.run import events as ev
from rc1.run.replay import replay


def _best_of(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _write_training_log(root: Path, steps: int) -> Path:
    log_path = root / "bench.jsonl"
    with EventLog(log_path, root / "bench.lock", "bench") as log:
        log._write_durably = _buffered(log_path)  # the benchmark measures reading, not fsync
        append_training(log, steps, checkpoint_every=500)
        log.append(ev.RunCompleted(step=steps, best_step=None, final_checkpoint=f"checkpoints/bench/step_{steps:05d}"))
    return log_path


def _buffered(path: Path):
    fh = open(path, "ab")

    def write(data: bytes, kill_point: str) -> None:
        fh.write(data)
        fh.flush()

    return write


def bench_replay(steps: int = 100_000) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = _write_training_log(Path(tmp), steps)
        size_mb = path.stat().st_size / 1e6

        def baseline():
            with open(path, "rb") as fh:
                for line in fh:
                    json.loads(line)

        def rc1_replay():
            contents = read_log(path)
            assert not contents.chain_breaks
            replay(contents.events)

        base = _best_of(baseline)
        ours = _best_of(rc1_replay)
        print(f"replay: {steps + steps // 500 + 3} events ({size_mb:.1f} MB)")
        print(f"  baseline json.loads per line : {base:.3f} s")
        print(f"  rc1 read+verify chain+fold   : {ours:.3f} s   ratio {ours / base:.2f}x baseline")


def _round1_seconds(pool_size: int) -> float:
    import os
    import shutil
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(repo / "configs", Path(tmp) / "configs")
        # Generated data: the bench measures how the checks scale, offline (rc1.yaml names a hub source).
        command = [
            sys.executable,
            "-m",
            "rc1",
            "preflight",
            "--round",
            "1",
            "--config",
            "configs/rc1.yaml",
            "--set",
            f"data.pool_size={pool_size}",
            "--set",
            "data.sources={}",
        ]
        start = time.perf_counter()
        done = subprocess.run(
            command, cwd=tmp, capture_output=True, text=True, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""}
        )
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            print(f"  round 1 on {pool_size} items exited {done.returncode}: {done.stderr.strip()[-400:]}")
        return seconds


def bench_round1(base: int = 30_000, factor: int = 10) -> None:
    small = _round1_seconds(base)
    print("round1 (production profile, preflight --round 1; its floors cannot be lowered for the bench):")
    print(f"  {base:>7} items : {small:.1f} s   (target ≤ 60 s)")
    large = _round1_seconds(base * factor)
    print(
        f"  {base * factor:>7} items : {large:.1f} s   growth ratio {large / small:.2f} for {factor}× the data (target "
        "≤ 12)"
    )


def bench_status(steps: int = 1_000_000) -> None:
    """The core at scale, on a finished run of `steps` train_steps (a checkpoint every 500):
    - `rc1 status --json` and `rc1 advance` as processes, from the snapshot a writer leaves, against the floor
      of starting python with msgspec, transitions and yaml; status also without a snapshot;
    - full verification (read, chain, fold: what audit and a cold replay do) against msgspec's bulk decode of
      the same bytes;
    - one durable append (a train_step, fsync included) through a writing session at 100 events and at
      `steps`: the views are appended to, not rebuilt, so the two should cost the same."""
    import os
    import shutil
    import subprocess
    import sys

    import yaml

    from rc1.app.session import Session
    from rc1.config.kept import keep_config
    from rc1.config.loading import load_config
    from rc1.core.workspace import Workspace
    from rc1.eventlog.lines import EVENT_DECODER
    from rc1.eventlog.snapshot import snapshot_path

    repo = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(repo / "configs", root / "configs")
        raw = recorded_raw(yaml.safe_load((repo / "configs/local.yaml").read_text()))
        raw["run"]["name"] = "bench"
        (root / "configs/bench.yaml").write_text(yaml.safe_dump(raw))
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
        cwd = os.getcwd()
        os.chdir(root)
        try:
            small = _append_seconds(root, 100)
            ws = Workspace(root=root, run="bench")
            ws.events_dir.mkdir(exist_ok=True)
            for path in ws.events_dir.iterdir():
                path.unlink()
            _write_training_log(ws.events_dir, steps).rename(ws.log_path)
            with Session.open(load_config("configs/bench.yaml")) as session:
                # what the writer of a whole run leaves: the views, and the snapshot anchored to the last line
                session.mirrors.rebuild(read_log(ws.log_path).events)
            # A kept config (rc1/config/kept.py): every command on the run first asks whether its gate is in force.
            keep_config(ws, load_config("configs/bench.yaml"))
            large = _append_seconds(root, steps)
        finally:
            os.chdir(cwd)

        def run(*command) -> None:
            subprocess.run(command, cwd=root, capture_output=True, env=env, check=True)

        status = [sys.executable, "-m", "rc1", "status", "--json", "--config", "configs/bench.yaml"]
        advance = [sys.executable, "-m", "rc1", "advance", "--config", "configs/bench.yaml"]
        times = StatusTimes(small_append=small, large_append=large)
        times.floor = _best_of(lambda: run(sys.executable, "-c", "import msgspec, transitions, yaml"))
        times.status = _best_of(lambda: run(*status))
        times.advance = _best_of(lambda: run(*advance))
        data = ws.log_path.read_bytes()
        times.events, times.megabytes = data.count(b"\n"), len(data) / 1e6
        times.decode = _best_of(functools.partial(EVENT_DECODER.decode_lines, data))
        del data  # the verification reads the file itself
        times.verify = _best_of(lambda: replay(read_log(ws.log_path).events))
        snapshot_path(ws).unlink()
        times.status_whole = _best_of(lambda: run(*status), repeat=1)
        # A cold advance: no snapshot and no views (a run copied without them, or from an older rc1): the writing
        # session verifies the whole log and folds it, and leaves the views to be built when something is appended
        # (rc1/views/mirrors.py); what building them costs, `rc1 report` shows.
        for views in (ws.reports_dir, ws.logs_dir):
            shutil.rmtree(views)
        times.cold = _best_of(lambda: run(*advance), repeat=1)
        times.after_cold = _best_of(lambda: run(*advance))
        report = [sys.executable, "-m", "rc1", "report", "--no-verdicts", "--config", "configs/bench.yaml"]
        times.report = _best_of(lambda: run(*report), repeat=1)
    _print_status(times)


class StatusTimes(msgspec.Struct, kw_only=True):
    """What `bench_status` measured, in seconds (best of 3 unless its line says otherwise)."""

    small_append: float
    large_append: float
    events: int = 0
    megabytes: float = 0.0
    floor: float = 0.0
    status: float = 0.0
    advance: float = 0.0
    decode: float = 0.0
    verify: float = 0.0
    status_whole: float = 0.0
    cold: float = 0.0
    after_cold: float = 0.0
    report: float = 0.0


def _print_status(t: StatusTimes) -> None:
    print(
        f"status: {t.events} events ({t.megabytes:.0f} MB), best of 3 (of 1 where a line says 'once')\n"
        f"  floor: python + msgspec + transitions + yaml : {t.floor:.2f} s\n"
        f"  rc1 status --json, from the snapshot          : {t.status:.2f} s   ratio {t.status / t.floor:.2f}x floor "
        "(target ≤ 0.25 s)\n"
        f"  rc1 advance on the finished run               : {t.advance:.2f} s   ratio {t.advance / t.floor:.2f}x "
        "floor (target ≤ 1 s)\n"
        f"  rc1 status --json, whole log (no snapshot)    : {t.status_whole:.2f} s   ratio "
        f"{t.status_whole / t.floor:.2f}x floor (once)\n"
        f"  rc1 advance, cold (no snapshot, no views)     : {t.cold:.2f} s   ratio {t.cold / t.advance:.2f}x the warm "
        f"advance (target ≤ 2), {t.cold / t.verify:.2f}x read + verify + fold (once)\n"
        f"  rc1 advance after the cold one                : {t.after_cold:.2f} s   ratio "
        f"{t.after_cold / t.advance:.2f}x the warm advance (what the cold one built is kept)\n"
        f"  rc1 report --no-verdicts (builds the views)   : {t.report:.2f} s (once)\n"
        f"  msgspec decode_lines of the log               : {t.decode:.2f} s\n"
        f"  read + verify chain + fold (audit, cold replay): {t.verify:.2f} s   ratio {t.verify / t.decode:.2f}x "
        "decode (target ≤ 1.2)\n"
        f"  one train_step append at 100 events           : {t.small_append * 1e3:.2f} ms\n"
        f"  one train_step append at {t.events:,} events  : {t.large_append * 1e3:.2f} ms   ratio "
        f"{t.large_append / t.small_append:.2f}x (target ≈ 1)",
        flush=True,
    )


def _append_seconds(root: Path, at: int, appends: int = 200) -> float:
    """The median time of one train_step append through a writing session on the run in `root` (a fresh log of
    `at` events is written first when there is none)."""
    import statistics

    from rc1.app.session import Session
    from rc1.config.loading import load_config

    loaded = load_config("configs/bench.yaml")
    if not (root / "events" / "bench.jsonl").exists():
        (root / "events").mkdir(exist_ok=True)
        _write_training_log(root / "events", at - 4).rename(root / "events" / "bench.jsonl")
    times = []
    with Session.open(loaded) as session:
        step = session.projection.step
        # The first append is preceded by run_started (the session announces itself): the median leaves it out.
        for index in range(appends):
            event = ev.TrainStep(
                step=step + index + 1,
                loss=0.1,
                kl=0.01,
                ratio=0.0,
                lr=1e-5,
                reward=0.5,
                mem_used_mb=100.0,
                sec_per_step=0.1,
                tokens=24,
            )
            start = time.perf_counter()
            session.append(event)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def _later(module: str, name: str) -> Callable[[], None]:
    """A part in a module of its own, imported when it runs (torch and TRL load only for the parts that train)."""
    return lambda: getattr(importlib.import_module(module), name)()


# Each part, in the order `make bench` runs them all: the flag `--<name>-only` runs one.
PARTS = {
    "replay": bench_replay,
    "status": bench_status,
    "round1": bench_round1,
    "training": _later("rc1.bench.training", "bench_training"),
    "arms": _later("rc1.bench.arms", "bench_arms"),
    "live-arms": _later("rc1.bench.live_arms", "bench_live_arms"),
    "copy-probe": _later("rc1.bench.copy_probe", "bench_copy_probe"),
    "monitors": _later("rc1.bench.monitors", "bench_monitors"),
    "processes": _later("rc1.bench.processes", "bench_processes"),
    "frozen-base": _later("rc1.bench.frozen_base", "bench_frozen_base"),
    "sampler-gap": _later("rc1.bench.sampler_gap", "bench_sampler_gap"),
}


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m rc1.bench",
        description="make bench: every part below in turn (whole training runs among them), or one with its flag.",
    )
    only = parser.add_mutually_exclusive_group()
    for name in PARTS:
        only.add_argument(f"--{name}-only", dest="only", action="store_const", const=name, help=f"only the {name} part")
    chosen = parser.parse_args(argv).only
    for name, part in PARTS.items():
        if chosen in (None, name):
            part()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
