"""Round 1's `live_episodes` check (issue 43): with data.episodes live, every pool, shadow and gate item's gold path
succeeds and reaches its answer, and no pool item's page holds a held-out item's question or own page; it fails
naming the items, and a recorded run never records it."""

import msgspec
import pytest
from conftest import REPO
from live_episodes import dressed

from rc1.app.checks import CHECKS, run_checks
from rc1.checks import live_episodes
from rc1.checks.live_episodes import SHOWN, live_episodes_check
from rc1.checks.spec import RoundInputs
from rc1.config.loading import load_config
from rc1.config.recorded import recorded_overrides
from rc1.core.workspace import Workspace
from rc1.data import gold_trajectory
from rc1.data.generators import generate
from rc1.data.gold_trajectory import replay
from rc1.data.pages import names, pages
from rc1.data.task import DIFFICULTIES, TaskItem

NGRAM, SIMILARITY = 5, 0.85  # configs/local.yaml's preflight.leak_ngram / leak_similarity

RECORDED = recorded_overrides()  # configs/local.yaml as the tiny model runs it, recorded (rc1/config/recorded.py)


def _live(task: str, n: int, stream: str) -> list[TaskItem]:
    raw = generate(task, n, 43, f"{stream}-{task}", difficulties=list(DIFFICULTIES) * (n // 3))
    return dressed(raw, stream=stream)


@pytest.fixture(scope="module")
def sets() -> tuple[list[TaskItem], list[TaskItem], list[TaskItem]]:
    def of(stream: str, n: int) -> list[TaskItem]:
        return [item for task in ("hotpotqa", "strategyqa", "gsm8k") for item in _live(task, n, stream)]

    return of("pool", 12), of("shadow", 6), of("gate", 3)


def _check(pool, shadow, gate):
    return live_episodes_check(pool, shadow, gate, NGRAM, SIMILARITY)


def test_generated_live_items_pass_with_their_figures(sets):
    pool, shadow, gate = sets
    result = _check(pool, shadow, gate)
    assert result.passed, result.detail
    assert result.measured == {
        "items": 63.0,
        "pool_items": 36.0,
        "held_out_items": 27.0,
        "gold_failed": 0.0,
        "calls_failed": 0.0,
        "unreachable": 0.0,
        "leaked": 0.0,
        "gsm8k.gold_failed": 0.0,
        "hotpotqa.gold_failed": 0.0,
        "strategyqa.gold_failed": 0.0,
    }
    assert result.thresholds == {"gold_failed": 0.0, "leaked": 0.0, "ngram": 5.0, "similarity": 0.85}
    assert "63 items (36 pool, 18 shadow, 9 gate)" in result.detail


def test_a_gold_title_that_is_no_page_of_its_item_fails_the_check_naming_the_item(sets, monkeypatch):
    pool, shadow, gate = sets
    item = next(i for i in gate if i.task == "hotpotqa" and not i.needs_clarification)
    titles = gold_trajectory.gold_titles
    # The gold path of this one item also names a page its context does not have (as a generator or a loader that
    # titles pages otherwise than rc1/data/pages.py would give).
    monkeypatch.setattr(gold_trajectory, "gold_titles", lambda i: titles(i) + ["Nowhere Hall"] * (i.id == item.id))
    assert not replay(item).all_ok
    result = _check(pool, shadow, gate)
    assert not result.passed
    assert (result.measured["gold_failed"], result.measured["calls_failed"]) == (1.0, 1.0)
    assert result.measured["hotpotqa.gold_failed"] == 1.0 and result.measured["unreachable"] == 0.0
    assert f"1 of 63 items' gold paths fail: {item.id} (wiki('Nowhere Hall'): error: no page titled" in result.detail


def test_an_answer_no_page_holds_is_unreachable_and_fails(sets):
    pool, shadow, gate = sets
    item = next(i for i in pool if i.task == "hotpotqa" and not i.needs_clarification)
    unreachable = msgspec.structs.replace(item, answer="Nowhere Written")
    result = _check([unreachable, *pool[1:]], shadow, gate)
    assert not result.passed and result.measured["unreachable"] == 1.0 and result.measured["calls_failed"] == 0.0
    assert f"{unreachable.id} (the answer 'Nowhere Written' is in no result read)" in result.detail


def test_a_gsm8k_question_the_gold_path_cannot_read_fails(sets):
    pool, shadow, gate = sets
    item = next(i for i in shadow if i.task == "gsm8k")
    unread = msgspec.structs.replace(item, question="What is the answer, roughly?")
    result = _check(pool, [unread, *shadow[1:]], gate)
    assert not result.passed and result.measured["gsm8k.gold_failed"] == 1.0
    assert "no calc steps" in result.detail


def test_many_failures_name_the_first_and_count_the_rest(sets):
    pool, shadow, gate = sets
    broken = [msgspec.structs.replace(i, answer="Nowhere Written") for i in pool if i.task == "hotpotqa"]
    result = _check(broken, shadow, gate)
    assert result.measured["gold_failed"] == len(broken) > SHOWN
    assert result.detail.count("is in no result read") == SHOWN
    assert f"(and {len(broken) - SHOWN} more)" in result.detail


def _with_line(item: TaskItem, line: str) -> TaskItem:
    return msgspec.structs.replace(item, context=f"{item.context}\n{line}")


def test_a_held_out_question_in_a_pool_page_leaks(sets):
    pool, shadow, gate = sets
    held = next(i for i in gate if i.task == "strategyqa")
    host = next(i for i in pool if i.task == "hotpotqa")
    leaking = _with_line(host, f"Asked once: {held.question} The answer was {held.answer}.")
    result = _check([leaking, *pool[1:]], shadow, gate)
    assert not result.passed and result.measured["leaked"] == 1.0 and result.measured["gold_failed"] == 0.0
    assert f"{leaking.id} ~ {held.id} (a page 5-gram containment 1.00 to its question)" in result.detail


def test_a_held_out_items_own_page_among_a_pool_items_pages_leaks(sets):
    pool, shadow, gate = sets
    held = next(i for i in shadow if i.task == "hotpotqa" and not i.needs_clarification)
    own = next(p for p in pages(held.context) if p.title in names(held.question))
    host = next(i for i in pool if i.task == "hotpotqa")
    result = _check([_with_line(host, own.text), *pool[1:]], shadow, gate)
    assert not result.passed and result.measured["leaked"] == 1.0
    assert f"{host.id} ~ {held.id} (a page equal to its page {own.title!r})" in result.detail
    padded = _with_line(host, f"{own.text} Nothing else of note happened there.")
    result = _check([padded, *pool[1:]], shadow, gate)
    assert f"{host.id} ~ {held.id} (a page 5-gram containment 1.00 to its page {own.title!r})" in result.detail


def test_a_held_out_page_that_names_nothing_of_its_question_is_a_world_fact_not_a_leak(sets):
    pool, shadow, gate = sets
    held = next(i for i in gate if i.task == "strategyqa")
    asked = names(held.question)
    fact = next(p for p in pages(held.context) if not any(name in p.text for name in asked))
    host = next(i for i in pool if i.task == "hotpotqa")
    assert _check([_with_line(host, fact.text), *pool[1:]], shadow, gate).passed


def test_a_short_held_out_question_leaks_only_as_a_whole_page(sets):
    pool, shadow, gate = sets
    held = msgspec.structs.replace(gate[0], question="Is Ana Bel tall?")  # under leak_ngram words: compared whole
    host = next(i for i in pool if i.task == "hotpotqa")
    assert _check([_with_line(host, "Is Ana Bel tall"), *pool[1:]], shadow, [held, *gate[1:]]).measured["leaked"] == 1
    assert _check([_with_line(host, "Ana Bel is tall."), *pool[1:]], shadow, [held, *gate[1:]]).measured["leaked"] == 0


def _inputs(sets, *overrides: str) -> RoundInputs:
    pool, shadow, gate = sets
    loaded = load_config(REPO / "configs/local.yaml", [*RECORDED, *overrides])
    return RoundInputs(
        loaded=loaded, ws=Workspace(root=REPO, run="local"), round_no=1, pool=pool, shadow=shadow, gate=gate
    )


def test_it_runs_in_both_rounds_on_live_episodes_only_and_a_recorded_round_records_nothing(sets):
    assert live_episodes.CHECK in CHECKS and live_episodes.CHECK.rounds == (1, 2)
    table = (live_episodes.CHECK,)
    assert run_checks(_inputs(sets), round_no=1, table=table) == []  # recorded: the check does not apply
    (result,) = run_checks(_inputs(sets, "data.episodes=live", "monitors.drift=null"), round_no=1, table=table)
    assert result.name == "live_episodes" and result.passed
    (validated,) = run_checks(
        _inputs(sets, "data.episodes=live", "monitors.drift=null"), command="pool validate", table=table
    )
    assert validated.passed
