"""Calibration (`rc1 calibrate`): which reward components track success, and the weights that would track it best.

Pure: scored replies in (the step-0 evaluation's greedy and sampled replies to the shadow set), a report out. Each
component's Pearson correlation with success over the replies (point-biserial: success is 0/1), and with the judge
where one scored them, each with a percentile bootstrap interval that resamples items, every reply of an item
together (an item's replies are not independent of each other). Suggested weights: those whose weighted sum
correlates best with success under the weights file's own rules (rc1/scoring/weights.py: none negative, none above
0.5, summing to 1), fitted (SLSQP) on one half of the items and measured, beside the current weights, on the other:
items are split by their id's sha256, so the same item always falls on the same side.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable, Sequence

import msgspec
import numpy as np
from scipy import optimize, stats

from rc1.scoring.weights import MAX_WEIGHT

SUCCESS = "correctness"  # the component an evaluation counts as success
CONFIDENCE = 0.95
RESAMPLES = 2000
FIT, HELD_OUT = "fit", "held_out"
SPLIT_RULE = "an item is fitted on when the first byte of sha256(item_id) is even, held out when it is odd"


class Resampling(msgspec.Struct, frozen=True, kw_only=True):
    """How the intervals are drawn: the bootstrap's seed, its resamples and their confidence level."""

    seed: int
    resamples: int = RESAMPLES
    confidence: float = CONFIDENCE


class Reply(msgspec.Struct, frozen=True):
    item_id: str
    greedy: bool  # the greedy reply (else one of the sampled ones)
    success: float
    components: dict[str, float]


def success_of(greedy: bool, components: dict[str, float]) -> float:
    """Success as the evaluation counts it (eval_completed's item_greedy and item_sampled): a greedy reply's
    correctness as scored, a sampled reply's rounded to 0/1."""
    return components[SUCCESS] if greedy else float(round(components[SUCCESS]))


def half_of(item_id: str) -> str:
    return FIT if hashlib.sha256(item_id.encode()).digest()[0] % 2 == 0 else HELD_OUT


class Interval(msgspec.Struct, frozen=True, kw_only=True):
    value: float | None  # None: undefined on these replies (`reason` says why)
    low: float | None
    high: float | None
    n_items: int
    n_replies: int
    undefined_share: float = 0.0  # the resamples where it is undefined (a constant column): the interval is the rest's
    reason: str | None = None


class ComponentCalibration(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    mean: float
    with_success: Interval
    with_judge: Interval | None  # None: no judge scored these replies (or this is the judge)
    current_weight: float | None
    suggested_weight: float | None
    note: str | None = None


class HeldOut(msgspec.Struct, frozen=True, kw_only=True):
    """The weighted sums' correlation with success on the held-out items: the suggested weights', the current ones',
    and the suggested minus the current (paired: the same resampled items)."""

    fit_items: list[str]
    held_out_items: list[str]
    fit_items_succeeding: int  # items with at least one reply that succeeded: what the fit and the intervals rest on
    held_out_items_succeeding: int
    suggested: Interval | None
    current: Interval
    difference: Interval | None


class Calibration(msgspec.Struct, frozen=True, kw_only=True):
    n_items: int
    n_replies: int
    n_successes: float
    items_succeeding: int  # items with at least one reply that succeeded
    components: list[ComponentCalibration]
    current_weights: dict[str, float]
    suggested_weights: dict[str, float] | None  # None: the fit half has no success to track (or no reply to fit on)
    fitted_on: str  # which replies the weights were fitted and measured on
    held_out: HeldOut
    notes: list[str]


def correlations(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each column of `x` (rows × k) with `y`; nan where either is constant."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        return np.atleast_1d(stats.pearsonr(x, y[:, None], axis=0).statistic)


def over_items(
    groups: list[np.ndarray], statistic: Callable[[np.ndarray], np.ndarray], resampling: Resampling
) -> list[tuple[float, float, float, float]]:
    """(value, low, high, undefined share) of each output of `statistic(rows)`, its interval from resampling the
    items, each item (`groups[i]`: its rows) with all its rows."""
    value = statistic(np.concatenate(groups))
    if len(groups) < 2:
        return [(v, np.nan, np.nan, 1.0) for v in value]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanpercentile of an all-nan row: nan, as it should be
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(
            (np.arange(len(groups)),),
            lambda items: statistic(np.concatenate([groups[i] for i in items])),
            vectorized=False,
            n_resamples=resampling.resamples,
            confidence_level=resampling.confidence,
            method="percentile",
            rng=np.random.default_rng(resampling.seed),
        )
        draws = np.asarray(result.bootstrap_distribution).reshape(len(value), -1)
        tail = 100 * (1 - resampling.confidence) / 2
        low, high = np.nanpercentile(draws, tail, axis=1), np.nanpercentile(draws, 100 - tail, axis=1)
    undefined = np.isnan(draws).mean(axis=1)
    return [tuple(map(float, four)) for four in zip(value, low, high, undefined, strict=True)]


def fit_weights(x: np.ndarray, y: np.ndarray, start: np.ndarray) -> np.ndarray | None:
    """The weights w (each in [0, 0.5], summing to 1) whose x @ w correlates best with y, by SLSQP from `start` and
    from equal weights; None where y is constant (or neither start converged). Rounded to 3 decimals, still summing
    to 1."""
    if np.ptp(y) == 0:
        return None

    def negative(w: np.ndarray) -> float:
        r = correlations((x @ w)[:, None], y)[0]
        return 0.0 if np.isnan(r) else -float(r)

    k = x.shape[1]
    best = None
    for w0 in (start, np.full(k, 1 / k)):
        found = optimize.minimize(
            negative,
            w0,
            method="SLSQP",
            bounds=[(0.0, MAX_WEIGHT)] * k,
            constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1.0}],
            options={"ftol": 1e-10},
        )
        if found.success and (best is None or found.fun < best.fun):
            best = found
    return rounded(best.x) if best is not None else None


def rounded(w: np.ndarray, places: int = 3) -> np.ndarray:
    """`w` (each in [0, 0.5], summing to 1) to `places` decimals, still summing to 1: what rounding took from the sum
    (or added to it) is given back a unit at a time by the weights rounding moved furthest the other way."""
    unit = 10.0**-places
    w = np.clip(w, 0.0, MAX_WEIGHT)
    r = np.round(w, places)
    units = int(round((1.0 - float(r.sum())) / unit))
    sign = 1 if units > 0 else -1
    for i in np.argsort(sign * (r - w))[: abs(units)]:  # rounded down most first (or up, when the sum is over 1)
        r[i] += sign * unit
    return np.round(np.clip(r, 0.0, MAX_WEIGHT), places)


def calibrate(
    replies: Sequence[Reply], current: dict[str, float], *, judge: str, resampling: Resampling
) -> Calibration:
    """`current`: the weights file's weights (its order is the table's); `judge`: the judge's component name."""
    names = list(current) + sorted({n for r in replies for n in r.components} - set(current))
    y = np.array([r.success for r in replies], dtype=float)
    judged = np.array([r.components.get(judge, np.nan) for r in replies], dtype=float)
    with_success = _per_component(replies, names, y, "success", resampling)
    with_judge = _per_component(replies, [n for n in names if n != judge], judged, "the judge", resampling)
    notes = []
    if SUCCESS in names:
        notes.append(
            f"{SUCCESS} is how success is counted: its correlation with success is 1 by construction, and the fit "
            f"leans on it as far as the rules allow ({MAX_WEIGHT:g}); what the fit says is how to spend the rest"
        )

    weighted = list(current)
    usable = [i for i, r in enumerate(replies) if all(n in r.components for n in weighted)]
    lacking = sorted({n for r in replies for n in weighted if n not in r.components})
    kinds = sorted({"greedy" if replies[i].greedy else "sampled" for i in usable})
    fitted_on = " and ".join(kinds) + " replies" if kinds else "no replies"
    if lacking:
        fitted_on += f" (the others have no {', '.join(lacking)})"
    fit = [i for i in usable if half_of(replies[i].item_id) == FIT]
    held = [i for i in usable if half_of(replies[i].item_id) == HELD_OUT]
    x_fit = np.array([[replies[i].components[n] for n in weighted] for i in fit]).reshape(len(fit), len(weighted))
    w_now = np.array([current[n] for n in weighted])
    w_new = fit_weights(x_fit, y[fit], w_now) if fit else None
    if w_new is None:
        why = (
            "success does not vary among the fit half's replies, so there is nothing to fit"
            if not fit or np.ptp(y[fit]) == 0
            else "SLSQP found no weights within the rules"
        )
        notes.append(f"no weights suggested: {why}")
    suggested = dict(zip(weighted, map(float, w_new), strict=True)) if w_new is not None else None

    def sums(x: np.ndarray, t: np.ndarray) -> np.ndarray:
        now = correlations((x @ w_now)[:, None], t)[0]
        if w_new is None:
            return np.array([now])
        new = correlations((x @ w_new)[:, None], t)[0]
        return np.array([now, new, new - now])

    none = Interval(value=None, low=None, high=None, n_items=0, n_replies=0, reason="no held-out replies")
    measured = _intervals(replies, held, weighted, sums, y, "success", resampling) if held else [none]
    held_out = HeldOut(
        fit_items=sorted({replies[i].item_id for i in fit}),
        held_out_items=sorted({replies[i].item_id for i in held}),
        fit_items_succeeding=len({replies[i].item_id for i in fit if y[i] > 0}),
        held_out_items_succeeding=len({replies[i].item_id for i in held if y[i] > 0}),
        current=measured[0],
        suggested=measured[1] if len(measured) > 1 else None,
        difference=measured[2] if len(measured) > 1 else None,
    )
    if any(i.undefined_share > 0 for i in [*with_success.values(), *with_judge.values(), *measured]):
        notes.append(
            "an interval marked * is over the resamples where the correlation is defined: in the others the drawn "
            "items' replies all succeeded or all failed (or the component did not vary on them)"
        )
    return Calibration(
        n_items=len({r.item_id for r in replies}),
        n_replies=len(replies),
        n_successes=float(y.sum()),
        items_succeeding=len({r.item_id for r in replies if r.success > 0}),
        components=[
            ComponentCalibration(
                name=name,
                mean=float(np.mean([r.components[name] for r in replies if name in r.components])),
                with_success=with_success[name],
                with_judge=with_judge.get(name),
                current_weight=current.get(name),
                suggested_weight=suggested.get(name) if suggested else None,
                note="the success definition" if name == SUCCESS else None,
            )
            for name in names
        ],
        current_weights=dict(current),
        suggested_weights=suggested,
        fitted_on=fitted_on,
        held_out=held_out,
        notes=notes,
    )


def _per_component(
    replies: Sequence[Reply], names: list[str], target: np.ndarray, what: str, resampling: Resampling
) -> dict[str, Interval]:
    """Each component's correlation with `target` over the replies that have both (nan in `target`: absent); the
    components present on the same replies share one bootstrap (the same resampled items)."""
    by_rows: dict[tuple[int, ...], list[str]] = {}
    for name in names:
        rows = tuple(i for i, r in enumerate(replies) if name in r.components and not np.isnan(target[i]))
        if rows:
            by_rows.setdefault(rows, []).append(name)
    found = {}
    for rows, group in by_rows.items():
        found |= dict(
            zip(group, _intervals(replies, list(rows), group, correlations, target, what, resampling), strict=True)
        )
    return found


def _intervals(
    replies: Sequence[Reply],
    rows: list[int],
    names: list[str],
    statistic: Callable[[np.ndarray, np.ndarray], np.ndarray],
    target: np.ndarray,
    what: str,
    resampling: Resampling,
) -> list[Interval]:
    """`statistic(x, t)` (x: `rows` × the `names` components; t: their `target`), with intervals over their items."""
    x = np.array([[replies[i].components[n] for n in names] for i in rows], dtype=float)
    t = target[rows]
    by_item: dict[str, list[int]] = {}
    for position, i in enumerate(rows):
        by_item.setdefault(replies[i].item_id, []).append(position)
    groups = [np.array(positions) for _, positions in sorted(by_item.items())]
    found = over_items(groups, lambda chosen: statistic(x[chosen], t[chosen]), resampling)
    reason = f"{what} is the same on every reply" if np.ptp(t) == 0 else "constant on these replies"
    return [
        Interval(
            value=None if np.isnan(value) else value,
            low=None if np.isnan(low) else low,
            high=None if np.isnan(high) else high,
            n_items=len(groups),
            n_replies=len(rows),
            undefined_share=share,
            reason=reason if np.isnan(value) else None,
        )
        for value, low, high, share in found
    ]


class CalibrationReport(Calibration, frozen=True, kw_only=True):
    """What `rc1 calibrate` writes: the calibration and what it was measured on."""

    run: str
    seed: int | None  # the line of training whose step-0 evaluation it read
    step: int
    evaluation: str  # the evaluation's archive shard, relative to the workspace
    evaluation_sha256: str
    evaluation_seq: int  # the eval_completed event that vouches for it
    weights_file: str  # the current weights' file (the run's own copy, kept by round 1)
    created: str
    success: str = "an evaluation's: a greedy reply's correctness, a sampled reply's rounded to 0/1"
    split: str = SPLIT_RULE
    resampling: Resampling
    rules: dict[str, float] = msgspec.field(default_factory=lambda: {"min": 0.0, "max": MAX_WEIGHT, "sum": 1.0})
