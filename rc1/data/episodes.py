"""Dressing task items as episodes from the template pack: a role and a style in the system turn,
a named user-turn template, earlier turns and tool steps for harder items, and a `clarify_rate`
share of under-specified prompts whose right reply is one clarification question.

What changes with difficulty (by construction, so the difficulty metrics can see it):
- user turns: easy 1; medium 1–2; hard 2–`max_turns`. Earlier turns carry part of the material.
- tool steps: medium up to 1, hard up to 2 (never above `max_tool_hops`) — a context paragraph returned by `wiki`, or
  the product of "k packs of m units" returned by `calc` (GSM8K), when the episode's tools allow it.
- clue overlap: an easy item's question first restates the context sentence it turns on.
The gold answer never changes; an under-specified item keeps it for after the clarification.

Deterministic: item i's choices come from a `random.Random` keyed by (stream, seed, id), and the
under-specified items are an exact, seeded `clarify_rate` share of the list.
"""

from __future__ import annotations

import random
import re

import msgspec

from rc1.data.task import TaskItem, Turn
from rc1.data.templates import TemplatePack

INSTRUCTION = "End with `Answer: <answer>`."
CLARIFY_RULE = "If the question lacks something you need, ask one clarifying question instead of answering."
# A live episode's system turn (data.episodes: live): the tools' schemas follow it, written by the chat template.
TOOLS_RULE = (
    "Use the tools: wiki(title) reads a page, calc(expression) does exact arithmetic, and ask(question) asks the user "
    "for what the question lacks; ask before answering when it lacks something you need."
)
_BACKGROUND = ("Some background first:\n{chunk}", "Before my question, here is more material:\n{chunk}")
_ACKNOWLEDGE = ("Noted. What would you like to know?", "Thanks, I have read it. Go on.")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_NAME = re.compile(r"\b[A-Z][a-z]+\b")
# Capitalized only because they open a sentence: never part of a name to look up.
_SENTENCE_OPENERS = frozenset("A An At Each Every From In No Rising Since The Lake Entry Zoologists".split())
FIRST_NUMBER = re.compile(r"\$?\d[\d,]*(?:\.\d+)?")
_PACKS_OF = re.compile(r"\b(\d+) ([a-z]+) (?:of|holding) (\d+)\b")
_SPEAKERS = {"system": "System", "user": "User", "assistant": "Assistant", "tool": "Tool"}


def dress(
    items: list[TaskItem],
    pack: TemplatePack,
    *,
    seed: int,
    stream: str,
    max_turns: int,
    max_tool_hops: int,
    clarify_rate: float,
    tools: list[str],
    episodes: str = "recorded",
) -> list[TaskItem]:
    """Every item as an episode; `stream` keeps the pool's and the shadow set's choices apart.

    `episodes` (data.episodes): "recorded" writes the material and the tool steps into the prompt; "live" gives the
    policy the question alone (the under-specified one for the same `clarify_rate` share of items) and leaves the
    material behind the tools (`_live_episode`). The same items are under-specified either way."""
    chooser = random.Random(f"clarify|{stream}|{seed}")
    unclear = set(chooser.sample(range(len(items)), round(clarify_rate * len(items)))) if items else set()
    if episodes == "live":
        return [
            _live_episode(item, pack, random.Random(f"episode|{stream}|{seed}|{item.id}"), i in unclear)
            for i, item in enumerate(items)
        ]
    return [
        _episode(
            item,
            pack,
            random.Random(f"episode|{stream}|{seed}|{item.id}"),
            max_turns,
            max_tool_hops,
            i in unclear,
            tools,
        )
        for i, item in enumerate(items)
    ]


def render(turns: list[Turn]) -> str:
    """The prompt text: one paragraph per turn, the speaker first; the policy writes the next turn."""
    parts = []
    for turn in turns:
        speaker = _SPEAKERS[turn.role] + (f" ({turn.tool})" if turn.role == "tool" else "")
        parts.append(f"{speaker}: {turn.content}")
    return "\n\n".join(parts)


def _episode(
    item: TaskItem,
    pack: TemplatePack,
    rng: random.Random,
    max_turns: int,
    max_tool_hops: int,
    unclear: bool,
    tools: list[str],
) -> TaskItem:
    role = rng.choice(sorted(pack.roles))
    style = rng.choice(sorted(pack.styles))
    templates = task_templates(pack, item)
    name = rng.choice(sorted(templates))
    system = Turn(role="system", content=f"{pack.roles[role]} {pack.styles[style]} {CLARIFY_RULE} {INSTRUCTION}")
    if unclear:
        last = _underspecified(item, pack, rng)
        turns, question, hops = [system, Turn(role="user", content=last)], item.question, 0
    else:
        turns, question, hops = _conversation(item, templates[name], pack, rng, max_turns, max_tool_hops, tools)
        turns = [system, *turns]
    return msgspec.structs.replace(
        item,
        question=question,
        prompt=render(turns),
        turns=turns,
        needs_clarification=unclear,
        template=f"{item.task}/{name}",
        role=role,
        style=style,
        tool_hops=hops,
    )


LIVE = "live"  # a live episode's template name (`<task>/live`)


def dressed_live(item: TaskItem) -> bool:
    """Whether `item` is dressed as a live episode (its prompt asks for tools that an environment answers)."""
    return item.template == f"{item.task}/{LIVE}"


def _live_episode(item: TaskItem, pack: TemplatePack, rng: random.Random, unclear: bool) -> TaskItem:
    """A live episode: a system turn (role, style, the tools rule, the answer format) and the user's question; no
    material, no tool steps, no earlier turns. The item keeps its question and context, which its environment serves
    (rc1/data/environment.py: the context as wiki pages, the withheld part to `ask`)."""
    role = rng.choice(sorted(pack.roles))
    style = rng.choice(sorted(pack.styles))
    system = Turn(role="system", content=f"{pack.roles[role]} {pack.styles[style]} {TOOLS_RULE} {INSTRUCTION}")
    asked = _underspecified(item, pack, rng) if unclear else item.question
    turns = [system, Turn(role="user", content=asked)]
    return msgspec.structs.replace(
        item,
        prompt=render(turns),
        turns=turns,
        needs_clarification=unclear,
        template=f"{item.task}/{LIVE}",
        role=role,
        style=style,
        tool_hops=0,
    )


def task_templates(pack: TemplatePack, item: TaskItem) -> dict[str, str]:
    """The user-turn templates of the item's task: the pack's own for it, else (a task of yours the pack does not
    name) the built-in ones of its shape: HotpotQA's with a context, GSM8K's without."""
    if item.task in pack.tasks:
        return pack.tasks[item.task]
    return pack.tasks["hotpotqa" if item.context else "gsm8k"]


def _underspecified(item: TaskItem, pack: TemplatePack, rng: random.Random) -> str:
    if item.context:
        return rng.choice(pack.clarify.withheld_context).format(question=item.question)
    vague = rng.choice(pack.clarify.vague)
    hidden, found = FIRST_NUMBER.subn(vague, item.question, count=1)
    if not found:  # nothing to withhold: leave the context out instead (there is none), i.e. ask as is
        hidden = item.question
    return rng.choice(pack.clarify.withheld_number).format(question=hidden)


def _conversation(
    item: TaskItem,
    template: str,
    pack: TemplatePack,
    rng: random.Random,
    max_turns: int,
    max_tool_hops: int,
    tools: list[str],
) -> tuple[list[Turn], str, int]:
    """The user/assistant/tool turns of a fully specified episode, the question as asked, the tool hops."""
    user_turns = min(
        max_turns, {"easy": 1, "medium": rng.randint(1, 2), "hard": rng.randint(2, max(2, max_turns))}[item.difficulty]
    )
    wanted_hops = min(
        max_tool_hops, {"easy": 0, "medium": rng.randint(0, 1), "hard": rng.randint(1, 2)}[item.difficulty]
    )
    question = item.question
    if item.context:
        units = item.context.split("\n") if "\n" in item.context else _SENTENCE.split(item.context)
        if item.difficulty == "easy":
            question = f"{_clue(units, item.question)} {item.question}"
    else:
        units = _SENTENCE.split(item.question)
    turns: list[Turn] = []
    hops = 0
    # Tool steps first: each takes one unit out of what the user will paste. When units are scarce (a
    # short real context), they leave one for an earlier user turn: turns are what a hard episode is
    # most recognizably made of, and a hop without an earlier turn would leave a one-turn "hard" item.
    if item.context:
        wanted_hops = min(wanted_hops, len(units) - 1 - min(1, user_turns - 1))
    for _ in range(wanted_hops):
        step = _tool_step(item, units, pack, tools, rng)
        if step is None:
            break
        turns += step
        hops += 1
    # Earlier user turns carry background; the last one keeps at least one unit (the question itself for GSM8K).
    keep_last = 1 if item.context else max(1, len(units) // 2)
    for k in range(user_turns - 1):
        if len(units) <= keep_last:
            break
        take = max(1, (len(units) - keep_last) // (user_turns - 1 - k))
        chunk, units = units[:take], units[take:]
        turns += [
            Turn(role="user", content=_BACKGROUND[k % 2].format(chunk="\n".join(chunk))),
            Turn(role="assistant", content=_ACKNOWLEDGE[k % 2]),
        ]
    if item.context:
        last = template.format(question=question, context="\n".join(units))
    else:
        last = template.format(question=" ".join(units))
    return [*turns, Turn(role="user", content=last)], question, hops


def _tool_step(
    item: TaskItem, units: list[str], pack: TemplatePack, tools: list[str], rng: random.Random
) -> list[Turn] | None:
    if item.context and "wiki" in tools and len(units) > 1:
        unit = units.pop(rng.randrange(len(units)))
        names = [n for n in _NAME.findall(unit) if n not in _SENTENCE_OPENERS]
        query = " ".join(names[:2]) if names else unit.split()[0]
        spec = pack.tools["wiki"]
        return [
            Turn(
                role="assistant",
                tool="wiki",
                content=f"{spec.announce.format(query=query)} {spec.call.format(query=query)}",
            ),
            Turn(role="tool", tool="wiki", content=unit),
        ]
    if not item.context and "calc" in tools:
        match = _PACKS_OF.search(item.question)
        if match is None:
            return None
        k, m = int(match.group(1)), int(match.group(3))
        expression = f"{k} * {m}"
        spec = pack.tools["calc"]
        if any(spec.call.format(expression=expression) in t for t in units):
            return None
        return [
            Turn(
                role="assistant",
                tool="calc",
                content=f"{spec.announce.format(expression=expression)} {spec.call.format(expression=expression)}",
            ),
            Turn(role="tool", tool="calc", content=str(k * m)),
        ]
    return None


def _clue(units: list[str], question: str) -> str:
    """The context sentence sharing the most names with the question (the one it turns on); the longer on a tie."""
    wanted = set(_NAME.findall(question))
    sentences = [s for unit in units for s in _SENTENCE.split(unit) if s]
    return max(sentences, key=lambda s: (len(wanted & set(_NAME.findall(s))), len(s.split())))
