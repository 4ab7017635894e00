"""Live episodes (issue 43), the pure core: an environment built from one TaskItem alone whose tools (`wiki`, `calc`,
`ask`) are pure functions of the item, a transcript that records every call, failures included, and gold
trajectories that replay through it to a reachable answer on every generated item."""

import inspect
import re

import msgspec
import pytest
from conftest import REPO
from transformers.utils import get_json_schema

from rc1.data.calc import MAX_LENGTH, calc, calculate
from rc1.data.environment import TITLED_PAGES, EpisodeEnvironment, ToolCall, WikiView, call_tool
from rc1.data.episodes import dress
from rc1.data.generators import generate
from rc1.data.gold_trajectory import CLARIFY, gold_calls, replay
from rc1.data.pages import names, pages, raw_titles
from rc1.data.simulated_user import NOTHING_TO_ADD, withheld
from rc1.data.task import DIFFICULTIES, TaskItem
from rc1.data.templates import load_pack
from rc1.scoring.episode_replay import replay_calls

TASKS = ("gsm8k", "hotpotqa", "strategyqa")
PACK_DIR = REPO / "configs" / "templates" / "pack_v2"
PER_DIFFICULTY = 40

NO_PAGES = WikiView(shown=False)  # data.wiki: empty, the control arm


@pytest.fixture(scope="module")
def episodes():
    """Generated items of every built-in task and difficulty, dressed with a quarter under-specified."""
    pack, out = load_pack(PACK_DIR), {}
    for task in TASKS:
        items = generate(task, 3 * PER_DIFFICULTY, 43, f"live-{task}", difficulties=list(DIFFICULTIES) * PER_DIFFICULTY)
        out[task] = dress(
            items, pack, seed=43, stream="pool", max_turns=3, max_tool_hops=2, clarify_rate=0.25, tools=["wiki", "calc"]
        )
    return out


def _item(**fields) -> TaskItem:
    base = {"id": "t-1", "task": "hotpotqa", "question": "?", "answer": "x", "difficulty": "easy", "prompt": "?"}
    return TaskItem(**(base | fields))


# --- calc ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression, shown",
    [
        ("1 + 2 * 3", "7"),
        ("(340 + 25) * 3 - 4 * 12", "1047"),
        ("7 / 2", "3.5"),
        ("0.1 + 0.2", "0.3"),
        ("4 / -8", "-0.5"),
        ("1 / 1024", "0.0009765625"),
        ("1 / 8192", "1/8192"),
        ("1 / 3", "1/3"),
        ("22 / 7", "22/7"),
        ("1 / 3 * 3", "1"),
        ("-2 ** 2", "-4"),
        ("2 ** -2", "0.25"),
        ("2 ** 64", "18446744073709551616"),
        ("17 // 5", "3"),
        ("-7 // 2", "-4"),
        ("(7 // 2) ** -1", "1/3"),  # a floor division of Fractions is an int: its power is still exact
        ("(5 // 1) ** -3", "0.008"),
        ("17 % 5", "2"),
        ("$1,234 + 6", "1240"),
        ("1,234.5 * 2", "2469"),
        ("1e3 / 8", "125"),
        (".5 * 4", "2"),
        ("  +3  ", "3"),
    ],
)
def test_calc_is_exact_and_prints_a_whole_value_as_an_integer_else_a_short_decimal_else_the_fraction(expression, shown):
    assert calc(expression) == shown
    assert calculate(expression).error == ""


@pytest.mark.parametrize(
    "expression, kind",
    [
        ("x + 1", "bad_expression"),
        ("abs(-3)", "bad_expression"),
        ("(1).real", "bad_expression"),
        ("__import__('os')", "bad_expression"),
        ("'a' * 3", "bad_expression"),
        ("[1, 2]", "bad_expression"),
        ("1, 2", "bad_expression"),
        ("True + 1", "bad_expression"),
        ("1j * 2", "bad_expression"),
        ("1 < 2", "bad_expression"),
        ("2 ^ 3", "bad_expression"),
        ("1 +", "bad_expression"),
        ("", "bad_expression"),
        ("9" * (MAX_LENGTH + 1), "bad_expression"),
        ("$" * 5000, "bad_expression"),
        ("2 ** 0.5", "bad_expression"),
        ("2 ** 1000", "too_large"),
        ("(2 ** 64) ** 64", "too_large"),
        ("10 ** 60 * 10 ** 60 * 10 ** 60", "too_large"),
        ("1e999999999", "too_large"),
        ("1 / 0", "division_by_zero"),
        ("5 % (2 - 2)", "division_by_zero"),
        ("0 ** -1", "division_by_zero"),
    ],
)
def test_calc_refuses_anything_else_with_an_error_the_model_reads_never_an_exception(expression, kind):
    done = calculate(expression)
    assert done.error == kind and done.text.startswith("error: ")


def test_a_calc_error_says_what_to_write_instead():
    assert "**" in calc("2 ^ 3")
    assert calc("1 / 0") == "error: division by zero"
    assert calc(12) == "error: expected the expression as text, got int"


# --- pages -----------------------------------------------------------------------------------------


def test_a_loaded_hotpotqa_paragraph_is_titled_by_its_own_heading():
    context = "Ed Wood: Edward Davis Wood Jr. was an American filmmaker.\nScott Derrickson: He is a director."
    assert [p.title for p in pages(context)] == ["Ed Wood", "Scott Derrickson"]
    assert pages(context)[0].text == "Ed Wood: Edward Davis Wood Jr. was an American filmmaker."


def test_the_units_of_one_title_make_one_page():
    context = "Albany, Georgia: City in Georgia.\nAlbany, GA has around 75,000 people\nAlbany, NY has 100,000 people"
    assert [(p.title, p.text) for p in pages(context)] == [
        ("Albany, Georgia", "Albany, Georgia: City in Georgia."),
        ("Albany", "Albany, GA has around 75,000 people\nAlbany, NY has 100,000 people"),
    ]
    assert raw_titles(context) == ["Albany, Georgia", "Albany", "Albany"]


@pytest.mark.parametrize(
    "unit, title",
    [
        ("Shipwright Ana Bel was born 1850 in Korvenford.", "Ana Bel"),
        ("Korvenford-born Ana Bel (1850) became a poet.", "Ana Bel"),
        ("Rising near Tamwick, the Velmar flows 300 km to Orford.", "Velmar"),
        ("In 1850, Ana Bel set up Belvar Mills to make lamps.", "Ana Bel"),
        ("At Korvenford Fair, lemons cost 3 coins apiece.", "Korvenford Fair"),
        ("In December, Lake Velmar averages -5 degrees Celsius.", "Lake Velmar"),
        ("The empty crate itself weighs 5 kg.", "The empty crate itself"),
    ],
)
def test_a_generated_unit_is_titled_by_its_leading_named_entity(unit, title):
    assert pages(unit)[0].title == title


def test_a_name_is_a_run_of_capitalized_words_without_its_possessive_and_a_hyphenated_stem_still_links():
    assert names("Would Ana Bel's pet velmar be let into Korvenford Market?") == ["Ana Bel", "Korvenford Market"]
    assert names("Korvenford-born Ana Bel (1850) became a poet.") == ["Korvenford", "Ana Bel"]
    assert pages("Korvenford-born Ana Bel (1850) became a poet.")[0].title == "Ana Bel"


@pytest.mark.parametrize("task", TASKS)
def test_every_unit_of_a_generated_context_is_on_exactly_one_page_and_no_two_pages_share_a_title(task, episodes):
    for item in episodes[task]:
        book, lines = pages(item.context), "\n" in item.context
        assert sorted(u for p in book for u in _units(p.text, lines)) == sorted(_units(item.context, lines))
        assert len({" ".join(p.title.split()).casefold() for p in book}) == len(book)
        assert (task == "gsm8k") == (not book)


def _units(text: str, lines: bool) -> list[str]:
    units = text.split("\n") if lines else re.split(r"(?<=[.!?])\s+", text)
    return [u.strip() for u in units if u.strip()]


# --- ask -------------------------------------------------------------------------------------------


def test_ask_gives_back_the_number_an_under_specified_gsm8k_item_hides(episodes):
    unclear = [i for i in episodes["gsm8k"] if i.needs_clarification]
    assert unclear
    for item in unclear:
        fact = withheld(item)
        assert fact in item.question and any(c.isdigit() for c in fact) and fact not in item.turns[-1].content
        assert fact in EpisodeEnvironment(item).ask("Which number?")


def test_ask_shares_the_withheld_notes_and_only_then_does_wiki_open(episodes):
    item = next(i for i in episodes["hotpotqa"] if i.needs_clarification)
    env = EpisodeEnvironment(item)
    title = env.titles[0]
    assert env.wiki(title).startswith("error: the user has not shared the material yet")
    assert item.context in env.ask("Could you paste your notes?")
    assert env.wiki(title) == pages(item.context)[0].text
    assert [(c.tool, c.ok, c.error) for c in env.transcript] == [
        ("wiki", False, "withheld"),
        ("ask", True, ""),
        ("wiki", True, ""),
    ]


def test_ask_has_nothing_to_add_when_nothing_was_withheld(episodes):
    clear = next(i for i in episodes["strategyqa"] if not i.needs_clarification)
    assert EpisodeEnvironment(clear).ask("Anything else?") == NOTHING_TO_ADD
    no_number = _item(task="gsm8k", question="How many are left?", needs_clarification=True)
    assert withheld(no_number) == "" and EpisodeEnvironment(no_number).ask("Which one?") == NOTHING_TO_ADD


# --- the environment and its transcript ------------------------------------------------------------


def test_the_tools_are_exactly_the_public_methods_trl_exposes_and_each_has_a_schema(episodes):
    env = EpisodeEnvironment(episodes["hotpotqa"][0])
    public = {n for n, _ in inspect.getmembers(type(env), inspect.isfunction) if not n.startswith("_")}
    assert public == {"reset", "wiki", "calc", "ask"}
    schemas = {name: get_json_schema(getattr(env, name))["function"] for name in ("wiki", "calc", "ask")}
    for name, parameter in (("wiki", "title"), ("calc", "expression"), ("ask", "question")):
        assert schemas[name]["name"] == name
        assert schemas[name]["parameters"]["required"] == [parameter]
        assert schemas[name]["parameters"]["properties"][parameter]["type"] == "string"


def test_every_call_is_recorded_and_a_failure_is_a_recorded_result_never_an_exception():
    item = _item(context="Ana Bel (1850) was born in Korvenford.\nKorvenford lies on the Velmar near Tamwick.")
    env = EpisodeEnvironment(item)
    assert env.wiki("  ana   BEL ") == "Ana Bel (1850) was born in Korvenford."
    assert env.wiki("Velmar") == "error: no page titled 'Velmar'; pages: 'Ana Bel', 'Korvenford'"
    assert env.calc("2 +").startswith("error: ")
    assert env.wiki(5).startswith("error: wiki takes one argument, title")
    assert call_tool(env, "search", {"query": "Velmar"}).startswith("error: no tool named 'search'")
    assert call_tool(env, "wiki", {"query": "Velmar"}).startswith("error: wiki takes one argument, title")
    assert call_tool(env, "calc", "1 + 1").startswith("error: calc takes one argument")
    assert call_tool(env, "calc", {"expression": "6 * 7"}) == "42"
    assert [(c.tool, c.ok, c.error) for c in env.transcript] == [
        ("wiki", True, ""),
        ("wiki", False, "no_such_page"),
        ("calc", False, "bad_expression"),
        ("wiki", False, "malformed_call"),
        ("search", False, "unknown_tool"),
        ("wiki", False, "malformed_call"),
        ("calc", False, "malformed_call"),
        ("calc", True, ""),
    ]
    assert env.transcript[4].arguments == {"query": "Velmar"}
    assert env.transcript[6].arguments == {"_raw": "'1 + 1'"}


def test_the_same_calls_give_the_same_transcript_and_reset_starts_afresh(episodes):
    item = next(i for i in episodes["hotpotqa"] if i.needs_clarification)

    def episode(env: EpisodeEnvironment) -> bytes:
        calls = [
            ("wiki", {"title": env.titles[-1]}),
            ("ask", {"question": "Notes?"}),
            ("wiki", {"title": env.titles[-1]}),
            ("calc", {"expression": "1/3"}),
            ("wiki", {"title": "Nowhere"}),
            ("lookup", {}),
        ]
        for tool, arguments in calls:
            call_tool(env, tool, arguments)
        return msgspec.json.encode(env.transcript)

    first, again = EpisodeEnvironment(item), EpisodeEnvironment(item)
    assert episode(first) == episode(again)
    recorded = episode(EpisodeEnvironment(item))
    first.reset()
    assert first.transcript == () and episode(first) == recorded
    assert msgspec.json.decode(recorded, type=list[ToolCall]) == list(again.transcript)


def test_the_empty_wiki_control_misses_every_gold_title_and_leaves_calc_and_ask_as_they_are(episodes):
    """`data.wiki: empty` (the control arm): the same gold calls, every wiki a recorded miss naming no page, calc and
    ask answering as with the pages; a replay under the other setting finds each wiki call differing."""
    items = [i for task in TASKS for i in episodes[task] if any(c.tool == "wiki" for c in gold_calls(i))][:20]
    assert items
    for item in items:
        shown, empty = EpisodeEnvironment(item), EpisodeEnvironment(item, wiki=NO_PAGES)
        for call in gold_calls(item):
            call_tool(shown, call.tool, call.arguments)
            call_tool(empty, call.tool, call.arguments)
        assert empty.titles == ()
        for with_pages, without in zip(shown.transcript, empty.transcript, strict=True):
            if with_pages.tool == "wiki" and with_pages.ok:
                assert (without.ok, without.error) == (False, "no_such_page")
                assert without.result.endswith("pages: none (this question comes with no material)")
            else:
                assert without == with_pages
        assert replay_calls(item, empty.transcript, wiki=NO_PAGES) == []
        misread = replay_calls(item, empty.transcript, wiki=TITLED_PAGES)
        assert [d.index for d in misread] == [i for i, c in enumerate(shown.transcript) if c.tool == "wiki" and c.ok]


def test_the_environment_trl_builds_for_the_control_arm_shows_no_pages(episodes):
    """What training's rollouts call (`live_environment_factory`, the class TRL builds one environment per rollout
    from) takes data.wiki too: the same tools and schemas, a gold title a miss."""
    from rc1.train.live_tools import LiveEnvironment, live_environment_class, live_environment_factory

    item = next(i for i in episodes["hotpotqa"] if not i.needs_clarification)
    title = next(c.arguments["title"] for c in gold_calls(item) if c.tool == "wiki")
    shown, empty = live_environment_factory([item])(), live_environment_factory([item], wiki=NO_PAGES)()
    for env in (shown, empty):
        env.reset(item_id=item.id)
        env.wiki(title)
    assert [c.ok for c in shown.transcript] == [True] and [c.error for c in empty.transcript] == ["no_such_page"]
    assert live_environment_class(()) is LiveEnvironment
    without = live_environment_class((), NO_PAGES)
    public = {n for n, _ in inspect.getmembers(without, inspect.isfunction) if not n.startswith("_")}
    assert public == {"reset", "wiki", "calc", "ask"}


# --- gold trajectories -----------------------------------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_the_gold_path_succeeds_and_reaches_the_answer_on_every_generated_item(task, episodes):
    failures = [(r.item_id, r.why) for r in map(replay, episodes[task]) if not (r.all_ok and r.reachable)]
    assert failures == []


@pytest.mark.parametrize("task", TASKS)
def test_the_gold_path_asks_exactly_when_the_item_needs_clarification_and_only_first(task, episodes):
    for item in episodes[task]:
        tools = [c.tool for c in gold_calls(item)]
        assert (tools[:1] == ["ask"]) == item.needs_clarification and "ask" not in tools[1:]
        assert set(tools) - {"ask"} == ({"calc"} if task == "gsm8k" else {"wiki"})
    assert gold_calls(episodes[task][0]) == gold_calls(episodes[task][0])


def test_a_gsm8k_gold_path_computes_each_step_on_the_running_value(episodes):
    item = next(i for i in episodes["gsm8k"] if i.difficulty == "hard" and not i.needs_clarification)
    calls = replay(item).calls
    assert all(c.tool == "calc" for c in calls) and calls[-1].result == item.answer
    for before, after in zip(calls, calls[1:]):
        assert after.arguments["expression"].startswith(before.result + " ")


def test_a_question_the_gold_path_cannot_read_is_reported_unreachable_with_the_reason():
    loaded = _item(task="gsm8k", question="Natalia sold clips to 48 of her friends in April.", answer="72")
    done = replay(loaded)
    assert done.all_ok and not done.reachable and "not in a generated GSM8K form" in done.why
    assert gold_calls(_item(needs_clarification=True, context="Ana Bel lives in Korvenford."))[0].arguments == {
        "question": CLARIFY
    }
