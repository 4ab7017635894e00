"""Trackers (`tracking.report_to`), fed from the run's own events, never from the trainer's callbacks.

A tracker is a view of the log like the files in reports/: every event a writing session appends is handed to it,
and it sends what it shows (steps, evaluations, gates, verdicts, the config). A resumed run sends each step once:
the tracker's identity is recorded in the log (`tracker_attached`) and reused, and its cursor (the last event and
the last step of each line of training it has sent, kept beside its files) lets a new session first send what the
last one appended but did not get to send, and skip the steps a resumed line trains again (identical where the line's
resume is exact; where it is not, `training_started.exact_resume` false, the tracker is told so in a note). A tracker
that fails warns (logs/train.log) and is left off for the rest of the command; it never stops the run.

What config knows of a tracker (its name, client, extra) is its spec in rc1/registry/trackers.py; here is what it
sends: its `Tracker` class, looked up by name in `BACKENDS`.
"""

from __future__ import annotations

import abc
import logging
import math
import time
from pathlib import Path

import msgspec

from rc1.core.fsutil import atomic_write_bytes
from rc1.core.workspace import Workspace
from rc1.run import events as ev

log = logging.getLogger("rc1.tracking")


class Cursor(msgspec.Struct, kw_only=True):
    seq: int = -1  # the last event sent
    steps: dict[str, int] = msgspec.field(default_factory=dict)  # line -> the last train step sent
    evals: dict[str, int] = msgspec.field(default_factory=dict)  # line -> the last evaluation sent


class Tracker(abc.ABC):
    """What every backend shares: which events it shows and how, and its cursor (kept in tracking/<run>/<backend>/,
    beside TensorBoard's files; for a remote MLflow, on this machine)."""

    name = ""
    # Whether flush() leaves what was sent on the backend's disk or server. Where it cannot (W&B writes from its own
    # process and has no flush), the cursor moves only when the backend is closed: a session killed before that is
    # sent again by the next one, so such a backend gets each step at least once across a kill, exactly once
    # across a clean stop and resume.
    flushes_durably = True

    def __init__(self, ws: Workspace, run_id: str):
        self.run_id = run_id
        self.folder = ws.root / tracker_location(ws, self.name)
        self._cursor_path = self.folder / "cursor.json"
        try:
            self.cursor = msgspec.json.decode(self._cursor_path.read_bytes(), type=Cursor)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            self.cursor = Cursor()
        self._line = "run"
        self._moved = False  # whether this session moved the cursor

    def send(self, event: ev.Event) -> None:
        if event.seq <= self.cursor.seq:
            return
        if isinstance(event, ev.TrainingStarted):
            self._line = f"seed_{event.seed}" if event.seed is not None else "line"
            shown = self.cursor.steps.get(self._line, 0)
            if not event.exact_resume and event.resume_from_step < shown:
                # The steps trained again are not sent (a tracker keeps one value per step); they differ from the
                # ones shown, so the tracker says where its series joins the training that goes on.
                self.text(
                    "resume",
                    f"{self._line} resumed from step {event.resume_from_step} on a path whose resume is not exact "
                    f"({event.device}, {event.generation} rollouts): steps {event.resume_from_step + 1}–{shown} "
                    f"were trained again and differ from what is shown here; from step {shown + 1} on, what is "
                    "shown follows the steps trained again. The log holds both (rc1 replay).",
                    event.seq,
                )
        elif isinstance(event, ev.TrainStep) and event.step > self.cursor.steps.get(self._line, 0):
            self.scalars(self._line, _step_scalars(event), event.step)
            self.cursor.steps[self._line] = event.step
        elif isinstance(event, ev.EvalCompleted) and event.step > self.cursor.evals.get(self._line, -1):
            self.scalars(self._line, _eval_scalars(event), event.step)
            self.cursor.evals[self._line] = event.step
        elif isinstance(event, ev.MonitorTripped):
            self.alert(
                _alert_title(event),
                _alert_text(event),
                "WARN" if event.action == "warn" else "ERROR",
                event.step,
                event.seq,
            )
        elif isinstance(
            event,
            (
                ev.RoundPassed,
                ev.GateFailed,
                ev.GateInvalidated,
                ev.ReleaseEvaluated,
                ev.ReleaseAcrossSeeds,
                ev.TrainingFailed,
                ev.HaltAcknowledged,
                ev.TrainingAmended,
            ),
        ):
            self.text(ev.event_type(event), _text(event), event.seq)
        self.cursor.seq = event.seq
        self._moved = True
        self.flush()
        if self.flushes_durably:  # after the flush: a kill between the two sends an event again at most
            self._save_cursor()

    def finish(self) -> None:
        """Close the backend; then what it was sent is its own, and the cursor says so. A session that sent nothing
        (`rc1 report`'s plots, without the log's lock) leaves the cursor file to the session that writes it."""
        self.close()
        if self._moved and not self.flushes_durably:
            self._save_cursor()

    def _save_cursor(self) -> None:
        atomic_write_bytes(self._cursor_path, msgspec.json.encode(self.cursor))

    def config(self, text: str, seq: int) -> None:
        self.text("config", f"```\n{text}\n```", seq)
        self.flush()

    # What a backend writes.
    @abc.abstractmethod
    def scalars(self, line: str, values: dict[str, float], step: int) -> None: ...

    def alert(self, title: str, text: str, level: str, step: int, seq: int) -> None:
        """A monitor trip, where the backend has alerts (W&B, Trackio); elsewhere a text under alerts/."""
        self.text(f"alerts/{title}", text, seq)

    @abc.abstractmethod
    def text(self, tag: str, text: str, seq: int) -> None: ...

    @abc.abstractmethod
    def plots(self, paths: list[Path], step: int) -> None: ...

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


class TensorBoard(Tracker):
    """TensorBoard event files under `tracking/<run>/tensorboard/`: one folder per line of training (seed_<s>) for
    its steps and evaluations, the run's own folder for the config, the gates, the verdicts and the plots."""

    name = "tensorboard"

    @staticmethod
    def new_run(ws: Workspace) -> str:
        return tracker_location(ws, "tensorboard")

    def __init__(self, ws: Workspace, run_id: str):
        super().__init__(ws, run_id)
        self.root = ws.root / run_id
        self._writers: dict[str, object] = {}

    def _writer(self, line: str):
        if line not in self._writers:
            from torch.utils.tensorboard import SummaryWriter

            self._writers[line] = SummaryWriter(log_dir=str(self.root if line == "run" else self.root / line))
        return self._writers[line]

    def scalars(self, line: str, values: dict[str, float], step: int) -> None:
        writer = self._writer(line)
        for tag, value in values.items():
            writer.add_scalar(tag, value, step)

    def text(self, tag: str, text: str, seq: int) -> None:
        self._writer("run").add_text(tag, text, seq)

    def plots(self, paths: list[Path], step: int) -> None:
        """The run's pictures (`rc1 report`), each as an image under plots/<name> at the run's last step."""
        import matplotlib.image

        writer = self._writer("run")
        for path in paths:
            writer.add_image(f"plots/{path.stem}", matplotlib.image.imread(path)[..., :3], step, dataformats="HWC")
        writer.flush()

    def flush(self) -> None:
        for writer in self._writers.values():
            writer.flush()

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()


class MLflow(Tracker):
    """An MLflow run (the `mlflow` extra), on the tracking server MLflow's own settings name (MLFLOW_TRACKING_URI):
    metrics `<line>/<tag>` by step, the config, gates and verdicts as text artifacts, the plots as artifacts."""

    name = "mlflow"
    EXPERIMENT = "rc1"

    @classmethod
    def new_run(cls, ws: Workspace) -> str:
        client = cls._client()
        experiment = client.get_experiment_by_name(cls.EXPERIMENT)
        experiment_id = experiment.experiment_id if experiment else client.create_experiment(cls.EXPERIMENT)
        return client.create_run(experiment_id, run_name=ws.run).info.run_id

    @staticmethod
    def _client():
        from mlflow.tracking import MlflowClient

        return MlflowClient()

    def __init__(self, ws: Workspace, run_id: str):
        super().__init__(ws, run_id)
        self._client_ = self._client()

    def scalars(self, line: str, values: dict[str, float], step: int) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        self._client_.log_batch(
            self.run_id,
            metrics=[
                Metric(key=f"{line}/{tag}", value=value, timestamp=now, step=step) for tag, value in values.items()
            ],
        )

    def text(self, tag: str, text: str, seq: int) -> None:
        self._client_.log_text(self.run_id, text, f"events/{seq:08d}_{tag.replace('/', '_')}.md")

    def alert(self, title: str, text: str, level: str, step: int, seq: int) -> None:
        """MLflow has no alerts: a tag `rc1.alert` (the latest trip, searchable) and the trip as a text artifact."""
        self._client_.set_tag(self.run_id, "rc1.alert", f"{level} {title}: {text}"[:5000])
        self.text("alert", f"{level} {title}\n\n{text}", seq)

    def plots(self, paths: list[Path], step: int) -> None:
        for path in paths:
            self._client_.log_artifact(self.run_id, str(path), "plots")


class WandB(Tracker):
    """A Weights & Biases run (the `wandb` extra) in the project WANDB_PROJECT names (else rc1), online or offline as
    W&B's own settings say (WANDB_MODE, WANDB_API_KEY; files under WANDB_DIR, else tracking/<run>/wandb/). W&B
    keeps one step counter per run, so each line of training plots against its own `<line>/step` (define_metric);
    the gates, the verdicts and the config are logged as HTML panels, the plots as images."""

    name = "wandb"
    flushes_durably = False

    @staticmethod
    def new_run(ws: Workspace) -> str:
        import secrets

        return secrets.token_hex(4)  # W&B's run ids: short lowercase ids

    def __init__(self, ws: Workspace, run_id: str):
        import os

        import wandb

        super().__init__(ws, run_id)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._wandb = wandb
        # console off: W&B must not wrap rc1's stdout; resume allow: the id the log recorded, reused on resume.
        self._run = wandb.init(
            project=os.environ.get("WANDB_PROJECT", "rc1"),
            id=run_id,
            name=ws.run,
            resume="allow",
            dir=os.environ.get("WANDB_DIR", str(self.folder)),
            settings=wandb.Settings(console="off", silent=True),
        )
        self._lines: set[str] = set()

    def scalars(self, line: str, values: dict[str, float], step: int) -> None:
        if line not in self._lines:
            self._run.define_metric(f"{line}/step")
            self._run.define_metric(f"{line}/*", step_metric=f"{line}/step")
            self._lines.add(line)
        self._run.log({f"{line}/step": step} | {f"{line}/{tag}": value for tag, value in values.items()})

    def text(self, tag: str, text: str, seq: int) -> None:
        import html

        self._run.log({f"events/{tag}": self._wandb.Html(f"<pre>{html.escape(text)}</pre>")})

    def plots(self, paths: list[Path], step: int) -> None:
        self._run.log({f"plots/{path.stem}": self._wandb.Image(str(path)) for path in paths})

    def alert(self, title: str, text: str, level: str, step: int, seq: int) -> None:
        self._run.alert(title=title, text=text, level=self._wandb.AlertLevel(level), wait_duration=0.001)

    def close(self) -> None:
        # finish() hands what is left to W&B's own process, which writes its files after it returns; teardown waits
        # for that process to end, even when finish() raised. So a command that returns (a session, `rc1 report`)
        # has its W&B files on disk, not only once an exit hook W&B itself calls unreliable has run.
        try:
            self._run.finish()
        finally:
            self._wandb.teardown()


class Trackio(Tracker):
    """A Trackio run (the `trackio` extra) named after the rc1 run, in the project TRACKIO_PROJECT names (else rc1),
    wherever Trackio's own settings put it (TRACKIO_DIR locally, TRACKIO_SPACE_ID or TRACKIO_SERVER_URL): metrics
    `<line>/<tag>` by step, the gates, the verdicts and the config as Markdown, the plots as images."""

    name = "trackio"

    @staticmethod
    def new_run(ws: Workspace) -> str:
        return ws.run  # Trackio names its runs; resume finds one by name

    def __init__(self, ws: Workspace, run_id: str):
        import contextlib
        import io
        import os

        import trackio

        super().__init__(ws, run_id)
        wanted = os.environ.get("TRACKIO_DIR")
        if wanted and Path(wanted).resolve() != Path(trackio.utils.TRACKIO_DIR).resolve():
            # Trackio reads TRACKIO_DIR once, at its import (which TRL's trainers make): say so, never write elsewhere.
            raise RuntimeError(f"TRACKIO_DIR is {wanted}, but trackio was imported with {trackio.utils.TRACKIO_DIR}")
        self._trackio = trackio
        with contextlib.redirect_stdout(io.StringIO()):  # its banner is not rc1's output
            self._run = trackio.init(
                project=os.environ.get("TRACKIO_PROJECT", "rc1"),
                name=run_id,
                resume="allow",
                embed=False,
                auto_log_cpu=False,
                auto_log_gpu=False,
            )
        # Without the inline flush (another trackio than 0.43's), the cursor moves at finish only, as W&B's does.
        self.flushes_durably = hasattr(self._run, "_flush_queues_inline") and hasattr(self._run, "_client_lock")

    def scalars(self, line: str, values: dict[str, float], step: int) -> None:
        self._run.log({f"{line}/{tag}": value for tag, value in values.items()}, step=step)

    def text(self, tag: str, text: str, seq: int) -> None:
        self._run.log({f"events/{tag}": self._trackio.Markdown(text)})

    def plots(self, paths: list[Path], step: int) -> None:
        self._run.log({f"plots/{path.stem}": self._trackio.Image(str(path)) for path in paths}, step=step)

    def alert(self, title: str, text: str, level: str, step: int, seq: int) -> None:
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):  # trackio prints each alert; rc1 already said it
            self._run.alert(title, text, level=self._trackio.AlertLevel(level.lower()), step=step)

    def flush(self) -> None:
        # Trackio writes from a thread every half second; the cursor is written after this, so what it says was
        # sent must be on disk. Its inline flush is the one that thread runs (trackio 0.43; none is public).
        if self.flushes_durably:
            with self._run._client_lock:
                self._run._flush_queues_inline()

    def close(self) -> None:
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):
            self._trackio.finish()  # the module's: it also forgets the run, so its exit hook has nothing left to do


# Each tracker's backend by its name in tracking.report_to: the names (and their order) are the registry's TRACKERS
# (rc1/registry/trackers.py: client, extra, what it is), and tests/unit/test_registry.py holds the two tables equal.
BACKENDS: dict[str, type[Tracker]] = {"tensorboard": TensorBoard, "mlflow": MLflow, "wandb": WandB, "trackio": Trackio}


def send_plots(ws: Workspace, run_ids: dict[str, str], report_to: list[str], paths: list[Path], step: int) -> list[str]:
    """Send `rc1 report`'s pictures to the run's trackers (those attached to it and still configured); the names of
    those that took them. A tracker that fails warns and is passed over, as during training."""
    started = (start_tracker(name, ws, run_ids[name]) for name in report_to if name in run_ids)
    trackers = Trackers([tracker for tracker in started if tracker is not None])
    trackers.plots(paths, step)
    trackers.close()
    return trackers.names


def start_tracker(name: str, ws: Workspace, run_id: str) -> Tracker | None:
    """The backend's tracker on run `run_id`, or None with a warning: a tracker that cannot be reached (its service
    busy, its server down) never stops a run or a report."""
    try:
        return BACKENDS[name](ws, run_id)
    except Exception as e:
        log.warning("tracker %s could not be started (%s: %s); going on without it", name, type(e).__name__, e)
        return None


def tracker_location(ws: Workspace, backend: str) -> str:
    """Where a backend's files go, relative to the workspace root (its run id in the log)."""
    return str(Path("tracking") / ws.run / backend)


class Trackers:
    """The session's trackers, subscribed to its log after the file views."""

    def __init__(self, trackers: list):
        self._trackers = trackers

    def catch_up(self, events: list[ev.Event]) -> None:
        for event in events:
            self(event)

    @property
    def names(self) -> list[str]:
        """The trackers still on."""
        return [tracker.name for tracker in self._trackers]

    def config(self, text: str, seq: int) -> None:
        for tracker in list(self._trackers):
            self._guard(tracker, lambda tracker=tracker: tracker.config(text, seq))

    def plots(self, paths: list[Path], step: int) -> None:
        for tracker in list(self._trackers):
            self._guard(tracker, lambda tracker=tracker: tracker.plots(paths, step))

    def __call__(self, event: ev.Event) -> None:
        for tracker in list(self._trackers):
            self._guard(tracker, lambda tracker=tracker: tracker.send(event))

    def _guard(self, tracker, call) -> None:
        try:
            call()
        except Exception as e:  # a tracker must never stop training: warned once, then left off
            log.warning(
                "tracker %s failed (%s: %s); it is left off for the rest of this command",
                tracker.name,
                type(e).__name__,
                e,
            )
            self._trackers.remove(tracker)

    def close(self) -> None:
        for tracker in list(self._trackers):  # a copy: a close that fails takes its tracker off the list
            self._guard(tracker, tracker.finish)


def _step_scalars(step: ev.TrainStep) -> dict[str, float]:
    scalars = {
        "train/loss": step.loss,
        "train/kl": step.kl,
        "train/reward": step.reward,
        "train/reward_std": step.reward_std,
        "train/lr": step.lr,
        "train/kl_coef": step.kl_coef,
        "train/tokens": float(step.tokens),
        "train/sec_per_step": step.sec_per_step,
    }
    scalars |= {f"reward/{name}": value for name, value in step.components.items()}
    if step.components:
        scalars["reward/penalty"] = step.penalty
    scalars |= {f"diagnostics/{name}": value for name, value in step.diagnostics.items()}
    if step.grad_norm is not None:
        scalars["train/grad_norm"] = step.grad_norm
    if step.episodes is not msgspec.UNSET:  # a live line's tool use
        scalars |= {f"episodes/{name}": value for name, value in step.episodes.items()}
    return {tag: value for tag, value in scalars.items() if math.isfinite(value)}


def _alert_title(event: ev.MonitorTripped) -> str:
    return f"{event.rule} {event.action} at step {event.step}"[:63]  # W&B: under 64 characters


def _alert_text(event: ev.MonitorTripped) -> str:
    seed = f" (seed {event.seed})" if event.seed is not None else ""
    return f"{event.detail}{seed}; measured {event.measured}; threshold {event.threshold}; window {event.window}"


def _eval_scalars(event: ev.EvalCompleted) -> dict[str, float]:
    scalars = {"eval/success": event.success, "eval/mean_reward": event.mean_reward}
    for name, value in (("hard_success", event.hard_success), ("hard_sampled_success", event.hard_sampled_success)):
        if value is not None:
            scalars[f"eval/{name}"] = value
    overall = next((b for b in event.buckets if b.task == "all" and b.difficulty == "all"), None)
    if overall is not None and overall.sampled_success is not None:
        scalars["eval/sampled_success"] = overall.sampled_success
    if event.drift is not None:
        scalars["eval/drift_kl"] = event.drift.kl
    if event.episodes is not msgspec.UNSET:
        scalars |= {f"eval/episodes/{name}": value for name, value in event.episodes.items()}
    return scalars


def _text(event: ev.Event) -> str:
    fields = {k: v for k, v in ev.recorded_fields(event).items() if k not in ("prev", "v", "run")}
    return "```\n" + msgspec.json.format(msgspec.json.encode(fields)).decode() + "\n```"
