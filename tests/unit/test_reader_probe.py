"""What the copy probe reads off live episodes (rc1/reader/probe.py), and what the shipped reader does on prompts it
never trained on, against the tiny model it replaces."""

from live_episodes import dressed, live_items

from rc1.data.environment import EpisodeEnvironment, WikiView, call_tool
from rc1.data.gold_trajectory import gold_names
from rc1.reader.probe import Count, LiveReading, read_calls

MENTIONS = WikiView(pages="mentions")


def transcript(item, *calls):
    env = EpisodeEnvironment(item, wiki=MENTIONS)
    for tool, arguments in calls:
        call_tool(env, tool, arguments)
    return list(env.transcript)


def test_a_page_opened_by_a_name_of_the_question_counts_as_opened_and_copied_and_calc_on_given_numbers_as_grounded():
    hotpot, _, gsm8k, _ = live_items()
    named = gold_names(hotpot)[0]  # a name of the question, with a page
    number = next(w for w in gsm8k.question.replace(",", "").split() if w.isdigit())
    episodes = [
        (hotpot, transcript(hotpot, ("wiki", {"title": named}), ("wiki", {"title": named[:-1]}))),
        (gsm8k, transcript(gsm8k, ("calc", {"expression": f"{number} + {number}"}), ("calc", {"expression": "9137"}))),
        (hotpot, transcript(hotpot, ("wiki", {"title": "  "}))),
    ]
    reading = read_calls(episodes)
    assert reading.episodes == 3 and reading.wiki_opened == Count(1, 3) and reading.wiki_copied.of == 3
    assert reading.wiki_copied.hits == 1  # a word cut short is not copied, nor a blank title
    assert reading.calc_grounded == Count(1, 2)  # 9137 is no number of the question


def test_no_episode_reads_as_no_call():
    assert read_calls([]) == LiveReading(
        episodes=0, wiki_opened=Count(0, 0), wiki_copied=Count(0, 0), calc_grounded=Count(0, 0)
    )


def test_the_shipped_reader_copies_spans_and_names_pages_the_tiny_model_never_named():
    """Greedy, on prompts no build saw: random-token spans after three shown repeats, and live episodes of items
    from a stream of their own. The tiny model it replaces opened 0 of 101 pages (issue 43; docs/DESIGN.md §12)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rc1.data.generators import generate
    from rc1.reader.probe import live_probe, repeat_probe
    from rc1.reader.shipped import reader_dir
    from rc1.train.live_tools import with_tool_calling

    model = AutoModelForCausalLM.from_pretrained(reader_dir())
    tokenizer = AutoTokenizer.from_pretrained(reader_dir())
    assert repeat_probe(model, len(tokenizer), segments=20).hits >= 5  # 9 as built; the tiny model 0 of 40
    items = dressed(generate("hotpotqa", 6, 9001, "probe-hotpotqa") + generate("strategyqa", 6, 9001, "probe-sqa"))
    reading = live_probe(model, with_tool_calling(tokenizer), items, MENTIONS, max_completion_tokens=256, rounds=6)
    print(reading)
    assert reading.wiki_opened.hits >= 0.3 * reading.wiki_opened.of and reading.wiki_opened.of >= 6
