"""`rc1 ablate`'s work: one arm per reward component of a complete run, each the run's kept config with that
component's weight moved to the others (rc1/scoring/ablation.py `arm_weights`) and a run of its own
(`<run>-without-<component>`), trained by `rc1 advance --all` in a process of its own unless a previous ablation
completed it, stopped where a monitor halted it (the halt is part of its result), and its selected checkpoint paired
against the full reward's on the same gate items (`against_full`). It writes each arm's weights file under
data/<run>/ablation/ and appends nothing to the run's own log; the command writes the report where `Ablation.path`
says and shows it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec

from rc1.config.kept import KeptConfig, differences, kept_config_path, kept_templates_path
from rc1.config.loading import LoadedConfig, load_config
from rc1.core.errors import BadInput, GateClosed
from rc1.core.failure import utc_stamp
from rc1.core.fsutil import atomic_write_bytes
from rc1.core.workspace import Workspace
from rc1.eventlog.log import read_log
from rc1.run import events as ev
from rc1.run.replay import replay
from rc1.scoring.ablation import AblationReport, ArmResult, GateRates, against_full, arm_weights
from rc1.scoring.pipeline import components_for
from rc1.scoring.weights import load_weights

GATES_FAILED = "its gates did not pass"
# What an arm may change of the run's config: its name and its weights file. Anything else is another experiment.
ARM_KEYS = {"run.name", "run.seeds", "reward.weights", "data.templates"}
STOP_REASON = (
    "rc1 ablate: a monitor halted this arm, and the halt is part of its result; its best checkpoint goes to the verdict"
)


class Ablation(msgspec.Struct, frozen=True, kw_only=True):
    """A run's ablation, for the command to write and show."""

    report: AblationReport
    path: Path  # reports/<run>/ablation_<ts>.json
    root: Path  # the workspace's root, which the path is shown relative to
    failed: tuple[str, ...] = ()  # "<arm's run>: why" for each arm that crashed or has no verdict (not a result)


class _Full(msgspec.Struct, frozen=True, kw_only=True):
    """The run ablated: the full reward's side of every comparison, and what its arms are built from."""

    loaded: LoadedConfig
    ws: Workspace
    seed: int  # the line of training the arms repeat and are compared with
    gate: GateRates
    verdict: ev.ReleaseEvaluated
    weights: dict[str, float]
    kept: KeptConfig


class _NoArm(msgspec.Struct, frozen=True):
    """Why a component has no arm in the report; `failure` too where that is the ablation's failure, not a result."""

    why: str
    failure: str | None = None


def ablate(loaded: LoadedConfig, component: str | None = None, *, report_on_stdout: bool = False) -> Ablation:
    """The ablation of the run `loaded` names, over every component of positive weight (or `component` alone).
    `report_on_stdout`: the arms' own console goes to stderr, so that stdout is the command's report alone."""
    full, components = _full_run(loaded, component)
    arms, skipped, failed = [], {}, []
    for name in components:
        arm = _arm(full, name, report_on_stdout)
        if isinstance(arm, ArmResult):
            arms.append(arm)
            continue
        skipped[name] = arm.why
        if arm.failure is not None:
            failed.append(arm.failure)
    report = AblationReport(
        run=full.ws.run,
        full_weights=full.weights,
        full_gain_pp=full.verdict.hard_gain_pp,
        full_ci_pp=(full.verdict.ci_low_pp, full.verdict.ci_high_pp),
        full_passed=full.verdict.passed,
        gate_sha256=full.gate.gate_sha256,
        n=len(full.gate.item_ids),
        samples=full.verdict.samples,
        arms=arms,
        skipped=skipped,
    )
    path = full.ws.reports_dir / f"ablation_{utc_stamp()}.json"
    return Ablation(report=report, path=path, root=full.ws.root, failed=tuple(failed))


def _full_run(loaded: LoadedConfig, component: str | None) -> tuple[_Full, list[str]]:
    """The run with its release verdict, its weights and its kept config, and the components to ablate."""
    ws = Workspace.here(loaded.config.run.name)
    events = read_log(ws.log_path).events
    seed = loaded.config.run.seeds[0] if loaded.config.run.seeds else loaded.config.run.seed
    gate, verdict = _line(events, seed, ws.log_path)
    weights = load_weights(loaded.weights_path, components_for(loaded))
    components = [name for name, weight in weights.items() if weight > 0]
    if component is not None:
        if component not in weights:
            raise BadInput(f"--component {component}: not a component; the components: {', '.join(weights)}")
        components = [component]
    if not kept_config_path(ws).exists():
        raise BadInput(f"{kept_config_path(ws)}: the run kept no config (an rc1 before configs were kept made it)")
    kept = msgspec.json.decode(kept_config_path(ws).read_bytes(), type=KeptConfig)
    full = _Full(loaded=loaded, ws=ws, seed=seed, gate=gate, verdict=verdict, weights=weights, kept=kept)
    return full, components


def _arm(full: _Full, component: str, report_on_stdout: bool) -> ArmResult | _NoArm:
    """The arm without `component`: built, trained unless complete, and measured; or why there is none."""
    moved = arm_weights(full.weights, component)
    if full.weights[component] == 0:
        return _NoArm("it weighs 0: there is nothing to move")
    if moved is None:
        return _NoArm("the others cannot take its weight under the cap of 0.5")
    arm_ws = Workspace.here(f"{full.ws.run}-without-{component}")
    overrides = _arm_config(full, component, arm_ws.run, moved)
    if not _complete(arm_ws):
        why = _train(full, component, arm_ws, overrides, report_on_stdout)
        if why is not None:  # an arm the gates refuse is a result; a crash is not
            failure = None if why.startswith(GATES_FAILED) else f"{arm_ws.run}: {why}"
            return _NoArm(f"its run {arm_ws.run}: {why}", failure)
    return _measure(full, component, arm_ws, moved)


def _arm_config(full: _Full, component: str, name: str, moved: dict[str, float]) -> list[str]:
    """The arm's `--set` overrides of the run's kept config file, checked to be the run's experiment but for its
    weights; its weights file written."""
    path = full.ws.data_dir / "ablation" / f"{component}.weights.json"
    kept = [o for o in full.kept.overrides if not o.startswith("run.name=")]
    overrides = [*kept, *_arm_overrides(full.loaded, full.ws, full.seed), f"run.name={name}", f"reward.weights={path}"]
    functions = full.loaded.config.reward.functions
    if functions:  # a function's weight stands in its entry too (the weights check)
        entries = [msgspec.to_builtins(spec) | {"weight": moved[spec.name]} for spec in functions]
        overrides.append(f"reward.functions={msgspec.json.encode(entries).decode()}")
    _same_experiment(full.loaded, load_config(full.ws.root / full.kept.config_path, overrides))
    atomic_write_bytes(path, msgspec.json.format(msgspec.json.encode(moved)))
    return overrides


def _train(full: _Full, component: str, arm_ws: Workspace, overrides: list[str], report_on_stdout: bool) -> str | None:
    """Train the arm to its end (`rc1 advance --all`); None once it is complete, else why it is not."""
    name = arm_ws.run
    moving = f"{component}'s {full.weights[component]:g} moved to the others"
    print(f"ablate: arm {name} ({moving}): training", file=sys.stderr, flush=True)
    command = [sys.executable, "-m", "rc1", "advance", "--all", "--config", full.kept.config_path]
    command += [part for override in overrides for part in ("--set", override)]
    console = 2 if report_on_stdout else None
    done = subprocess.run(command, cwd=full.ws.root, stdout=console)
    if done.returncode == 3 and _halted(arm_ws) is not None:
        # A monitor halted the arm: that is part of its result. The line is stopped with the reason recorded
        # (halt_acknowledged in the arm's log) and its best checkpoint goes to the verdict.
        stop = [sys.executable, "-m", "rc1", "advance", "--run", name, "--stop", "--because", STOP_REASON]
        done = subprocess.run(stop, cwd=full.ws.root, stdout=console)
    return None if done.returncode == 0 else _why_not(arm_ws, done.returncode)


def _measure(full: _Full, component: str, arm_ws: Workspace, moved: dict[str, float]) -> ArmResult | _NoArm:
    """The complete arm's verdict, and its selected checkpoint paired against the full reward's."""
    try:
        arm_events = read_log(arm_ws.log_path).events
        arm_gate, arm_verdict = _line(arm_events, full.seed, arm_ws.log_path)
        paired = against_full(full.gate, arm_gate, seed=full.loaded.config.run.seed)
    except (GateClosed, ValueError) as e:  # an arm without a verdict, or measured on other gate items
        return _NoArm(str(e), f"{arm_ws.run}: {e}")
    return ArmResult(
        component=component,
        run=arm_ws.run,
        weights=moved,
        verdict_gain_pp=arm_verdict.hard_gain_pp,
        verdict_ci_pp=(arm_verdict.ci_low_pp, arm_verdict.ci_high_pp),
        verdict_passed=arm_verdict.passed,
        against_full=paired,
        step=arm_gate.step,
        halted=_halt_of(arm_events),
    )


def _line(events: list[ev.Event], seed: int, log: Path) -> tuple[GateRates, ev.ReleaseEvaluated]:
    """The line of training of `seed`: its selected checkpoint's gate-set rates and its release verdict."""
    verdicts = [e for e in events if isinstance(e, ev.ReleaseEvaluated) and e.seed in (seed, None)]
    gates = [
        e for e in events if isinstance(e, ev.GateSetEvaluated) and e.policy == "selected" and e.seed in (seed, None)
    ]
    if not verdicts or not gates or verdicts[-1].ci_low_pp is None:
        raise GateClosed(f"{log}: no release verdict on the gate set for seed {seed} yet; `rc1 advance --all` first")
    gate = gates[-1]
    rates = [count / gate.samples for count in gate.sampled]
    return GateRates(gate_sha256=gate.gate_sha256, item_ids=list(gate.item_ids), rates=rates, step=gate.step), verdicts[
        -1
    ]


def _arm_overrides(loaded: LoadedConfig, ws: Workspace, seed: int) -> list[str]:
    """What an arm takes of the run beside its config: the run's own template pack (its kept copy: the same gate
    items, whatever configs/ holds now), and one line of training, the one it is compared with."""
    overrides = [f"run.seeds=[{seed}]"] if len(loaded.config.run.seeds) > 1 else []
    pack = kept_templates_path(ws)
    return [*overrides, f"data.templates={pack}"] if pack.is_dir() else overrides


def _why_not(ws: Workspace, code: int) -> str:
    """Why an arm's run ended without its verdict: the gate checks it failed (an arm must pass the gates as any run
    does; that it cannot is a result too), else its exit code and log."""
    p = replay(read_log(ws.log_path).events).projection if ws.log_path.exists() else None
    failed = sorted({key.partition(".")[2] for key, ok in p.checks.items() if not ok}) if p is not None else []
    if p is not None and failed and p.state in ("INIT", "R1_PASSED"):
        return f"{GATES_FAILED} (state {p.state}; failed: {', '.join(failed)}; rc1 runbook {failed[0]})"
    return f"exited {code}: see {ws.train_log_path}"


def _halted(ws: Workspace) -> str | None:
    """The halt the arm's run is in now ("rule at step N"), or None."""
    halt = replay(read_log(ws.log_path).events).projection.halt
    return None if halt is None else f"{halt.rule} at step {halt.step}"


def _halt_of(events: list[ev.Event]) -> str | None:
    """The halt the arm's line went through, if any ("rule at step N"): its last halting monitor_tripped."""
    trips = [e for e in events if isinstance(e, ev.MonitorTripped) and e.action == "halt"]
    return None if not trips else f"{trips[-1].rule} at step {trips[-1].step}"


def _complete(ws: Workspace) -> bool:
    if not ws.log_path.exists():
        return False
    return any(isinstance(e, ev.RunCompleted) for e in read_log(ws.log_path).events)


def _same_experiment(run: LoadedConfig, arm: LoadedConfig) -> None:
    """An arm is the run's config but for its name and weights: a config file edited since the run kept it is not."""
    other = [(key, a, b) for key, a, b in differences(run, arm) if key not in ARM_KEYS]
    if [(k, a, b) for k, a, b in other if k == "reward.functions"]:  # the same functions, their weights apart
        ours, theirs = (
            [msgspec.to_builtins(spec) | {"weight": 0} for spec in c.config.reward.functions] for c in (run, arm)
        )
        other = [(k, a, b) for k, a, b in other if k != "reward.functions" or ours != theirs]
    if other:
        listed = ", ".join(f"{key}: {a} (the run's) -> {b}" for key, a, b in other[:5])
        raise GateClosed(
            f"{arm.path}: the config file differs from what run {run.config.run.name} kept ({listed}); an arm must be "
            "the run's config but for one component's weight: put the file back, or ablate a run of this config"
        )
