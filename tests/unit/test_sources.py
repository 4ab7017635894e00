"""Swapping generated items for records of an official-format file: the pool's slots keep their difficulty."""

import json
from collections import Counter

import pytest
from conftest import SHARED, needs_shared

from rc1.core.errors import BadInput
from rc1.data.loaders import load_strategyqa
from rc1.data.pool import build_pool
from rc1.data.source_ref import SourceRef
from rc1.data.sources import SourceShortfall, replace_from_sources


@needs_shared
def test_pool_slots_take_records_of_their_label_then_the_nearest_and_keep_their_difficulty():
    items = build_pool(400, {"strategyqa": 1.0}, 7, {"strategyqa": {"easy": 0.2, "medium": 0.3, "hard": 0.5}})
    slots = Counter(item.difficulty for item in items)
    path = SHARED / "strategyqa" / "dev.json"
    labels = {record.id: record.difficulty for record in load_strategyqa(path)}  # 41 hard, 123 medium, 65 easy
    swapped = replace_from_sources(items[:200], {"strategyqa": SourceRef(path=path)}, 7, by_difficulty=False)
    assert Counter(i.difficulty for i in swapped) == Counter(
        i.difficulty for i in items[:200]
    )  # dressed as the slot asks
    assert len({i.id for i in swapped}) == 200 and all(i.source == str(path) for i in swapped)
    hard_slots = Counter(labels[i.id] for i in swapped if i.difficulty == "hard")
    assert sum(hard_slots.values()) > 41  # more hard slots than hard records: the nearest label fills in
    assert hard_slots == {"hard": 41, "medium": sum(hard_slots.values()) - 41}
    assert slots["hard"] == 200

    with pytest.raises(BadInput, match=r"dev\.json: has 229 distinct strategyqa records; 400 are needed \(171 missing"):
        replace_from_sources(items, {"strategyqa": SourceRef(path=path)}, 7, by_difficulty=False)
    with pytest.raises(
        BadInput, match=r"dev\.json: has 41 distinct strategyqa/hard records; \d+ are needed \(\d+ missing\)"
    ):
        replace_from_sources(items[:200], {"strategyqa": SourceRef(path=path)}, 7, by_difficulty=True)


def test_a_question_repeated_in_a_source_fills_one_slot_only(tmp_path):
    lines = [
        json.dumps(
            {
                "question": f"Ann has {i} pens and buys {i} more. How many pens does she have?",
                "answer": f"{i} + {i} = <<{i}+{i}={2 * i}>>{2 * i}\n#### {2 * i}",
            }
        )
        for i in range(10)
    ]
    path = tmp_path / "gsm8k.jsonl"
    path.write_text("\n".join(lines + lines[:4]) + "\n")  # 14 lines, 10 distinct questions
    items = build_pool(12, {"gsm8k": 1.0}, 3)
    with pytest.raises(SourceShortfall) as short:
        replace_from_sources(items, {"gsm8k": SourceRef(path=path)}, 3, by_difficulty=False)
    assert [(m.task, m.available, m.needed, m.count) for m in short.value.missing] == [("gsm8k", 10, 12, 2)]
    swapped = replace_from_sources(items[:10], {"gsm8k": SourceRef(path=path)}, 3, by_difficulty=False)
    assert len({i.question for i in swapped}) == 10
