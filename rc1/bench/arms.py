"""`make bench`, control arms: is the release gain of the embedded default earned by the correctness reward?

Three whole runs (`rc1 advance --all`, rounds and verdict included) on the same data, base model and gate set,
differing only in the reward the policy is trained on:
- true: the run's reward (configs/local.yaml);
- format-only: format and length alone (configs/weights_format_only.json: correctness and f1 weigh 0);
- shuffled: correctness and f1 against another item's gold of the same task (`reward.answers: shuffled`).
Each arm's verdict (gain with its 95 % paired interval) comes from its own log; the arms are then compared on the
gate set item by item (the same items, the same step-0 evaluation): true − format-only must reach +3 pp with an
interval above 0 for the correctness reward to be what produced the gain. On the tiny model the shuffled arm is
expected to gain about as much as the true one (what it learns is each task's answer space, which a shuffled
gold of the same task rewards too); docs/release-verdict.md says so with the numbers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rc1.config.recorded import recorded_sets

REPO = Path(__file__).resolve().parents[2]
CONFIG = "configs/local.yaml"
ARMS = {
    "true": [],
    "format-only": ["--set", "reward.weights=weights_format_only.json"],
    "shuffled": ["--set", "reward.answers=shuffled"],
}
MARGIN_PP = 3.0  # how far the true reward's gain must beat the format-only arm's


def _run_arm(root: Path, models: Path, extra: list[str]):
    from rc1.eventlog.log import read_log
    from rc1.run import events as ev

    shutil.copytree(REPO / "configs", root / "configs")
    (root / "data").mkdir()
    (root / "data" / "models").symlink_to(models, target_is_directory=True)  # one base model for every arm
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "rc1", "advance", "--all", "--config", CONFIG, *recorded_sets(), *extra],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(
            f"bench: arm {' '.join(extra) or 'true'} exited {done.returncode}: {done.stderr.strip()[-800:]}"
        )
    events = read_log(root / "events" / "local.jsonl").events
    release = next(e for e in reversed(events) if isinstance(e, ev.ReleaseEvaluated))
    selected = next(e for e in reversed(events) if isinstance(e, ev.GateSetEvaluated) and e.policy == "selected")
    return release, selected, seconds


def bench_arms() -> None:
    from rc1.scoring.release_stats import paired_gain

    print("control arms: the embedded default trained on three rewards (whole runs, the same gate set)", flush=True)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        models = Path(tmp) / "models"
        models.mkdir()
        for name, extra in ARMS.items():
            release, selected, seconds = _run_arm(Path(tmp) / name, models, extra)
            results[name] = (release, selected)
            print(
                f"  {name:<12} gain {release.hard_gain_pp:+6.1f} pp [{release.ci_low_pp:+.1f}, "
                f"{release.ci_high_pp:+.1f}]"
                f"  sampled success {release.baseline_success:.3f} -> {release.selected_success:.3f}"
                f"  (n={release.n} × {release.samples}, step {release.step} {release.selected_by}; "
                f"{'PASSED' if release.passed else 'NOT PASSED'}; {seconds:.0f} s)",
                flush=True,
            )
    true = results["true"][1]
    for other in ("format-only", "shuffled"):
        arm = results[other][1]
        diff = paired_gain(
            [k / arm.samples for k in arm.sampled], [k / true.samples for k in true.sampled], seed=true.generation_seed
        )
        verdict = ""
        if other == "format-only":
            holds = diff.gain_pp >= MARGIN_PP and diff.ci_low_pp > 0
            verdict = f"  (needs ≥ {MARGIN_PP:g} pp with an interval above 0: {'holds' if holds else 'DOES NOT HOLD'})"
        print(
            f"  true − {other:<12} {diff.gain_pp:+6.1f} pp [{diff.ci_low_pp:+.1f}, {diff.ci_high_pp:+.1f}] "
            f"on the same {diff.n} gate items{verdict}",
            flush=True,
        )
