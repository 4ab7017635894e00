"""PNG pictures of a run under reports/plots/, drawn with matplotlib from the log (and, for the pool's
difficulty, from the gated data files the log fingerprints). Views: nothing reads them back. What each shows is
decided in rc1/views/plot_series.py; this module only draws it."""

from __future__ import annotations

import io
import math
from collections import Counter
from pathlib import Path

from rc1.core.fsutil import atomic_write_bytes
from rc1.core.workspace import Workspace
from rc1.data.task import DIFFICULTIES, read_items
from rc1.run import events as ev
from rc1.views.plot_series import (
    lines_of_training,
    run_name,
    smooth,
    smoothing_window,
    training_panels,
    verdict_label,
    verdict_word,
    zoomed_limits,
)

# One colour per difficulty in every picture; "all" (every difficulty) in black.
COLOURS = {"easy": "tab:green", "medium": "tab:orange", "hard": "tab:red", "all": "black", "release": "tab:purple"}
VERDICT_COLOURS = {"PASSED": "tab:green", "FAILED": "tab:red"}


def draw_all(ws: Workspace, events: list[ev.Event]) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")  # no display: files only
    out = ws.reports_dir / "plots"
    run = run_name(events, ws.run)
    drawn = [_training_curves(out, events, run)]
    drawn.append(_success_by_difficulty(out, _current_line(events), run))
    drawn.append(_pool_difficulty(out, ws, run))
    return [path for path in drawn if path is not None]


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    # No "Software" chunk: the same log draws the same bytes whatever matplotlib's version (PNG has no date chunk).
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    atomic_write_bytes(path, buffer.getvalue())
    return path


def _training_curves(out: Path, events: list[ev.Event], run: str) -> Path | None:
    lines = lines_of_training(events)
    if not lines:
        return None
    import matplotlib.pyplot as plt

    panels, notes = training_panels(lines)
    columns = 2 if len(panels) > 1 else 1
    rows = math.ceil(len(panels) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(11, 2.4 * rows + 1.2), sharex=True, squeeze=False)
    best = next((e for e in reversed(events) if isinstance(e, ev.BestPromoted)), None)
    windows = set()
    for ax, panel in zip(axes.flat, panels):
        for k, (name, points) in enumerate(panel.series.items()):
            xs, ys = [p[0] for p in points], [p[1] for p in points]
            window = smoothing_window(len(ys))
            windows.add(window)
            colour = f"C{k}"
            ax.plot(xs, ys, color=colour, linewidth=1, alpha=0.3 if window > 1 else 1.0)
            ax.plot(xs, smooth(ys, window), color=colour, linewidth=1.8, label=name or None)
        low, high = zoomed_limits([p[1] for points in panel.series.values() for p in points])
        named = any(panel.series)
        # A panel of named series keeps its top fifth for their legend, in one row, so it hides no line.
        ax.set_ylim(low, high + (high - low) / 4 if named else high)
        if named:
            ax.legend(fontsize=7, ncol=len(panel.series), frameon=False, loc="upper center", handlelength=1.2)
        if best is not None:
            ax.axvline(best.step, color="grey", linestyle=":", linewidth=1)
        ax.set_title(panel.title, fontsize=10)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for column in range(columns):  # the lowest visible panel of each column carries the step axis
        shown = [axes[row][column] for row in range(rows) if axes[row][column].get_visible()]
        if shown:
            shown[-1].set_xlabel("optimizer step")
            shown[-1].xaxis.set_tick_params(labelbottom=True)
    fig.suptitle(_training_title(events, run, lines), fontsize=12)
    said = [f"faint: every step; bold: centred rolling mean over {_windows(windows)}"]
    if best is not None:
        said.append(f"dotted: best checkpoint, step {best.step} ({best.metric} {best.value:.3g})")
    said += [f"not drawn: {note}" for note in notes]
    fig.text(0.01, 0.0, "\n".join(said), fontsize=8, va="top", color="dimgrey")
    fig.tight_layout()
    return _save(fig, out / "training.png")


def _windows(windows: set[int]) -> str:
    return " / ".join(f"{w} steps" for w in sorted(windows)) if windows != {1} else "1 step (too few to smooth)"


def _training_title(events: list[ev.Event], run: str, lines: dict[int | None, list[ev.TrainStep]]) -> str:
    started = next((e for e in reversed(events) if isinstance(e, ev.TrainingStarted)), None)
    seeds = ", ".join(str(seed) for seed in lines if seed is not None)
    what = f"{started.engine} × {started.strategy}, {started.model}" if started else "training"
    return f"run {run}: {what}" + (f" (seed{'s' if len(lines) > 1 else ''} {seeds})" if seeds else "")


def _current_line(events: list[ev.Event]) -> tuple[list[ev.EvalCompleted], ev.ReleaseEvaluated | None, str]:
    """The evaluations of the last line of training (a run of several seeds trains one after another), its
    release verdict, if it has one, and the metric that chose its checkpoint ("" when the log does not say)."""
    start = max(
        (i for i, e in enumerate(events) if isinstance(e, ev.TrainingStarted) and e.resume_from_step == 0), default=0
    )
    line = events[start:]
    evals = {
        e.step: e for e in line if isinstance(e, ev.EvalCompleted) and e.buckets
    }  # a step evaluated again: the last
    release = next((e for e in reversed(line) if isinstance(e, ev.ReleaseEvaluated)), None)
    best = next((e for e in reversed(line) if isinstance(e, ev.BestPromoted)), None)
    metric = release.metric if release is not None else best.metric if best is not None else ""
    return [evals[step] for step in sorted(evals)], release, metric


def _bucket(evaluation: ev.EvalCompleted, difficulty: str, sampled: bool) -> float | None:
    found = next((b for b in evaluation.buckets if b.task == "all" and b.difficulty == difficulty), None)
    return None if found is None else found.sampled_success if sampled else found.success


def _success_by_difficulty(
    out: Path, line: tuple[list[ev.EvalCompleted], ev.ReleaseEvaluated | None, str], run: str
) -> Path | None:
    evals, release, metric = line
    if not evals:
        return None
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    if release is not None:
        fig, (ax, verdict) = plt.subplots(2, 1, figsize=(9, 6.2), height_ratios=[3.2, 1])
    else:
        fig, ax = plt.subplots(figsize=(9, 4.6))
    x = [e.step for e in evals]
    # What is drawn: each difficulty and all items (colour), greedy and sampled (line style); the hard items of the
    # release tasks only where the checkpoint was chosen on them.
    series = {d: (lambda e, s, d=d: _bucket(e, d, s)) for d in (*DIFFICULTIES, "all")}
    if metric.startswith("hard"):
        series["release"] = lambda e, s: e.hard_sampled_success if s else e.hard_success
    sampled = any(e.samples for e in evals)
    drawn: list[float] = []
    for name, value_of in series.items():
        for is_sampled, style in ((False, "-"), (True, "--")) if sampled else ((False, "-"),):
            ys = [value_of(e, is_sampled) for e in evals]
            width = 2.2 if name == "all" else 1.2
            ax.plot(x, ys, color=COLOURS[name], linestyle=style, linewidth=width, marker="o", markersize=3)
            drawn += [y for y in ys if y is not None]
    ax.set_ylim(*zoomed_limits(drawn, min_span=0.05, within=(0.0, 1.0)))
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.annotate("base", (0, 1), xycoords=("data", "axes fraction"), xytext=(3, -10), textcoords="offset points")
    if release is not None and release.step is not None:
        ax.axvline(release.step, color="grey", linestyle=":", linewidth=1)
        ax.annotate(
            f"selected: step {release.step} ({release.selected_by})",
            (release.step, 1),
            xycoords=("data", "axes fraction"),
            xytext=(3, -10),
            textcoords="offset points",
            fontsize=8,
        )
    handles = [
        Line2D([], [], color=COLOURS[name], linewidth=2.2 if name == "all" else 1.5, label=_subset(name))
        for name in series
    ]
    if sampled:
        handles += [
            Line2D([], [], color="grey", linestyle="-", label="greedy"),
            Line2D([], [], color="grey", linestyle="--", label=f"sampled ({evals[-1].samples}/item)"),
        ]
    ax.legend(handles=handles, fontsize=8, ncol=len(handles), frameon=False, loc="lower left", bbox_to_anchor=(0, 1))
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("success on the shadow set")
    ax.grid(alpha=0.3)
    fig.suptitle(f"run {run}: shadow-set success by difficulty", fontsize=12)
    if release is not None:
        draw_verdict(verdict, release)
    fig.tight_layout()
    return _save(fig, out / "success_by_difficulty.png")


def _subset(name: str) -> str:
    return {"all": "all items", "release": "hard, release tasks"}.get(name, name)


def draw_verdict(ax, release: ev.ReleaseEvaluated) -> None:
    """The release verdict on `ax`: the gain (pp) with its interval as an error bar against 0 and the threshold,
    titled with the verdict's word (PASSED / FAILED) and, when failed, why."""
    word = verdict_word(release)
    colour = VERDICT_COLOURS[word]
    gain, low, high = release.hard_gain_pp, release.ci_low_pp, release.ci_high_pp
    interval = low is not None and high is not None
    ax.errorbar(
        [gain],
        [0],
        xerr=[[gain - low], [high - gain]] if interval else None,
        fmt="D",
        color=colour,
        capsize=6,
        linewidth=2,
        markersize=7,
    )
    ax.axvline(0, color="black", linewidth=1)
    ax.axvline(release.threshold_pp, color="grey", linestyle="--", linewidth=1)
    ax.annotate(
        f"threshold {release.threshold_pp:+g} pp",
        (release.threshold_pp, 1),
        xycoords=("data", "axes fraction"),
        xytext=(-3, -10),
        textcoords="offset points",
        ha="right",
        fontsize=8,
        color="dimgrey",
    )
    span = [0.0, release.threshold_pp, gain] + ([low, high] if interval else [])
    ax.set_xlim(*zoomed_limits(span, margin=0.15))
    ax.set_ylim(-1, 1)
    ax.set_yticks([])
    kind = "sampled" if release.samples else "greedy"
    ax.set_xlabel(
        f"gain in {kind} success, selected checkpoint − step 0 (pp): "
        f"{100 * release.baseline_success:.1f} % → {100 * release.selected_success:.1f} %",
        fontsize=9,
    )
    why = "; ".join(release.failed)
    ax.set_title(verdict_label(release) + (f"\n{why}" if why else ""), fontsize=9, color=colour)
    ax.grid(alpha=0.3, axis="x")


def _pool_difficulty(out: Path, ws: Workspace, run: str) -> Path | None:
    pools = [
        (name, path)
        for name, path in (("seed pool", ws.pool_path), ("balanced pool", ws.balanced_pool_path))
        if path.exists()
    ]
    if not pools:
        return None
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(pools), figsize=(5 * len(pools), 3.8), squeeze=False, sharey=True)
    for ax, (name, path) in zip(axes[0], pools):
        items = read_items(path)
        counts = Counter((item.task, item.difficulty) for item in items)
        tasks = sorted({task for task, _ in counts})
        width = 0.8 / len(DIFFICULTIES)
        for k, difficulty in enumerate(DIFFICULTIES):
            bars = ax.bar(
                [i + (k - (len(DIFFICULTIES) - 1) / 2) * width for i in range(len(tasks))],
                [counts[(t, difficulty)] for t in tasks],
                width,
                label=difficulty,
                color=COLOURS[difficulty],
            )
            ax.bar_label(bars, fontsize=7)
        ax.set_xticks(range(len(tasks)), tasks)
        ax.set_title(f"{name}: {len(items)} items", fontsize=10)
        ax.grid(alpha=0.3, axis="y")
        ax.margins(y=0.12)
    axes[0][0].set_ylabel("items")
    axes[0][-1].legend(fontsize=8, title="difficulty", title_fontsize=8, frameon=False)
    fig.suptitle(f"run {run}: pool items by task and difficulty", fontsize=12)
    fig.tight_layout()
    return _save(fig, out / "pool_difficulty.png")
