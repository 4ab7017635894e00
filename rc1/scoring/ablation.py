"""Which components earn their weight: the run's config trained again with one component's weight moved to the
others (one arm per component, each a gated run of its own), and every arm's selected checkpoint compared with the
full reward's on the same gate items.

An arm's weights: the component weighs 0 and its weight goes to the others in proportion to theirs, none above the
weights file's cap (0.5): what a capped component cannot take goes on to the rest, in proportion again. An arm whose
others cannot take it all under the cap cannot be built, and says so.

The comparison is paired over the gate items, as the release verdict is: per item, the arm's selected checkpoint's
sampled success minus the full reward's, a mean in pp with a percentile bootstrap interval over items
(rc1/scoring/release_stats.py `paired_gain`, seeded). Nothing is selected on the gate items: each run's checkpoint was
chosen on its shadow set. A negative difference whose interval lies below 0 says the component earned its weight on
this run; an interval across 0 says this run cannot tell.
"""

from __future__ import annotations

import msgspec

from rc1.run.verdicts import PairedGain
from rc1.scoring.release_stats import paired_gain

CAP = 0.5  # the weights file's rule: no component above it (rc1/scoring/weights.py)
EPSILON = 1e-12


def arm_weights(weights: dict[str, float], component: str, cap: float = CAP) -> dict[str, float] | None:
    """`weights` with `component` at 0 and its weight moved to the others in proportion, each at most `cap`; None
    where the others cannot take it under the cap."""
    arm = {name: (0.0 if name == component else weight) for name, weight in weights.items()}
    moving = weights[component]
    while moving > EPSILON:
        open_ = {name: w for name, w in arm.items() if name != component and w > 0 and w < cap - EPSILON}
        total = sum(open_.values())
        if total <= 0:
            return None
        spilled = 0.0
        for name, weight in open_.items():
            share = moving * weight / total
            taken = min(share, cap - weight)
            arm[name] = weight + taken
            spilled += share - taken
        moving = spilled
    return {name: round(weight, 12) for name, weight in arm.items()}


class GateRates(msgspec.Struct, frozen=True, kw_only=True):
    """One policy's per-item sampled success on the gate set (a selected gate_set_evaluated)."""

    gate_sha256: str
    item_ids: list[str]
    rates: list[float]
    step: int


class ArmResult(msgspec.Struct, frozen=True, kw_only=True):
    component: str
    run: str
    weights: dict[str, float]
    # The arm's own release verdict (its selected checkpoint against its step 0) and the paired difference against
    # the full reward's selected checkpoint on the same gate items.
    verdict_gain_pp: float
    verdict_ci_pp: tuple[float, float]
    verdict_passed: bool
    against_full: PairedGain
    step: int
    halted: str | None = None  # "rule at step N": a monitor halted the arm, which was then stopped (its result)


class AblationReport(msgspec.Struct, frozen=True, kw_only=True):
    run: str
    full_weights: dict[str, float]
    full_gain_pp: float
    full_ci_pp: tuple[float, float]
    full_passed: bool
    gate_sha256: str
    n: int
    samples: int
    arms: list[ArmResult]
    skipped: dict[str, str] = msgspec.field(default_factory=dict)  # component -> why no arm was trained


def against_full(full: GateRates, arm: GateRates, seed: int) -> PairedGain:
    """The arm's per-item success minus the full reward's, on the same gate items (refused otherwise)."""
    if arm.gate_sha256 != full.gate_sha256 or arm.item_ids != full.item_ids:
        raise ValueError(
            f"the arm's gate set (sha256 {arm.gate_sha256[:12]}) is not the full run's ({full.gate_sha256[:12]}): "
            "a paired comparison needs the same items in the same order"
        )
    return paired_gain(full.rates, arm.rates, seed=seed)
