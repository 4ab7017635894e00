"""The warm-copy measurement's reading (rc1/bench/warm_copy.py): what a set of live episodes did with wiki and calc."""

from live_episodes import live_items

from rc1.bench.warm_copy import CopyReading, read_copying
from rc1.data.environment import EpisodeEnvironment, call_tool
from rc1.data.pages import pages


def transcript(item, *calls):
    env = EpisodeEnvironment(item)
    for tool, arguments in calls:
        call_tool(env, tool, arguments)
    return list(env.transcript)


def test_a_page_opened_by_a_title_copied_from_the_question_counts_as_both():
    item = next(i for i in live_items() if any(p.title in i.question for p in pages(i.context)))
    named = next(p.title for p in pages(item.context) if p.title in item.question)
    other = live_items()[1]
    episodes = [
        (item, transcript(item, ("wiki", {"title": named}), ("calc", {"expression": "2 * 3"}))),
        (other, transcript(other, ("wiki", {"title": "Balveia"}), ("calc", {"expression": "two"}))),
        (item, transcript(item, ("wiki", {"title": "  "}), ("wiki", {"page": named}))),
        (item, transcript(item, ("wiki", {"title": named[:-1]}))),  # a word cut short is not copied
    ]
    assert read_copying(episodes) == CopyReading(
        episodes=4, wiki_calls=5, pages_opened=1, copied=1, calc_calls=2, calc_parsed=1
    )
