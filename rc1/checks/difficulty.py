"""Difficulty validation of the balanced pool, and the report behind it.

Per task: hard share ≥ `min_hard`, easy share ≤ `max_easy`; no item above the caps on prompt tokens,
user turns and tool hops (a recorded item's, `data.max_tool_hops`: the tool steps its prompt shows) or tool rounds (a
live item's gold path, `data.max_tool_rounds`: the rounds of tool results a rollout gets; items over it are named);
median clue_overlap ≤ `hard_clue_max` among hard items and ≥
`easy_clue_min` among easy ones (tasks with a context; a live item's clue_overlap is skipped by name, as it is in
its vote, with turns and len_tokens: rc1/data/difficulty.py LIVE_SKIPPED); and the balanced pool keeps at least
`min_fraction` of the seed pool. Every failure says which task, bucket or dimension falls short and
by how much; a bucket too small to balance names the dimensions that least often vote for it. A task whose items
keep their own difficulty names its signal: a task of yours (declared, measured, heuristic), a generated one in live
episodes "declared by its generator (live episodes)" (rc1/data/task_difficulty.py GENERATED).
"""

from __future__ import annotations

import statistics
from collections import Counter

import msgspec

from rc1.checks.result import CheckResult
from rc1.checks.spec import Check, Floor
from rc1.config.loading import LoadedConfig
from rc1.config.schema import Config
from rc1.core.fsutil import atomic_write_bytes
from rc1.core.runbook import Runbook
from rc1.core.workspace import Workspace
from rc1.data.balance import Balanced
from rc1.data.difficulty import DIMENSIONS, LIVE_SKIPPED, ItemMetrics, skipped, votes
from rc1.data.sources import probe_labels_path, your_signals
from rc1.data.task import DIFFICULTIES, TaskItem
from rc1.data.task_difficulty import GENERATED, ProbeLabels, Signal, generated_tasks, read_labels

HISTOGRAM_BINS = 10
NAMED = 10  # items named in a failure, the rest counted


class DifficultyLimits(msgspec.Struct, frozen=True, kw_only=True):
    min_hard: float
    max_easy: float
    max_len_tokens: int
    max_turns: int
    max_tool_hops: int
    max_tool_rounds: int
    hard_clue_max: float
    easy_clue_min: float
    min_fraction: float


def validate(
    balanced: Balanced,
    seed_size: int,
    metrics_by_id: dict[str, ItemMetrics],
    limits: DifficultyLimits,
    signals: dict[str, Signal] | None = None,
    probes: dict[str, ProbeLabels] | None = None,
) -> CheckResult:
    """`signals`: where each task of yours took its difficulty from (rc1/data/task_difficulty.py); `probes`: the
    base model's labels of those measured."""
    signals, probes = signals or {}, probes or {}
    items = balanced.items
    measured: dict[str, float] = {
        "seed_items": float(seed_size),
        "balanced_items": float(len(items)),
        "balanced_fraction": len(items) / seed_size if seed_size else 0.0,
    }
    for task, signal in sorted(signals.items()):
        measured[f"{task}.signal_{signal.kind}"] = 1.0
        if task in probes:
            measured.update(_probe_measured(task, probes[task]))
    problems: list[str] = []
    skips: list[str] = []  # dimensions skipped by what the items are, said beside the outcome
    for task in sorted({i.task for i in items}):
        mine = [i for i in items if i.task == task]
        shares = Counter(i.difficulty for i in mine)
        hard, easy = shares["hard"] / len(mine), shares["easy"] / len(mine)
        measured[f"{task}.hard_share"], measured[f"{task}.easy_share"] = hard, easy
        if hard < limits.min_hard - 1e-9:
            problems.append(f"{task}: hard {hard:.1%} < {limits.min_hard:.0%} (short by {limits.min_hard - hard:.1%})")
        if easy > limits.max_easy + 1e-9:
            problems.append(f"{task}: easy {easy:.1%} > {limits.max_easy:.0%} (over by {easy - limits.max_easy:.1%})")
        ms = [metrics_by_id[i.id] for i in mine]
        recorded = [m for m in ms if not m.live]
        for name, cap, among in (
            ("len_tokens", limits.max_len_tokens, ms),
            ("turns", limits.max_turns, ms),
            ("tool_hops", limits.max_tool_hops, recorded),  # a live item's hops are bounded by its rounds, below
        ):
            top = max(getattr(m, name) for m in ms)
            measured[f"{task}.max_{name}"] = float(top)
            if among and (over := max(getattr(m, name) for m in among)) > cap:
                problems.append(f"{task}: {name} reaches {over}, above the cap {cap}")
        problems += _rounds_problems(task, [m for m in ms if m.live], limits.max_tool_rounds, measured)
        live = [m for m in ms if m.live]
        if live:
            measured[f"{task}.live_items"] = float(len(live))
        if live and task not in signals:  # a task with a signal of its own is not bucketed by the votes at all
            # Without a context clue_overlap abstains anyway: only what would have voted is said to be skipped.
            names = sorted(LIVE_SKIPPED - ({"clue_overlap"} if all(m.clue_overlap is None for m in live) else set()))
            skips.append(
                f"{task}: {', '.join(names)} skipped on its {len(live)} live item(s) (a live episode's rows are its "
                "own: its question is the bare question, its turns and length restate its asks and its reads; "
                "rc1/data/difficulty.py LIVE_SKIPPED)"
            )
        if task in signals and signals[task].kind != "heuristic":
            continue  # its buckets are declared or measured: what a question restates of its context decides nothing
        for label, bound, ok in (
            ("hard", limits.hard_clue_max, lambda v, b: v <= b),
            ("easy", limits.easy_clue_min, lambda v, b: v >= b),
        ):
            clues = [
                metrics_by_id[i.id].clue_overlap
                for i in mine
                if i.difficulty == label and "clue_overlap" not in skipped(metrics_by_id[i.id])
            ]
            clues = [c for c in clues if c is not None]
            if not clues:
                continue
            median = statistics.median(clues)
            measured[f"{task}.{label}_clue_overlap_p50"] = median
            if not ok(median, bound):
                relation = "≤" if label == "hard" else "≥"
                problems.append(
                    f"{task}: median clue_overlap of {label} items is {median:.3f}, needs {relation} {bound:.2f} (off "
                    f"by {abs(median - bound):.3f})"
                )
    fraction = measured["balanced_fraction"]
    if fraction < limits.min_fraction:
        short = "; ".join(_shortfall_text(s, metrics_by_id, signals.get(s.task), balanced) for s in balanced.shortfalls)
        problems.append(
            f"the balanced pool keeps {fraction:.1%} of the seed pool (need {limits.min_fraction:.0%}); {short}"
        )
    detail = (
        "; ".join(problems)
        if problems
        else (
            f"{len(items)} of {seed_size} items balanced; every task hard ≥ {limits.min_hard:.0%}, easy ≤ "
            f"{limits.max_easy:.0%}, within caps"
        )
    )
    said = [_signal_text(task, signal, probes.get(task)) for task, signal in sorted(signals.items())] + skips
    if said:
        detail += "; " + "; ".join(said)
    return CheckResult(
        name="difficulty",
        passed=bool(items) and not problems,
        measured=measured,
        thresholds={k: float(v) for k, v in msgspec.to_builtins(limits).items()},
        detail=detail,
    )


def _rounds_problems(task: str, live: list[ItemMetrics], cap: int, measured: dict[str, float]) -> list[str]:
    """A live item's gold path takes one round per call; a rollout gets `cap` rounds, so an item whose gold path takes
    more cannot be finished the right way: named, the first NAMED of them."""
    if not live:
        return []
    measured[f"{task}.max_tool_rounds"] = float(max(m.tool_rounds or 0 for m in live))
    over = sorted((m for m in live if (m.tool_rounds or 0) > cap), key=lambda m: (-(m.tool_rounds or 0), m.id))
    measured[f"{task}.over_tool_rounds"] = float(len(over))
    if not over:
        return []
    named = ", ".join(f"{m.id} ({m.tool_rounds})" for m in over[:NAMED])
    more = f" and {len(over) - NAMED} more" if len(over) > NAMED else ""
    return [
        f"{task}: {len(over)} live item(s) need more tool rounds on their gold path than data.max_tool_rounds {cap}: "
        f"{named}{more}"
    ]


def _shortfall_text(s, metrics_by_id: dict[str, ItemMetrics], signal: Signal | None, balanced: Balanced) -> str:
    head = f"{s.task}/{s.bucket} has {s.available} items, {s.needed} needed (short by {s.needed - s.available}"
    if signal is not None:  # a task of yours: its records' own difficulty, not the episode's metrics
        seed = balanced.seed_buckets.get(s.task, {})
        spread = ", ".join(f"{seed.get(d, 0)} {d}" for d in DIFFICULTIES)
        advice = _your_advice(s.task, s.bucket, signal)
        return f"{head}; its seed items are {spread} by difficulty {signal.kind}: {advice})"
    mine = [m for m in metrics_by_id.values() if m.task == s.task]
    dims = [d for d in DIMENSIONS if not all(d in skipped(m) for m in mine)]  # a skipped dimension is not weak
    rates = {d: sum(votes(m).get(d) == s.bucket for m in mine) / len(mine) for d in dims} if mine else {}
    weakest = ", ".join(f"{d} votes {s.bucket} for {r:.0%}" for d, r in sorted(rates.items(), key=lambda kv: kv[1])[:3])
    return f"{head}; weakest: {weakest})"


_MEASURED_SHORT = {
    "easy": "few records does the base model solve in every reply",
    "medium": "few records split the base model's replies between solved and not",
    "hard": "few records defeat every reply of the base model",
}


def _your_advice(task: str, bucket: str, signal: Signal) -> str:
    where = f"data.tasks.{task}"
    if signal == GENERATED:
        return "its generator builds what its slots ask (data.difficulty_target): give the pool more items"
    if signal.kind == "declared":
        return "add records of that difficulty, or move data.difficulty_target toward what the records hold"
    if signal.kind == "measured":
        return (
            f"{_MEASURED_SHORT[bucket]}; add records of that difficulty, or declare a difficulty column "
            f"({where}.difficulty_column)"
        )
    return (
        f"the text metrics ({', '.join(d for d in DIMENSIONS if d not in signal.skipped)}) cannot tell your records "
        f"apart; declare a difficulty column of easy/medium/hard ({where}.difficulty_column), or measure it with "
        f"a configured model ({where}.difficulty: measured)"
    )


def _signal_text(task: str, signal: Signal, probe: ProbeLabels | None) -> str:
    text = signal.text(task)
    if probe is None:
        return text
    n, k = len(probe.items), probe.samples
    always = sum(p.solved == k for p in probe.items)
    never = sum(p.solved == 0 for p in probe.items)
    return (
        f"{text}: the base model solved {always} of {n} records in all {k} replies, {never} in none, "
        f"{n - always - never} sometimes ({probe.seconds:.0f} s)"
    )


def _probe_measured(task: str, probe: ProbeLabels) -> dict[str, float]:
    n, k = len(probe.items), probe.samples
    replies = n * k
    return {
        f"{task}.probe_records": float(n),
        f"{task}.probe_samples": float(k),
        f"{task}.probe_always_share": sum(p.solved == k for p in probe.items) / n if n else 0.0,
        f"{task}.probe_never_share": sum(p.solved == 0 for p in probe.items) / n if n else 0.0,
        f"{task}.probe_cut_share": sum(p.cut for p in probe.items) / replies if replies else 0.0,
        f"{task}.probe_seconds": probe.seconds,
    }


def report(
    seed: list[TaskItem],
    metrics: list[ItemMetrics],
    balanced: Balanced,
    result: CheckResult,
    signals: dict[str, Signal] | None = None,
) -> dict:
    """reports/rc1/difficulty_report.json: per task and dimension, p10/p50/p90 and a histogram; for a task of yours,
    where its difficulty came from."""
    signals = signals or {}
    by_task: dict[str, dict] = {}
    for task in sorted({m.task for m in metrics}):
        ms = [m for m in metrics if m.task == task]
        dims = {}
        for name in (
            "len_tokens",
            "turns",
            "tool_hops",
            "entities",
            "ops_numeric",
            "connector_density",
            "coref_pronouns",
            "clue_overlap",
            "ambiguity_flags",
            "tool_rounds",
        ):
            values = sorted(float(v) for v in (getattr(m, name) for m in ms) if v is not None)
            if values:
                dims[name] = {
                    "p10": _pct(values, 0.1),
                    "p50": _pct(values, 0.5),
                    "p90": _pct(values, 0.9),
                    "histogram": _histogram(values),
                }
        dims["needs_clarification"] = {"share": sum(m.needs_clarification for m in ms) / len(ms)}
        by_task[task] = {
            **({"signal": msgspec.to_builtins(signals[task])} if task in signals else {}),
            "dimensions": dims,
            "seed_buckets": balanced.seed_buckets.get(task, {}),
            "balanced_buckets": balanced.balanced_buckets.get(task, {}),
        }
    return {
        "seed_items": len(seed),
        "balanced_items": len(balanced.items),
        "tasks": by_task,
        "shortfalls": msgspec.to_builtins(balanced.shortfalls),
        "validation": {
            "passed": result.passed,
            "measured": result.measured,
            "thresholds": result.thresholds,
            "detail": result.detail,
        },
        "buckets": list(DIFFICULTIES),
    }


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


def _histogram(values: list[float]) -> dict:
    low, high = values[0], values[-1]
    width = (high - low) / HISTOGRAM_BINS or 1.0
    counts = [0] * HISTOGRAM_BINS
    for v in values:
        counts[min(HISTOGRAM_BINS - 1, int((v - low) / width))] += 1
    return {"low": low, "high": high, "counts": counts}


def difficulty_limits(c: Config) -> DifficultyLimits:
    return DifficultyLimits(
        min_hard=c.preflight.min_hard_share,
        max_easy=c.preflight.max_easy_share,
        max_len_tokens=c.preflight.max_len_tokens,
        max_turns=c.data.max_turns,
        max_tool_hops=c.data.max_tool_hops,
        max_tool_rounds=c.data.max_tool_rounds,
        hard_clue_max=c.preflight.hard_clue_overlap_max,
        easy_clue_min=c.preflight.easy_clue_overlap_min,
        min_fraction=c.preflight.min_balanced_fraction,
    )


def difficulty_check(
    loaded: LoadedConfig, ws: Workspace, pool: list[TaskItem], metrics: list[ItemMetrics], balanced: Balanced
) -> CheckResult:
    """Validate the balanced pool and write reports/rc1/difficulty_report.json (a view of the result)."""
    config = loaded.config
    # A generated built-in task of a live run declares its items' difficulty by its generator (task_difficulty.py).
    signals = your_signals(loaded, ws) | dict.fromkeys(generated_tasks(config.data), GENERATED)
    probes = {
        task: read_labels(probe_labels_path(ws.data_dir, task)) for task, s in signals.items() if s.kind == "measured"
    }
    result = validate(balanced, len(pool), {m.id: m for m in metrics}, difficulty_limits(config), signals, probes)
    written = report(pool, metrics, balanced, result, signals)
    atomic_write_bytes(ws.difficulty_report_path, msgspec.json.format(msgspec.json.encode(written)))
    return result


CHECK = Check(
    name="difficulty",
    rounds=(1, 2),
    commands=("difficulty validate",),
    thresholds={
        "preflight.min_hard_share": Floor("min", 0.3),
        "preflight.max_easy_share": Floor("max", 0.3),
        "preflight.hard_clue_overlap_max": Floor("max", 0.2),
        "preflight.easy_clue_overlap_min": Floor("min", 0.4),
        "preflight.min_balanced_fraction": Floor("min", 0.5),
        "data.max_turns": None,
        "data.max_tool_hops": None,
        "data.max_tool_rounds": None,
    },
    run=lambda r: difficulty_check(r.loaded, r.ws, r.pool, r.metrics, r.balanced),
    runbook=Runbook(
        means="the balanced pool breaks a per-task rule: too few hard or too many easy items, an item over a cap, "
        "clue overlap on the wrong side, or too little of the seed pool kept because a bucket measured short",
        tries=(
            "too few hard / too many easy: raise data.difficulty_target.hard (lowering .easy, the shares sum to 1): "
            "the balanced pool follows it; relax preflight.min_hard_share / preflight.max_easy_share only on "
            "local (production floors 0.30)",
            "too little kept (a bucket short, its weakest dimensions named): make more items measure hard with "
            "more turns, tool hops or clarifications (data.max_turns, data.max_tool_hops, data.clarify_rate) or "
            "multi-step numeric templates",
            "a task of yours short of a bucket (its own counts named, by the signal its difficulty came from): add "
            "records of that difficulty; give the records a difficulty column (data.tasks.<name>.difficulty_column) "
            "where the text metrics cannot tell them apart, or measure them with a configured model "
            "(data.tasks.<name>.difficulty: measured)",
            "clue overlap off: paraphrase hard questions away from their context (median ≤ "
            "preflight.hard_clue_overlap_max); easy ones restate their evidence (≥ preflight.easy_clue_overlap_min)",
            "over the length cap: raise preflight.max_len_tokens (production: at most 4096) or trim contexts; "
            "then check with rc1 difficulty validate",
        ),
    ),
)
