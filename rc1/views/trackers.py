"""Trackers (`tracking.report_to`), fed from the run's own events, never from the trainer's callbacks.

A tracker is a view of the log like the files in reports/: every event a writing session appends is handed to it,
and it sends what it shows (steps, evaluations, gates, verdicts, the config). A resumed run sends each step once:
the tracker's identity is recorded in the log (`tracker_attached`) and reused, and its cursor (the last event and
the last step of each line of training it has sent, kept beside its files) lets a new session first send what the
last one appended but did not get to send, and skip the steps a resumed line trains again. A tracker that fails
warns (logs/train.log) and is left off for the rest of the command; it never stops the run.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import msgspec

from rc1.events import schema as ev
from rc1.fsutil import atomic_write_bytes
from rc1.workspace import Workspace

log = logging.getLogger("rc1.tracking")


class Cursor(msgspec.Struct, kw_only=True):
    seq: int = -1  # the last event sent
    steps: dict[str, int] = msgspec.field(default_factory=dict)  # line -> the last train step sent
    evals: dict[str, int] = msgspec.field(default_factory=dict)  # line -> the last evaluation sent


class TensorBoard:
    """TensorBoard event files under `tracking/<run>/tensorboard/`: one folder per line of training (seed_<s>) for
    its steps and evaluations, the run's own folder for the config, the gates and the verdicts."""

    name = "tensorboard"

    def __init__(self, ws: Workspace, run_id: str):
        self.root = ws.root / run_id
        self._writers: dict[str, object] = {}
        self._cursor_path = self.root / "cursor.json"
        try:
            self.cursor = msgspec.json.decode(self._cursor_path.read_bytes(), type=Cursor)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            self.cursor = Cursor()
        self._line = "run"

    def _writer(self, line: str):
        if line not in self._writers:
            from torch.utils.tensorboard import SummaryWriter

            self._writers[line] = SummaryWriter(log_dir=str(self.root if line == "run" else self.root / line))
        return self._writers[line]

    def send(self, event: ev.Event) -> None:
        if event.seq <= self.cursor.seq:
            return
        if isinstance(event, ev.TrainingStarted):
            self._line = f"seed_{event.seed}" if event.seed is not None else "line"
        elif isinstance(event, ev.TrainStep) and event.step > self.cursor.steps.get(self._line, 0):
            writer = self._writer(self._line)
            for tag, value in _step_scalars(event).items():
                writer.add_scalar(tag, value, event.step)
            self.cursor.steps[self._line] = event.step
        elif isinstance(event, ev.EvalCompleted) and event.step > self.cursor.evals.get(self._line, -1):
            writer = self._writer(self._line)
            for tag, value in _eval_scalars(event).items():
                writer.add_scalar(tag, value, event.step)
            self.cursor.evals[self._line] = event.step
        elif isinstance(event, (ev.RoundPassed, ev.GateFailed, ev.GateInvalidated, ev.ReleaseEvaluated,
                                ev.ReleaseAcrossSeeds, ev.TrainingFailed)):
            self._writer("run").add_text(ev.event_type(event), _text(event), event.seq)
        self.cursor.seq = event.seq
        self._flush()

    def config(self, text: str, seq: int) -> None:
        self._writer("run").add_text("config", f"```\n{text}\n```", seq)
        self._flush()

    def plots(self, paths: list[Path], step: int) -> None:
        """The run's pictures (`rc1 report`), each as an image under plots/<name> at the run's last step."""
        import matplotlib.image

        writer = self._writer("run")
        for path in paths:
            writer.add_image(f"plots/{path.stem}", matplotlib.image.imread(path)[..., :3], step, dataformats="HWC")
        writer.flush()

    def _flush(self) -> None:
        for writer in self._writers.values():
            writer.flush()
        # After the flush: a kill between the two sends an event again at most, never loses one.
        atomic_write_bytes(self._cursor_path, msgspec.json.encode(self.cursor))

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()


BACKENDS = {"tensorboard": TensorBoard}


def send_plots(ws: Workspace, run_ids: dict[str, str], report_to: list[str], paths: list[Path], step: int) -> list[str]:
    """Send `rc1 report`'s pictures to the run's trackers (those attached to it and still configured); the names of
    those that took them. A tracker that fails warns and is passed over, as during training."""
    sent = []
    for name in report_to:
        if name not in run_ids:
            continue
        tracker = BACKENDS[name](ws, run_ids[name])
        try:
            tracker.plots(paths, step)
            sent.append(name)
        except Exception as e:  # a tracker never fails the command that feeds it
            log.warning("tracker %s failed (%s: %s); the plots were not sent", name, type(e).__name__, e)
        finally:
            tracker.close()
    return sent


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

    def config(self, text: str, seq: int) -> None:
        for tracker in list(self._trackers):
            self._guard(tracker, lambda: tracker.config(text, seq))

    def __call__(self, event: ev.Event) -> None:
        for tracker in list(self._trackers):
            self._guard(tracker, lambda: tracker.send(event))

    def _guard(self, tracker, call) -> None:
        try:
            call()
        except Exception as e:  # a tracker must never stop training: warned once, then left off
            log.warning("tracker %s failed (%s: %s); it is left off for the rest of this command",
                        tracker.name, type(e).__name__, e)
            self._trackers.remove(tracker)

    def close(self) -> None:
        for tracker in self._trackers:
            self._guard(tracker, tracker.close)


def _step_scalars(step: ev.TrainStep) -> dict[str, float]:
    scalars = {"train/loss": step.loss, "train/kl": step.kl, "train/reward": step.reward,
               "train/reward_std": step.reward_std, "train/lr": step.lr, "train/kl_coef": step.kl_coef,
               "train/tokens": float(step.tokens), "train/sec_per_step": step.sec_per_step}
    scalars |= {f"reward/{name}": value for name, value in step.components.items()}
    if step.components:
        scalars["reward/penalty"] = step.penalty
    scalars |= {f"diagnostics/{name}": value for name, value in step.diagnostics.items()}
    return {tag: value for tag, value in scalars.items() if math.isfinite(value)}


def _eval_scalars(event: ev.EvalCompleted) -> dict[str, float]:
    scalars = {"eval/success": event.success, "eval/mean_reward": event.mean_reward}
    for name, value in (("hard_success", event.hard_success), ("hard_sampled_success", event.hard_sampled_success)):
        if value is not None:
            scalars[f"eval/{name}"] = value
    overall = next((b for b in event.buckets if b.task == "all" and b.difficulty == "all"), None)
    if overall is not None and overall.sampled_success is not None:
        scalars["eval/sampled_success"] = overall.sampled_success
    return scalars


def _text(event: ev.Event) -> str:
    fields = {k: v for k, v in msgspec.structs.asdict(event).items() if k not in ("prev", "v", "run")}
    return "```\n" + msgspec.json.format(msgspec.json.encode(fields)).decode() + "\n```"
