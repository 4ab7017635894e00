"""Monitors: gates while the run trains (docs/monitors-and-runbook.md).

A monitor is a fold over the events the run already writes: `rules.py` holds each rule's thresholds (the config's
`monitors:` section), `signals.py` what a rule reads off a `train_step` or an `eval_completed`, `readings.py` each
rule's pure verdict on the folded state, `fold.py` the fold itself (kept in the replayed projection), `spend.py` what
the run has spent, and `runbook.py` what a trip usually means and what to try. Nothing here does I/O or reads a
clock: replay and audit derive every trip again from the log.
"""
