"""Monitors: gates while the run trains (docs/monitors-and-runbook.md).

A monitor is a fold over the events the run already writes. `rules/` holds one module per rule, each declaring its
`MonitorSpec` (`spec.py`: its thresholds as a config section, when it is checked, the signals it reads and how many
recent steps it needs, its pure `read` of the folded state, and its runbook), collected in the table `MONITORS` by
explicit imports. `sections.py` builds the config's `monitors:` section and its record in `training_started` from
that table; `plan.py` what the watched rules ask the fold to keep; `fold.py` the fold itself (`observe`, and `due`:
the trips the rules give at a check) into `state.py`'s `MonitorState`, part of the replayed projection; `spend.py`
what the run has spent; `stats.py` the intervals the rules decide on. Nothing here does I/O or reads a clock: replay
and audit derive every trip again from the log.
"""
