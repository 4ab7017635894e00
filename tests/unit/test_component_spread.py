"""Round 2's component_spread (rc1/checks/component_spread.py): a reward component of yours that scores every reply of
the base model alike fails the round, named with TRL's reason where it is one of TRL's; `constant_ok` notes it; a
built-in component is noted, never failed."""

from __future__ import annotations

from rc1.checks.component_spread import component_spread

WEIGHTS = {"correctness": 0.5, "format": 0.2, "think": 0.1, "mine": 0.2}
YOURS = {"think": "trl.rewards:think_format_reward", "mine": "my_rewards:mine"}


def replies(**columns: list[float]) -> list[dict[str, float]]:
    n = len(next(iter(columns.values())))
    return [{name: values[i] for name, values in columns.items()} for i in range(n)]


def test_a_function_of_yours_that_never_varies_fails_the_round_with_trls_reason():
    scores = replies(correctness=[0, 0, 0, 0], format=[1, 0, 1, 1], think=[0, 0, 0, 0], mine=[0.2, 0.4, 0.2, 0.2])
    result = component_spread(scores, 2, WEIGHTS, YOURS, [])
    assert not result.passed and result.measured["constant"] == 1
    assert "think is 0 on every reply (weight 0.1): it wants the reply to open with <think>" in result.detail
    assert "noted: correctness is 0 on every reply" in result.detail  # built in: a base model that fails, for now
    assert result.measured["format.groups_varying"] == 0.5 and result.measured["mine.max"] == 0.4


def test_constant_ok_notes_it_and_a_varying_run_passes():
    scores = replies(correctness=[1, 0, 0, 0], format=[1, 0, 1, 1], think=[0, 0, 0, 0], mine=[0.2, 0.4, 0.2, 0.2])
    noted = component_spread(scores, 2, WEIGHTS, YOURS, ["think"])
    assert noted.passed and "noted: think is 0 on every reply" in noted.detail
    varied = replies(correctness=[1, 0, 0, 0], format=[1, 0, 1, 1], think=[1, 0, 0, 0], mine=[0.2, 0.4, 0.2, 0.2])
    assert (
        component_spread(varied, 2, WEIGHTS, YOURS, []).detail == "every weighted component varies over the 4 replies"
    )


def test_a_component_without_weight_is_not_judged():
    scores = replies(correctness=[1, 0], format=[1, 0], think=[0, 0], mine=[0.1, 0.3])
    assert component_spread(scores, 2, {**WEIGHTS, "think": 0.0}, YOURS, []).passed
