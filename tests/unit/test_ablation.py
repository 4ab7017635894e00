"""An ablation arm moves one component's weight to the others in proportion, under the weights file's cap, and is
compared with the full reward on the same gate items only."""

import math

import pytest

from rc1.scoring.ablation import CAP, GateRates, against_full, arm_weights

WEIGHTS = {"correctness": 0.5, "f1": 0.15, "format": 0.2, "length": 0.15}


def test_an_arm_moves_the_weight_to_the_others_in_proportion():
    arm = arm_weights(WEIGHTS, "format")
    assert arm["format"] == 0 and math.isclose(sum(arm.values()), 1.0)
    assert arm["correctness"] == CAP  # capped: what it cannot take goes on to f1 and length
    assert math.isclose(arm["f1"], 0.25) and math.isclose(arm["length"], 0.25)
    moved = arm_weights(WEIGHTS, "correctness")
    assert math.isclose(moved["f1"], 0.3) and math.isclose(moved["format"], 0.4) and math.isclose(moved["length"], 0.3)


def test_an_arm_the_cap_cannot_hold_is_refused():
    assert arm_weights({"a": 0.5, "b": 0.5}, "a") is None  # b would weigh 1.0
    assert arm_weights({"a": 0.5, "b": 0.3, "c": 0.2}, "c") == {"a": 0.5, "b": 0.5, "c": 0.0}


def _rates(ids, rates, sha="g" * 64):
    return GateRates(gate_sha256=sha, item_ids=ids, rates=rates, step=8)


def test_the_comparison_is_paired_over_the_same_gate_items():
    full = _rates(["a", "b", "c", "d"], [0.5, 0.25, 0.0, 1.0])
    arm = _rates(["a", "b", "c", "d"], [0.25, 0.0, 0.0, 0.75])
    paired = against_full(full, arm, seed=0)
    assert paired.n == 4 and math.isclose(paired.gain_pp, -18.75)
    with pytest.raises(ValueError, match="not the full run's"):
        against_full(full, _rates(["a", "b", "c", "d"], [0.0] * 4, sha="h" * 64), seed=0)
    with pytest.raises(ValueError, match="same items in the same order"):
        against_full(full, _rates(["d", "c", "b", "a"], [0.0] * 4), seed=0)
