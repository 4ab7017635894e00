"""Logged sequences for the monitor tests: a line of training built event by event, each check followed by the trips
the rules give (as the training stage appends them), folded by the real replay."""

from __future__ import annotations

import datetime as dt

import msgspec

from rc1.run import events as ev
from rc1.run.aggregate import RunAggregate
from rc1.run.monitors.sections import MonitorsConfig, watched
from rc1.run.replay import Replayer

FP = ev.Fingerprints(pool="p" * 64, shadow="s" * 64, config="c" * 64, weights="w" * 64)
WEIGHTS = {"correctness": 0.5, "format": 0.2, "length": 0.3}
T0 = dt.datetime(2026, 11, 25, tzinfo=dt.timezone.utc)


def rules(**sections) -> MonitorsConfig:
    """Every rule off but the sections given (a dict of thresholds, or {} for a rule's defaults)."""
    off = {name: None for name in msgspec.structs.asdict(MonitorsConfig())}
    return msgspec.convert({**off, **sections}, MonitorsConfig)


class Line:
    """A line of training as its log would hold it; `trips` are the monitor_tripped events the rules appended."""

    def __init__(
        self,
        monitors: MonitorsConfig,
        *,
        weights: dict[str, float] = WEIGHTS,
        seed: int = 1,
        device: str = "cpu",
        processes: int = 1,
        thinking: bool = False,
    ):
        self.replayer = Replayer()
        self.run = RunAggregate(self.replayer)
        self.events: list[ev.Event] = []
        self.seconds = 0.0
        self.step = 0
        self.seed = seed
        self.monitors = monitors
        self.weights = weights
        self.device, self.processes, self.thinking = device, processes, thinking
        self.append(ev.Round1Passed(fingerprints=FP, checks=[]))
        self.append(ev.Round2Passed(fingerprints=FP, checks=[]))
        self.start(0)

    @property
    def trips(self) -> list[ev.MonitorTripped]:
        return [e for e in self.events if isinstance(e, ev.MonitorTripped)]

    @property
    def halted(self) -> bool:
        return self.replayer.projection.state == "HALTED"

    @property
    def state(self):
        return self.replayer.projection.monitor

    def append(self, event: ev.Event, seconds: float = 1.0) -> ev.Event:
        self.seconds += seconds
        ts = (T0 + dt.timedelta(seconds=self.seconds)).isoformat(timespec="microseconds")
        stamped = msgspec.structs.replace(self.run.decide(event), seq=len(self.events), ts=ts, run="test")
        self.events.append(stamped)
        self.replayer.apply(stamped)
        return stamped

    def _trips(self) -> None:
        for trip in self.run.monitor_trips():
            self.append(trip, seconds=0.0)

    def start(self, resume_from: int) -> None:
        self.append(
            ev.TrainingStarted(
                resume_from_step=resume_from,
                resume_from_dir=None if not resume_from else f"ckpt/{resume_from}",
                max_steps=10_000,
                engine="trl",
                strategy="grpo",
                model="m",
                device=self.device,
                dtype="float32",
                seed=self.seed,
                seeds=[self.seed],
                monitors=watched(self.monitors),
                weights=self.weights,
                processes=self.processes,
                thinking=self.thinking,
            )
        )
        self.step = resume_from

    def steps(
        self,
        n: int,
        *,
        entropy: float | None = 0.5,
        clipped: float | None = 0.0,
        tied: float | None = 0.2,
        reward: float | list[float] = 0.5,
        components: dict[str, float] | None = None,
        judge_calls: int = 0,
        seconds: float = 1.0,
        episodes: dict[str, float] | list[dict[str, float]] | None = None,
        logp_difference: float | None = None,
    ) -> None:
        """`episodes`: a live line's train_step.episodes (one dict for every step, or one per step); None: a
        recorded line's steps, which record none."""
        for i in range(n):
            if self.halted:
                return
            self.step += 1
            diagnostics = {
                k: v
                for k, v in (
                    ("entropy", entropy),
                    ("clipped_ratio", clipped),
                    ("frac_reward_zero_std", tied),
                    ("sampling_logp_difference", logp_difference),  # vLLM rollouts only
                )
                if v is not None
            }
            value = reward[i] if isinstance(reward, list) else reward
            tools = episodes[i] if isinstance(episodes, list) else episodes
            self.append(
                ev.TrainStep(
                    step=self.step,
                    loss=0.1,
                    kl=0.0,
                    ratio=1.0,
                    lr=1e-3,
                    reward=value,
                    mem_used_mb=1.0,
                    sec_per_step=seconds,
                    tokens=8,
                    diagnostics=diagnostics,
                    components=components or {"correctness": 0.5, "format": 0.8, "length": 0.9},
                    scoring=ev.ScoringSummary(
                        calls=judge_calls, prompt_tokens=10 * judge_calls, completion_tokens=judge_calls
                    ),
                    episodes=msgspec.UNSET if tools is None else tools,
                ),
                seconds=seconds,
            )
            self._trips()

    def checkpoint(self) -> None:
        self.append(ev.CheckpointSaved(step=self.step, dir=f"ckpt/{self.step}", files={}), seconds=0.0)

    def evaluate(
        self,
        greedy: list[int],
        sampled: list[int],
        *,
        samples: int = 8,
        drift: tuple | None = None,
        judge_calls: int = 0,
    ) -> None:
        measured = (
            None if drift is None else ev.Drift(kl=drift[0], low=drift[1], high=drift[2], items=len(greedy), tokens=100)
        )
        self.append(
            ev.EvalCompleted(
                step=self.step,
                n=len(greedy),
                mean_reward=0.0,
                success=0.0,
                per_task_success={},
                item_ids=[f"s{i}" for i in range(len(greedy))],
                item_greedy=greedy,
                item_sampled=sampled,
                samples=samples,
                drift=measured,
                scoring=ev.ScoringSummary(calls=judge_calls),
            ),
            seconds=0.0,
        )
        self._trips()
