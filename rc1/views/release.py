"""The release verdict in words: the step-0 vs selected table of the shadow set by task × difficulty, and the
verdict line (n, samples, gain with its interval, what failed). Printed when a line of training completes and by
`rc1 report`; nothing reads them back."""

from __future__ import annotations

from rc1.run import events as ev
from rc1.run.projection import EvalPoint, ReleaseView


def verdict_line(event: ev.ReleaseEvaluated) -> str:
    verdict = "PASSED" if event.passed else "NOT PASSED"
    if event.items != "gate":  # written before schema v3: greedy, on the shadow items that chose the checkpoint
        return (
            f"release (RC1 gate, as rc1 judged before schema v3: greedy hard success on the shadow set, no "
            f"interval): {verdict}: {event.baseline_success:.3f} -> {event.selected_success:.3f}, gain "
            f"{event.hard_gain_pp:+.1f} pp (needs ≥ {event.threshold_pp:g} pp)"
        )
    interval = (
        f", {100 * event.confidence:g} % CI [{event.ci_low_pp:+.1f}, {event.ci_high_pp:+.1f}] pp"
        if event.ci_low_pp is not None
        else ""
    )
    line = (
        f"release (RC1 gate): {verdict}: gate set n={event.n} hard items × {event.samples} samples, sampled success "
        f"{event.baseline_success:.3f} -> {event.selected_success:.3f} at step {event.step} ({event.selected_by}), "
        f"gain {event.hard_gain_pp:+.1f} pp{interval}; needs ≥ {event.threshold_pp:g} pp and an interval above 0"
    )
    if event.baseline_greedy is not None and event.selected_greedy is not None:
        line += f"\n  greedy success (secondary) {event.baseline_greedy:.3f} -> {event.selected_greedy:.3f}"
    return line + "".join(f"\n  not passed: {reason}" for reason in event.failed)


def release_table(evals: list[EvalPoint], selected_step: int) -> str:
    """Step 0 against the selected checkpoint on the shadow set, by task × difficulty: greedy and sampled success."""
    first = evals[0]
    chosen = next((e for e in evals if e.step == selected_step), evals[-1])
    before = {(b.task, b.difficulty): b for b in first.buckets}
    lines = [
        f"evaluation on the shadow set: step 0 vs step {chosen.step} (selected)",
        f"  {'task':<11}{'bucket':<8}{'n':>4}  {'greedy success':>15}  {'sampled success':>15}  {'delta':>8}"
        f"  {'greedy reward':>15}",
    ]
    for b in chosen.buckets:
        a = before.get((b.task, b.difficulty))
        if a is None:
            continue
        sampled = (
            f"{a.sampled_success:>6.3f} -> {b.sampled_success:<6.3f}"
            if a.sampled_success is not None and b.sampled_success is not None
            else f"{'-':>15}"
        )
        delta = (
            (b.sampled_success - a.sampled_success)
            if a.sampled_success is not None and b.sampled_success is not None
            else b.success - a.success
        )
        lines.append(
            f"  {b.task:<11}{b.difficulty:<8}{b.n:>4}  {a.success:>6.3f} -> {b.success:<6.3f}  {sampled}"
            f"  {100 * delta:>+6.1f}pp  {a.mean_reward:>6.3f} -> {b.mean_reward:<6.3f}"
        )
    return "\n".join(lines)


def verdict_text(r: ReleaseView) -> str:
    """One line: the verdict, the gain with its interval, what it was measured on and what failed."""
    interval = (
        f" [{r.ci_low_pp:+.1f}, {r.ci_high_pp:+.1f}]" if r.ci_low_pp is not None else " (no interval: v2 verdict)"
    )
    measured = f"n={r.n} × {r.samples} samples, {r.baseline_success:.3f} -> {r.selected_success:.3f}, " if r.n else ""
    at = f"step {r.step} ({r.selected_by})" if r.step is not None else "no checkpoint beat step 0"
    failed = f"; {'; '.join(r.failed)}" if r.failed else ""
    return (
        f"{'PASSED' if r.passed else 'NOT PASSED'}: gain {r.hard_gain_pp:+.1f} pp{interval} "
        f"({measured}{at}; needs ≥ {r.threshold:g}{' and an interval above 0' if r.n else ''}){failed}"
    )
