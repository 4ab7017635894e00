"""`rc1 audit --rescore` on a live episode's row (issue 43): the episode its row keeps (rc1/scoring/episode_record.py)
checked against its item and read again, so the reward is derived from the transcript, not taken as recorded.

- The tools run again (`episode_replay.replay_calls`) on a fresh environment of the item as the run's data files hold
  it: each recorded call, with its recorded arguments, must give back its recorded result, ok and error. A fresh item
  (drawn while training) is in no data file: its calls cannot be run again, and its flag is the one the episode
  recorded (counted as not replayed, never a finding).
- The flag the episode recorded must be the item's.
- The outcome is read again from the record (`episode_replay.reread`, the reading training's reward used): the reply
  the scorer checks, which must be the row's completion, the penalty's `c`, and the episode's own components
  (`tool_success`). The caller scores that reply, compares those components with the row's, and computes the reward
  with that `c`, as for a one-turn row.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from rc1.data.environment import TITLED_PAGES, WikiView
from rc1.data.task import TaskItem
from rc1.data.user_tools import ToolOfYours
from rc1.scoring.archive import Rollout, item_of
from rc1.scoring.episode_record import Episode
from rc1.scoring.episode_replay import clip, replay_calls, reread


class LiveReading(msgspec.Struct, frozen=True, kw_only=True):
    item: TaskItem  # the item as the scorer checks the reply: flag off, the gold the row records
    text: str  # the reply read again from the episode ("" where it is forced wrong)
    clarifications: int  # the penalty's `c`: the needless asks
    components: dict[str, float]  # the episode's own components read again (tool_success), where the row records them
    replayed: bool  # its tools ran again (the run's data files hold its item)
    problems: list[str]  # each a finding's message, after the row's "where"


def read_live_row(
    row: Rollout,
    episode: Episode,
    known: dict[str, TaskItem],
    tools: Sequence[ToolOfYours] = (),
    wiki: WikiView = TITLED_PAGES,
) -> LiveReading:
    """`tools`: the run's tools of yours, run again beside the built-in ones; `wiki`: what wiki showed (data.pages,
    data.wiki)."""
    problems: list[str] = []
    item = known.get(row.item_id)
    if item is None:
        item = msgspec.structs.replace(item_of(row), needs_clarification=episode.needs_clarification)
    elif item.needs_clarification != episode.needs_clarification:
        problems.append(
            f"its episode records needs_clarification {episode.needs_clarification}, the item's is "
            f"{item.needs_clarification}"
        )
    replayed = row.item_id in known
    if replayed:
        problems += [
            f"call {d.index} ({d.tool}) of its transcript: {d.what}"
            for d in replay_calls(item, episode.calls, tools, wiki)
        ]
    read, clarifications, own = reread(item, episode)
    if read.reply != row.completion:
        problems.append(
            f"completion recorded {clip(row.completion or '')!r}, read again from its episode {clip(read.reply)!r}"
            + (f" ({read.forced_wrong})" if read.forced_wrong else "")
        )
    return LiveReading(
        item=msgspec.structs.replace(read.item, answer=row.gold),
        text=read.reply,
        clarifications=clarifications,
        components={name: value for name, value in own.items() if name in row.components},
        replayed=replayed,
        problems=problems,
    )
