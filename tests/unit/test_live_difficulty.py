"""Live episodes (issue 43), difficulty: a live item's turns, tool hops and length come from its gold trajectory (the
one rollout there is before training), its text dimensions as before, and a recorded item's metrics are unchanged."""

import hashlib
import json

import msgspec
import pytest
from live_episodes import dressed

from rc1.checks.difficulty import DifficultyLimits, validate
from rc1.data.balance import rebalance
from rc1.data.difficulty import BUCKET_TABLE, LIVE_TOOL_HOPS, ItemMetrics, bucket, bucket_and_margin, measure, votes
from rc1.data.generators import generate
from rc1.data.gold_trajectory import gold_calls, replay
from rc1.data.task import DIFFICULTIES
from rc1.data.text import tokens

TASKS = ("gsm8k", "hotpotqa", "strategyqa")
TEXT_DIMENSIONS = ("entities", "ops_numeric", "connector_density", "coref_pronouns", "clue_overlap", "ambiguity_flags")
# sha256 of the 90 recorded items' metrics below, measured before live items had their own path (5acccaa).
RECORDED_METRICS_SHA256 = "11e8a1d289356af42e328741806ba16672a6bc25ba0e092c08e3e29a56d49c71"
# sha256 of the same items' votes and (bucket, margin), as JSON, measured before live items had rows of their own
# (c0abc32): a live row must not move a recorded vote.
RECORDED_VOTES_SHA256 = "75a3b808a417a5f8f8b5fa8429649749e498cbb9fc9d6b3b9658123b85ad7b59"


def _items(task: str, stream: str, n: int = 30):
    return generate(task, n, 43, f"{stream}-{task}", difficulties=list(DIFFICULTIES) * (n // 3))


def _dress(items, episodes: str):
    return dressed(items, episodes)


def test_a_recorded_items_metrics_are_unchanged():
    items = [i for task in TASKS for i in _items(task, "rec")]
    encoded = b"".join(msgspec.json.encode(measure(i)) for i in _dress(items, "recorded"))
    assert hashlib.sha256(encoded).hexdigest() == RECORDED_METRICS_SHA256


@pytest.mark.parametrize("task", TASKS)
def test_a_live_items_structure_is_its_gold_trajectorys(task):
    items = _items(task, "live")
    live = _dress(items, "live")
    for item in live:
        m, calls = measure(item), [c for c in replay(item).calls if c.ok]
        assert m.tool_hops == sum(c.tool in ("wiki", "calc") for c in calls)
        assert m.turns == 1 + sum(c.tool == "ask" for c in calls) == 1 + item.needs_clarification
        assert m.len_tokens == len(tokens(item.prompt)) + sum(len(tokens(c.result)) for c in calls)
        assert m.len_tokens > len(tokens(item.prompt)) or not calls
        before = measure(msgspec.structs.replace(item, template=""))  # the same item read off its prompt, as before
        assert (before.turns, before.tool_hops) == (1, 0)
        assert [getattr(m, d) for d in TEXT_DIMENSIONS] == [getattr(before, d) for d in TEXT_DIMENSIONS]
    # Read off the prompt, every live item had 1 turn and 0 hops; on the gold path its hops vote by the task's live row.
    assert max(measure(i).tool_hops for i in live) >= 2
    easy_max, hard_min = LIVE_TOOL_HOPS[task]
    for m in map(measure, live):
        assert votes(m)["tool_hops"] == (
            "easy" if m.tool_hops <= easy_max else "hard" if m.tool_hops >= hard_min else "medium"
        )
    if task == "gsm8k":  # 4-5 calc steps reach the hard row (hotpotqa/strategyqa rarely leave their design's 2 pages)
        assert any(bucket(measure(i)) == "hard" for i in live)


def test_a_live_items_tool_rounds_are_its_gold_paths_calls_and_a_recorded_item_has_none():
    items = [i for task in TASKS for i in _items(task, "rounds")]
    for item in _dress(items, "live"):
        m = measure(item)
        assert m.live and m.tool_rounds == len(gold_calls(item)) == len(replay(item).calls)
    for item in _dress(items, "recorded"):
        m = measure(item)
        assert not m.live and m.tool_rounds is None
        assert b"tool_rounds" not in msgspec.json.encode(m)  # recorded metrics encode as before


def _live_balanced(max_tool_rounds: int):
    items = [i for task in TASKS for i in _items(task, "cap", n=60)]
    live = _dress(items, "live")
    metrics = [measure(i) for i in live]
    balanced = rebalance(live, metrics, {"easy": 0.25, "medium": 0.45, "hard": 0.30}, dict.fromkeys(TASKS, 1 / 3), 43)
    limits = DifficultyLimits(
        min_hard=0.0,
        max_easy=1.0,
        max_len_tokens=4096,
        max_turns=3,
        max_tool_hops=2,
        max_tool_rounds=max_tool_rounds,
        hard_clue_max=1.0,
        easy_clue_min=0.0,
        min_fraction=0.0,
    )
    return balanced, {m.id: m for m in metrics}, validate(balanced, len(live), {m.id: m for m in metrics}, limits)


def test_a_live_items_cap_is_its_gold_paths_rounds_against_max_tool_rounds_not_max_tool_hops():
    balanced, metrics, result = _live_balanced(6)
    hops = {t: max(metrics[i.id].tool_hops for i in balanced.items if i.task == t) for t in TASKS}
    assert hops["gsm8k"] > 2  # above data.max_tool_hops, which bounds recorded templates only
    assert "tool_hops" not in result.detail and "tool rounds" not in result.detail, result.detail
    assert result.measured["gsm8k.max_tool_rounds"] == max(
        metrics[i.id].tool_rounds for i in balanced.items if i.task == "gsm8k"
    )
    _, metrics, tight = _live_balanced(2)
    assert not tight.passed
    over = sorted(i.id for i in balanced.items if i.task == "gsm8k" and metrics[i.id].tool_rounds > 2)
    assert over and f"gsm8k: {len(over)} live item(s) need more tool rounds" in tight.detail
    assert "data.max_tool_rounds 2" in tight.detail
    assert any(i in tight.detail for i in over)
    assert tight.measured["gsm8k.over_tool_rounds"] == len(over)


def test_a_live_items_clue_overlap_is_skipped_by_name_never_a_vote_for_hard():
    items = [i for task in ("hotpotqa", "strategyqa") for i in _items(task, "clue")]
    live = _dress(items, "live")
    for item in live:
        m = measure(item)
        assert m.clue_overlap is not None  # measured (the report shows it) ...
        assert "clue_overlap" not in votes(m)  # ... but never cast
        read_as_recorded = msgspec.structs.replace(m, tool_rounds=None)
        unchanged = set(votes(read_as_recorded)) - {"clue_overlap", "turns", "len_tokens", "tool_hops"}
        assert {k: votes(read_as_recorded)[k] for k in unchanged} == {k: votes(m)[k] for k in unchanged}
    assert sum(votes(msgspec.structs.replace(measure(i), tool_rounds=None)).get("clue_overlap") == "hard" for i in live)
    balanced, _, result = _live_balanced(6)
    # The clue-overlap medians are not ruled on live items, and the check says the dimension was skipped, by name.
    assert "clue_overlap of easy items" not in result.detail and "clue_overlap of hard items" not in result.detail
    assert "hotpotqa.easy_clue_overlap_p50" not in result.measured
    assert "hotpotqa: clue_overlap, len_tokens, turns skipped on its" in result.detail
    assert "gsm8k: len_tokens, turns skipped on its" in result.detail  # no context: clue_overlap abstains, not skipped
    assert result.measured["hotpotqa.live_items"] == sum(i.task == "hotpotqa" for i in balanced.items)
    # A recorded item still votes on it.
    recorded = [measure(i) for i in _dress(items, "recorded")]
    assert any("clue_overlap" in votes(m) for m in recorded)


def test_a_recorded_items_votes_are_unchanged():
    items = [i for task in TASKS for i in _items(task, "rec")]
    cast = [[sorted(votes(m).items()), list(bucket_and_margin(m))] for m in map(measure, _dress(items, "recorded"))]
    assert hashlib.sha256(json.dumps(cast).encode()).hexdigest() == RECORDED_VOTES_SHA256


def _metrics(task: str, hops: int, *, live: bool, turns: int = 1, len_tokens: int = 500) -> ItemMetrics:
    return ItemMetrics(
        id="x",
        task=task,
        len_tokens=len_tokens,
        turns=turns,
        tool_hops=hops,
        entities=0,
        ops_numeric=0,
        connector_density=0.0,
        coref_pronouns=0,
        clue_overlap=None,
        ambiguity_flags=0,
        needs_clarification=False,
        tool_rounds=hops if live else None,
    )


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("gsm8k", ["easy", "easy", "easy", "medium", "hard", "hard"]),  # budget easy 2, medium 3, hard 4-5
        ("hotpotqa", ["easy", "easy", "medium", "hard", "hard", "hard"]),  # two paragraphs at every difficulty
        ("strategyqa", ["easy", "easy", "easy", "hard", "hard", "hard"]),  # 2 needed facts; hard: one more
    ],
)
def test_a_live_items_tool_hops_vote_by_its_tasks_design_row(task, expected):
    assert [votes(_metrics(task, hops, live=True))["tool_hops"] for hops in range(6)] == expected


def test_a_live_item_never_votes_turns_or_len_tokens_and_a_recorded_one_still_does():
    for task in TASKS:
        asked = _metrics(task, 2, live=True, turns=2, len_tokens=40)
        assert "turns" not in votes(asked) and "len_tokens" not in votes(asked)
        recorded = _metrics(task, 2, live=False, turns=2, len_tokens=40)
        # The recorded rows, as before: 2 hops and 2 turns hard, a short prompt easy.
        assert votes(recorded) == {
            "turns": "hard",
            "tool_hops": "hard",
            "len_tokens": "easy",
            "entities": "easy",
            "connector_density": "easy",
        }
    assert BUCKET_TABLE["tool_hops"] == (0, 2)  # the recorded row is untouched
    assert "tool_hops" not in votes(_metrics("mytask", 3, live=True))  # no design to cut from: it abstains


@pytest.mark.parametrize("task", TASKS)
def test_the_live_tool_hops_row_reads_the_generators_design(task):
    """The cuts encode how the generator builds each difficulty: an item built easy never votes hard on hops, nor one
    built hard easy where the design puts it above the easy count (gsm8k: a budget of 4-5 operations can still be 2
    calls of two operations each, so only "not easy above 2" is the design's)."""
    easy_max, hard_min = LIVE_TOOL_HOPS[task]
    items = _dress(_items(task, "design", 60), "live")
    by = {d: [measure(i).tool_hops for i in items if i.difficulty == d] for d in DIFFICULTIES}
    assert max(by["easy"]) < hard_min
    if task == "gsm8k":
        assert max(by["easy"]) <= 2 and max(by["medium"]) <= 3 and max(by["hard"]) <= 5  # calls <= operations
    if task == "strategyqa":
        assert set(by["easy"]) == set(by["medium"]) == {2}  # the needed facts; a distractor is not on the gold path
    if task == "hotpotqa":
        assert max(by["easy"]) <= 2  # two paragraphs, no distractor to follow
