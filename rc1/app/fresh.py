"""Fresh items for priority sampling: what a step takes beyond the seed pool's share
(`priority_sampling.seed_ratio_schedule`), from the same task sources as the pool.

Slot k of step s gets a task drawn by `data.mix` and the difficulty the sampler asked for; a task with a
`data.sources` file gives one of its records the seed pool does not hold, any other task a new item of
its generator (ids `fresh-<step>-<k>-<task>-…`, a stream no pool or held-out item shares). Each is dressed
as an episode like the pool's, measured (its bucket becomes its difficulty; a task of yours, and a generated one in
live episodes, keeps its own: rc1/data/task_difficulty.py `given_tasks`), and leak-checked against
the held-out sets (shadow and gate) exactly as the pool is (`preflight.leak_ngram`, `preflight.leak_similarity`):
a leaking item is replaced by the next candidate. Deterministic in (run seed, step, slot).
"""

from __future__ import annotations

import random

import msgspec

from rc1.app.datasets import dress_items, template_pack
from rc1.app.session import Session
from rc1.checks.leak import find_leaks
from rc1.core.errors import TrainingError
from rc1.data.difficulty import bucket, measure
from rc1.data.generators import generate
from rc1.data.loaders import load_source
from rc1.data.sources import measuring, pool_sources
from rc1.data.task import Difficulty, TaskItem
from rc1.data.task_difficulty import given_tasks

ATTEMPTS = 20  # candidates per slot before giving up: generated items leak essentially never


class FreshItems:
    def __init__(self, session: Session, pool: list[TaskItem], held_out: list[TaskItem]):
        """`held_out`: the shadow set and the gate set, which training must never see."""
        self._session = session
        self._seed = session.config.run.seed
        self._mix = {task: share for task, share in sorted(session.config.data.mix.items()) if share > 0}
        self._held_out = held_out
        self._held = {item.id for item in pool} | {item.id for item in held_out}
        self._records_by_task: dict[str, list[TaskItem]] | None = None
        self._pack = template_pack(session.loaded)
        self.leaks_replaced = 0

    @property
    def _records(self) -> dict[str, list[TaskItem]]:
        """The source records the pool and held-out sets do not hold, loaded when a step first asks for a fresh
        item (a schedule whose seed share never drops below 1 never does)."""
        if self._records_by_task is None:
            sources = pool_sources(
                self._session.config.data,
                self._session.loaded.resolve,
                measuring(self._session.loaded, self._session.ws),
            )
            self._records_by_task = {
                task: [r for r in load_source(task, ref) if r.id not in self._held] for task, ref in sources.items()
            }
        return self._records_by_task

    def __call__(self, step: int, count: int, difficulties: list[str]) -> list[TaskItem]:
        rng = random.Random(f"fresh|{self._seed}|{step}")
        tasks = rng.choices(list(self._mix), weights=list(self._mix.values()), k=count)
        return [self._slot(step, k, task, difficulty) for k, (task, difficulty) in enumerate(zip(tasks, difficulties))]

    def _slot(self, step: int, k: int, task: str, difficulty: Difficulty) -> TaskItem:
        rng = random.Random(f"fresh|{self._seed}|{step}|{k}")
        for attempt in range(ATTEMPTS):
            if task in self._records:
                if not self._records[task]:
                    raise TrainingError(
                        f"priority sampling: step {step} asks for a fresh {task} item, and every "
                        f"record of its source is already in the pool or held out; give the task "
                        f"more records, or keep train.priority_sampling.seed_ratio_schedule at 1"
                    )
                records = self._records[task]
                if task in self._session.config.data.tasks:
                    # A task of yours keeps each record's own difficulty: a record of the asked one where it has any.
                    records = [r for r in records if r.difficulty == difficulty] or records
                    candidate = rng.choice(records)
                else:
                    candidate = msgspec.structs.replace(rng.choice(records), difficulty=difficulty)
                candidate = msgspec.structs.replace(candidate, id=f"{candidate.id}-fresh-{step}-{k}")
            else:
                (candidate,) = generate(
                    task, 1, self._seed, f"fresh-{step}-{k}-{attempt}-{task}", difficulties=[difficulty]
                )
            (dressed,) = dress_items(self._session.loaded, [candidate], self._seed, f"fresh-{step}-{k}", self._pack)
            preflight = self._session.config.preflight
            if not find_leaks([dressed], self._held_out, preflight.leak_ngram, preflight.leak_similarity):
                if task in given_tasks(self._session.config.data):  # its own difficulty (task_difficulty.py)
                    return dressed
                return msgspec.structs.replace(
                    dressed, difficulty=bucket(measure(dressed, self._session.config.data.pages))
                )
            self.leaks_replaced += 1
        raise TrainingError(
            f"priority sampling: {ATTEMPTS} fresh {task} items for step {step} all leak from the held-out sets"
        )
