"""Seed pool: the pool on disk is the one the config asked for — its size, and episodes dressed within
`data.max_turns`, `data.max_tool_hops`, `data.tools` and the `data.clarify_rate` share, every framing
from the template pack. The report names the pool's and the pack's sha256."""

from __future__ import annotations

from pathlib import Path

from rc1.checks.result import CheckResult
from rc1.checks.spec import Check
from rc1.config.schema import DataConfig
from rc1.core.fsutil import sha256_file
from rc1.core.runbook import Runbook
from rc1.data.episodes import dressed_live, task_templates
from rc1.data.task import TaskItem
from rc1.data.templates import TemplatePack


def seed_pool_check(pool: list[TaskItem], data: DataConfig, pack: TemplatePack, pool_sha256: str) -> CheckResult:
    n = len(pool)
    user_turns = [item.user_turns() for item in pool]
    tools_used = {turn.tool for item in pool for turn in item.turns if turn.role == "tool"}
    unknown = [item.id for item in pool if not _framed_by(item, pack, live=data.episodes == "live")]
    clarify_share = sum(item.needs_clarification for item in pool) / n if n else 0.0
    measured = {
        "items": float(n),
        "max_user_turns": float(max(user_turns, default=0)),
        "max_tool_hops": float(max((item.tool_hops for item in pool), default=0)),
        "clarify_share": clarify_share,
        "tools_outside_config": float(len(tools_used - set(data.tools))),
        "items_not_framed_by_pack": float(len(unknown)),
    }
    problems = []
    if n != data.pool_size:
        problems.append(f"{n} items, data.pool_size is {data.pool_size}")
    if measured["max_user_turns"] > data.max_turns:
        problems.append(f"an episode has {measured['max_user_turns']:.0f} user turns > data.max_turns {data.max_turns}")
    if measured["max_tool_hops"] > data.max_tool_hops:
        problems.append(
            f"an episode has {measured['max_tool_hops']:.0f} tool hops > data.max_tool_hops {data.max_tool_hops}"
        )
    # The dressing picks round(rate·n) items: the share is exact up to that rounding.
    if n and abs(clarify_share - data.clarify_rate) > 0.5 / n + 1e-12:
        problems.append(f"clarification share {clarify_share:.4f} vs data.clarify_rate {data.clarify_rate}")
    if tools_used - set(data.tools):
        problems.append(f"tools {sorted(tools_used - set(data.tools))} used but not in data.tools")
    if unknown:
        problems.append(f"{len(unknown)} items carry no framing of the pack (e.g. {unknown[0]})")
    summary = (
        f"{n} items, pool sha256 {pool_sha256[:12]}, template pack {Path(pack.path).name} sha256 {pack.sha256[:12]}"
    )
    return CheckResult(
        name="seed_pool",
        passed=n > 0 and not problems,
        measured=measured,
        thresholds={
            "items": float(data.pool_size),
            "max_turns": float(data.max_turns),
            "max_tool_hops": float(data.max_tool_hops),
            "clarify_rate": data.clarify_rate,
        },
        detail=summary + ("; " + "; ".join(problems) if problems else ""),
    )


def _framed_by(item: TaskItem, pack: TemplatePack, *, live: bool = False) -> bool:
    """The item's role, style and user-turn template are the pack's; a live episode (data.episodes: live) has no
    user-turn template, its framing the pack's role and style in the system turn (`<task>/live`)."""
    task, _, name = item.template.partition("/")
    return (
        bool(item.turns)
        and item.role in pack.roles
        and item.style in pack.styles
        and task == item.task
        and (name in task_templates(pack, item) or (live and dressed_live(item)))
    )


CHECK = Check(
    name="seed_pool",
    rounds=(1, 2),
    commands=("pool validate",),
    run=lambda r: seed_pool_check(r.pool, r.config.data, r.templates, sha256_file(r.ws.pool_path)),
    runbook=Runbook(
        means="the pool on disk is not what this config and template pack build: it was built with other data.* "
        "values or another pack (data.templates), or edited since",
        tries=(
            "rebuild it from this config in INIT: rc1 pool build (or rc1 advance, which rebuilds every input)",
            "each problem names the key the pool disagrees with (data.pool_size, data.max_turns, "
            "data.max_tool_hops, data.clarify_rate, data.tools): set it back to the pool's value, or rebuild",
            "framings not from the pack: data.templates or the pack's files changed after the pool was built; "
            "point data.templates back at that pack, or rebuild the pool",
        ),
    ),
)
