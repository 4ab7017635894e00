"""What the policy is shown, and the length floor: framing, padding with asides.

Length: every prompt has at least `MIN_PROMPT_WORDS` words, so at least as many tokens (the
production length floor is 64), and rarely more than 80. With the tiny local model's pool-trained
2,000-token BPE that is about 120–190 tokens on the 600-item local pool (its prompt budget is 192).
Short items get asides about their own or new entities — never a fact that bears on the answer.
"""

from __future__ import annotations

from collections.abc import Callable

from rc1.data.generators.item import _Item

INSTRUCTION = "End with `Answer: <answer>`."
MIN_PROMPT_WORDS = 64


def render_prompt(question: str, context: str = "") -> str:
    """Exactly what the policy is shown; the same framing for built-in and loaded items."""
    head = f"Context:\n{context}\n\n" if context else ""
    return f"{head}Question: {question}\n{INSTRUCTION}"


def _words(text: str) -> int:
    """Whitespace-separated words: cheap, and never more than the text's tokens (each word here holds one)."""
    return text.count(" ") + 1


_FRAME_WORDS = len(render_prompt("", "x").split()) - 1  # "Context:", "Question:" and the instruction


def _pad(it: _Item, body: list[str], extra: int, aside: Callable[[], tuple[str, str]]) -> list[str]:
    """Insert asides until the prompt has MIN_PROMPT_WORDS words.

    `aside()` returns a sentence and the full name it speaks of ("" for none): the sentence goes
    after the first sentence, and after the first one that introduces that name.
    """
    count = _FRAME_WORDS + extra + sum(_words(s) for s in body)
    while count < MIN_PROMPT_WORDS:
        sentence, about = aside()
        first = next((i for i, s in enumerate(body) if about in s), 0)
        body.insert(it.randint(first + 1, len(body)), sentence)
        count += _words(sentence)
    return body


# Asides: elaboration that no question asks about. {g} is the given name of a question's person.
_PERSON_ASIDES = (
    "{g} trained {P1}, {P2} and {P3}.",
    "{P1} and {P2} taught {g} in {T1}.",
    "{g} married {P1} in {T1}.",
    "{g} befriended {P1} in {T1} and {P2} in {T2}.",
    "{g} visited {T1}, {T2} and {T3} with {P1}.",
    "{g} joined {C1} alongside {P1}.",
    "{g} hosted {P1} and {P2} at {L1}.",
    "{g} outlived {P1} and {P2}.",
    "{g} sponsored {C1} and {C2}.",
    "{P1} painted {g} for {C1}.",
)
_WORLD_ASIDES = (
    "{T1} supplies {T2}, {T3} and {T4}.",
    "{P1} governs {T1}; {P2} governs {T2}.",
    "{C1} serves {T1}, {T2} and {T3}.",
    "{P1} painted {T1} and {T2}.",
    "{T1} borders {T2} and {T3}.",
    "{P1} and {P2} rebuilt {T1} for {C1}.",
    "{C1} bought {C2} from {P1}.",
    "{P1} mapped {T1}, {T2} and {T3}.",
)
