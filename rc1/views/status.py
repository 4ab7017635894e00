"""The status object `rc1 status --json` and `rc1 replay --json` print, and its text rendering."""

from __future__ import annotations

import msgspec

from rc1.core.workspace import DEFAULT_RUN
from rc1.run import events as ev
from rc1.run.monitors.rules import MONITORS, NON_FINITE
from rc1.run.monitors.sections import rules_of
from rc1.run.monitors.spend import Spend
from rc1.run.projection import AcrossSeedsView, ExportRef, HaltView, LineResult, Projection, ReleaseView
from rc1.run.replay import Replayer
from rc1.views.release import NOT_A_RELEASE, verdict_text


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


class HaltStatus(HaltView, frozen=True, kw_only=True):
    """The halt the run is in (the rule, where, what it measured against what) and its runbook entry."""

    means: str
    tries: list[str]


class MonitorStatus(msgspec.Struct, frozen=True, kw_only=True):
    """A watched rule in the line in training: its latest value against its threshold (null: not read yet, or a
    signal this engine does not record), its action, and whether it has tripped in this line."""

    value: float | None
    threshold: float | None
    action: str
    tripped: bool
    trips: int = 0
    detail: str = ""
    breach: bool | None = None  # whether its latest reading breaches every condition of the rule (null: not read)


class SpendView(msgspec.Struct, frozen=True, kw_only=True):
    """What was spent (rc1/run/monitors/spend.py), in the units a budget names."""

    judge_calls: int = 0
    judge_tokens: int = 0
    judge_cost_usd: float = 0.0
    accelerator_hours: float = 0.0
    wall_hours: float = 0.0

    @classmethod
    def of(cls, spend: Spend) -> SpendView:
        return cls(
            judge_calls=spend.judge_calls,
            judge_tokens=spend.judge_tokens,
            judge_cost_usd=spend.judge_cost_usd,
            accelerator_hours=spend.accelerator_hours,
            wall_hours=spend.wall_hours,
        )


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
    halt: HaltStatus | None = None
    monitors: dict[str, MonitorStatus] = msgspec.field(default_factory=dict)
    spend: SpendView = msgspec.field(default_factory=SpendView)  # the run's, whether or not a budget is set
    line_spend: SpendView = msgspec.field(default_factory=SpendView)  # the line in training's
    amendments: dict[str, float | None] = msgspec.field(default_factory=dict)  # training keys a rollback changed
    best_metric: str = ""  # the shadow-set metric that chose best/, and its value there (None after a rollback)
    best_value: float | None = None
    next: str = ""  # the command to run next, and what it does


def status_view(replayer: Replayer, current: ev.Fingerprints | None, run: str, torn_bytes: int = 0) -> StatusView:
    p = replayer.projection
    gates = {}
    for name, gate in p.gates.items():
        changed = (
            [n for n, _, _ in ev.changed_inputs(gate.fingerprints, current)]
            if gate.passed and gate.fingerprints and current
            else []
        )
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
        last_step = {
            "step": float(s.step),
            "loss": s.loss,
            "kl": s.kl,
            "reward": s.reward,
            "lr": s.lr,
            "sec_per_step": s.sec_per_step,
        }
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
        halt=_halt_status(p),
        monitors=_monitor_status(p),
        spend=SpendView.of(p.monitor.run_spend),
        line_spend=SpendView.of(p.monitor.line_spend),
        amendments={key: a.value for key, a in p.amendments.items()},
        best_metric=p.best_metric,
        best_value=p.best_value,
        next=next_command(p, run, gates),
    )


def next_command(p: Projection, run: str, gates: dict[str, GateStatus]) -> str:
    """What a user runs next, from the state the log replays to: the stage the machine allows, or, on a complete
    run, what there is to do with it."""
    named = "" if run == DEFAULT_RUN else f" --run {run}"
    changed = [name for gate in gates.values() for name in gate.changed]
    if changed:
        return (
            f"rc1 advance{named} --accept-changed-inputs (the gates' inputs changed on disk: {', '.join(changed)}; "
            "put them back, or this invalidates the gates and runs both rounds on them)"
        )
    if p.state == "HALTED":
        return f"rc1 advance{named} --because TEXT, --from CHECKPOINT or --stop (the way forward, under HALTED)"
    if p.state in ("INIT", "R1_PASSED"):
        round_ = 1 if p.state == "INIT" else 2
        failed = sorted({key.partition(".")[2] for key, ok in p.checks.items() if not ok and key[1:2] == str(round_)})
        if failed:
            return f"rc1 runbook {failed[0]} (round {round_} failed: {', '.join(failed)}); fix, then rc1 advance{named}"
        return f"rc1 advance{named} (round {round_}: the preflight checks) or rc1 advance{named} --all (to the end)"
    if not p.complete:
        step = f"resumes at step {p.step}" if p.step else "trains"
        return f"rc1 advance{named} ({step}; --all to the end)"
    release = p.release or (p.finished[-1].release if p.finished else None)
    if release is not None and not release.release:
        return (
            f"rc1 report{named} (a smoke run, not a release: read its memory peaks, step time, judge spend and "
            "monitors above and in the plots, then run the production profile, configs/rc1.yaml)"
        )
    if release is not None and release.passed:
        return f"rc1 export{named} --out DIR (the best checkpoint, with its model card); rc1 report{named} (plots)"
    return (
        f"rc1 report{named} (plots; the release verdict did not pass: nothing to release from this run, and a new "
        "run with --run NAME keeps this one as it is)"
    )


def _halt_status(p: Projection) -> HaltStatus | None:
    if p.halt is None:
        return None
    book = MONITORS[p.halt.rule].runbook
    return HaltStatus(**msgspec.structs.asdict(p.halt), means=book.means, tries=list(book.tries))


def _monitor_status(p: Projection) -> dict[str, MonitorStatus]:
    """Each watched rule of the line in training (and the always-on non-finite guard), in the table's order."""
    if p.watched is None:
        return {}
    trips = p.monitor.trips
    shown = {
        NON_FINITE: MonitorStatus(
            value=None,
            threshold=None,
            action="halt",
            tripped=any(t.rule == NON_FINITE for t in trips),
            trips=sum(t.rule == NON_FINITE for t in trips),
            detail="always on",
        )
    }
    for rule, params in rules_of(p.watched).items():
        reading = p.monitor.watch.readings.get(rule)
        count = sum(t.rule == rule for t in trips)
        shown[rule] = MonitorStatus(
            value=reading.value if reading else None,
            threshold=reading.threshold if reading else None,
            action=params.action,
            tripped=count > 0,
            trips=count,
            detail=reading.detail if reading else f"not read yet ({MONITORS[rule].signal})",
            breach=reading.breach if reading else None,
        )
    return shown


def _release_status(p) -> ReleaseStatus | None:
    seeds = {str(line.seed): line.release for line in p.finished if line.release is not None}
    current = p.release or (p.finished[-1].release if p.finished else None)
    if current is None:
        return None
    return ReleaseStatus(**msgspec.structs.asdict(current), seeds=seeds, across_seeds=p.across_seeds)


def _best(view: StatusView) -> str:
    if view.best_step is None:
        return "-"
    if not view.best_metric:
        return f"step {view.best_step}"
    value = "" if view.best_value is None else f" {view.best_value:.3f}"
    return f"step {view.best_step} (chosen on the shadow set by {view.best_metric}{value}: best/ holds it)"


# The triggers a command sets off, in words (`allowed` in --json keeps the machine's names, the internal ones too:
# a step, a checkpoint, a halt, an invalidated gate come with what a command does, never asked for by themselves).
STAGES = {
    "round1_passed": "round 1",
    "round2_passed": "round 2",
    "training_started": "training",
    "halt_acknowledged": "a way on from the halt (advance --because, --from, --stop)",
}


def _stages(allowed: list[str]) -> str:
    return ", ".join(STAGES[t] for t in allowed if t in STAGES) or "-"


def render_text(view: StatusView) -> str:
    progress = f"{view.step}/{view.max_steps}" if view.max_steps else f"{view.step}"
    lines = [
        f"run        {view.run}",
        f"state      {view.state}{'  (complete)' if view.complete else ''}",
        f"next       {view.next}",
        f"allowed    {_stages(view.allowed)}",
        f"step       {progress}",
        "checkpoint "
        f"{f'step {view.latest_checkpoint.step} at {view.latest_checkpoint.dir}' if view.latest_checkpoint else '-'}",
        f"best       {_best(view)}",
        f"events     {view.events} (head seq {view.head_seq}{', at ' + view.last_ts if view.last_ts else ''})",
    ]
    if view.last_step:
        s = view.last_step
        lines.append(
            f"last step  loss {s['loss']:.4f}  kl {s['kl']:.4f}  reward {s['reward']:.4f}  lr {s['lr']:.2e}  "
            f"{s['sec_per_step']:.2f} s/step"
        )
    if view.last_eval:
        e = view.last_eval
        peak = f", memory peak {e['mem_peak_mb']:,.0f} MB" if e.get("mem_peak_mb") else ""
        lines.append(
            f"last eval  step {int(e['step'])}: success {e['success']:.3f}, mean reward {e['mean_reward']:.4f}{peak}"
        )
    if view.release:
        lines.append(f"release    {verdict_text(view.release)}")
    if len(view.seeds) > 1:
        lines.append(f"seeds      {', '.join(map(str, view.seeds))}; training seed {view.seed}")
        done = {line.seed: line for line in view.finished}
        for seed in view.seeds:
            line = done.get(seed)
            if line is None:
                lines.append(
                    f"  seed {seed:<6} {'in training' if seed == view.seed and not view.complete else 'pending'}"
                )
                continue
            r = line.release
            verdict = verdict_text(r) if r else "release not evaluated"
            lines.append(
                f"  seed {seed:<6} complete at step {line.step}, best "
                f"{line.best_step if line.best_step is not None else '-'}; {verdict}"
            )
        if view.across_seeds:
            a = view.across_seeds
            lines.append(
                f"{'release' if a.release else NOT_A_RELEASE} across seeds {'PASSED' if a.passed else 'NOT PASSED'}: "
                f"mean {a.mean_pp:+.1f} pp, "
                f"spread {a.spread_pp:.1f} pp (needs mean − spread ≥ {a.threshold_pp:g}, every seed passed)"
            )
    for name, gate in view.gates.items():
        if not gate.passed:
            lines.append(f"{name:<10} not passed")
            continue
        match = {
            True: "inputs match",
            False: "INPUTS CHANGED: " + ", ".join(gate.changed),
            None: "inputs not compared",
        }[gate.inputs_match]
        fp = gate.fingerprints
        lines.append(f"{name:<10} passed; {match}")
        lines.append(
            f"           pool {fp.pool[:12]}  shadow {fp.shadow[:12]}  gate set {fp.gate[:12] or '-'}  "
            f"config {fp.config[:12]}  weights {fp.weights[:12]}"
        )
    for export in view.exports:
        seed = f" of seed {export.seed}" if len(view.seeds) > 1 else ""
        lines.append(f"export     step {export.step}{seed} as {export.form} in {export.out} (seq {export.seq})")
    if view.halt:
        h = view.halt
        lines.append(f"HALTED     by {h.rule} at step {h.step}: {h.detail}")
        lines.append(f"           usually: {h.means}")
        lines += [f"           try: {t}" for t in h.tries]
        lines.append(
            "           the way forward (recorded with your reason): rc1 advance --because TEXT | --from "
            "best|latest|step_N [--set KEY=V] --because TEXT | --stop --because TEXT"
        )
    if view.monitors:
        lines.append(
            "monitors   (rule: its latest reading, as the rule reads its conditions; action; trips in this line)"
        )
        for rule, m in view.monitors.items():
            reads = {None: "-", True: "BREACHES", False: "holds"}[m.breach]
            lines.append(f"  {rule:<18} {reads:<8}  {m.action}  {m.trips} trip(s)  {m.detail}")
    s = view.spend
    lines.append(
        f"spend      judge {s.judge_calls} calls, {s.judge_tokens} tokens, ${s.judge_cost_usd:.2f}; "
        f"{s.accelerator_hours:.2f} accelerator h, {s.wall_hours:.2f} wall h (run); this line "
        f"{view.line_spend.judge_calls} calls, {view.line_spend.wall_hours:.2f} wall h"
    )
    if view.amendments:
        lines.append("amended    " + ", ".join(f"{k}={v}" for k, v in view.amendments.items()))
    if view.torn_tail_bytes:
        lines.append(f"log        TORN TAIL of {view.torn_tail_bytes} bytes: run `rc1 repair`")
    if view.last_error:
        lines.append(f"last error {view.last_error}")
    return "\n".join(lines)
