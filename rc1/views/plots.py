"""PNG pictures of a run under reports/plots/, drawn with matplotlib from the log (and, for the pool's
difficulty, from the gated data files the log fingerprints). Views: nothing reads them back."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

from rc1.core.fsutil import atomic_write_bytes
from rc1.core.workspace import Workspace
from rc1.data.task import DIFFICULTIES, read_items
from rc1.run import events as ev


def draw_all(ws: Workspace, events: list[ev.Event]) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")  # no display: files only
    out = ws.reports_dir / "plots"
    drawn = [_training_curves(out, [e for e in events if isinstance(e, ev.TrainStep)])]
    drawn.append(_success_by_difficulty(out, _current_line(events)))
    drawn.append(_pool_difficulty(out, ws))
    return [path for path in drawn if path is not None]


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    atomic_write_bytes(path, buffer.getvalue())
    return path


def _training_curves(out: Path, steps: list[ev.TrainStep]) -> Path | None:
    if not steps:
        return None
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 2, figsize=(10, 9), sharex=True)
    x = [s.step for s in steps]
    # At β 0 TRL computes no KL to the reference (it builds none), and train_step records 0.
    unmeasured = not any(s.kl_coef or s.kl for s in steps)
    kl = "kl (not measured: β = 0, no reference)" if unmeasured else "kl"
    for ax, (name, values) in zip(
        axes.flat,
        [
            ("reward", [s.reward for s in steps]),
            ("loss", [s.loss for s in steps]),
            (kl, [s.kl for s in steps]),
            ("completion tokens per step", [s.tokens for s in steps]),
        ],
    ):
        ax.plot(x, values, marker=".", linewidth=1)
        ax.set_title(name)
        ax.grid(alpha=0.3)
    # The reward's parts (the archived completions' means) and the trainer's diagnostics, where the log has them.
    _lines(
        axes[2][0],
        steps,
        lambda s: {**s.components, "penalty": s.penalty} if s.components else {},
        "reward components (mean over the step's completions)",
    )
    _lines(
        axes[2][1],
        steps,
        lambda s: {k: v for k, v in s.diagnostics.items() if not k.startswith("completion_length")},
        "trainer diagnostics",
    )
    for ax in axes[2]:
        ax.set_xlabel("step")
    return _save(fig, out / "training.png")


def _lines(ax, steps: list[ev.TrainStep], values_of, title: str) -> None:
    """One line per key the steps' dicts hold (a step without it leaves a gap); "not recorded" where none does."""
    series: dict[str, list[tuple[int, float]]] = {}
    for step in steps:
        for key, value in values_of(step).items():
            series.setdefault(key, []).append((step.step, value))
    for key, points in sorted(series.items()):
        ax.plot([p[0] for p in points], [p[1] for p in points], marker=".", linewidth=1, label=key)
    if series:
        ax.legend(fontsize=7)
    else:
        ax.text(0.5, 0.5, "not recorded", ha="center", va="center", transform=ax.transAxes)
    ax.set_title(title)
    ax.grid(alpha=0.3)


def _current_line(events: list[ev.Event]) -> tuple[list[ev.EvalCompleted], ev.ReleaseEvaluated | None]:
    """The evaluations of the last line of training (a run of several seeds trains one after another) and its
    release verdict, if it has one."""
    start = max(
        (i for i, e in enumerate(events) if isinstance(e, ev.TrainingStarted) and e.resume_from_step == 0), default=0
    )
    line = events[start:]
    evals = {
        e.step: e for e in line if isinstance(e, ev.EvalCompleted) and e.buckets
    }  # a step evaluated again: the last
    release = next((e for e in reversed(line) if isinstance(e, ev.ReleaseEvaluated)), None)
    return [evals[step] for step in sorted(evals)], release


def _success_by_difficulty(out: Path, line: tuple[list[ev.EvalCompleted], ev.ReleaseEvaluated | None]) -> Path | None:
    evals, release = line
    if not evals:
        return None
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    x = [e.step for e in evals]
    for difficulty in (*DIFFICULTIES, "all"):
        ys = [
            next((b.success for b in e.buckets if b.task == "all" and b.difficulty == difficulty), None) for e in evals
        ]
        ax.plot(x, ys, marker="o", label=f"{difficulty} (greedy)", linewidth=2 if difficulty == "all" else 1, alpha=0.6)
    ax.plot(x, [e.hard_success for e in evals], marker="s", linestyle="--", label="hard release tasks (greedy)")
    if any(e.hard_sampled_success is not None for e in evals):
        overall = [
            next((b.sampled_success for b in e.buckets if b.task == "all" and b.difficulty == "all"), None)
            for e in evals
        ]
        ax.plot(
            x, overall, marker="o", linestyle="-.", color="grey", label=f"all (sampled, {evals[-1].samples} per item)"
        )
        ax.plot(
            x,
            [e.hard_sampled_success for e in evals],
            marker="s",
            linestyle="-",
            color="black",
            label=f"hard release tasks (sampled, {evals[-1].samples} per item)",
        )
    if release is not None and release.step is not None:
        ax.axvline(
            release.step, color="grey", linestyle=":", label=f"selected: step {release.step} ({release.selected_by})"
        )
        if release.ci_low_pp is not None:
            base, gain = release.baseline_success, release.selected_success - release.baseline_success
            low, high = base + release.ci_low_pp / 100, base + release.ci_high_pp / 100
            ax.errorbar(
                [0, release.step],
                [base, base + gain],
                yerr=[[0, base + gain - low], [0, high - base - gain]],
                color="red",
                marker="D",
                capsize=4,
                linestyle="-",
                linewidth=1.5,
                label=f"gate set n={release.n}: {release.hard_gain_pp:+.1f} pp "
                f"[{release.ci_low_pp:+.1f}, {release.ci_high_pp:+.1f}] "
                f"{'PASSED' if release.passed else 'NOT PASSED'}",
            )
    ax.set_xlabel("step")
    ax.set_ylabel("success")
    ax.set_title("shadow set by difficulty; the release verdict on the gate set")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, out / "success_by_difficulty.png")


def _pool_difficulty(out: Path, ws: Workspace) -> Path | None:
    pools = [
        (name, path)
        for name, path in (("seed pool", ws.pool_path), ("balanced pool", ws.balanced_pool_path))
        if path.exists()
    ]
    if not pools:
        return None
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(pools), figsize=(5 * len(pools), 3.5), squeeze=False)
    for ax, (name, path) in zip(axes[0], pools):
        counts = Counter((item.task, item.difficulty) for item in read_items(path))
        tasks = sorted({task for task, _ in counts})
        width = 0.8 / len(DIFFICULTIES)
        for k, difficulty in enumerate(DIFFICULTIES):
            ax.bar(
                [i + k * width for i in range(len(tasks))],
                [counts[(t, difficulty)] for t in tasks],
                width,
                label=difficulty,
            )
        ax.set_xticks([i + width for i in range(len(tasks))], tasks)
        ax.set_title(f"{name}: items by difficulty")
        ax.legend(fontsize=8)
    return _save(fig, out / "pool_difficulty.png")
