"""Live episodes (issue 43), the items: a live item's prompt is the instruction and the question alone (the
under-specified one for the same share of items as recorded), deterministic, the material left to its environment,
and its gold trajectory replays through that environment."""

import pytest
from conftest import REPO

from rc1.data.episodes import INSTRUCTION, TOOLS_RULE, dress
from rc1.data.generators import generate
from rc1.data.gold_trajectory import replay
from rc1.data.task import DIFFICULTIES
from rc1.data.templates import load_pack

PACK = load_pack(REPO / "configs" / "templates" / "pack_v2")
TASKS = ("gsm8k", "hotpotqa", "strategyqa")


def _items(task: str, n: int = 30):
    return generate(task, n, 43, f"live-{task}", difficulties=list(DIFFICULTIES) * (n // 3))


def _dress(items, episodes: str, rate: float = 0.2):
    return dress(
        items,
        PACK,
        seed=43,
        stream="pool",
        max_turns=3,
        max_tool_hops=2,
        clarify_rate=rate,
        tools=["wiki", "calc"],
        episodes=episodes,
    )


@pytest.mark.parametrize("task", TASKS)
def test_a_live_item_is_the_instruction_and_the_question_alone(task):
    items = _items(task)
    recorded, live = _dress(items, "recorded"), _dress(items, "live")
    assert [i.needs_clarification for i in live] == [i.needs_clarification for i in recorded]  # the same share
    assert sum(i.needs_clarification for i in live) == round(0.2 * len(items))
    for raw, item in zip(items, live):
        system, user = item.turns
        assert system.role == "system" and user.role == "user"
        assert TOOLS_RULE in system.content and system.content.endswith(INSTRUCTION)
        assert item.template == f"{task}/live" and item.tool_hops == 0
        assert item.question == raw.question and item.context == raw.context and item.answer == raw.answer
        if item.needs_clarification:
            assert user.content != raw.question
        else:
            assert user.content == raw.question
        for unit in filter(None, raw.context.split("\n")):
            if unit not in raw.question:
                assert unit not in item.prompt  # the material is behind the tools
    assert _dress(items, "live") == live  # deterministic


@pytest.mark.parametrize("task", TASKS)
def test_a_live_items_gold_trajectory_replays_through_its_environment(task):
    for item in _dress(_items(task), "live", rate=0.3):
        gold = replay(item)
        assert gold.all_ok and gold.reachable, (item.id, gold.why)
