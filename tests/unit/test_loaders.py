"""Official-format loaders: real files when ../shared/data is there, small written files always."""

import json

import pytest
from conftest import SHARED, needs_shared

from rc1.core.errors import BadInput
from rc1.data.loaders import load_gsm8k, load_hotpotqa, load_strategyqa


@needs_shared
def test_real_gsm8k_test_split_loads_with_numeric_answers():
    items = load_gsm8k(SHARED / "gsm8k" / "test.jsonl")
    assert len(items) == 1319
    assert all(item.answer.lstrip("-").replace(".", "").isdigit() for item in items)
    assert {item.difficulty for item in items} == {"easy", "medium", "hard"}


@needs_shared
def test_real_strategyqa_dev_loads_as_yes_no_with_facts_as_context():
    items = load_strategyqa(SHARED / "strategyqa" / "dev.json")
    assert len(items) == 229 and {item.answer for item in items} == {"yes", "no"}
    assert all(item.context and item.prompt.endswith("`Answer: <answer>`.") for item in items)
    # The term and its description open the material, then the facts, one per line.
    assert items[0].context.split("\n") == [
        "Albany, Georgia: City in Georgia, United States.",
        "Albany, GA has around 75,000 people",
        "Albany, NY has almost 100,000 people",
    ]


def test_hotpotqa_official_format(tmp_path):
    record = {
        "_id": "5a8b",
        "question": "Which river flows through the birthplace of Ana Vell?",
        "answer": "the Oru",
        "type": "bridge",
        "level": "hard",
        "supporting_facts": [["Ana Vell", 0], ["Tamsk", 1]],
        "context": [
            ["Ana Vell", ["Ana Vell was born in Tamsk."]],
            ["Tamsk", ["Tamsk is a town.", " It lies on the Oru."]],
        ],
    }
    path = tmp_path / "hotpot.json"
    path.write_text(json.dumps([record]))
    (item,) = load_hotpotqa(path)
    assert (item.id, item.answer, item.difficulty) == ("hotpotqa-file-5a8b", "the Oru", "hard")
    assert "Tamsk: Tamsk is a town. It lies on the Oru." in item.context


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"question": "q", "answer": "no final line"}', r"gsm\.jsonl:2: `answer` must end with `#### <number>`"),
        ('{"question": "q"}', r"gsm\.jsonl:2: missing field `answer`"),
        ('{"question": 3, "answer": "#### 1"}', r"gsm\.jsonl:2: field `question` must be str"),
        ("not json", r"gsm\.jsonl:2: not valid JSON"),
    ],
)
def test_a_bad_gsm8k_record_names_file_and_line(tmp_path, line, message):
    path = tmp_path / "gsm.jsonl"
    path.write_text('{"question": "ok", "answer": "1+1=2\\n#### 2"}\n' + line + "\n")
    with pytest.raises(BadInput, match=message):
        load_gsm8k(path)


def test_a_bad_strategyqa_record_names_its_index(tmp_path):
    path = tmp_path / "sqa.json"
    good = {"qid": "a", "question": "q?", "answer": True, "facts": [], "decomposition": []}
    path.write_text(json.dumps([good, {**good, "answer": "yes"}]))
    with pytest.raises(BadInput, match=r"sqa\.json\[1\]: field `answer` must be bool"):
        load_strategyqa(path)


def test_a_missing_source_file_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="data source not found"):
        load_gsm8k(tmp_path / "absent.jsonl")


def test_a_hub_dataset_loads_through_datasets_in_the_hubs_own_shape(tmp_path):
    """The hub's HotpotQA (hotpotqa/hotpot_qa, distractor) stores context and supporting facts as columns of
    lists; a local dataset folder goes through the same `datasets.load_dataset` call as a hub id."""
    import datasets

    from rc1.data.loaders import load_source
    from rc1.data.source_ref import SourceRef

    row = {
        "id": "5a8b",
        "question": "Which river flows through the birthplace of Ana Vell?",
        "answer": "the Oru",
        "type": "bridge",
        "level": "hard",
        "supporting_facts": {"title": ["Ana Vell", "Tamsk"], "sent_id": [0, 1]},
        "context": {
            "title": ["Ana Vell", "Tamsk"],
            "sentences": [["Ana Vell was born in Tamsk."], ["Tamsk is a town.", " It lies on the Oru."]],
        },
    }
    folder = tmp_path / "hotpot_qa"
    (folder / "data").mkdir(parents=True)
    datasets.Dataset.from_list([row]).to_parquet(str(folder / "data" / "validation-00000-of-00001.parquet"))
    ref = SourceRef(hub=str(folder), split="validation")
    (item,) = load_source("hotpotqa", ref)
    assert (item.id, item.answer, item.difficulty, item.source) == (
        "hotpotqa-file-5a8b",
        "the Oru",
        "hard",
        f"hf:{folder}:validation",
    )
    assert item.context == "Ana Vell: Ana Vell was born in Tamsk.\nTamsk: Tamsk is a town. It lies on the Oru."
    with pytest.raises(BadInput, match=rf"hf:{folder}:test: cannot load through datasets"):
        load_source("hotpotqa", SourceRef(hub=str(folder), split="test"))
