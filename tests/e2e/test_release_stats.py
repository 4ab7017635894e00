"""The release verdict's statistics, and a simulation of whole runs that shows what they buy.

A simulated run: hard items with Beta-distributed success (mean 0.3, a + b = 4); the shadow set's hard
items evaluated at step 0 and at every checkpoint (K sampled replies each), `select_checkpoint` choosing
from those; then the separate gate set evaluated at step 0 and at the chosen checkpoint (its own samples),
`paired_gain` and `release_verdict` deciding. The null model: training changes nothing on average; each
checkpoint keeps each item's step-0 rate with probability 0.8, else redraws it from the same Beta.

The verdict's interval comes from `paired_gain` itself, with 999 resamples instead of 9999 so that
thousands of runs fit in seconds.
"""

import functools
import warnings
from typing import NamedTuple

import msgspec
import numpy as np
import pytest

from rc1.run.verdicts import PairedGain, Verdict, promotes, release_verdict
from rc1.scoring.release_stats import ReleasePower, paired_gain, release_power, select_checkpoint

K = 8  # sampled replies per item
BETA = (1.2, 2.8)  # per-item success at step 0: mean 0.3, a + b = 4
BASE = 0.3
KEEP = 0.8  # the null: a checkpoint keeps an item's step-0 rate with this probability, else redraws it
SIM_RESAMPLES = 999
NULL_RUNS = 2000


class Profile(NamedTuple):
    gate: int  # held-out hard items the verdict measures on
    shadow_hard: int  # the shadow set's hard items, whose success chooses the checkpoint
    evaluations: int  # shadow evaluations after step 0, one per checkpoint
    threshold_pp: float


LOCAL = Profile(gate=200, shadow_hard=20, evaluations=12, threshold_pp=5.0)
PRODUCTION = Profile(gate=400, shadow_hard=55, evaluations=50, threshold_pp=5.0)  # 55 hard of 245 shadow items


def _checkpoint_rates(rng, base, gain=0.0):
    """Null churn of the step-0 rates, then a true gain: every item moves towards solved in proportion to
    what it lacks, by `gain` on average."""
    churned = np.where(rng.random(np.shape(base)) < KEEP, base, rng.beta(*BETA, np.shape(base)))
    return churned + gain * (1 - churned) / (1 - BASE)


def _sampled(rng, rates):
    """Each item's success over K sampled replies."""
    return rng.binomial(K, rates) / K


def _drawn_when_asked(rng, gate, gain):
    """The gate's sampled success at a step: step 0's rates, or a checkpoint's (churned, lifted by `gain`)."""
    return lambda step: _sampled(rng, gate if step == 0 else _checkpoint_rates(rng, gate, gain))


def _release(shadow_evals, final_step, gate_outcomes, threshold_pp, seed):
    """One run's decision: the shadow chooses, the gate measures. gate_outcomes(step) gives the gate items'
    sampled success at that step."""
    step, kind = select_checkpoint(shadow_evals, final_step)
    gain = paired_gain(gate_outcomes(0), gate_outcomes(step), seed=seed, resamples=SIM_RESAMPLES)
    return step, kind, gain, release_verdict(gain, threshold_pp)


class Runs(NamedTuple):
    passed: np.ndarray  # the verdict, per run
    old_passed: np.ndarray  # the old rule: best by shadow hard success, gain measured on those same items
    gain_pp: np.ndarray


@functools.cache
def _simulate(profile: Profile, runs: int, gain_pp: float = 0.0, seed: int = 0) -> Runs:
    rng = np.random.default_rng(seed)
    e, gain = profile.evaluations, gain_pp / 100
    shadow = rng.beta(*BETA, (runs, profile.shadow_hard))
    checkpoints = _checkpoint_rates(rng, np.broadcast_to(shadow[:, None, :], (runs, e, profile.shadow_hard)), gain)
    success = np.concatenate([_sampled(rng, shadow).mean(-1)[:, None], _sampled(rng, checkpoints).mean(-1)], axis=1)
    gates = rng.beta(*BETA, (runs, profile.gate))
    passed, old_passed, gains = [], [], []
    for r in range(runs):
        # The gate is drawn only where it is read; select_checkpoint never sees it, so drawing after the choice
        # is the same as evaluating the gate at every checkpoint.
        outcomes = _drawn_when_asked(rng, gates[r], gain)
        step, kind, measured, verdict = _release(
            list(enumerate(success[r].tolist())), e, outcomes, profile.threshold_pp, r
        )
        old_gain = 100 * (success[r, step] - success[r, 0])
        passed.append(verdict.passed)
        old_passed.append(kind == "best" and round(old_gain, 9) >= profile.threshold_pp)
        gains.append(measured.gain_pp)
    return Runs(np.array(passed), np.array(old_passed), np.array(gains))


# --- the whole run -------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", [LOCAL, PRODUCTION], ids=["local", "production"])
def test_under_the_null_the_verdict_passes_at_most_5_percent_of_runs(profile):
    runs = _simulate(profile, NULL_RUNS)
    assert runs.passed.mean() <= 0.05
    assert abs(runs.gain_pp.mean()) < 0.5  # the gate sees no gain from the luck of the choice


@pytest.mark.parametrize("profile", [LOCAL, PRODUCTION], ids=["local", "production"])
def test_the_old_rule_choosing_and_measuring_on_the_same_shadow_items_passes_far_more_null_runs(profile):
    runs = _simulate(profile, NULL_RUNS)
    assert runs.old_passed.mean() > 0.30
    assert runs.old_passed.mean() > 6 * max(runs.passed.mean(), 0.01)


def test_a_true_10pp_gain_at_the_production_size_passes_at_least_80_percent_of_runs():
    runs = _simulate(PRODUCTION, 300, gain_pp=10.0, seed=1)
    assert runs.passed.mean() >= 0.80


def test_changing_the_gate_items_never_changes_the_selected_checkpoint():
    """Another draw of every checkpoint's gate outcomes, or the gate items in another order: the choice
    stays, while the gain measured on them moves. Choosing by the gate's own success would move."""
    rng = np.random.default_rng(5)
    e, n = LOCAL.evaluations, LOCAL.gate
    choice_on_the_gate_moved = 0
    for run in range(20):
        shadow = rng.beta(*BETA, LOCAL.shadow_hard)
        rates = [shadow] + [_checkpoint_rates(rng, shadow) for _ in range(e)]
        shadow_evals = [(step, _sampled(rng, r).mean()) for step, r in enumerate(rates)]
        gate = rng.beta(*BETA, n)
        gate_rates = np.stack([gate] + [_checkpoint_rates(rng, gate) for _ in range(e)])
        steps, gains = set(), set()
        for _ in range(3):  # another draw of every checkpoint's gate outcomes
            outcomes = _sampled(rng, gate_rates)
            for items in (outcomes, outcomes[:, rng.permutation(n)]):  # and the same items in another order
                step, _, gain, _ = _release(shadow_evals, e, items.__getitem__, LOCAL.threshold_pp, run)
                steps.add(step)
                gains.add(round(gain.gain_pp, 9))
            choice_on_the_gate_moved += select_checkpoint(list(enumerate(outcomes.mean(axis=1))), e)[0] != step
        assert len(steps) == 1
        assert len(gains) > 1
    assert choice_on_the_gate_moved > 0


# --- choosing the checkpoint ---------------------------------------------------------------------


def test_a_checkpoint_is_promoted_only_when_it_strictly_beats_every_evaluation_before_it():
    assert promotes(0.31, [0.30, 0.25])
    assert not promotes(0.30, [0.30, 0.25])  # a tie keeps the older checkpoint
    assert not promotes(0.28, [0.25, 0.30])  # step 0 counts, and so do evaluations never promoted
    assert promotes(0.1, [])


def test_the_selected_checkpoint_is_the_last_promoted_else_the_final_one():
    assert select_checkpoint([(0, 0.30), (50, 0.35), (100, 0.33), (150, 0.36), (200, 0.34)], 200) == (150, "best")
    assert select_checkpoint([(0, 0.30), (50, 0.30), (100, 0.29)], 120) == (120, "final")
    assert select_checkpoint([(0, 0.30)], 100) == (100, "final")
    with pytest.raises(ValueError, match="start with step 0"):
        select_checkpoint([(50, 0.3), (100, 0.4)], 100)
    with pytest.raises(ValueError, match="in step order"):
        select_checkpoint([(0, 0.3), (100, 0.4), (50, 0.5)], 100)
    with pytest.raises(ValueError, match="not a finite number"):
        select_checkpoint([(0, 0.3), (50, float("nan"))], 50)


# --- the paired gain -----------------------------------------------------------------------------


def test_a_hand_checkable_gain_of_12_5_pp_and_its_interval():
    gain = paired_gain([0, 0.25, 0.5, 0.5], [0.25, 0.25, 0.5, 0.75], seed=0)  # differences .25, 0, 0, .25
    assert (gain.n, gain.baseline, gain.selected, gain.gain_pp) == (4, 0.3125, 0.4375, 12.5)
    # A resample of four items draws only zeros, or only quarters, with probability 1/16 > 2.5 %: the
    # interval reaches both ends.
    assert (gain.ci_low_pp, gain.ci_high_pp) == (0.0, 25.0)
    assert (gain.confidence, gain.resamples, gain.seed) == (0.95, 9999, 0)


def test_the_same_inputs_and_seed_give_the_same_numbers():
    rng = np.random.default_rng(3)
    base, chosen = _sampled(rng, rng.beta(*BETA, 200)), _sampled(rng, rng.beta(*BETA, 200))
    assert paired_gain(base, chosen, seed=7) == paired_gain(base.tolist(), chosen.tolist(), seed=7)
    assert paired_gain(base, chosen, seed=7).ci_low_pp != paired_gain(base, chosen, seed=8).ci_low_pp


@pytest.mark.parametrize("difference", [0.0, 0.125, 1 / 3])
def test_when_every_item_moved_alike_the_interval_is_that_difference_without_warnings(difference):
    base = np.array([0.0, 0.25, 0.5, 0.25] * 10) * (1 - difference)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gain = paired_gain(base, base + difference, seed=0)
    assert gain.gain_pp == gain.ci_low_pp == gain.ci_high_pp == pytest.approx(100 * difference)


def test_the_numbers_travel_as_json_unchanged():
    gain = paired_gain([0, 0.25, 0.5, 0.5], [0.25, 0.25, 0.5, 0.75], seed=0, resamples=999)
    assert msgspec.json.decode(msgspec.json.encode(gain), type=PairedGain) == gain
    verdict = release_verdict(gain, 5)
    assert msgspec.json.decode(msgspec.json.encode(verdict), type=Verdict) == verdict
    power = release_power([0, 0.25, 0.5, 0.125], K, 5)
    assert msgspec.json.decode(msgspec.json.encode(power), type=ReleasePower) == power


def test_the_gain_is_refused_without_paired_items():
    with pytest.raises(ValueError, match="paired"):
        paired_gain([0.5, 0.25], [0.5], seed=0)
    with pytest.raises(ValueError, match="no gate items"):
        paired_gain([], [], seed=0)


# --- the verdict ---------------------------------------------------------------------------------


def _gain(gain_pp, low_pp, high_pp):
    return PairedGain(
        n=400,
        baseline=0.3,
        selected=0.3 + gain_pp / 100,
        gain_pp=gain_pp,
        ci_low_pp=low_pp,
        ci_high_pp=high_pp,
        confidence=0.95,
        resamples=9999,
        seed=0,
    )


BELOW = "the gain +3.1 pp is below the threshold 5 pp"
NOT_ABOVE_0 = "the 95 % interval [-1.2, +7.4] pp does not lie above 0"


@pytest.mark.parametrize(
    "gain_pp, low_pp, failed",
    [
        (6.0, 0.5, []),
        (3.1, 0.5, [BELOW]),
        (6.0, -1.2, [NOT_ABOVE_0]),
        (3.1, -1.2, [BELOW, NOT_ABOVE_0]),
    ],
)
def test_each_failed_sentence_appears_when_and_only_when_its_part_fails(gain_pp, low_pp, failed):
    verdict = release_verdict(_gain(gain_pp, low_pp, 7.4), threshold_pp=5)
    assert verdict.failed == failed
    assert verdict.passed is (failed == [])


def test_the_verdict_at_its_edges():
    assert release_verdict(_gain(5.0, 0.01, 9.0), 5).passed  # a gain equal to the threshold reaches it
    assert release_verdict(_gain(100 * (0.3 - 0.25), 0.01, 9.0), 5).passed  # 4.999999999999998 after rounding
    # An interval touching 0 does not lie above it; a rounding onto the bound shows more digits.
    assert release_verdict(_gain(4.96, 0.0, 9.0), 5).failed == [
        "the gain +4.96 pp is below the threshold 5 pp",
        "the 95 % interval [+0.0, +9.0] pp does not lie above 0",
    ]


# --- sizing the gate -----------------------------------------------------------------------------


def test_n_needed_for_a_beta_base_of_mean_0_3_with_k_8_and_a_5pp_threshold_is_about_400():
    rng = np.random.default_rng(2)
    power = release_power(_sampled(rng, rng.beta(*BETA, 50_000)), K, 5.0)
    assert 300 <= power.n_needed <= 500
    assert power.sd_diff == pytest.approx(0.355, abs=0.01)


def test_passed_flips_when_the_gate_size_crosses_n_needed():
    rng = np.random.default_rng(4)
    rates = _sampled(rng, rng.beta(*BETA, 600))
    reports = [release_power(rates[:n], K, 5.0) for n in range(250, 601, 10)]
    assert all(r.passed is (r.n >= r.n_needed) for r in reports)
    assert not reports[0].passed and reports[-1].passed


def _typical_gate(rng, n):
    """n step-0 rates on the quantiles of a large draw: a gate whose spread is the population's, not the
    luck of one draw of n items."""
    population = _sampled(rng, rng.beta(*BETA, 100_000))
    return np.quantile(population, (np.arange(n) + 0.5) / n, method="inverted_cdf")


def test_at_the_mde_it_reports_the_interval_clears_0_with_about_the_asked_power():
    rng = np.random.default_rng(6)
    n, runs = PRODUCTION.gate, 600
    gate = _typical_gate(rng, n)
    shift = release_power(gate, K, 5.0).mde_pp / 100
    # Its own model: selected rates independent of the base's, shifted, their sampled spread the base's
    # (a Beta of mean m whose concentration c gives the same variance after K samples).
    m, spread = gate.mean() + shift, gate.var(ddof=1)
    c = (1 - 1 / K) / (spread / (m * (1 - m)) - 1 / K) - 1

    def clears(selected_rates):
        hits = 0
        for r in range(runs):
            base = rng.beta(*BETA, n)
            gain = paired_gain(
                _sampled(rng, base), _sampled(rng, selected_rates(base)), seed=r, resamples=SIM_RESAMPLES
            )
            hits += gain.ci_low_pp > 0
        return hits / runs

    assert 0.72 <= clears(lambda base: rng.beta(m * c, (1 - m) * c, n)) <= 0.90
    # Selected rates that follow the base's (the null churn, lifted) make the difference less noisy.
    assert clears(lambda base: _checkpoint_rates(rng, base, shift)) >= 0.80
