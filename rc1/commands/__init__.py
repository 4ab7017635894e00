"""One small function per subcommand; `HANDLERS` is the only place names map to code."""

from rc1.commands import advance, audit, inspect, maintenance, score, stages

HANDLERS = {
    "advance": advance.run,
    "status": inspect.status,
    "replay": inspect.replay_until,
    "audit": audit.run,
    "handoff": inspect.handoff,
    "repair": maintenance.repair,
    "report": maintenance.report,
    "failpack": maintenance.failpack,
    "preflight": stages.preflight,
    "pool": stages.pool,
    "shadow": stages.shadow,
    "difficulty": stages.difficulty,
    "scorer": stages.scorer,
    "score": score.run,
    "train": stages.train,
}
