"""What a run has spent, from its events: judge calls, tokens and their cost (each event's ScoringSummary), and the
hours its training sessions held their machine (the events' timestamps, times the processes on an accelerator).

Spend is never rewound: steps a resume trains again were paid for twice."""

from __future__ import annotations

import datetime as dt

import msgspec

SPEND_KEYS = ("judge_calls", "judge_tokens", "judge_cost_usd", "accelerator_hours", "wall_hours")


class Spend(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    judge_calls: int = 0
    judge_tokens: int = 0
    judge_cost_usd: float = 0.0
    accelerator_hours: float = 0.0  # wall hours × processes, on CUDA or MPS; 0 on a CPU
    wall_hours: float = 0.0  # between a training session's training_started and its last event

    def plus(self, other: "Spend") -> "Spend":
        return Spend(**{key: getattr(self, key) + getattr(other, key) for key in SPEND_KEYS})

    def get(self, key: str) -> float:
        return float(getattr(self, key))


def judge_spend(calls: int, tokens: int, cost_usd: float) -> Spend:
    return Spend(judge_calls=calls, judge_tokens=tokens, judge_cost_usd=cost_usd)


def clock_spend(seconds: float, accelerators: int) -> Spend:
    hours = seconds / 3600.0
    return Spend(wall_hours=hours, accelerator_hours=hours * accelerators)


def seconds_of(ts: str) -> float:
    """An event's timestamp as seconds since the epoch (the log writes ISO 8601 in UTC); 0 for a missing one."""
    return dt.datetime.fromisoformat(ts).timestamp() if ts else 0.0


def accelerators(device: str, processes: int) -> int:
    """The accelerators a training session holds: one per process on CUDA or MPS, none on a CPU."""
    return 0 if device == "cpu" else max(1, processes)
