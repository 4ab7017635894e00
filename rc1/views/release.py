"""The release verdict in words: the step-0 vs selected table of the shadow set by task × difficulty, and the
verdict line (n, samples, gain with its interval, what failed). Printed when a line of training completes and by
`rc1 report`; nothing reads them back."""

from __future__ import annotations

from rc1.run import events as ev
from rc1.run.projection import EvalPoint, ReleaseView

NOT_A_RELEASE = "smoke run, not a release"


def gate_title(release: bool) -> str:
    """What a verdict is called: the RC1 release gate's, or a smoke run's, computed by the same rule."""
    return "release (RC1 gate)" if release else f"{NOT_A_RELEASE} (the RC1 gate's rule, computed)"


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
        f"{gate_title(event.release)}: {verdict}: gate set n={event.n} hard items × {event.samples} samples, "
        f"sampled success {event.baseline_success:.3f} -> {event.selected_success:.3f} at step {event.step} "
        f"({event.selected_by}), "
        f"gain {event.hard_gain_pp:+.1f} pp{interval}; needs ≥ {event.threshold_pp:g} pp and an interval above 0"
    )
    if event.baseline_greedy is not None and event.selected_greedy is not None:
        line += f"\n  greedy success (secondary) {event.baseline_greedy:.3f} -> {event.selected_greedy:.3f}"
    return line + "".join(f"\n  not passed: {reason}" for reason in event.failed)


def release_table(evals: list[EvalPoint], selected_step: int) -> str:
    """Step 0 against the selected checkpoint on the shadow set, by task × difficulty: sampled success (what GRPO
    trains on and the verdict measures) with its change first, then the greedy view beside it. Where the greedy view
    is the same in every row, a line says so: the most likely reply did not move, not the policy."""
    first = evals[0]
    chosen = next((e for e in evals if e.step == selected_step), evals[-1])
    before = {(b.task, b.difficulty): b for b in first.buckets}
    lines = [
        f"evaluation on the shadow set: step 0 vs step {chosen.step} (selected)",
        f"  {'task':<11}{'bucket':<8}{'n':>4}  {'sampled success':>15}  {'change':>8}  {'greedy success':>15}"
        f"  {'greedy reward':>15}",
    ]
    greedy_moved = sampled_moved = False
    for b in chosen.buckets:
        a = before.get((b.task, b.difficulty))
        if a is None:
            continue
        both = a.sampled_success is not None and b.sampled_success is not None
        sampled = f"{a.sampled_success:>6.3f} -> {b.sampled_success:<6.3f}" if both else f"{'-':>15}"
        change = (b.sampled_success - a.sampled_success) if both else b.success - a.success
        greedy_moved |= a.success != b.success or a.mean_reward != b.mean_reward
        sampled_moved |= both and a.sampled_success != b.sampled_success
        lines.append(
            f"  {b.task:<11}{b.difficulty:<8}{b.n:>4}  {sampled}  {100 * change:>+6.1f}pp  {a.success:>6.3f} -> "
            f"{b.success:<6.3f}  {a.mean_reward:>6.3f} -> {b.mean_reward:<6.3f}"
        )
    if not greedy_moved and chosen.step != first.step:
        lines.append(
            "  greedy success and reward are the same in every row: the most likely reply (temperature 0) did not "
            "change; what training moved is the sampled replies, which GRPO trains on and the verdict measures"
            if sampled_moved
            else f"  step {chosen.step} scores as step 0 in every row, sampled and greedy"
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
    label = "" if r.release else f"{NOT_A_RELEASE}: "
    return (
        f"{label}{'PASSED' if r.passed else 'NOT PASSED'}: gain {r.hard_gain_pp:+.1f} pp{interval} "
        f"({measured}{at}; needs ≥ {r.threshold:g}{' and an interval above 0' if r.n else ''}){failed}"
    )
