"""`rc1 score`: why one completion gets its reward — its components, the penalty, the difficulty factor.

It scores through the run's own scorer (the judge too, when one is configured: a real call, in the
ledger under scope `cli`) and appends nothing to the event log.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import msgspec

from rc1.app.scoring import open_scoring, policy_thinking
from rc1.cli.args import config_args, config_for_reading
from rc1.core.catalog import BUILTIN_READER, DIFFICULTIES, TASKS, is_builtin
from rc1.core.errors import BadInput
from rc1.core.fsutil import read_input_text
from rc1.core.workspace import Workspace
from rc1.data.task import TaskItem
from rc1.scoring.functions import BatchContext, StepState, token_ids_of
from rc1.scoring.reward import configured_parts

HELP = "one completion's components, penalty, difficulty factor and reward"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument("--task", metavar="TASK", help="the item's task: a built-in one or one of data.tasks")
    parser.add_argument("--gold", help="the gold answer")
    parser.add_argument("--difficulty", choices=DIFFICULTIES, default="medium")
    parser.add_argument("--needs-clarification", action="store_true", help="the item is under-specified")
    parser.add_argument("--item-json", metavar="F", help="a whole task item (JSON) instead of --task/--gold/...")
    parser.add_argument("--completion-file", metavar="F", required=True, help="the completion, as the policy wrote it")
    parser.add_argument(
        "--completion-tokens",
        type=int,
        metavar="N",
        help="its length in tokens (default: counted with the policy's tokenizer)",
    )
    parser.add_argument("--json", action="store_true")


def run(args) -> int:
    loaded = config_for_reading(args)
    item = _item(args, loaded.config.data.tasks)
    completion = read_input_text(args.completion_file, "completion file")
    ws = Workspace.here(loaded.config.run.name)
    thinking = policy_thinking(loaded)
    counted = args.completion_tokens is not None
    # The tokenizer counts the tokens, and gives a reward function of yours its completion_ids.
    tokenizer = None if counted and not loaded.config.reward.functions else _policy_tokenizer(loaded, ws, not counted)
    encode = token_ids_of(tokenizer) if tokenizer is not None else None
    tokens = args.completion_tokens if args.completion_tokens is not None else len(encode(completion))
    if tokens < 0:
        raise BadInput(f"--completion-tokens {tokens}: a length cannot be negative")
    scoring = open_scoring(loaded, ws, thinking)
    if encode is None and scoring.pipeline.functions is not None and scoring.pipeline.functions.read_ids:
        raise BadInput(
            "--completion-tokens: a reward function reads completion_ids, which need the policy's tokenizer: for the "
            "built-in model, `rc1 advance` builds it"
        )
    # Scored as at step 0 (no training step is involved): trainer_state is the start of training.
    start = StepState(global_step=0, max_steps=loaded.config.train.max_steps)
    scored = scoring.pipeline.score([item], [completion], [tokens], BatchContext(encode=encode, trainer_state=start))[0]
    reward = loaded.config.reward
    parts = configured_parts(reward, scored.components, scoring.weights, item, scored.clarifications)
    weighted, penalty, factor, total = parts.weighted, parts.penalty, parts.difficulty_factor, parts.total
    if args.json:
        print(
            json.dumps(
                {
                    "components": scored.components,
                    "weighted": weighted,
                    "clarifications": scored.clarifications,
                    "penalty": penalty,
                    "difficulty_factor": factor,
                    "reward": total,
                    "completion_tokens": tokens,
                    "thinking": thinking,
                },
                indent=2,
            )
        )
        return 0
    print("components  " + "  ".join(f"{k} {v:.3f} (w {scoring.weights[k]:g})" for k, v in scored.components.items()))
    print(f"weighted    {weighted:.4f}")
    print(
        f"penalty     {penalty:.4f}  ({scored.clarifications} question(s) asked back; alpha {reward.overclar_alpha:g}, "
        f"cap {reward.overclar_cap}{', not charged: the item needs clarification' if item.needs_clarification else ''})"
    )
    print(f"factor      {factor:.4f}  ({item.difficulty}, beta {reward.difficulty_beta:g})")
    print(f"reward      {total:.4f}  ({tokens} completion tokens, thinking {'on' if thinking else 'off'})")
    return 0


def _item(args, tasks) -> TaskItem:
    if args.item_json:
        path = Path(args.item_json)
        try:
            return msgspec.json.decode(read_input_text(path, "task item"), type=TaskItem)
        except msgspec.DecodeError as e:
            raise BadInput(f"{path}: not a task item: {e}") from None
    if not args.task or args.gold is None:
        raise BadInput("score: give --task and --gold (or a whole item with --item-json F)")
    if args.task not in (*TASKS, *tasks):
        raise BadInput(f"score: --task {args.task}: unknown; the tasks are {', '.join((*TASKS, *tasks))}")
    return TaskItem(
        id="cli",
        task=args.task,
        question="",
        answer=args.gold,
        difficulty=args.difficulty,
        prompt="",
        needs_clarification=args.needs_clarification,
    )


def _policy_tokenizer(loaded, ws: Workspace, required: bool):
    """The policy's tokenizer (the length component is measured in its tokens, and a reward function's
    completion_ids are its ids); where it cannot be loaded, None unless `required`, then BadInput saying why."""
    from transformers import AutoTokenizer

    name = loaded.config.model.name
    if name == BUILTIN_READER:
        from rc1.reader.shipped import reader_dir

        source = reader_dir()  # shipped: the tokenizer is the one every run of it uses
    elif is_builtin(name):
        from rc1.app.policy import builtin_model_dir

        data = loaded.config.data
        live = data.episodes == "live"
        source = (
            builtin_model_dir(ws, loaded.config.run.seed, live=live, pages_by=data.pages)
            if ws.balanced_pool_path.exists()
            else None
        )
        if source is None or not (source / "tokenizer.json").exists():
            if not required:
                return None
            raise BadInput(
                "--completion-tokens: the built-in model's tokenizer is built with the run's model "
                "(`rc1 advance`); until then give the length with --completion-tokens N"
            )
    else:
        source = name
    try:
        return AutoTokenizer.from_pretrained(str(source))
    except OSError as e:
        if not required:
            return None
        raise BadInput(
            f"--completion-tokens: cannot load the tokenizer of {name!r} ({e}); give --completion-tokens N"
        ) from None
