"""What a batch of live episodes did with its tools, as numbers on the record (issue 43): each training step's rollouts
(train_step.episodes) and each evaluation's greedy replies (eval_completed.episodes), so the monitors, `rc1 status`
and the bench read tool use from the log, not from the trainer's own counters.

Every figure comes with the count it is a share of, so a reader can weigh it (a share of 2 episodes is not one of
200). A share whose count is 0 is left out: not 0, not measured.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rc1.scoring.episode_outcome import EpisodeOutcome

EPISODES = "episodes"
CALLS_PER_EPISODE = "tool_calls_per_episode"
FAILURE_SHARE = "tool_failure_share"  # failed calls / calls: TRL's refusals and rc1's failed calls
CALLS = "tool_calls"
HOPS_PER_EPISODE = "tool_hops_per_episode"  # successful wiki/calc results read
NEEDED = "needed_ask"  # episodes whose item needed a clarification
ASKED_WHEN_NEEDED = "ask_rate_needed"  # their share that asked (1 - the never-asking rate)
NOT_NEEDED = "needed_no_ask"  # episodes whose item needed none
ASKED_NEEDLESSLY = "ask_rate_not_needed"  # their share that asked anyway (the over-asking rate)
UNFINISHED = "unfinished_share"  # episodes that ended on a tool call, with no answer
WIKI_CALLS = "wiki_calls"
WIKI_OPENED = "wiki_opened_share"  # wiki calls that opened a page / wiki calls
CALC_CALLS = "calc_calls"
CALC_GROUNDED = "calc_grounded_share"  # calc calls whose numbers were all given (question, results read) / calc calls


def episode_stats(needed: Sequence[bool], outcomes: Sequence[EpisodeOutcome]) -> dict[str, float]:
    """The figures of a batch of live episodes; `needed[i]`: episode i's item needed a clarification (the item's own
    flag, not the scorer's, which is off in a live episode). {} for no episode."""
    if len(needed) != len(outcomes):
        raise ValueError(f"{len(outcomes)} live episodes counted with {len(needed)} clarification flags")
    n = len(outcomes)
    if not n:
        return {}
    calls = sum(o.tool_calls for o in outcomes)
    wanted = [o for o, flag in zip(outcomes, needed, strict=True) if flag]
    unwanted = [o for o, flag in zip(outcomes, needed, strict=True) if not flag]
    stats = {
        EPISODES: float(n),
        CALLS: float(calls),
        CALLS_PER_EPISODE: calls / n,
        HOPS_PER_EPISODE: math.fsum(o.tool_hops for o in outcomes) / n,
        UNFINISHED: sum(o.unfinished for o in outcomes) / n,
        NEEDED: float(len(wanted)),
        NOT_NEEDED: float(len(unwanted)),
    }
    if calls:
        stats[FAILURE_SHARE] = sum(o.failed_calls for o in outcomes) / calls
    wiki, calc = sum(o.wiki_calls for o in outcomes), sum(o.calc_calls for o in outcomes)
    stats[WIKI_CALLS], stats[CALC_CALLS] = float(wiki), float(calc)
    if wiki:
        stats[WIKI_OPENED] = sum(o.wiki_opened for o in outcomes) / wiki
    if calc:
        stats[CALC_GROUNDED] = sum(o.calc_grounded for o in outcomes) / calc
    if wanted:
        stats[ASKED_WHEN_NEEDED] = sum(o.asks > 0 for o in wanted) / len(wanted)
    if unwanted:
        stats[ASKED_NEEDLESSLY] = sum(o.asked_needlessly > 0 for o in unwanted) / len(unwanted)
    return stats
