"""What the run's plots show, decided from the log without drawing anything (rc1/views/plots.py draws it): the lines
of training, which training panels are measured, the smoothing, the zoomed y-limits and the release verdict's words.
Pure functions: the tests call them directly."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import msgspec

from rc1.run import events as ev

Points = list[tuple[int, float]]  # (optimizer step, value), finite values only


class Panel(msgspec.Struct, frozen=True, kw_only=True):
    """One panel of training.png: its title and one or more named series (a series of one line of training each,
    or one per part for a panel of parts)."""

    title: str
    series: dict[str, Points]


def run_name(events: Sequence[ev.Event], default: str) -> str:
    """The run the log is of: the envelope's `run` of its run_started (or a training_started); `default` for a log
    that holds neither (or events built without an envelope)."""
    return next((e.run for e in events if isinstance(e, ev.RunStarted | ev.TrainingStarted) and e.run), default)


def lines_of_training(events: Sequence[ev.Event]) -> dict[int | None, list[ev.TrainStep]]:
    """Each line of training's steps by seed, in step order, as they stand: a fresh training_started (resume from step
    0) starts the seed's line over, a resume from step k drops the steps after k (a rollback trains them again), and
    a step logged twice keeps its last."""
    lines: dict[int | None, dict[int, ev.TrainStep]] = {}
    seed: int | None = None
    for event in events:
        if isinstance(event, ev.TrainingStarted):
            seed = event.seed
            kept = lines.get(seed, {}) if event.resume_from_step else {}
            lines[seed] = {step: s for step, s in kept.items() if step <= event.resume_from_step}
        elif isinstance(event, ev.TrainStep):
            lines.setdefault(seed, {})[event.step] = event
    return {seed: [steps[k] for k in sorted(steps)] for seed, steps in lines.items() if steps}


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _points(steps: list[ev.TrainStep], value_of: Callable[[ev.TrainStep], float | None]) -> Points:
    return [(s.step, float(v)) for s in steps if _finite(v := value_of(s))]


def _parts(steps: list[ev.TrainStep], values_of: Callable[[ev.TrainStep], dict[str, float]]) -> dict[str, Points]:
    """One series per key the steps' dicts hold (a step without it, or with a value that is not finite, is skipped)."""
    series: dict[str, Points] = {}
    for step in steps:
        for key, value in values_of(step).items():
            if _finite(value):
                series.setdefault(key, []).append((step.step, float(value)))
    return dict(sorted(series.items()))


def kl_measured(steps: Sequence[ev.TrainStep]) -> bool:
    """Whether the steps measured a KL to the reference: at β 0 TRL builds no reference and computes none, and
    train_step records 0 (a KL that is NaN or missing is not measured either)."""
    return any(_finite(s.kl) and (s.kl_coef or s.kl) for s in steps)


def training_panels(lines: dict[int | None, list[ev.TrainStep]]) -> tuple[list[Panel], list[str]]:
    """The panels of training.png, only those with a measured series, and a note for each left out. A panel of one
    measure draws every line of training (one series per seed); a panel of parts draws the last line's."""
    label = {seed: (f"seed {seed}" if len(lines) > 1 else "") for seed in lines}
    panels: list[Panel] = []
    notes: list[str] = []

    def measure(title: str, value_of: Callable[[ev.TrainStep], float | None], missing: str) -> None:
        series = {label[seed]: points for seed, steps in lines.items() if (points := _points(steps, value_of))}
        if series:
            panels.append(Panel(title=title, series=series))
        else:
            notes.append(missing)

    measure("reward (mean over the step's completions)", lambda s: s.reward, "reward: not recorded")
    measure("loss", lambda s: s.loss, "loss: not recorded")
    if any(kl_measured(steps) for steps in lines.values()):
        measure("KL to the reference", lambda s: s.kl, "KL: not recorded")
    else:
        notes.append("KL to the reference: not measured (β = 0, no reference model)")
    measure("completion tokens per step", lambda s: s.tokens, "completion tokens: not recorded")
    measure("gradient norm (before clipping)", lambda s: s.grad_norm, "gradient norm: not recorded")
    measure("policy entropy", lambda s: s.diagnostics.get("entropy"), "entropy: not recorded by the engine")

    last_seed, last = list(lines.items())[-1] if lines else (None, [])
    of_line = f" (seed {last_seed})" if len(lines) > 1 else ""
    for title, values_of, missing in (
        (
            "reward components (mean over the step's completions)",
            lambda s: {**s.components, "penalty": s.penalty} if s.components else {},
            "reward components: not recorded",
        ),
        (
            "trainer diagnostics (shares)",
            _shares,
            "trainer diagnostics: not recorded by the engine",
        ),
    ):
        series = _parts(last, values_of)
        if series:
            panels.append(Panel(title=title + of_line, series=series))
        else:
            notes.append(missing)
    return panels, notes


def _shares(step: ev.TrainStep) -> dict[str, float]:
    """The trainer's diagnostics that are shares (entropy has its own panel; completion lengths are the tokens')."""
    return {k: v for k, v in step.diagnostics.items() if k != "entropy" and not k.startswith("completion_length")}


def smoothing_window(steps: int) -> int:
    """The smoothing window for a series of `steps` points: about a tenth of them (at least 3), odd so that the window
    is centred on its step. A tenth calms the step-to-step noise of a batch of a few prompts and still shows a trend
    that turns within the run; under 5 points there is nothing to smooth (1: the series itself)."""
    if steps < 5:
        return 1
    window = max(3, round(steps / 10))
    return window if window % 2 else window + 1


def smooth(values: Sequence[float], window: int) -> list[float]:
    """The centred rolling mean of `values` over `window` points (odd); near the ends the window shrinks to the points
    there are, so the smoothed series is as long as the series and starts and ends at its first and last points'
    neighbourhoods, not at a zero padding."""
    import numpy as np

    # From the running sum, O(n) whatever the window: slicing each window (O(n × window)) took all 24 GiB of a
    # machine for a million steps, whose window is 100,001 points.
    half, n = window // 2, len(values)
    total = np.concatenate(([0.0], np.cumsum(np.asarray(values, dtype=np.float64))))
    at = np.arange(n)
    low, high = np.maximum(at - half, 0), np.minimum(at + half + 1, n)
    return ((total[high] - total[low]) / (high - low)).tolist()


def zoomed_limits(
    values: Sequence[float], *, margin: float = 0.08, min_span: float = 0.0, within: tuple[float, float] | None = None
) -> tuple[float, float]:
    """Y-limits zoomed to the data: its range, at least `min_span` wide (around its middle), widened by `margin` of
    the span on each side; `within` (e.g. 0..1 for a share) holds the limits to that range plus the margin. A
    constant series gets a span of a tenth of its size (0.1 at 0)."""
    finite = [v for v in values if _finite(v)]
    if not finite:
        return within if within is not None else (0.0, 1.0)
    low, high = min(finite), max(finite)
    span = max(high - low, min_span) or (abs(high) / 10 or 0.1)
    middle = (low + high) / 2
    low, high = min(low, middle - span / 2), max(high, middle + span / 2)
    pad = margin * span
    if within is not None:
        if low < within[0]:
            low, high = within[0], high + within[0] - low
        if high > within[1]:
            low, high = max(within[0], low - (high - within[1])), within[1]
        return max(low - pad, within[0] - pad), min(high + pad, within[1] + pad)
    return low - pad, high + pad


def verdict_word(release: ev.ReleaseEvaluated) -> str:
    return "PASSED" if release.passed else "FAILED"


def verdict_label(release: ev.ReleaseEvaluated) -> str:
    """The release verdict in one line: the word, the gain and its interval, what it was measured on."""
    interval = (
        f" [{release.ci_low_pp:+.1f}, {release.ci_high_pp:+.1f}] ({100 * release.confidence:g} %)"
        if release.ci_low_pp is not None and release.ci_high_pp is not None
        else " (no interval: logged before v3)"
    )
    checkpoint = f"step {release.step} ({release.selected_by})" if release.step is not None else "no checkpoint"
    measured = f"n = {release.n} {release.items} items" + (f" × {release.samples} samples" if release.samples else "")
    return (
        f"{'release' if release.release else 'smoke run, not a release:'} {verdict_word(release)}: "
        f"gain {release.hard_gain_pp:+.1f} pp{interval}, "
        f"threshold {release.threshold_pp:+g} pp; {checkpoint} vs step 0, {measured}"
    )
