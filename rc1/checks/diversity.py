"""Pool shape checks: lexical diversity (distinct-2), task mix, prompt length."""

from __future__ import annotations

import statistics
from collections import Counter

import numpy as np

from rc1.checks.result import CheckResult
from rc1.checks.spec import Check, Floor
from rc1.core.runbook import Runbook
from rc1.data.task import TaskItem
from rc1.data.text import count_distinct, ngram_keys, tokens


def distinct2(items: list[TaskItem], threshold: float, own: dict[str, float] | None = None) -> CheckResult:
    """Distinct bigrams / all bigrams over the items' task text (context + question, lowercased tokens),
    per task and overall.

    Corpus-level, as in Li et al. (2016): a bigram counts once however many items use it, so a pool
    of one template with the numbers changed scores low however long it is. Bigrams never span two
    items. The episode framing (system turn, template words) is left out: it is a small fixed set of
    strings by design, whose variety `ngram_kl` and `framing_coverage` measure.

    `own`: the floors tasks of yours set for themselves (data.tasks.<name>.min_distinct2) in place of `threshold`;
    the pool as a whole is then held to the lowest floor of its tasks. Each shortfall names the floor that binds.
    """
    own = own or {}
    keys, owner = ngram_keys([tokens(f"{item.context} {item.question}".lower()) for item in items], 2)
    tasks = sorted({item.task for item in items})
    task_of = np.array([tasks.index(item.task) for item in items], dtype=np.int64)[owner]
    measured = {}
    for code, task in enumerate(tasks):
        mine = keys[task_of == code]
        measured[task] = count_distinct(mine) / mine.size if mine.size else 0.0
    measured["overall"] = count_distinct(keys) / keys.size if keys.size else 0.0
    floors = {task: own.get(task, threshold) for task in tasks}
    floors["overall"] = min(floors.values(), default=threshold)
    source = {task: f"data.tasks.{task}.min_distinct2" for task in own} | (
        {"overall": "the lowest floor of its tasks"} if own else {}
    )
    low = {name: value for name, value in measured.items() if value < floors[name]}
    passed = bool(items) and not low
    if not items:
        detail = "no items to measure"
    elif low:
        detail = "distinct-2 below its floor: " + ", ".join(
            f"{k} {v:.3f} < {floors[k]:.2f} ({source.get(k, 'preflight.min_distinct2')})" for k, v in low.items()
        )
    else:
        detail = f"distinct-2 overall {measured['overall']:.3f}, every task at least {threshold:.2f}"
        if own:
            detail += " (" + ", ".join(f"{task} at least {floor:.2f}, its own" for task, floor in own.items()) + ")"
    thresholds = {"min": threshold} | {f"{task}.min": floor for task, floor in own.items()}
    return CheckResult(name="distinct2", passed=passed, measured=measured, thresholds=thresholds, detail=detail)


def task_mix(items: list[TaskItem], mix: dict[str, float], tolerance: float) -> CheckResult:
    """Each task's share of the pool against its target; measured in shares and in percentage points off."""
    counts = Counter(item.task for item in items)
    n = len(items)
    total = sum(mix.values()) or 1.0
    measured: dict[str, float] = {}
    off: list[str] = []
    for task in sorted(set(mix) | set(counts)):
        share = counts[task] / n if n else 0.0
        target = mix.get(task, 0.0) / total
        deviation_pp = abs(share - target) * 100
        measured[task] = share
        measured[f"{task}.deviation_pp"] = deviation_pp
        # A hair of slack: shares like 0.45 are not exact in binary.
        if deviation_pp > tolerance * 100 + 1e-9:
            off.append(f"{task} {share:.1%} vs target {target:.1%}")
    passed = n > 0 and not off
    if not n:
        detail = "no items to measure"
    elif off:
        detail = f"off by more than {tolerance * 100:g} pp: " + "; ".join(off)
    else:
        detail = f"every task within {tolerance * 100:g} pp of its target share over {n} items"
    return CheckResult(
        name="task_mix",
        passed=passed,
        measured=measured,
        thresholds={"tolerance_pp": tolerance * 100},
        detail=detail,
    )


def length_bounds(items: list[TaskItem], min_tokens: int, max_tokens: int) -> CheckResult:
    """Prompt lengths in tokens (`rc1.data.text.tokens`), per task and overall; passes when none is
    outside [min, max]. Overall figures keep their plain names (`min`, `p50`, `max`, `out_of_bounds`);
    a task's carry its name (`gsm8k.min`, ...)."""
    lengths = [len(tokens(item.prompt)) for item in items]
    by_task: dict[str, list[int]] = {}
    for item, n in zip(items, lengths):
        by_task.setdefault(item.task, []).append(n)
    measured = _length_summary(lengths, min_tokens, max_tokens, prefix="")
    for task in sorted(by_task):
        measured.update(_length_summary(by_task[task], min_tokens, max_tokens, prefix=f"{task}."))
    outside = int(measured["out_of_bounds"])
    passed = bool(lengths) and outside == 0
    if not lengths:
        detail = "no items to measure"
    else:
        detail = (
            f"{outside} of {len(lengths)} prompts outside [{min_tokens}, {max_tokens}] tokens; "
            f"min {measured['min']:.0f}, median {measured['p50']:.0f}, max {measured['max']:.0f}"
        )
        offending = [
            f"{task} {int(measured[f'{task}.out_of_bounds'])}"
            for task in sorted(by_task)
            if measured[f"{task}.out_of_bounds"]
        ]
        if offending:
            detail += " (outside, by task: " + ", ".join(offending) + ")"
    return CheckResult(
        name="length_bounds",
        passed=passed,
        measured=measured,
        thresholds={"min_tokens": float(min_tokens), "max_tokens": float(max_tokens)},
        detail=detail,
    )


def _length_summary(lengths: list[int], min_tokens: int, max_tokens: int, prefix: str) -> dict[str, float]:
    return {
        f"{prefix}min": float(min(lengths, default=0)),
        f"{prefix}p50": float(statistics.median(lengths)) if lengths else 0.0,
        f"{prefix}max": float(max(lengths, default=0)),
        f"{prefix}out_of_bounds": float(sum(1 for n in lengths if n < min_tokens or n > max_tokens)),
    }


DISTINCT2 = Check(
    name="distinct2",
    rounds=(1, 2),
    commands=("pool validate",),
    thresholds={"preflight.min_distinct2": Floor("min", 0.6)},
    run=lambda r: distinct2(
        r.pool,
        r.config.preflight.min_distinct2,
        {name: t.min_distinct2 for name, t in r.config.data.tasks.items() if t.min_distinct2 is not None},
    ),
    runbook=Runbook(
        means="a task's text (context + question) repeats itself: its items come from too few templates or records, "
        "so the same word pairs recur (corpus-level distinct-2 falls as a pool of one pattern grows)",
        tries=(
            "draw the task from more varied text: an official file or hub dataset in data.sources.<task>, or more "
            "varied records in data.tasks.<name>",
            "for a task of yours, check that data.tasks.<name>.question / context name the right columns "
            "(a constant or templated column scores low); a task of templated records may set its own floor, "
            "data.tasks.<name>.min_distinct2 (production: at least 0.2), leaving the built-in tasks' alone",
            "local profile only: a smaller data.pool_size or a lower preflight.min_distinct2; production may not "
            "go below 0.60 (PRODUCTION_FLOORS) nor below 30000 items",
        ),
    ),
)


LENGTH_BOUNDS = Check(
    name="length_bounds",
    rounds=(1, 2),
    commands=("pool validate",),
    thresholds={"preflight.min_len_tokens": Floor("min", 64), "preflight.max_len_tokens": Floor("max", 4096)},
    run=lambda r: length_bounds(r.pool, r.config.preflight.min_len_tokens, r.config.preflight.max_len_tokens),
    runbook=Runbook(
        means="some prompts (the whole episode, in rc1.data.text.tokens, not the model's tokens) are shorter than "
        "preflight.min_len_tokens or longer than preflight.max_len_tokens",
        tries=(
            "too long: trim the records' contexts (data.sources / data.tasks), or lower data.max_turns / "
            "data.max_tool_hops, whose turns and tool steps lengthen hard episodes",
            "too short: give a task of yours its context column (data.tasks.<name>.context), or use records with "
            "more text",
            "local profile only: move preflight.min_len_tokens / preflight.max_len_tokens; production may not go "
            "below 64 or above 4096 (PRODUCTION_FLOORS)",
        ),
    ),
)


TASK_MIX = Check(
    name="task_mix",
    rounds=(1, 2),
    commands=("pool validate",),
    thresholds={"preflight.mix_tolerance": Floor("max", 0.03)},
    run=lambda r: task_mix(r.pool, r.config.data.mix, r.config.preflight.mix_tolerance),
    runbook=Runbook(
        means="a task's share of the seed pool is off data.mix by more than preflight.mix_tolerance: the pool on disk "
        "was built with another mix, or data.pool_size is so small that one item moves a share past it",
        tries=(
            "rebuild the pool with the current data.mix in INIT: rc1 pool build (or rc1 advance)",
            "a tiny pool: raise data.pool_size until one item (100 / pool_size pp) is well under the tolerance",
            "production may not raise preflight.mix_tolerance above 0.03 (PRODUCTION_FLOORS); loosen it only on "
            "the local profile",
        ),
    ),
)
