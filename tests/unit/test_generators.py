"""Built-in generators, pool and shadow set: deterministic, verifiable, diverse, disjoint."""

import re
import string
from collections import Counter

import pytest

from rc1.checks.diversity import distinct2
from rc1.checks.duplicates import duplicate_rate
from rc1.checks.leak import leak_check
from rc1.data import generators
from rc1.data.generators import INSTRUCTION, generate
from rc1.data.pool import allocate, build_pool, build_shadow
from rc1.data.text import tokens

MIX = {"hotpotqa": 0.45, "strategyqa": 0.30, "gsm8k": 0.25}
TASKS = ("gsm8k", "hotpotqa", "strategyqa")


# --- generate ------------------------------------------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_the_same_key_gives_the_same_items_and_a_longer_run_starts_with_a_shorter_one(task):
    assert generate(task, 40, 7, task) == generate(task, 40, 7, task)
    assert generate(task, 80, 7, task)[:40] == generate(task, 40, 7, task)
    assert [i.prompt for i in generate(task, 20, 8, task)] != [i.prompt for i in generate(task, 20, 7, task)]


@pytest.mark.parametrize("task", TASKS)
def test_items_are_well_formed_prompts_of_bounded_length(task):
    items = generate(task, 300, 1, task)
    assert [i.id for i in items[:2]] == [f"{task}-000000", f"{task}-000001"]
    for item in items:
        assert item.task == task and item.answer.strip() and item.source == "builtin"
        assert item.prompt.startswith("Context:\n" if item.context else "Question: ")
        assert item.prompt.endswith(f"Question: {item.question}\n{INSTRUCTION}")
        # at least the production length floor (64 tokens), well under the tiny model's budget
        assert 64 <= len(tokens(item.prompt)) <= 130, item.prompt
    assert set(Counter(i.difficulty for i in items)) == {"easy", "medium", "hard"}


def test_an_unknown_task_or_a_wrong_difficulty_list_is_refused():
    with pytest.raises(ValueError, match="unknown task 'mmlu'"):
        generate("mmlu", 3, 1, "x")
    with pytest.raises(ValueError, match="2 entries for 3 items"):
        generate("gsm8k", 3, 1, "x", difficulties=["easy", "hard"])


def test_difficulty_can_be_fixed_per_item():
    items = generate("hotpotqa", 6, 1, "h", difficulties=["easy", "easy", "medium", "medium", "hard", "hard"])
    assert [i.difficulty for i in items] == ["easy", "easy", "medium", "medium", "hard", "hard"]


# --- gsm8k: the answer follows from the question -----------------------------------------------

_TIMES = {"doubles": 2, "triples": 3, "quadruples": 4}


def _template_regex(template: str, hero: str) -> re.Pattern:
    """A template as a regex: numbers and share lists captured, the hero literal, other names wild."""
    pattern = ""
    for literal, field, _, _ in string.Formatter().parse(template):
        pattern += re.escape(literal)
        if field in ("k", "m", "v"):
            pattern += rf"(?P<{field}>\$?[\d,]+)"
        elif field == "x":
            pattern += "(?P<x>doubles|triples|quadruples)"
        elif field in ("with", "everyone"):
            pattern += rf"(?P<{field}>.+?)"
        elif field in ("a", "s", "h"):
            pattern += re.escape(hero) + {"a": "", "s": "'s", "h": r" \w+"}[field]
        elif field is not None:
            pattern += ".+?"
    return re.compile(pattern + "$")


def _solve(question: str) -> tuple[int, int]:
    """An independent reading of a generated GSM8K question: find each step by its template, do the
    arithmetic; returns the result and the number of operations (a "k boxes of m" step is two)."""
    hero = Counter(re.findall(r"\b[A-Z][a-z]+\b", question)).most_common(1)[0][0]
    steps = [
        (kind, _template_regex(t, hero))
        for table in (generators.STOCK_STEPS, generators.MONEY_STEPS)
        for kind, (_, templates) in table.items()
        for t in templates
    ]
    starts = [_template_regex(t, hero) for t in generators.STOCK_START + generators.MONEY_START]

    def number(match, key):
        return int(match.group(key).lstrip("$").replace(",", ""))

    sentences = re.split(r"(?<=[.?])\s+", question)
    value = number(next(m for r in starts if (m := r.match(sentences[0]))), "v")
    operations = 0
    for sentence in sentences[1:]:
        for kind, regex in steps:
            if match := regex.match(sentence):
                fields = match.groupdict()
                if kind == "add":
                    value += number(match, "k")
                elif kind == "sub":
                    value -= number(match, "k")
                elif kind == "mul":
                    value *= _TIMES[fields["x"]]
                elif kind == "div" and fields.get("k"):
                    value //= number(match, "k")
                elif kind == "div":  # shares: everyone named, or the hero plus everyone named
                    named = len(re.split(r", | and ", fields.get("with") or fields["everyone"]))
                    value //= named + (1 if fields.get("with") else 0)
                elif kind == "add_prod":
                    value += number(match, "k") * number(match, "m")
                else:
                    value -= number(match, "k") * number(match, "m")
                operations += 2 if kind.endswith("_prod") else 1
                break
    return value, operations


def test_every_gsm8k_answer_is_the_result_of_the_steps_in_its_question_with_ops_set_by_difficulty():
    for item in generate("gsm8k", 240, 3, "gsm8k"):
        value, operations = _solve(item.question)
        assert int(item.answer) == value > 0, item.question
        assert operations in {"easy": (2,), "medium": (3,), "hard": (4, 5)}[item.difficulty], item.question


# --- hotpotqa and strategyqa -----------------------------------------------------------------------


def test_hotpotqa_has_two_gold_paragraphs_plus_distractors_by_difficulty_and_a_span_answer():
    for item in generate("hotpotqa", 300, 5, "hotpotqa"):
        paragraphs = item.context.split("\n")
        assert len(paragraphs) == {"easy": 2, "medium": 3, "hard": 5}[item.difficulty]
        if item.answer in ("yes", "no"):
            assert "same town" in item.question or "share a birthplace" in item.question
        else:
            assert item.answer in item.context
    questions = [item.question for item in generate("hotpotqa", 300, 5, "hotpotqa")]
    assert sum(" or " in q for q in questions) > 50 and sum(" or " not in q for q in questions) > 50  # both kinds


def test_strategyqa_answers_are_yes_or_no_and_exactly_balanced():
    items = generate("strategyqa", 301, 9, "strategyqa")
    answers = Counter(item.answer for item in items)
    assert set(answers) == {"yes", "no"} and abs(answers["yes"] - answers["no"]) <= 1
    assert all({a.answer for a in items[i : i + 2]} == {"yes", "no"} for i in range(0, 300, 2))


# --- pool and shadow set ------------------------------------------------------------------------


def test_allocate_is_exact_with_largest_remainders_and_ties_broken_by_name():
    assert allocate(600, MIX) == {"gsm8k": 150, "hotpotqa": 270, "strategyqa": 180}
    assert allocate(10, {"c": 1, "b": 1, "a": 1}) == {"a": 4, "b": 3, "c": 3}
    assert allocate(7, MIX) == {"gsm8k": 2, "hotpotqa": 3, "strategyqa": 2}  # remainders .75, .15, .10
    assert sum(allocate(30001, MIX).values()) == 30001
    assert allocate(0, MIX) == {"gsm8k": 0, "hotpotqa": 0, "strategyqa": 0}
    with pytest.raises(ValueError):
        allocate(5, {"a": -1.0, "b": 2.0})
    with pytest.raises(ValueError):
        allocate(5, {"a": 0.0})


def test_the_pool_has_the_mix_stable_ids_and_a_seeded_order():
    pool = build_pool(600, MIX, seed=1234)
    assert Counter(i.task for i in pool) == {"hotpotqa": 270, "strategyqa": 180, "gsm8k": 150}
    assert sorted(i.id for i in pool if i.task == "gsm8k") == [f"gsm8k-{i:06d}" for i in range(150)]
    assert pool == build_pool(600, MIX, seed=1234) and pool != build_pool(600, MIX, seed=1235)
    assert len({i.task for i in pool[:20]}) == 3  # interleaved, not grouped by task


def test_the_shadow_set_is_stratified_by_task_and_difficulty_in_thirds():
    shadow = build_shadow(60, MIX, seed=4242)
    cells = Counter((i.task, i.difficulty) for i in shadow)
    assert cells == {
        (t, d): n // 3
        for t, n in {"hotpotqa": 27, "strategyqa": 18, "gsm8k": 15}.items()
        for d in ("easy", "medium", "hard")
    }
    assert {i.id for i in shadow if i.task == "gsm8k"} == {f"shadow-gsm8k-{i:06d}" for i in range(15)}
    uneven = Counter(i.difficulty for i in build_shadow(7, {"gsm8k": 1.0}, seed=1))
    assert uneven == {"easy": 3, "hard": 2, "medium": 2}  # the extra one by name: easy first


def test_pool_and_shadow_come_from_disjoint_streams_even_under_the_same_seed():
    pool, shadow = build_pool(600, MIX, seed=1234), build_shadow(60, MIX, seed=4242)
    assert leak_check(pool, shadow, 5, 0.85).passed
    same_seed = build_shadow(60, MIX, seed=1234)
    assert leak_check(pool, same_seed, 5, 0.85).passed
    assert not {i.prompt for i in pool} & {i.prompt for i in same_seed}


def test_a_production_size_pool_is_diverse_and_free_of_duplicates():
    pool = build_pool(30_000, MIX, seed=1234)  # configs/rc1.yaml: 30,000 items; distinct-2 falls as pools grow
    diversity = distinct2(pool, 0.60)
    assert diversity.passed, diversity.detail
    duplicates = duplicate_rate(pool, 0.02, 0.85)
    assert duplicates.passed and duplicates.measured["rate"] < 0.002, duplicates.detail
