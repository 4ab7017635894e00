"""Live episodes (issue 43), the items: a live item's prompt is the instruction and the question alone (the
under-specified one for the same share of items as recorded), deterministic, the material left to its environment,
and its gold trajectory replays through that environment."""

import pytest
from conftest import REPO
from live_episodes import dressed

from rc1.data.episodes import INSTRUCTION, TOOLS_RULE
from rc1.data.generators import generate
from rc1.data.gold_trajectory import replay
from rc1.data.task import DIFFICULTIES
from rc1.data.templates import load_pack

PACK = load_pack(REPO / "configs" / "templates" / "pack_v2")
TASKS = ("gsm8k", "hotpotqa", "strategyqa")


def _items(task: str, n: int = 30):
    return generate(task, n, 43, f"live-{task}", difficulties=list(DIFFICULTIES) * (n // 3))


def _dress(items, episodes: str, rate: float = 0.2):
    return dressed(items, episodes, rate=rate)


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


def test_the_seed_pool_check_reads_a_live_pool_as_framed_by_the_pack_and_only_when_live():
    from rc1.checks.seed_pool import seed_pool_check
    from rc1.config.schema import DataConfig

    pool = _dress(_items("hotpotqa"), "live", rate=0.1)
    data = dict(pool_size=len(pool), shadow_size=6, max_turns=3, max_tool_hops=2, clarify_rate=0.1)
    live = seed_pool_check(pool, DataConfig(**data, episodes="live"), PACK, "ab" * 32)
    assert live.passed and live.measured["items_not_framed_by_pack"] == 0, live.detail
    recorded = seed_pool_check(pool, DataConfig(**data), PACK, "ab" * 32)  # a live pool under a recorded config
    assert not recorded.passed and "carry no framing of the pack" in recorded.detail
