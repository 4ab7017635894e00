"""`rc1 export`: a checkpoint written out as a model with its model card (rc1/app/export.py), recorded as
model_exported; then, with --push-to-hub, uploaded once the log's lock is given back (rc1/app/hub.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rc1.app.export import export_model
from rc1.app.hub import check_repo_id, push
from rc1.app.session import Session
from rc1.cli.args import config_args, config_of
from rc1.core.errors import BadInput
from rc1.core.workspace import Workspace

HELP = (
    "write a checkpoint out as a model (PEFT adapter, merged or full HF model) with "
    "a model card from the log; appends model_exported"
)


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument(
        "--checkpoint",
        default="best",
        metavar="best|latest|step_N",
        help="best (default: the line's last best/ promotion), latest, or step_N",
    )
    parser.add_argument(
        "--seed", type=int, metavar="S", help="the line of training (required when run.seeds has several)"
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="merge the LoRA adapter into the base: a whole HF model directory (QLoRA: base loaded in bf16)",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="the export directory: new, or empty")
    parser.add_argument(
        "--push-to-hub",
        metavar="REPO",
        help="then upload DIR to this hub model repo (huggingface_hub, HF_TOKEN or the stored login)",
    )


def run(args) -> int:
    loaded = config_of(args)
    if args.push_to_hub:
        check_repo_id(args.push_to_hub)
    if args.merge and loaded.config.finetune.method == "full":
        print("note: --merge: a full fine-tune has no adapter to merge; its model is exported whole", file=sys.stderr)
    ws = Workspace.here(loaded.config.run.name)
    if not ws.log_path.exists():
        raise BadInput(f"{ws.log_path}: no event log for run {ws.run!r}; there is nothing to export")
    with Session.open(loaded, accept_changed_inputs=args.accept_changed_inputs) as session:
        event = export_model(session, args.checkpoint, args.seed, args.merge, Path(args.out))
    seed = f" of seed {event.seed}" if len(loaded.config.run.seeds) > 1 else ""
    weights = sum(f.bytes for f in event.files.values())
    print(
        f"exported step {event.step}{seed} ({event.checkpoint}) as {event.form} to {event.out}: {len(event.files)} "
        f"files, {weights / 1e6:.1f} MB, model card {event.out}/README.md; model_exported at seq {event.seq}"
    )
    if args.push_to_hub:
        url = push(
            Path(args.out),
            args.push_to_hub,
            f"rc1 export of run {ws.run}, step {event.step}{seed} ({event.form})",
            event.seq,
        )
        print(f"pushed to {args.push_to_hub}: {url}")
    return 0
