"""The RC1 release gate, computed from the log: did the hard bucket improve?

hard_gain_pp = 100 · (hard success at the best checkpoint − hard success at step 0), where hard success
is the share of hard HotpotQA + StrategyQA shadow items answered correctly and the best checkpoint is
the last one promoted to best/ (by `release.metric`). With no checkpoint better than step 0 the gain is
the final checkpoint's, and the gate is closed. Passed when hard_gain_pp ≥ `release.min_hard_gain_pp`.

With several seeds (`run.seeds`) each line of training gets that verdict, and the run gets one across them
(`release_across_seeds`): the mean gain minus its spread must reach the threshold, every seed having passed.
"""

from __future__ import annotations

import statistics

from rc1.events import schema as ev
from rc1.events.replay import EvalPoint, Projection
from rc1.session import Session


def release_event(p: Projection, threshold_pp: float, metric: str) -> ev.ReleaseEvaluated | None:
    """None when the log holds no step-0 evaluation to measure a gain from (a run begun before it existed)."""
    by_step = {e.step: e for e in p.evals}
    base = by_step.get(0)
    if base is None or base.hard_success is None or len(by_step) < 2:
        return None
    best = by_step.get(p.best_step) if p.best_step else None
    measured = best or by_step[max(by_step)]
    gain = 100.0 * ((measured.hard_success or 0.0) - base.hard_success)
    return ev.ReleaseEvaluated(
        step=best.step if best else None, baseline_hard_success=base.hard_success,
        hard_success=measured.hard_success or 0.0, hard_gain_pp=gain, threshold_pp=threshold_pp,
        passed=best is not None and gain >= threshold_pp, metric=metric, seed=p.seed,
    )


def evaluate_release(session: Session) -> None:
    event = release_event(session.projection, session.config.release.min_hard_gain_pp, session.config.release.metric)
    if event is None:
        print("release: not evaluated (this run has no step-0 evaluation to compare with)", flush=True)
        return
    session.append(event)
    print(release_table(session.projection.evals), flush=True)
    verdict = "PASSED" if event.passed else "NOT PASSED"
    where = f"best checkpoint step {event.step}" if event.step is not None else "no checkpoint beat step 0"
    print(f"release (RC1 gate): {verdict}: hard HotpotQA+StrategyQA success {event.baseline_hard_success:.3f} -> "
          f"{event.hard_success:.3f} ({event.hard_gain_pp:+.1f} pp; needs ≥ {event.threshold_pp:g} pp; {where})", flush=True)


def release_table(evals: list[EvalPoint]) -> str:
    """Step 0 against the last evaluation, by task × difficulty."""
    first, last = evals[0], evals[-1]
    before = {(b.task, b.difficulty): b for b in first.buckets}
    lines = [f"evaluation on the shadow set: step 0 vs step {last.step}",
             f"  {'task':<11}{'bucket':<8}{'n':>4}  {'success':>15}  {'delta':>8}  {'reward':>15}  {'overclar':>13}"]
    for b in last.buckets:
        a = before.get((b.task, b.difficulty))
        if a is None:
            continue
        lines.append(f"  {b.task:<11}{b.difficulty:<8}{b.n:>4}  {a.success:>6.3f} -> {b.success:<6.3f}"
                     f"  {100 * (b.success - a.success):>+6.1f}pp  {a.mean_reward:>6.3f} -> {b.mean_reward:<6.3f}"
                     f"  {a.overclar_rate:>4.2f} -> {b.overclar_rate:<4.2f}")
    return "\n".join(lines)


def across_seeds_event(p: Projection, threshold_pp: float) -> ev.ReleaseAcrossSeeds | None:
    """The verdict over every finished line of training: mean hard gain minus its spread (sample standard
    deviation over seeds) must reach the threshold, and every line must have passed its own gate. None
    when a line has no release of its own (a run begun before the step-0 evaluation existed)."""
    releases = {str(line.seed): line.release for line in p.finished}
    if not releases or any(r is None for r in releases.values()):
        return None
    gains = {seed: r.hard_gain_pp for seed, r in releases.items()}
    mean = statistics.fmean(gains.values())
    spread = statistics.stdev(gains.values()) if len(gains) > 1 else 0.0
    passed = mean - spread >= threshold_pp and all(r.passed for r in releases.values())
    return ev.ReleaseAcrossSeeds(gains_pp=gains, mean_pp=mean, spread_pp=spread, threshold_pp=threshold_pp, passed=passed)


def evaluate_release_across_seeds(session: Session) -> None:
    event = across_seeds_event(session.projection, session.config.release.min_hard_gain_pp)
    if event is None:
        print("release across seeds: not evaluated (a line of training has no release of its own)", flush=True)
        return
    session.append(event)
    gains = ", ".join(f"seed {seed} {gain:+.1f}" for seed, gain in event.gains_pp.items())
    print(f"release across {len(event.gains_pp)} seeds (RC1 gate): {'PASSED' if event.passed else 'NOT PASSED'}: "
          f"hard gain mean {event.mean_pp:+.1f} pp, spread {event.spread_pp:.1f} pp ({gains}); "
          f"needs mean − spread ≥ {event.threshold_pp:g} pp and every seed passed", flush=True)
