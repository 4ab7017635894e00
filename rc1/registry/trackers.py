"""The experiment trackers `tracking.report_to` may name: one spec each, in one table. Config accepts exactly these
names and refuses one whose client is not installed (rc1/config/rules.py), `tracking.report_to`'s help lists their
`settings`, and `rc1 ls trackers` shows each row. What a tracker sends is its backend class, in the table
`BACKENDS` of rc1/views/trackers.py (a view of the log, above this layer: a test holds the two tables' names equal).

A new tracker: one spec here, its backend class and `BACKENDS` entry in rc1/views/trackers.py, and its extra in
pyproject.toml's [project.optional-dependencies] (a test fails without it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class TrackerSpec:
    name: str  # in tracking.report_to
    module: str  # the client's top-level module: looked up, never imported, to say whether it is installed
    extra: str  # pyproject.toml's extra that installs the client: pip install -e '.[<extra>]'
    about: str  # one line: what it is (`rc1 ls trackers`, docs/tables.md)
    settings: str  # where it sends a run and which settings say so (tracking.report_to's help, docs/config.md)
    alerts: str  # what a monitor's trip (monitor_tripped) becomes there


TRACKERS: dict[str, TrackerSpec] = {
    spec.name: spec
    for spec in (
        TrackerSpec(
            name="tensorboard",
            module="tensorboard",
            extra="tensorboard",
            about="TensorBoard event files under `tracking/<run>/tensorboard/`",
            settings="event files under tracking/<run>/tensorboard/, `tensorboard --logdir tracking`",
            alerts="a text under alerts/ (TensorBoard has no alerts)",
        ),
        TrackerSpec(
            name="mlflow",
            module="mlflow",
            extra="mlflow",
            about="An MLflow run (the `mlflow` extra), on the tracking server MLflow's own settings name "
            "(MLFLOW_TRACKING_URI)",
            settings="the `mlflow` extra; the server MLFLOW_TRACKING_URI names, experiment rc1",
            alerts="the tag rc1.alert (the latest trip, searchable) and a text artifact (MLflow has no alerts)",
        ),
        TrackerSpec(
            name="wandb",
            module="wandb",
            extra="wandb",
            about="A Weights & Biases run (the `wandb` extra) in the project WANDB_PROJECT names (else rc1), online or "
            "offline as W&B's own settings say (WANDB_MODE, WANDB_API_KEY; files under WANDB_DIR, else "
            "tracking/<run>/wandb/)",
            settings="the `wandb` extra; project WANDB_PROJECT or rc1, WANDB_MODE offline keeps it on this machine",
            alerts="a W&B alert (run.alert), WARN or ERROR",
        ),
        TrackerSpec(
            name="trackio",
            module="trackio",
            extra="trackio",
            about="A Trackio run (the `trackio` extra) named after the rc1 run, in the project TRACKIO_PROJECT names "
            "(else rc1), wherever Trackio's own settings put it (TRACKIO_DIR locally, TRACKIO_SPACE_ID or "
            "TRACKIO_SERVER_URL)",
            settings="the `trackio` extra; project TRACKIO_PROJECT or rc1, stored where TRACKIO_DIR says",
            alerts="a Trackio alert at the trip's step, warn or error",
        ),
    )
}
