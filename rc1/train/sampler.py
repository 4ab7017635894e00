"""Which items each optimizer step trains on: the one source of batches for both engines.

`PassSampler` (no `priority_sampling` section): seeded passes over the balanced pool, every item once
per pass (rc1.train.schedule).

`PrioritySampler` (`priority_sampling`): step s's batch of P prompts is
- fresh items for the share the `seed_ratio_schedule` does not give the seed pool (round(ratio·P) from
  the pool), from the task sources through `fresh` (the stage builds, dresses and leak-checks them);
- among the pool's slots, up to floor(`low_perf_cap`·P) items the policy currently fails, i.e. whose
  replies, when last seen, all scored below `FAIL_BELOW` of the reward;
- the rest from the balanced pool, one bucket per slot drawn by the `by_difficulty` weights (over the
  buckets with items left), one item uniformly within it; no item twice in a batch.

Exact resume: the draw for step s is a pure function of (run seed, s, the failures observed up to step
s - LAG). A trainer may fetch a batch one step ahead of the one it trains (accelerate prefetches), so
step s may be drawn while step s - 1 is still being scored; LAG = 2 makes that harmless, and a draw
that comes earlier still is refused instead of silently differing from an uninterrupted run. The
observations a later draw can still need are the sampler's state, saved in every checkpoint.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

import msgspec
import numpy as np

from rc1.config.schema import PrioritySamplingConfig
from rc1.core.errors import TrainingError
from rc1.data.task import DIFFICULTIES, TaskItem
from rc1.train.schedule import schedule

LAG = 2
FAIL_BELOW = 0.5  # an item fails when none of its replies reached half the reward

# (step, count, difficulties wanted) -> fresh items, measured and dressed, none leaking from the shadow set
FreshSupply = Callable[[int, int, list[str]], list[TaskItem]]


class BatchMix(msgspec.Struct, frozen=True, kw_only=True):
    """What one step's batch was made of (on its `train_step` event)."""

    difficulty: dict[str, int]  # measured bucket -> prompts
    seed_share: float  # share of the prompts from the seed pool (the rest fresh)
    low_perf: int  # prompts drawn because the policy was failing them


class PassSampler:
    """Seeded passes over the items; observations change nothing."""

    def __init__(self, items: list[TaskItem], prompts_per_step: int, max_steps: int, seed: int):
        self._items, self._per_step, self._seed = items, prompts_per_step, seed
        self._order = schedule(len(items), max_steps * prompts_per_step, seed)

    def batch(self, step: int) -> list[TaskItem]:
        first = (step - 1) * self._per_step
        return [self._items[i] for i in self._order[first : first + self._per_step]]

    def observe(self, step: int, items: Sequence[TaskItem], rewards: Sequence[float]) -> None:
        pass

    def mix(self, step: int) -> BatchMix:
        return BatchMix(difficulty=_counts(self.batch(step)), seed_share=1.0, low_perf=0)

    def state_dict(self, next_step: int) -> dict:
        return {
            "kind": "passes",
            "next_step": next_step,
            "next_prompt": (next_step - 1) * self._per_step,
            **self._identity(),
        }

    def load_state_dict(self, state: dict, where: str) -> None:
        _same_identity({"kind": "passes", **state}, {"kind": "passes", **self._identity()}, where)  # older: no kind

    def _identity(self) -> dict:
        return {"prompts_per_step": self._per_step, "seed": self._seed, "items": len(self._items)}


class PrioritySampler:
    def __init__(
        self,
        items: list[TaskItem],
        prompts_per_step: int,
        seed: int,
        policy: PrioritySamplingConfig,
        fresh: FreshSupply,
    ):
        self._items, self._per_step, self._seed, self._policy, self._fresh = (
            items,
            prompts_per_step,
            seed,
            policy,
            fresh,
        )
        self._by_id = {item.id: item for item in items}
        self._buckets = {d: [i.id for i in items if i.difficulty == d] for d in DIFFICULTIES}
        # item id -> [(step, failed)], oldest first; pruned to what a later draw can still ask about
        self._seen: dict[str, list[tuple[int, bool]]] = {}
        self._observed_through = 0
        self._drawn: dict[int, tuple[list[TaskItem], BatchMix]] = {}

    # -- drawing ----------------------------------------------------------------------------------------

    def batch(self, step: int) -> list[TaskItem]:
        return self._draw(step)[0]

    def mix(self, step: int) -> BatchMix:
        return self._draw(step)[1]

    def _draw(self, step: int) -> tuple[list[TaskItem], BatchMix]:
        if step not in self._drawn:
            as_of = step - LAG
            if as_of > self._observed_through:
                raise TrainingError(
                    f"sampler: step {step}'s batch was asked for before step {as_of} was scored "
                    f"(observed through {self._observed_through}); its draw would not be reproducible"
                )
            self._drawn[step] = self._compose(step, as_of)
            for old in [s for s in self._drawn if s < step - 2 * LAG]:
                del self._drawn[old]
        return self._drawn[step]

    def _compose(self, step: int, as_of: int) -> tuple[list[TaskItem], BatchMix]:
        rng = np.random.default_rng([self._seed, step, 0x5A4D])
        per_step = self._per_step
        from_pool = round(self.seed_share(step) * per_step)
        failing = sorted(i for i, seen in self._seen.items() if _failed_as_of(seen, as_of))
        n_low = min(math.floor(self._policy.low_perf_cap * per_step), len(failing), from_pool)
        chosen = [str(i) for i in rng.choice(failing, size=n_low, replace=False)] if n_low else []
        taken = set(chosen)
        weights = {d: float(self._policy.by_difficulty.get(d, 0.0)) for d in DIFFICULTIES}
        while len(chosen) < from_pool:
            open_buckets = [d for d in DIFFICULTIES if weights[d] > 0 and any(i not in taken for i in self._buckets[d])]
            if not open_buckets:
                open_buckets = [d for d in DIFFICULTIES if any(i not in taken for i in self._buckets[d])]
            if not open_buckets:
                break  # the pool is smaller than a batch: fresh items fill in
            p = np.array([weights[d] or 1.0 for d in open_buckets])
            bucket = open_buckets[int(rng.choice(len(open_buckets), p=p / p.sum()))]
            left = [i for i in self._buckets[bucket] if i not in taken]
            pick = left[int(rng.integers(len(left)))]
            chosen.append(pick)
            taken.add(pick)
        batch = [self._by_id[i] for i in chosen]
        wanted = per_step - len(batch)
        if wanted:
            p = np.array([weights[d] or 0.0 for d in DIFFICULTIES])
            p = p / p.sum() if p.sum() > 0 else np.full(len(DIFFICULTIES), 1 / len(DIFFICULTIES))
            difficulties = [DIFFICULTIES[int(k)] for k in rng.choice(len(DIFFICULTIES), size=wanted, p=p)]
            batch += self._fresh(step, wanted, difficulties)
        return batch, BatchMix(difficulty=_counts(batch), seed_share=len(chosen) / per_step, low_perf=n_low)

    def seed_share(self, step: int) -> float:
        share = 1.0
        for from_step, ratio in self._policy.seed_ratio_schedule:
            if step >= from_step:
                share = ratio
        return share

    # -- observing --------------------------------------------------------------------------------------

    def observe(self, step: int, items: Sequence[TaskItem], rewards: Sequence[float]) -> None:
        """Every reply's reward of step `step` (one call per step, steps in order)."""
        best: dict[str, float] = {}
        for item, reward in zip(items, rewards):
            if item.id in self._by_id:  # fresh items are never drawn again: nothing to remember
                best[item.id] = max(best.get(item.id, -math.inf), float(reward))
        for item_id, top in best.items():
            self._seen.setdefault(item_id, []).append((step, top < FAIL_BELOW))
        self._observed_through = max(self._observed_through, step)

    # -- checkpoints ------------------------------------------------------------------------------------

    def state_dict(self, next_step: int) -> dict:
        """What draws from `next_step` on need: per item, its observations since step next_step - LAG and
        the newest one before."""
        horizon = next_step - LAG
        seen = {}
        for item_id, history in sorted(self._seen.items()):
            older = [h for h in history if h[0] <= horizon][-1:]
            seen[item_id] = [list(h) for h in older + [h for h in history if h[0] > horizon and h[0] < next_step]]
        return {"kind": "priority", "next_step": next_step, "seen": seen, **self._identity()}

    def load_state_dict(self, state: dict, where: str) -> None:
        _same_identity(state, {"kind": "priority", **self._identity()}, where)
        self._seen = {i: [(int(s), bool(f)) for s, f in history] for i, history in state["seen"].items()}
        self._observed_through = int(state["next_step"]) - 1
        self._drawn.clear()

    def _identity(self) -> dict:
        return {
            "prompts_per_step": self._per_step,
            "seed": self._seed,
            "items": len(self._items),
            "policy": msgspec.to_builtins(self._policy),
        }


Sampler = PassSampler | PrioritySampler


def _failed_as_of(history: list[tuple[int, bool]], step: int) -> bool:
    last = [failed for seen_at, failed in history if seen_at <= step]
    return bool(last) and last[-1]


def _counts(batch: list[TaskItem]) -> dict[str, int]:
    counts = Counter(item.difficulty for item in batch)
    return {d: counts.get(d, 0) for d in DIFFICULTIES}


def _same_identity(state: dict, expected: dict, where: str) -> None:
    found = {k: state.get(k) for k in expected}
    as_json = lambda value: msgspec.json.decode(msgspec.json.encode(value))  # noqa: E731  (tuples read back as lists)
    if as_json(found) != as_json(expected):
        raise TrainingError(f"{where}: data schedule {found} does not match this run's {expected}")
