"""`rc1 score`: why one completion gets its reward, shown for the thinking-model shapes the rule scorer
must get right; a malformed item is exit 2 with its path."""

import json

import pytest
from conftest import make_workspace, rc1_here

THINKING = ("--set", "model.thinking=on")


@pytest.fixture
def root(tmp_path):
    return make_workspace(tmp_path)


def score(root, completion: str, *args: str):
    (root / "reply.txt").write_text(completion)
    return rc1_here(root, "score", "--completion-file", "reply.txt", *args)  # the process boundary is not the point


def test_a_boxed_answer_after_the_thinking_is_correct_and_its_reward_adds_up(root):
    result = score(
        root,
        "16 - 3 = 13; 13 + 5 = 18. Is that right? Yes.\n</think>\n\nSo \\boxed{18}",
        "--task",
        "gsm8k",
        "--gold",
        "18",
        "--difficulty",
        "hard",
        "--completion-tokens",
        "12",
        "--json",
        *THINKING,
        "--set",
        "reward.difficulty_beta=0.5",
    )
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["components"] == {"correctness": 1.0, "f1": 1.0, "format": 1.0, "length": 1.0}
    assert shown["penalty"] == 0.0 and shown["difficulty_factor"] == 1.5
    assert shown["reward"] == pytest.approx(1.5)


def test_a_cut_off_thinking_asks_nobody_anything_and_earns_nothing(root):
    result = score(
        root,
        "Is it 16 minus 3? Is that right? Hmm, what about the",
        "--task",
        "gsm8k",
        "--gold",
        "18",
        "--completion-tokens",
        "24",
        "--json",
        *THINKING,
    )
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["clarifications"] == 0 and shown["penalty"] == 0.0 and shown["reward"] == 0.0


def test_the_text_view_names_every_part_of_the_reward(root):
    result = score(
        root,
        "Which town do you mean?",
        "--task",
        "hotpotqa",
        "--gold",
        "Ostrel",
        "--needs-clarification",
        "--completion-tokens",
        "6",
    )
    assert result.returncode == 0, result.stderr
    for part in ("correctness 1.000", "penalty     0.0000", "not charged", "factor      1.0000", "reward      1.0000"):
        assert part in result.stdout, result.stdout


def test_a_malformed_item_is_exit_2_with_its_path(root):
    (root / "item.json").write_text('{"task": "gsm8k", "answer": 18}')
    result = score(root, "Answer: 18", "--item-json", "item.json", "--completion-tokens", "3")
    assert result.returncode == 2 and "item.json: not a task item" in result.stderr
    result = score(root, "Answer: 18", "--task", "gsm8k", "--completion-tokens", "3")
    assert result.returncode == 2 and "give --task and --gold" in result.stderr
    result = score(root, "Answer: 18", "--task", "gsm8k", "--gold", "18")  # no model built yet to count tokens with
    assert result.returncode == 2 and "--completion-tokens N" in result.stderr
