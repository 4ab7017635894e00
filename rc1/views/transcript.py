"""A live episode's record as `rc1 rollouts` shows it under its row: the model's turns (with their tokens where they
were counted), each tool call the environment ran (numbered from 0, as `audit --rescore` names them) with its
arguments, ok or its failure, and its result clipped, then the final answer as the scorer read it."""

from __future__ import annotations

import msgspec

from rc1.scoring.archive import Rollout, item_of
from rc1.scoring.episode_outcome import correctness_input, outcome
from rc1.scoring.episode_record import Episode, messages_of
from rc1.scoring.episode_replay import clip

INDENT = "    "
ARGUMENTS = 48  # characters of a call's arguments shown
RESULT = 60  # of its result
ANSWER = 72  # of the final answer


def episode_lines(row: Rollout, episode: Episode) -> list[str]:
    item = msgspec.structs.replace(item_of(row), needs_clarification=episode.needs_clarification)
    read = outcome(item, messages_of(episode), episode.calls)
    turns = [turn for turn in episode.messages or () if turn.role == "assistant"]
    tokens = [turn.tokens for turn in turns if turn.tokens is not None]
    head = f"{len(turns)} model turn(s)" + (f" ({', '.join(map(str, tokens))} tokens)" if tokens else "")
    head += f", {len(episode.calls)} tool call(s) run"
    refused = read.tool_calls - len(episode.calls)
    head += f", {refused} refused by TRL" if refused else ""
    head += f", {read.rolled_back} rolled back at the budget" if read.rolled_back else ""
    lines = [head]
    for index, call in enumerate(episode.calls):
        arguments = ", ".join(f"{name}={value!r}" for name, value in call.arguments.items())
        status = "ok" if call.ok else f"failed ({call.error})"
        written = f"{call.tool}({clip(arguments, ARGUMENTS)})"
        lines.append(f"call {index}  {written}  {status}  → {clip(call.result, RESULT)}")
    if episode.messages is None:
        lines.append("(the completion was not a list of messages: read as an empty reply)")
    forced = correctness_input(item, read).forced_wrong
    answer = f"answer: {clip(read.final_text, ANSWER)!r}"
    lines.append(answer + (f"  (scored as no answer: {forced})" if forced else ""))
    return [INDENT + line for line in lines]
