"""The `weights` check: the reward weights file (rc1/scoring/weights.py says what is valid), reported as a
check — a bad file is a failed check with every problem named, not an error."""

from __future__ import annotations

import math
from pathlib import Path

from rc1.checks.result import CheckResult
from rc1.checks.spec import Check
from rc1.core.runbook import Runbook
from rc1.scoring.pipeline import components_for
from rc1.scoring.weights import MAX_WEIGHT, SUM_TOLERANCE, read_weights


def weights_check(path: Path, components: tuple[str, ...], declared: dict[str, float] | None = None) -> CheckResult:
    """`declared`: the weights `reward.functions` gives its functions, which the file must give them too."""
    weights, problems = read_weights(Path(path), components)
    problems += [
        f"{name}: weight {weights[name]:g} here, {weight:g} in reward.functions; make them equal"
        for name, weight in (declared or {}).items()
        if name in weights and not math.isclose(weights[name], weight, abs_tol=SUM_TOLERANCE)
    ]
    measured = dict(weights)
    if weights:
        measured["sum"] = math.fsum(weights.values())
    return CheckResult(
        name="weights",
        passed=not problems,
        measured=measured,
        thresholds={"sum": 1.0, "sum_tolerance": SUM_TOLERANCE, "max_weight": MAX_WEIGHT, "min_weight": 0.0},
        detail=f"{path}: "
        + ("; ".join(problems) if problems else "valid: " + ", ".join(f"{k}={v:g}" for k, v in weights.items())),
    )


CHECK = Check(
    name="weights",
    rounds=(1, 2),
    thresholds={"reward.weights": None},
    run=lambda r: weights_check(
        r.loaded.weights_path,
        components_for(r.loaded),
        declared={spec.name: spec.weight for spec in r.config.reward.functions},
    ),
    runbook=Runbook(
        means="the weights file (reward.weights) does not fit the scorer: a component missing or unknown (the judge "
        "or reward.functions changed), a weight negative or above 0.5, or the weights not summing to 1",
        tries=(
            "edit the file reward.weights names: a weight for every component the detail lists, none above 0.5, "
            "summing to 1 (0 switches a component off)",
            "after changing scorer.provider, add or drop the judge weight (configs/weights_judge.json has one); "
            "after adding reward.functions, give each the same weight in both places",
            "or point reward.weights at a file that fits, relative to the config's folder",
        ),
    ),
)
