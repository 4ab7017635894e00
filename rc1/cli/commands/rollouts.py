"""`rc1 rollouts`: the archived completions of a run, with what each was scored (TRL's log_completions, after
the fact). Under a live episode's row (data.episodes: live), its episode: the model's turns, each tool call the
environment ran (from 0, as `audit --rescore` numbers them) with its arguments, ok or its failure and its result
clipped, then the final answer as the scorer read it. Read-only: the log and the shards, verified against the sha256
their events recorded."""

from __future__ import annotations

import argparse
import sys

import msgspec

from rc1.cli.args import config_args, config_for_reading
from rc1.core.errors import BadInput
from rc1.core.workspace import Workspace
from rc1.eventlog.log import read_log
from rc1.scoring.archive import EVAL, EVAL_SAMPLED, TRAIN, Rollout
from rc1.scoring.episode_record import Episode
from rc1.views.archive import ShardChanged, archive_shards, read_shard
from rc1.views.transcript import episode_lines

TEXT_WIDTH = 72


HELP = "archived completions with each reward component (training's, or an evaluation's)"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--step", type=int, metavar="N", help="training step N's completions")
    which.add_argument("--eval", type=int, metavar="STEP", help="the evaluation at STEP (greedy and sampled replies)")
    parser.add_argument("--task", metavar="TASK", help="one task's completions (a built-in task or one of data.tasks)")
    parser.add_argument("--seed", type=int, metavar="S", help="the line of training of seed S (default: every line)")
    order = parser.add_mutually_exclusive_group()
    order.add_argument("--worst", type=int, metavar="K", help="the K lowest rewards")
    order.add_argument("--best", type=int, metavar="K", help="the K highest rewards")
    parser.add_argument(
        "--json",
        action="store_true",
        help="a list of objects (step, item_id, task, completion, components, reward, a live row's episode, …) on "
        "stdout",
    )


def run(args) -> int:
    ws = Workspace.here(config_for_reading(args).config.run.name)
    if not ws.log_path.exists():
        raise BadInput(f"{ws.log_path}: no event log for run {ws.run!r}")
    shards = [
        s
        for s in archive_shards(read_log(ws.log_path).events)
        if (args.seed is None or s.seed == args.seed)
        and (s.kind == "eval" if args.eval is not None else s.kind == "train")
        and (args.eval is None or s.step == args.eval)
    ]
    try:
        rows = [(shard.seed, row) for shard in shards for row in read_shard(ws.root, shard)]
    except ShardChanged as e:
        raise BadInput(str(e)) from None
    kinds = (EVAL, EVAL_SAMPLED) if args.eval is not None else (TRAIN,)
    rows = [
        (seed, r)
        for seed, r in rows
        if r.kind in kinds and (args.step is None or r.step == args.step) and (args.task is None or r.task == args.task)
    ]
    if args.worst or args.best:
        rows.sort(key=lambda pair: pair[1].reward, reverse=bool(args.best))
        rows = rows[: args.worst or args.best]
    if args.json:
        print(msgspec.json.encode([{"seed": seed, **msgspec.to_builtins(r)} for seed, r in rows]).decode())
        return 0
    if not rows:
        print(f"no archived completions match in run {ws.run} ({len(shards)} shard(s) looked at)", file=sys.stderr)
        return 0
    print(_table([r for _, r in rows]))
    return 0


def _table(rows: list[Rollout]) -> str:
    names = sorted({name for r in rows for name in r.components})
    # each component's column as wide as its name (a number takes 6), so no name is cut
    widths = {n: max(7, len(n) + 1) for n in names}
    head = f"{'kind':<13}{'step':>5}  {'task':<11}{'item':<26}{'reward':>7}  " + "".join(
        f"{n:>{widths[n]}}" for n in names
    )
    lines = [head + f"  {'pen':>5}  {'tok':>4}  completion"]
    for r in rows:
        text = "(text not kept)" if r.completion is None else r.completion.replace("\n", "⏎")
        text = text if len(text) <= TEXT_WIDTH else text[: TEXT_WIDTH - 1] + "…"
        components = "".join(
            f"{r.components[n]:>{widths[n]}.3f}" if n in r.components else f"{'-':>{widths[n]}}" for n in names
        )
        lines.append(
            f"{r.kind:<13}{r.step:>5}  {r.task:<11}{r.item_id[:25]:<26}{r.reward:>7.3f}  {components}"
            f"  {r.penalty:>5.2f}  {r.tokens:>4}  {text}"
        )
        if isinstance(r.episode, Episode):
            lines += episode_lines(r, r.episode)
    return "\n".join(lines)
