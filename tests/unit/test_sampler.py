"""The priority sampler: difficulty weights over the balanced pool, the failing items' capped share, the
seed-pool share by step with fresh items for the rest, draws that cannot depend on when they are made,
and a state that resumes the same draws."""

import pytest

from rc1.config.schema import PrioritySamplingConfig
from rc1.core.errors import TrainingError
from rc1.data.task import DIFFICULTIES, TaskItem
from rc1.train.sampler import FAIL_BELOW, LAG, PassSampler, PrioritySampler


def pool(n_per_bucket: int = 10) -> list[TaskItem]:
    return [
        TaskItem(id=f"{d}-{i}", task="gsm8k", question=f"q {d} {i}?", answer="1", difficulty=d, prompt=f"q {d} {i}?")
        for d in DIFFICULTIES
        for i in range(n_per_bucket)
    ]


class Fresh:
    def __init__(self):
        self.asked: list[tuple[int, int, list[str]]] = []

    def __call__(self, step, count, difficulties):
        self.asked.append((step, count, list(difficulties)))
        return [
            TaskItem(id=f"fresh-{step}-{k}", task="gsm8k", question="f?", answer="2", difficulty=d, prompt="f?")
            for k, d in enumerate(difficulties)
        ]


def sampler(items=None, per_step=4, seed=7, fresh=None, **policy) -> PrioritySampler:
    return PrioritySampler(items or pool(), per_step, seed, PrioritySamplingConfig(**policy), fresh or Fresh())


def test_by_difficulty_weights_choose_the_buckets_of_the_balanced_pool():
    only_hard = sampler(by_difficulty={"easy": 0.0, "medium": 0.0, "hard": 1.0})
    assert all(item.difficulty == "hard" for step in (1, 2) for item in only_hard.batch(step))
    assert only_hard.mix(1).difficulty == {"easy": 0, "medium": 0, "hard": 4}
    spread = sampler(per_step=20, by_difficulty={"easy": 1.0, "medium": 1.0, "hard": 2.0})
    counts = [spread.mix(step).difficulty for step in (1, 2)]
    for batch in counts:  # no item twice in a batch, hard drawn about twice as often as the others
        assert sum(batch.values()) == 20 and batch["hard"] >= max(batch["easy"], batch["medium"])
    assert len({item.id for item in spread.batch(1)}) == 20


def test_items_the_policy_fails_get_priority_up_to_low_perf_cap_and_only_once_scored_lag_steps_ago():
    s = sampler(per_step=4, low_perf_cap=0.5)
    first = s.batch(1)
    s.observe(1, first * 2, [0.0] * len(first) + [FAIL_BELOW - 0.01] * len(first))  # every reply below half: failing
    assert s.mix(2).low_perf == 0  # step 2 may be drawn before step 1 is scored: it cannot use step 1
    s.observe(2, s.batch(2), [1.0] * 4)
    third = s.batch(3)
    assert s.mix(3).low_perf == 2 and len({i.id for i in third[:2]} & {i.id for i in first}) == 2

    for cap, drawn_for_failing in ((1.0, 3), (0.5, 2)):
        s = sampler(per_step=4, low_perf_cap=cap)
        batch = s.batch(1)
        # Two replies per item: an item fails when its best reply is below half; the last one reached half.
        s.observe(1, batch + batch, [0.0, 0.0, 0.0, FAIL_BELOW, 0.0, 0.0, 0.0, 0.0])
        s.observe(2, s.batch(2), [1.0] * 4)
        assert s.mix(3).low_perf == drawn_for_failing  # three failing; capped at floor(cap·4)


def test_a_batch_asked_for_before_the_steps_it_depends_on_are_scored_is_refused():
    s = sampler()
    s.batch(1), s.batch(2)
    with pytest.raises(TrainingError, match=rf"step {1 + LAG}'s batch was asked for before step 1 was scored"):
        s.batch(1 + LAG)


def test_the_seed_ratio_schedule_gives_the_rest_of_a_batch_to_fresh_items():
    fresh = Fresh()
    s = sampler(per_step=4, fresh=fresh, seed_ratio_schedule=[(0, 1.0), (3, 0.5), (5, 0.0)])
    shares = []
    for step in range(1, 7):
        shares.append(s.mix(step).seed_share)
        s.observe(step, s.batch(step), [1.0] * 4)
    assert shares == [1.0, 1.0, 0.5, 0.5, 0.0, 0.0]
    assert [(step, count) for step, count, _ in fresh.asked] == [(3, 2), (4, 2), (5, 4), (6, 4)]
    assert all(item.id.startswith("fresh-6-") for item in s.batch(6))


def test_a_saved_state_resumes_the_same_draws():
    def run(sampler_, steps, rewards_of):
        drawn = []
        for step in steps:
            batch = sampler_.batch(step)
            drawn.append([item.id for item in batch])
            sampler_.observe(step, batch, [rewards_of(step, item) for item in batch])
        return drawn

    def rewards_of(step, item):  # an item fails on odd steps, passes on even ones
        return 0.0 if (step + len(item.id)) % 2 else 1.0

    policy = dict(
        per_step=6,
        low_perf_cap=0.5,
        by_difficulty={"easy": 0.2, "medium": 0.3, "hard": 0.5},
        seed_ratio_schedule=[(0, 1.0), (4, 0.5)],
    )
    whole = run(sampler(**policy), range(1, 11), rewards_of)
    first = sampler(**policy)
    head = run(first, range(1, 6), rewards_of)
    state = first.state_dict(next_step=6)
    resumed = sampler(**policy)
    resumed.load_state_dict(state, "sampler.json")
    assert head + run(resumed, range(6, 11), rewards_of) == whole
    assert any(resumed.mix(step).low_perf for step in range(6, 11))

    other = sampler(**{**policy, "low_perf_cap": 0.25})
    with pytest.raises(TrainingError, match=r"sampler\.json: data schedule .* does not match this run's"):
        other.load_state_dict(state, "sampler.json")


def test_without_priority_sampling_every_item_is_seen_once_per_pass():
    items = pool(4)
    passes = PassSampler(items, 3, max_steps=8, seed=1)
    first_pass = [item.id for step in range(1, 5) for item in passes.batch(step)]
    assert sorted(first_pass) == sorted(item.id for item in items)
    assert passes.mix(1).seed_share == 1.0 and passes.mix(1).low_perf == 0
