"""`rc1 export`: a checkpoint of a line of training written out as a model, with its model card, recorded as
`model_exported`.

Which checkpoint is read from the log: the line of training (`--seed`, required when `run.seeds` has several) is
the log replayed up to that line's `run_completed` (or the whole log for the line in training), and in it `best`
(the last best/ promotion), `latest` or `step_N` names a checkpoint `checkpoint_saved` vouches for; its files must
still have the sha256 recorded there. The run's rules are asked before any work (an export is true only while the
gates its training passed are in force) and again at the write. The export is built in a sibling temp directory,
fsynced and renamed into place: `--out` holds a whole export or nothing of it; then the event is appended (a
crash between the two leaves an export without its event, which no audit vouches for: export it again).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import msgspec

from rc1.app.gate import ensure_inputs_unchanged
from rc1.app.session import Session
from rc1.core import provenance
from rc1.core.catalog import is_builtin
from rc1.core.errors import BadInput, GateClosed
from rc1.core.fsutil import fsync_dir, fsync_tree, sha256_file
from rc1.data.task import read_items
from rc1.eventlog.log import read_log
from rc1.run import events as ev
from rc1.run.projection import CheckpointRef, Projection
from rc1.run.replay import replay
from rc1.views.model_card import CardFacts, GatePassed, render

BASE_DIR = "base"  # where a base on no hub is exported, beside the adapter
BASE_REFERENCE = f"./{BASE_DIR}"
CARD = "README.md"


class Line(msgspec.Struct, frozen=True, kw_only=True):
    """One line of training as the log tells it: its seed, the projection at its end, and the events up to then."""

    seed: int | None
    projection: Projection
    events: list[ev.Event]


def line_of(events: list[ev.Event], seeds: list[int], seed: int | None, current: Projection) -> Line:
    """The line of training `seed` names (the only one when the run trains one seed). `current`: the projection of
    the whole log, which is the line in training (or the last one finished)."""
    if len(seeds) <= 1:
        if seed is not None and seeds and seed != seeds[0]:
            raise BadInput(f"--seed {seed}: this run trains seed {seeds[0]} only")
        return Line(seed=current.seed, projection=current, events=events)
    if seed is None:
        raise BadInput(
            f"--seed: this run trains {len(seeds)} seeds ({', '.join(map(str, seeds))}); name the line of "
            "training to export"
        )
    if seed not in seeds:
        raise BadInput(f"--seed {seed}: not a seed of this run ({', '.join(map(str, seeds))})")
    ends = [
        i
        for i in range(_gated_from(events), len(events))
        if isinstance(events[i], ev.RunCompleted) and events[i].seed == seed
    ]
    if ends:
        prefix = events[: ends[-1] + 1]
        return Line(seed=seed, projection=replay(prefix).projection, events=prefix)
    if current.seed == seed:
        return Line(seed=seed, projection=current, events=events)
    raise BadInput(
        f"--seed {seed}: its line of training has not started yet (lines so far: "
        f"{', '.join(str(f.seed) for f in current.finished) or 'none finished'}; in training: {current.seed})"
    )


def pick_checkpoint(p: Projection, asked: str) -> CheckpointRef:
    """The checkpoint `asked` (best | latest | step_N) names in a line of training, or BadInput saying what exists."""
    steps = ", ".join(str(c.step) for c in p.checkpoints) or "none"
    if asked == "best":
        chosen = [c for c in p.checkpoints if c.step == p.best_step] if p.best_step is not None else []
        if not chosen:
            final = (
                f"; the release verdict measured step {p.release.step} ({p.release.selected_by})"
                if p.release is not None
                else ""
            )
            raise BadInput(
                f"--checkpoint best: no checkpoint of this line of training was promoted to best/ (its "
                f"checkpoints: steps {steps}{final}); export one with --checkpoint latest or step_N"
            )
        return chosen[-1]
    if asked == "latest":
        if p.latest_checkpoint is None:
            raise BadInput("--checkpoint latest: this line of training has no checkpoint yet")
        return p.latest_checkpoint
    match = re.fullmatch(r"step_(\d+)", asked)
    if match is None:
        raise BadInput(f"--checkpoint {asked!r}: use best, latest or step_N (this line's checkpoints: steps {steps})")
    chosen = [c for c in p.checkpoints if c.step == int(match.group(1))]
    if not chosen:
        raise BadInput(
            f"--checkpoint {asked}: no checkpoint_saved of this line of training for step "
            f"{int(match.group(1))} (its checkpoints: steps {steps})"
        )
    return chosen[-1]


def prepare_out(out: Path) -> Path:
    """`out` must be new or an empty directory; returns the temp sibling the export is built in."""
    if out.is_symlink():
        raise BadInput(f"--out {out}: is a symbolic link; name the directory itself")
    if out.exists():
        if not out.is_dir():
            raise BadInput(f"--out {out}: exists and is not a directory")
        if any(out.iterdir()):
            raise BadInput(
                f"--out {out}: exists and is not empty; export into a new or an empty directory (an "
                f"export whose model_exported was never appended, after a crash, is one: delete it)"
            )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.export-tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    return tmp


def export_model(session: Session, asked: str, seed: int | None, merge: bool, out: Path) -> ev.ModelExported:
    """Write the checkpoint out as a model in `out` and append model_exported; return the event."""
    from rc1.train import checkpoints

    config = session.config
    out = out.absolute()
    form = "full" if config.finetune.method == "full" else "merged" if merge else "adapter"
    recorded_out = _recorded(out, session.ws.root)
    # The rules first: nothing is built for an export the run could not record.
    _draft(session, recorded_out, form, asked)
    gate = session.projection.gates["round2"]
    if gate.fingerprints is not None:  # the built-in base is built from the balanced pool: the one training used
        ensure_inputs_unchanged(session, gate.fingerprints, "round 2")
    events = read_log(session.ws.log_path).events
    line = line_of(events, list(config.run.seeds), seed, session.projection)
    ref = pick_checkpoint(line.projection, asked)
    directory = session.ws.root / ref.dir
    problems = checkpoints.verify(directory, ref.files)
    if problems:
        raise BadInput(
            f"{directory}: does not match the files its checkpoint_saved (seq {ref.seq}) recorded: "
            f"{'; '.join(problems)}; see `rc1 audit`"
        )
    tmp = prepare_out(out)
    try:
        built = _build(session, line, ref, directory, form, tmp)
        head_seq, head_hash = session.log.head
        files = _files(tmp)
        (tmp / CARD).write_text(
            render(_facts(session, line, ref, asked, form, built, files, head_seq, head_hash)), encoding="utf-8"
        )
        files = dict(sorted({**files, CARD: _file(tmp / CARD)}.items()))
        fsync_tree(tmp)
        os.rename(tmp, out)  # onto a new name, or an empty directory it replaces
        fsync_dir(out.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return session.append(
        session.run.export_model(
            out=recorded_out,
            form=form,
            asked=asked,
            step=ref.step,
            checkpoint=ref.dir,
            checkpoint_seq=ref.seq,
            seed=line.seed,
            base_model=built.base_reference or config.model.name,
            dtype=built.dtype,
            files=files,
            card_sha256=files[CARD].sha256,
            log_seq=head_seq,
            log_hash=head_hash,
        )
    )


class _Built(msgspec.Struct, frozen=True, kw_only=True):
    dtype: str
    parameters: int | None
    base_reference: str | None  # an adapter's base_model_name_or_path
    base_on_hub: bool


def _build(session: Session, line: Line, ref: CheckpointRef, directory: Path, form: str, tmp: Path) -> _Built:
    """The weights and tokenizer of the export, in `tmp`."""
    import torch

    from rc1.app.policy import base_model_source
    from rc1.train import export

    config = session.config
    started = _training_started(line)
    dtype_name = (
        started.dtype if started is not None and started.dtype in ("float32", "bfloat16", "float16") else "float32"
    )
    dtype = getattr(torch, dtype_name)
    on_hub = not is_builtin(config.model.name) and not Path(config.model.name).exists()
    source = (
        config.model.name
        if on_hub
        else base_model_source(session, read_items(session.ws.balanced_pool_path), config.run.seed)
    )
    # A live run on a base of no hub exports the tool-calling template it was trained with (`as_live_trained`).
    trained_live = config.data.episodes == "live" and not on_hub
    if form == "adapter":
        reference = config.model.name if on_hub else BASE_REFERENCE
        export.write_adapter(directory, tmp, reference)
        if on_hub:  # the base stays on the hub; its tokenizer goes with the adapter
            from transformers import AutoTokenizer

            AutoTokenizer.from_pretrained(source).save_pretrained(tmp)
            return _Built(dtype=dtype_name, parameters=None, base_reference=reference, base_on_hub=True)
        base, tokenizer = export.load_base(source, dtype)
        _refuse_a_moved_base(line, base, directory, config.finetune.method)
        if trained_live:
            tokenizer = export.as_live_trained(base, tokenizer)
        export.save_whole(base, tokenizer, tmp / BASE_DIR)
        tokenizer.save_pretrained(tmp)
        return _Built(dtype=dtype_name, parameters=export.parameters(base), base_reference=reference, base_on_hub=False)
    base, tokenizer = export.load_base(source, dtype)
    _refuse_a_moved_base(line, base, directory, config.finetune.method)
    model = export.merged(base, directory) if form == "merged" else export.fine_tuned(base, directory)
    if trained_live:
        tokenizer = export.as_live_trained(model, tokenizer)
    export.save_whole(model, tokenizer, tmp)
    return _Built(dtype=dtype_name, parameters=export.parameters(model), base_reference=None, base_on_hub=on_hub)


def _refuse_a_moved_base(line: Line, base, checkpoint: Path, method: str) -> None:
    """Exit 3 where the base this export loaded is not the one the line trained over: its sampled frozen tensors under
    the checkpoint's adapter (rc1/train/frozen_base.py) held to the line's first record (the guard's `moved`). A LoRA
    line only: a QLoRA line recorded its 4-bit weights, which an export (bf16, to merge) does not load; a full
    fine-tune has no frozen base; a line from before the record has none."""
    from rc1.app.base_check import moved_base_message
    from rc1.run.monitors.rules.frozen_base import moved
    from rc1.train.frozen_base import frozen_sha256_under

    first = line.projection.frozen_base  # the line's first record, as replay keeps it
    if method != "lora" or not first:
        return
    names = moved(first, frozen_sha256_under(base, checkpoint))
    if names:
        raise GateClosed(
            f"{moved_base_message(checkpoint, names)}: export from the base it trained on (pin its revision or "
            "restore its files)"
        )


def _facts(
    session: Session,
    line: Line,
    ref: CheckpointRef,
    asked: str,
    form: str,
    built: _Built,
    files: dict[str, ev.ExportedFile],
    head_seq: int,
    head_hash: str,
) -> CardFacts:
    config, p = session.config, line.projection
    started = _training_started(line)
    lora = config.model.lora
    gates = [
        GatePassed(name=name, seq=gate.seq, ts=line.events[gate.seq].ts, checks=list(line.events[gate.seq].checks))
        for name, gate in p.gates.items()
        if gate.passed and gate.seq is not None
    ]
    trained_by = list(dict.fromkeys(e.code_version for e in line.events[: ref.seq + 1] if isinstance(e, ev.RunStarted)))
    hyper = {
        "learning rate": f"{config.train.learning_rate:g}",
        "β": f"{config.train.beta:g}",
        "replies per prompt": str(config.train.num_generations),
        "temperature": f"{config.train.temperature:g}",
        "seed": str(line.seed if line.seed is not None else config.run.seed),
    }
    return CardFacts(
        run=session.ws.run,
        log=str(session.ws.log_path.relative_to(session.ws.root)),
        log_seq=head_seq,
        log_hash=head_hash,
        form=form,
        base_model=config.model.name,
        base_reference=built.base_reference,
        base_on_hub=built.base_on_hub,
        method=config.finetune.method,
        lora={}
        if config.finetune.method == "full"
        else {
            "r": str(lora.r),
            "alpha": str(lora.alpha),
            "dropout": f"{lora.dropout:g}",
            "targets": ", ".join(lora.target_modules),
        },
        engine=started.engine if started else config.engine.name,
        strategy=started.strategy if started else config.engine.strategy,
        hyper=hyper,
        asked=asked,
        step=ref.step,
        max_steps=p.max_steps,
        checkpoint=ref.dir,
        checkpoint_seq=ref.seq,
        seed=line.seed,
        seeds=list(config.run.seeds),
        segments=len(_starts(line)),
        dtype=built.dtype,
        parameters=built.parameters,
        fingerprints=p.gates["round2"].fingerprints,
        gates=gates,
        release=p.release,
        across_seeds=session.projection.across_seeds,
        evaluation=next((e for e in p.evals if e.step == ref.step), None),
        trained_by=trained_by,
        exported_by=provenance.code_version(),
        files=files,
        reward_weights=_weights_checked(line),
        functions={spec.name: spec.path for spec in config.reward.functions},
        mix=dict(config.data.mix),
        your_tasks={name: task.check for name, task in config.data.tasks.items()},
        trips=[
            f"{e.rule} {e.action} at step {e.step}"
            for e in line.events[: ref.seq + 1]
            if isinstance(e, ev.MonitorTripped)
        ],
        amended={
            key: f"{change.old} -> {change.new}"
            for e in line.events[: ref.seq + 1]
            if isinstance(e, ev.TrainingAmended)
            for key, change in e.changes.items()
        },
    )


def _weights_checked(line: Line) -> dict[str, float]:
    """The reward weights round 2's `weights` check read (the gate binds them by sha256), as the log has them."""
    checked = [
        e
        for e in line.events[_gated_from(line.events) :]
        if isinstance(e, ev.CheckPassed) and e.round == 2 and e.name == "weights"
    ]
    return {k: v for k, v in checked[-1].measured.items() if k != "sum"} if checked else {}


def _starts(line: Line) -> list[ev.TrainingStarted]:
    """The line's training segments: its training_started events since the gates in force passed."""
    return [
        e for e in line.events[_gated_from(line.events) :] if isinstance(e, ev.TrainingStarted) and e.seed == line.seed
    ]


def _gated_from(events: list[ev.Event]) -> int:
    """Where the gates in force begin to count: past the last gate_invalidated (lines before it count for nothing)."""
    return max((i + 1 for i, e in enumerate(events) if isinstance(e, ev.GateInvalidated)), default=0)


def _training_started(line: Line) -> ev.TrainingStarted | None:
    starts = _starts(line)
    return starts[-1] if starts else None


def _files(root: Path) -> dict[str, ev.ExportedFile]:
    """Every file of the export, readable by all (safetensors are written owner-only), with its sha256 and size."""
    return {str(path.relative_to(root)): _file(path) for path in sorted(root.rglob("*")) if path.is_file()}


def _file(path: Path) -> ev.ExportedFile:
    path.chmod(0o644)
    return ev.ExportedFile(sha256=sha256_file(path), bytes=path.stat().st_size)


def _recorded(out: Path, root: Path) -> str:
    """How the event names the export directory: relative to the workspace when inside it, else absolute."""
    try:
        return str(out.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(out.resolve())


def _draft(session: Session, out: str, form: str, asked: str) -> ev.ModelExported:
    """The export as far as it is known before any work, for the rules to decide on (they look at its kind): refused
    here, nothing is built."""
    return session.run.export_model(
        out=out,
        form=form,
        asked=asked,
        step=-1,
        checkpoint="",
        checkpoint_seq=-1,
        base_model="",
        dtype="",
        files={},
        card_sha256="",
        log_seq=-1,
        log_hash="",
    )
