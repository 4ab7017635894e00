"""`rc1 handoff`: the seed's SYNC bundle for a stage of the run, computed from the log.

Who handed it over (the last `run_started`: code version, host), which stage (round 1, round 2 or
training), the artifacts that stage produced with their sha256, its checks, the risks (every failed check,
gate failure, training failure, monitor trip, refused event, changed input) and, of those, the blockers that stop
the run from moving on (a halt among them), and the next actions the state machine allows.
"""

from __future__ import annotations

import msgspec

from rc1.run import events as ev
from rc1.run.replay import Replayer, changed_gate_inputs

STAGES = ("1", "2", "train")
_STAGE_NAMES = {"round1_passed": "round 1", "round2_passed": "round 2", "training_started": "train"}


class Artifact(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    sha256: str
    seq: int  # the event that recorded it


class Risk(msgspec.Struct, frozen=True, kw_only=True):
    kind: str  # check_failed, gate_failed, training_failed, violation, inputs_changed
    seq: int | None
    message: str


class Handoff(msgspec.Struct, frozen=True, kw_only=True, rename={"from_": "from"}):
    run: str
    from_: str  # code version and host of the last command that wrote to the log
    stage: str  # "round 1", "round 2" or "training"
    state: str
    at_seq: int
    artifacts: list[Artifact]
    checks: dict[str, bool]
    risks: list[Risk]
    blockers: list[Risk]
    next_actions: list[str]


def default_stage(events: list[ev.Event]) -> str:
    """The stage the log last worked on."""
    if any(isinstance(e, ev.TrainingStarted) for e in events):
        return "train"
    if any(isinstance(e, (ev.CheckPassed, ev.CheckFailed)) and e.round == 2 for e in events):
        return "2"
    return "1"


def handoff(events: list[ev.Event], replayer: Replayer, current: ev.Fingerprints | None, stage: str) -> Handoff:
    p = replayer.projection
    started = [e for e in events if isinstance(e, ev.RunStarted)]
    who = f"rc1 {started[-1].code_version} on {started[-1].host}" if started else "nobody yet"
    checks: dict[str, bool] = {}
    risks: list[Risk] = []
    still_failed = _training_still_failed(events)
    if stage in ("1", "2"):
        number = int(stage)
        prefix = f"r{number}."
        checks = {
            key.removeprefix(prefix): ok for key, ok in p.checks.items() if key.startswith(prefix)
        }  # latest verdicts
        failed_checks = {e.name: e for e in events if isinstance(e, ev.CheckFailed) and e.round == number}
        risks += [
            Risk(kind="check_failed", seq=e.seq, message=f"{name}: {e.detail}")
            for name, e in failed_checks.items()
            if not checks.get(name, True)
        ]
        risks += [
            Risk(kind="gate_failed", seq=e.seq, message=f"round {number} failed: {', '.join(e.failures)}")
            for e in events
            if isinstance(e, ev.GateFailed) and e.round == number
        ][-1:]
        passed_type = ev.Round1Passed if number == 1 else ev.Round2Passed
        verdicts = [
            e.seq for e in events if isinstance(e, passed_type) or (isinstance(e, ev.GateFailed) and e.round == number)
        ]
        # What the round produced: the artifacts recorded up to its latest verdict.
        artifacts = _latest_artifacts([e for e in events if not verdicts or e.seq <= verdicts[-1]])
    else:
        artifacts = [Artifact(path=c.dir, sha256=_weights_sha(c.files), seq=c.seq) for c in p.checkpoints]
        risks += [
            Risk(kind="training_failed", seq=e.seq, message=f"step {e.step}: {e.error}")
            for e in events
            if isinstance(e, ev.TrainingFailed)
        ][-1:]
        risks += [
            Risk(kind=f"monitor_{e.action}", seq=e.seq, message=f"{e.rule} at step {e.step}: {e.detail}")
            for e in events
            if isinstance(e, ev.MonitorTripped)
        ]
    risks += [Risk(kind="violation", seq=v.seq, message=v.message) for v in p.violations]
    changed = changed_gate_inputs(p, current) if current is not None else None
    if changed is not None:
        name, seq, inputs = changed
        risks += [
            Risk(kind="inputs_changed", seq=seq, message=f"{name}: {n} changed ({old[:12]} -> {new[:12]})")
            for n, old, new in inputs
        ]
    blockers = _blockers(risks, p, stage, still_failed)
    return Handoff(
        run=p.run,
        from_=who,
        stage={"1": "round 1", "2": "round 2"}.get(stage, "training"),
        state=p.state,
        at_seq=p.head_seq,
        artifacts=artifacts,
        checks=checks,
        risks=risks,
        blockers=blockers,
        next_actions=_next_actions(replayer, blockers),
    )


# A checkpoint's weights: the adapter (lora, qlora) or the whole model (full), as rc1/train/layout.py names them.
_WEIGHT_FILES = ("adapter_model.safetensors", "model.safetensors")


def _weights_sha(files: dict[str, str]) -> str:
    return next((files[name] for name in _WEIGHT_FILES if name in files), "")


def _latest_artifacts(events: list[ev.Event]) -> list[Artifact]:
    latest: dict[str, Artifact] = {}
    for e in events:
        if isinstance(e, ev.ArtifactWritten):
            latest[e.path] = Artifact(path=e.path, sha256=e.sha256, seq=e.seq)
        elif isinstance(e, ev.ShadowRunCompleted):
            latest[e.report] = Artifact(path=e.report, sha256=e.sha256, seq=e.seq)
    return sorted(latest.values(), key=lambda a: a.seq)


def _training_still_failed(events: list[ev.Event]) -> bool:
    """Whether the last training segment ended in training_failed (no training_started since)."""
    for event in reversed(events):
        if isinstance(event, ev.TrainingFailed):
            return True
        if isinstance(event, ev.TrainingStarted):
            return False
    return False


def _blockers(risks: list[Risk], p, stage: str, training_still_failed: bool) -> list[Risk]:
    """The risks that stop the run from moving on: a refused event or a changed input always; failed checks
    while their round's gate is closed; a training failure while training has not gone on since."""
    gate_open = {"1": p.gates["round1"].passed, "2": p.gates["round2"].passed}.get(stage, True)
    blocking = []
    for risk in risks:
        if risk.kind in ("violation", "inputs_changed"):
            blocking.append(risk)
        elif risk.kind in ("check_failed", "gate_failed") and not gate_open:
            blocking.append(risk)
        elif risk.kind == "training_failed" and training_still_failed:
            blocking.append(risk)
        elif risk.kind == "monitor_halt" and p.halt is not None and risk.seq == p.halt.seq:
            blocking.append(risk)
    return blocking


def _next_actions(replayer: Replayer, blockers: list[Risk]) -> list[str]:
    p = replayer.projection
    kinds = {b.kind for b in blockers}
    if "violation" in kinds:
        return [
            "rc1 audit: the log holds events the state machine refused; no command appends to it until it is restored"
        ]
    actions = []
    if "inputs_changed" in kinds:
        actions.append(
            "a gated input changed since its gate passed: rc1 advance invalidates the gate and re-runs round 1"
        )
    if "check_failed" in kinds or "gate_failed" in kinds:
        actions.append(
            "fix what the failed checks name (rc1 status, reports/preflight/), then rc1 advance re-runs the round"
        )
    if "monitor_halt" in kinds:
        actions.append(
            "a monitor halted the run: rc1 status shows it with its runbook; choose the way forward: "
            "rc1 advance --because TEXT | --from best|latest|step_N [--set …] --because TEXT | --stop --because TEXT"
        )
    if "training_failed" in kinds:
        actions.append(
            "read the ERROR report the training failure names (and the FAIL_*.tar.gz beside it), then rc1 advance "
            "resumes from the newest verified checkpoint"
        )
    stage = replayer.machine.next_stage()
    if not actions:
        if stage is not None:
            trigger, resuming = stage
            actions.append("rc1 advance: resume training" if resuming else f"rc1 advance: {_STAGE_NAMES[trigger]}")
        elif p.complete:
            verdict = p.across_seeds or p.release
            if verdict is not None and not verdict.release:
                actions.append(
                    "the smoke run is complete (its verdict is not a release): read its memory peaks, step time and "
                    "monitors, then start the production run with the production profile"
                )
            elif verdict is not None and verdict.passed:
                actions.append("the release gate passed: hand over best/ (rc1 status names the step)")
            else:
                actions.append(
                    "the run is complete and its release gate did not pass: the hard bucket did not improve "
                    "enough; change the data, reward or training budget and start a new run"
                )
    return actions


def render_text(bundle: Handoff) -> str:
    lines = [
        f"SYNC {bundle.run}: {bundle.stage}, state {bundle.state}, at seq {bundle.at_seq}",
        f"from       {bundle.from_}",
    ]
    lines.append("artifacts" + ("" if bundle.artifacts else "  -"))
    lines += [f"  {a.path}  sha256 {a.sha256[:12] or '-'}  (seq {a.seq})" for a in bundle.artifacts]
    if bundle.checks:
        failed = sorted(name for name, ok in bundle.checks.items() if not ok)
        lines.append(
            f"checks     {len(bundle.checks) - len(failed)} of {len(bundle.checks)} passed"
            + (f"; failed: {', '.join(failed)}" if failed else "")
        )
    lines.append("risks" + ("" if bundle.risks else "      none"))
    lines += [f"  [{r.kind}] {r.message}" + (f" (seq {r.seq})" if r.seq is not None else "") for r in bundle.risks]
    lines.append("blockers" + ("" if bundle.blockers else "   none"))
    lines += [f"  [{b.kind}] {b.message}" for b in bundle.blockers]
    lines.append("next")
    lines += [f"  {action}" for action in bundle.next_actions]
    return "\n".join(lines)
