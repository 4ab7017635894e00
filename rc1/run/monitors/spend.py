"""What a run has spent, from its events: judge calls, tokens and their cost (each event's ScoringSummary), and the
time its training sessions held their machine (the gaps between a session's events, times the processes on an
accelerator). Time is kept in whole microseconds (the events' timestamps' own unit), so it sums the same whichever
way a replay groups the events.

Spend is never rewound: steps a resume trains again were paid for twice."""

from __future__ import annotations

import datetime as dt

import msgspec

SPEND_KEYS = ("judge_calls", "judge_tokens", "judge_cost_usd", "accelerator_hours", "wall_hours")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_MICROSECOND = dt.timedelta(microseconds=1)
_HOUR_US = 3_600_000_000


class Spend(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    judge_calls: int = 0
    judge_tokens: int = 0
    judge_cost_usd: float = 0.0
    accelerator_us: int = 0  # time × processes, on CUDA or MPS; 0 on a CPU
    wall_us: int = 0  # between a training session's training_started and its last event

    @property
    def accelerator_hours(self) -> float:
        return self.accelerator_us / _HOUR_US

    @property
    def wall_hours(self) -> float:
        return self.wall_us / _HOUR_US

    def plus(self, other: Spend) -> Spend:
        return Spend(
            judge_calls=self.judge_calls + other.judge_calls,
            judge_tokens=self.judge_tokens + other.judge_tokens,
            judge_cost_usd=self.judge_cost_usd + other.judge_cost_usd,
            accelerator_us=self.accelerator_us + other.accelerator_us,
            wall_us=self.wall_us + other.wall_us,
        )

    def get(self, key: str) -> float:
        """One of SPEND_KEYS (hours for the times)."""
        return float(getattr(self, key))

    def shown(self) -> dict[str, float]:
        """As `rc1 status` shows it: SPEND_KEYS."""
        return {key: self.get(key) for key in SPEND_KEYS}


def judge_spend(calls: int, tokens: int, cost_usd: float) -> Spend:
    return Spend(judge_calls=calls, judge_tokens=tokens, judge_cost_usd=cost_usd)


def clock_spend(microseconds: int, accelerators: int) -> Spend:
    return Spend(wall_us=microseconds, accelerator_us=microseconds * accelerators)


def hours_spend(hours: float, accelerators: int) -> Spend:
    return clock_spend(round(hours * _HOUR_US), accelerators)


def micros_of(ts: str) -> int:
    """An event's timestamp (ISO 8601, UTC) in whole microseconds since the epoch; 0 for a missing one."""
    return (dt.datetime.fromisoformat(ts) - _EPOCH) // _MICROSECOND if ts else 0


def accelerators(device: str, processes: int) -> int:
    """The accelerators a training session holds: one per process on CUDA or MPS, none on a CPU."""
    return 0 if device == "cpu" else max(1, processes)
