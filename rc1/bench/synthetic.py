"""A training-shaped event log, written fast: what `make bench` times reading and the event log's tests read back."""

from __future__ import annotations

from rc1.config.schema import MonitorsConfig
from rc1.eventlog.log import EventLog
from rc1.run import events as ev
from rc1.run.monitors.sections import watched


def append_training(
    log: EventLog, steps: int, *, checkpoint_every: int, checkpoints: str = "checkpoints/bench"
) -> None:
    """Both gates, a line of training of `steps` train_steps with a checkpoint every `checkpoint_every` steps; no
    run_completed (the caller ends the line, or leaves it open)."""
    fp = ev.Fingerprints(pool="p" * 64, shadow="s" * 64, config="c" * 64, weights="w" * 64)
    log.append(ev.Round1Passed(fingerprints=fp, checks=[]))
    log.append(ev.Round2Passed(fingerprints=fp, checks=[]))
    log.append(
        ev.TrainingStarted(
            resume_from_step=0,
            resume_from_dir=None,
            max_steps=steps,
            engine="trl",
            strategy="grpo",
            model="bench",
            device="cpu",
            dtype="float32",
            # watched as every run's line is (the config's default rules): the fold reads them at every step
            monitors=watched(MonitorsConfig()),
        )
    )
    for step in range(1, steps + 1):
        log.append(
            ev.TrainStep(
                step=step,
                loss=0.1,
                kl=0.01,
                ratio=0.0,
                lr=1e-5,
                reward=0.5,
                mem_used_mb=100.0,
                sec_per_step=0.1,
                tokens=24,
            )
        )
        if step % checkpoint_every == 0:
            log.append(ev.CheckpointSaved(step=step, dir=f"{checkpoints}/step_{step:05d}", files={"a": "0" * 64}))
