"""`data.pages: mentions` (issue 50): a page per name, every sentence that names it; a gold path made of names a reader
of the question and of each page can copy; what an episode's calls copied, counted."""

import inspect

import pytest
from conftest import REPO

from rc1.data.environment import MENTIONS_WIKI_DOC, EpisodeEnvironment, ToolCall, WikiView, call_tool
from rc1.data.episodes import dress
from rc1.data.generators import generate
from rc1.data.gold_trajectory import gold_calls, gold_names, replay
from rc1.data.mentions import holds, is_key, mention_page
from rc1.data.pages import names
from rc1.data.task import DIFFICULTIES, TaskItem
from rc1.data.templates import load_pack
from rc1.scoring.episode_outcome import grounded, outcome
from rc1.scoring.episode_stats import CALC_GROUNDED, WIKI_OPENED, episode_stats

MENTIONS = WikiView(pages="mentions")
TASKS = ("gsm8k", "hotpotqa", "strategyqa")
CONTEXT = (
    "Malvelenthorpe, a town of 16,946 on the Ornedowy, borders Oresaness.\n"
    "Malvelenthorpe-born Tesmaneek Ulnesaini (1819) became a surveyor. Tesmaneek hosted Ana Bel at Perasathorpe Fair.\n"
    "Zanneneworth Foundry hired Ana Bel's brother Ivo Bel in 1923."
)


@pytest.fixture(scope="module")
def episodes():
    pack, out = load_pack(REPO / "configs" / "templates" / "pack_v2"), {}
    for task in TASKS:
        items = generate(task, 90, 50, f"mentions-{task}", difficulties=list(DIFFICULTIES) * 30)
        out[task] = dress(
            items, pack, seed=50, stream="pool", max_turns=3, max_tool_hops=2, clarify_rate=0.25, tools=["wiki", "calc"]
        )
    return out


def _item(**fields) -> TaskItem:
    base = {"id": "m-1", "task": "hotpotqa", "question": "?", "answer": "x", "difficulty": "easy", "prompt": "?"}
    return TaskItem(**(base | fields))


def test_a_name_opens_every_sentence_that_names_it_one_a_line_and_nothing_else():
    assert mention_page(CONTEXT, "Ana Bel") == (
        "Tesmaneek hosted Ana Bel at Perasathorpe Fair.\nZanneneworth Foundry hired Ana Bel's brother Ivo Bel in 1923."
    )
    # the hyphenated stem and the sentence it leads, not the paragraph's aside about someone else
    assert mention_page(CONTEXT, "malvelenthorpe") == (
        "Malvelenthorpe, a town of 16,946 on the Ornedowy, borders Oresaness.\n"
        "Malvelenthorpe-born Tesmaneek Ulnesaini (1819) became a surveyor."
    )
    assert (
        mention_page(CONTEXT, "  tesmaneek   ULNESAINI ")
        == "Malvelenthorpe-born Tesmaneek Ulnesaini (1819) became a surveyor."
    )


@pytest.mark.parametrize("key", ["the", "Who", "1923", "", "Ana", "Bel Ivo", "Ornedow"])
def test_a_key_that_names_nothing_or_only_part_of_a_word_is_a_miss(key):
    if key == "Ana":  # a given name alone is a name: its own page
        assert mention_page(CONTEXT, key) is not None
        return
    assert mention_page(CONTEXT, key) is None


def test_a_key_must_hold_a_word_that_is_no_function_word_common_word_or_number():
    assert not is_key("the") and not is_key("which were") and not is_key("1923") and not is_key("")
    assert is_key("Ana Bel") and is_key("crate")
    assert (
        holds("Ana Bel's brother", "ana bel")
        and holds("Ana Bel-born", "Ana Bel")
        and not holds("Ana Belton", "Ana Bel")
    )


def test_wiki_under_mentions_opens_a_name_the_titled_pages_miss_and_lists_the_titles_on_a_miss():
    item = _item(question="In which town is the employer of Ivo Bel based?", context=CONTEXT, answer="x")
    titled, named = EpisodeEnvironment(item), EpisodeEnvironment(item, wiki=MENTIONS)
    assert titled.wiki("Ivo Bel").startswith("error: no page titled 'Ivo Bel'")
    assert named.wiki("Ivo Bel") == "Zanneneworth Foundry hired Ana Bel's brother Ivo Bel in 1923."
    miss = named.wiki("Nobody Here")
    assert miss.startswith("error: no page titled 'Nobody Here'; pages: 'Malvelenthorpe'")
    assert [c.error for c in named.transcript] == ["", "no_such_page"]
    hidden = EpisodeEnvironment(item, wiki=WikiView(pages="mentions", shown=False))
    assert hidden.wiki("Ivo Bel").endswith("pages: none (this question comes with no material)")


@pytest.mark.parametrize("task", TASKS)
def test_the_named_gold_path_opens_every_page_it_asks_for_and_reaches_the_answer_on_every_generated_item(
    task, episodes
):
    failures = [
        (r.item_id, r.why) for r in (replay(i, "mentions") for i in episodes[task]) if not r.all_ok or not r.reachable
    ]
    assert failures == []


def test_each_name_the_gold_path_looks_up_was_shown_before_it_was_asked_for(episodes):
    """What makes the path learnable: the first call copies a name of the question, every later one a name of the
    question or of a page it read (never a title it could not have seen), and the first is the question's first."""
    checked = 0
    for item in [i for task in ("hotpotqa", "strategyqa") for i in episodes[task] if not i.needs_clarification]:
        env = EpisodeEnvironment(item, wiki=MENTIONS)
        shown = item.question
        for k, name in enumerate(gold_names(item)):
            assert holds(shown, name), (item.id, name)
            if k == 0 and names(item.question):
                assert name == names(item.question, stems=False)[0] or not mention_page(
                    item.context, names(item.question)[0]
                )
            shown += "\n" + env.wiki(name)
            checked += 1
    assert checked > 300


def test_the_gold_calls_follow_the_page_model_and_gsm8k_is_the_same_under_both(episodes):
    for item in episodes["gsm8k"][:20]:
        assert gold_calls(item, "mentions") == gold_calls(item, "titles")
    bridge = next(i for i in episodes["hotpotqa"] if not i.needs_clarification and "employer of" in i.question)
    assert gold_calls(bridge, "mentions")[0].arguments["title"] == names(bridge.question, stems=False)[0]


def test_the_schema_trl_renders_for_mentions_says_what_wiki_does_there():
    from rc1.train.live_generation import tool_schemas
    from rc1.train.live_tools import live_environment_class

    titled, named = tool_schemas(), tool_schemas(wiki=MENTIONS)
    assert [s["function"]["name"] for s in named] == ["ask", "calc", "wiki"]
    assert titled[:2] == named[:2] and titled[2] != named[2]
    assert named[2]["function"]["description"] == MENTIONS_WIKI_DOC.strip().splitlines()[0]
    cls = live_environment_class((), MENTIONS)
    assert {n for n, _ in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")} == {
        "reset",
        "wiki",
        "calc",
        "ask",
    }


def test_a_calc_call_is_grounded_when_every_number_was_given_by_the_question_or_a_result_read():
    item = _item(task="gsm8k", question="Ana has 1,200 beads and buys 3 bags of 12.", context="")
    first = ToolCall(tool="calc", arguments={"expression": "1200 + 3 * 12"}, result="1236", ok=True)
    assert grounded(item, [], first)
    assert grounded(item, [first], ToolCall(tool="calc", arguments={"expression": "1236 - 12"}, result="", ok=True))
    assert not grounded(item, [], ToolCall(tool="calc", arguments={"expression": "58 - 2 * 4"}, result="", ok=True))
    assert not grounded(item, [], ToolCall(tool="calc", arguments={"expression": "x"}, result="", ok=False))


def test_an_episode_counts_the_wiki_calls_that_opened_a_page_and_the_calc_calls_on_given_numbers():
    item = _item(question="In which town is the employer of Ivo Bel based?", context=CONTEXT)
    env = EpisodeEnvironment(item, wiki=MENTIONS)
    for tool, arguments in [
        ("wiki", {"title": "Ivo Bel"}),
        ("wiki", {"title": "Nobody"}),
        ("calc", {"expression": "1923 - 1923"}),
        ("calc", {"expression": "7 * 7"}),
    ]:
        call_tool(env, tool, arguments)
    messages = [{"role": "tool", "name": c.tool, "content": c.result} for c in env.transcript]
    messages.append({"role": "assistant", "content": "Answer: x"})
    done = outcome(item, messages, env.transcript)
    assert (done.wiki_calls, done.wiki_opened, done.calc_calls, done.calc_grounded) == (2, 1, 2, 1)
    stats = episode_stats([False], [done])
    assert stats[WIKI_OPENED] == 0.5 and stats[CALC_GROUNDED] == 0.5
    assert WIKI_OPENED not in episode_stats(
        [False], [outcome(item, [{"role": "assistant", "content": "Answer: x"}], ())]
    )
