"""A line of training's rollouts on their way into the archive (rc1/scoring/archive.py).

The reward function hands every scored batch to `record`; an optimizer step's `close_step` gives those batches
their step (everything scored since the step before was sampled for this one) and the step's means for its
train_step event; a checkpoint's `take_shard` takes the steps since the last checkpoint into its shard. A line
resumed after a kill starts with nothing pending, from its checkpoint: the shard of the next checkpoint then
holds the same steps an uninterrupted line's does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from rc1.config.schema import Config
from rc1.core import distributed
from rc1.data.task import TaskItem
from rc1.scoring.archive import TRAIN, Rollout, encode_shard, rows_of
from rc1.scoring.episode_outcome import outcome
from rc1.scoring.episode_record import Episode, messages_of
from rc1.scoring.episode_stats import episode_stats
from rc1.scoring.pipeline import Scored


class StepMeans(msgspec.Struct, frozen=True):
    components: dict[str, float]
    penalty: float
    episodes: dict[str, float] = msgspec.field(default_factory=dict)  # live rollouts' tool use ({}: none live)


class RolloutRecorder:
    def __init__(self, config: Config, weights: dict[str, float]):
        self._config = config
        self._weights = weights
        self._pending: list[tuple] = []  # (items, completions, tokens, scored, episodes or None) per scored batch
        self._rows: list[Rollout] = []

    def record(
        self,
        items: Sequence[TaskItem],
        completions: Sequence[str],
        tokens: Sequence[int],
        scored: Sequence[Scored],
        episodes: Sequence[Episode] | None = None,
    ) -> None:
        """A scored batch (`pipeline.Record`); `episodes`: each live rollout's record, kept with its text."""
        self._pending.append(
            (list(items), list(completions), list(tokens), list(scored), list(episodes) if episodes else None)
        )

    def close_step(self, step: int, advantages: list[float] = ()) -> StepMeans:
        """The batches scored since the last step are this step's; `advantages`, the trainer's for them in the same
        order, are kept with them when there is one for each. Under a multi-process launch every rank calls it: each
        rank scored its own share of the step's replies, and rank 0 keeps them all in rank order (the order the
        trainer gathers rewards and advantages in); the others keep nothing."""
        pending = [batch for part in distributed.gather(self._pending) for batch in part]
        self._pending = []
        if not distributed.is_writer():
            return StepMeans(components={}, penalty=0.0)
        rows = [
            row
            for items, completions, tokens, scored, episodes in pending
            for row in rows_of(
                TRAIN,
                step,
                items,
                completions,
                tokens,
                scored,
                self._config.reward,
                self._weights,
                self._config.rollouts,
                episodes,
            )
        ]
        if rows and len(advantages) == len(rows):
            rows = [msgspec.structs.replace(row, advantage=a) for row, a in zip(rows, advantages, strict=True)]
        self._rows += rows
        if not rows:
            return StepMeans(components={}, penalty=0.0)
        names = sorted(rows[0].components)
        return StepMeans(
            components={name: math.fsum(r.components[name] for r in rows) / len(rows) for name in names},
            penalty=math.fsum(r.penalty for r in rows) / len(rows),
            episodes=_tool_use(pending),
        )

    def take_shard(self) -> bytes | None:
        """The steps since the last checkpoint, as a shard; None when no step sampled anything (sft)."""
        rows, self._rows = self._rows, []
        return encode_shard(rows) if rows else None


def _tool_use(pending: list[tuple]) -> dict[str, float]:
    """The step's live rollouts read as their reward read them (every one, whether or not its text is kept)."""
    needed, outcomes = [], []
    for items, _, _, _, episodes in pending:
        for item, episode in zip(items, episodes or (), strict=False):
            needed.append(episode.needs_clarification)
            outcomes.append(outcome(item, messages_of(episode), episode.calls))
    return episode_stats(needed, outcomes)
