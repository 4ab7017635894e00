"""The shadow run's statistics against values computed here from their definitions (no scipy)."""

import itertools
import random

import numpy as np
import pytest

from rc1.scoring.shadow_stats import Sample, shadow_statistics


def _ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1  # ties share their mean rank
        i = j + 1
    return ranks


def _pearson(x, y):
    mx, my = sum(x) / len(x), sum(y) / len(y)
    cov = sum((a - mx) * (b - my) for a, b in zip(x, y))
    return cov / (sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y)) ** 0.5


def _kendall_b(x, y):
    concordant = discordant = ties_x = ties_y = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            ties_x += 1
        elif dy == 0:
            ties_y += 1
        elif dx * dy > 0:
            concordant += 1
        else:
            discordant += 1
    return (concordant - discordant) / ((concordant + discordant + ties_x) * (concordant + discordant + ties_y)) ** 0.5


def _samples(seed=3, items=30, k=4):
    rng = random.Random(seed)
    out = []
    for i in range(items):
        base = rng.random()
        noise = 0.6 if i < 3 else 0.05  # three items whose scores swing: unstable
        for _ in range(k):
            old = round(min(1, max(0, base + rng.uniform(-noise, noise))), 2)
            success = float(rng.random() < old)
            new = round(old - 0.07 * rng.randint(0, 2) + 0.1 * success, 2)
            out.append(Sample(f"item-{i:02d}", ("easy", "medium", "hard")[i % 3], old, new, success))
    return out


def test_the_statistics_match_their_definitions():
    samples = _samples()
    result = shadow_statistics(samples, unstable_variance=0.08)
    by_item = {}
    for s in samples:
        by_item.setdefault(s.item_id, []).append(s)
    unstable = sorted(i for i, g in by_item.items() if np.var([s.new for s in g]) > 0.08)
    assert result.unstable == unstable and unstable  # the swinging items, and only those
    stable = [s for s in samples if s.item_id not in unstable]
    old, new, success = [s.old for s in stable], [s.new for s in stable], [s.success for s in stable]
    stats = result.statistics
    assert stats["spearman"] == pytest.approx(_pearson(_ranks(old), _ranks(new)))
    assert stats["kendall_tau"] == pytest.approx(_kendall_b(old, new))
    assert stats["corr_to_success_old"] == pytest.approx(_pearson(old, success))
    assert stats["corr_to_success_new"] == pytest.approx(_pearson(new, success))
    c_old, c_new = _pearson(old, success), _pearson(new, success)
    assert stats["corr_improve_pct"] == pytest.approx(100 * (c_new - c_old) / abs(c_old))
    means = {
        i: (np.mean([s.old for s in g]), np.mean([s.new for s in g])) for i, g in by_item.items() if i not in unstable
    }
    for k in (10, 20):
        top_old = set(sorted(means, key=lambda i: (-means[i][0], i))[:k])
        top_new = set(sorted(means, key=lambda i: (-means[i][1], i))[:k])
        assert stats[f"top{k}_overlap"] == pytest.approx(len(top_old & top_new) / k)
    assert (stats["items"], stats["unstable_items"]) == (30, len(unstable))
    hard = [s for s in stable if s.difficulty == "hard"]
    assert result.by_difficulty["hard"]["spearman"] == pytest.approx(
        _pearson(_ranks([s.old for s in hard]), _ranks([s.new for s in hard]))
    )


def test_an_undefined_statistic_is_none_not_a_number():
    flat = [Sample(f"i{i}", "easy", 0.5, 0.5 + 0.01 * i, 0.0) for i in range(5)]
    stats = shadow_statistics(flat, 0.08).statistics
    assert stats["spearman"] is None and stats["corr_to_success_new"] is None and stats["top10_overlap"] is None
