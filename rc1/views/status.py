"""The status object `rc1 status --json` and `rc1 replay --json` print, and its text rendering."""

from __future__ import annotations

import msgspec

from rc1.events import schema as ev
from rc1.events.replay import AcrossSeedsView, ExportRef, LineResult, ReleaseView, Replayer
from rc1.views.release import verdict_text


class CheckpointView(msgspec.Struct, frozen=True):
    step: int
    dir: str


class GateStatus(msgspec.Struct, frozen=True, kw_only=True):
    passed: bool
    fingerprints: ev.Fingerprints | None
    inputs_match: bool | None  # None when the gate has not passed (nothing to compare)
    changed: list[str]


class ReleaseStatus(ReleaseView, frozen=True, kw_only=True):
    """The release verdict of the line of training in view, each finished line's (`seeds`), and the one across them."""

    seeds: dict[str, ReleaseView] = msgspec.field(default_factory=dict)
    across_seeds: AcrossSeedsView | None = None


class StatusView(msgspec.Struct, frozen=True, kw_only=True):
    run: str
    state: str
    allowed: list[str]
    step: int
    max_steps: int | None
    complete: bool
    latest_checkpoint: CheckpointView | None
    best_step: int | None
    gates: dict[str, GateStatus]
    last_error: str | None
    events: int
    head_seq: int
    last_ts: str
    last_step: dict[str, float] | None
    last_eval: dict[str, float] | None
    release: ReleaseStatus | None = None  # the RC1 verdict, once evaluated
    torn_tail_bytes: int = 0
    # `run.seeds`: the seed of the line of training above, every seed, each finished line, the verdict across
    seed: int | None = None
    seeds: list[int] = msgspec.field(default_factory=list)
    finished: list[LineResult] = msgspec.field(default_factory=list)
    across_seeds: AcrossSeedsView | None = None
    exports: list[ExportRef] = msgspec.field(default_factory=list)  # the models `rc1 export` wrote (model_exported)


def status_view(replayer: Replayer, current: ev.Fingerprints | None, run: str, torn_bytes: int = 0) -> StatusView:
    p = replayer.projection
    gates = {}
    for name, gate in p.gates.items():
        changed = [n for n, _, _ in ev.changed_inputs(gate.fingerprints, current)] if gate.passed and gate.fingerprints and current else []
        gates[name] = GateStatus(
            passed=gate.passed,
            fingerprints=gate.fingerprints,
            inputs_match=(not changed) if gate.passed and current is not None else None,
            changed=changed,
        )
    latest = p.latest_checkpoint
    last_step = None
    if p.last_step is not None:
        s = p.last_step
        last_step = {"step": float(s.step), "loss": s.loss, "kl": s.kl, "reward": s.reward, "lr": s.lr}
    return StatusView(
        run=p.run or run,
        state=p.state,
        allowed=replayer.allowed(),
        step=p.step,
        max_steps=p.max_steps,
        complete=p.complete,
        latest_checkpoint=CheckpointView(step=latest.step, dir=latest.dir) if latest else None,
        best_step=p.best_step,
        gates=gates,
        last_error=p.last_error,
        events=p.events,
        head_seq=p.head_seq,
        last_ts=p.last_ts,
        last_step=last_step,
        last_eval=p.last_eval,
        release=_release_status(p),
        torn_tail_bytes=torn_bytes,
        seed=p.seed,
        seeds=list(p.seeds),
        finished=list(p.finished),
        across_seeds=p.across_seeds,
        exports=list(p.exports),
    )


def _release_status(p) -> ReleaseStatus | None:
    seeds = {str(line.seed): line.release for line in p.finished if line.release is not None}
    current = p.release or (p.finished[-1].release if p.finished else None)
    if current is None:
        return None
    return ReleaseStatus(**msgspec.structs.asdict(current), seeds=seeds, across_seeds=p.across_seeds)


def render_text(view: StatusView) -> str:
    progress = f"{view.step}/{view.max_steps}" if view.max_steps else f"{view.step}"
    lines = [
        f"run        {view.run}",
        f"state      {view.state}{'  (complete)' if view.complete else ''}",
        f"allowed    {', '.join(view.allowed) or '-'}",
        f"step       {progress}",
        f"checkpoint {f'step {view.latest_checkpoint.step} at {view.latest_checkpoint.dir}' if view.latest_checkpoint else '-'}",
        f"best       {f'step {view.best_step}' if view.best_step is not None else '-'}",
        f"events     {view.events} (head seq {view.head_seq}{', at ' + view.last_ts if view.last_ts else ''})",
    ]
    if view.last_step:
        s = view.last_step
        lines.append(f"last step  loss {s['loss']:.4f}  kl {s['kl']:.4f}  reward {s['reward']:.4f}  lr {s['lr']:.2e}")
    if view.last_eval:
        lines.append(f"last eval  step {int(view.last_eval['step'])}: success {view.last_eval['success']:.3f}, mean reward {view.last_eval['mean_reward']:.4f}")
    if view.release:
        lines.append(f"release    {verdict_text(view.release)}")
    if len(view.seeds) > 1:
        lines.append(f"seeds      {', '.join(map(str, view.seeds))}; training seed {view.seed}")
        done = {line.seed: line for line in view.finished}
        for seed in view.seeds:
            line = done.get(seed)
            if line is None:
                lines.append(f"  seed {seed:<6} {'in training' if seed == view.seed and not view.complete else 'pending'}")
                continue
            r = line.release
            verdict = verdict_text(r) if r else "release not evaluated"
            lines.append(f"  seed {seed:<6} complete at step {line.step}, best {line.best_step if line.best_step is not None else '-'}; {verdict}")
        if view.across_seeds:
            a = view.across_seeds
            lines.append(f"release across seeds {'PASSED' if a.passed else 'NOT PASSED'}: mean {a.mean_pp:+.1f} pp, "
                         f"spread {a.spread_pp:.1f} pp (needs mean − spread ≥ {a.threshold_pp:g}, every seed passed)")
    for name, gate in view.gates.items():
        if not gate.passed:
            lines.append(f"{name:<10} not passed")
            continue
        match = {True: "inputs match", False: "INPUTS CHANGED: " + ", ".join(gate.changed), None: "inputs not compared"}[gate.inputs_match]
        fp = gate.fingerprints
        lines.append(f"{name:<10} passed; {match}")
        lines.append(f"           pool {fp.pool[:12]}  shadow {fp.shadow[:12]}  gate set {fp.gate[:12] or '-'}  "
                     f"config {fp.config[:12]}  weights {fp.weights[:12]}")
    for export in view.exports:
        seed = f" of seed {export.seed}" if len(view.seeds) > 1 else ""
        lines.append(f"export     step {export.step}{seed} as {export.form} in {export.out} (seq {export.seq})")
    if view.torn_tail_bytes:
        lines.append(f"log        TORN TAIL of {view.torn_tail_bytes} bytes: run `rc1 repair`")
    if view.last_error:
        lines.append(f"last error {view.last_error}")
    return "\n".join(lines)
