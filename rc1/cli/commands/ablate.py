"""`rc1 ablate [--component NAME] [--json]`: does each reward component earn its weight? The run's own config is
trained again once per component with that component's weight moved to the others (rc1/scoring/ablation.py), each
arm a run of its own (`<run>-without-<component>`, gated like any run, started with `rc1 advance --all` in a process
of its own, and resumed where a previous ablation left it), and every arm's selected checkpoint is compared with the
full reward's on the same gate items, paired, with its interval. It writes reports/<run>/ablation_<ts>.json and
appends nothing to the run's own log. It needs the run complete (its release verdict is the full reward's side).
"""

from __future__ import annotations

import argparse
import subprocess
import sys

import msgspec

from rc1.cli.args import config_args, config_for_reading
from rc1.cli.report_file import write_and_show
from rc1.config.kept import KeptConfig, differences, kept_config_path, kept_templates_path
from rc1.config.loading import LoadedConfig, load_config
from rc1.core.errors import BadInput, ExitCode, GateClosed
from rc1.core.failure import utc_stamp
from rc1.core.fsutil import atomic_write_bytes
from rc1.core.workspace import Workspace
from rc1.eventlog.log import read_log
from rc1.run import events as ev
from rc1.scoring.ablation import AblationReport, ArmResult, GateRates, against_full, arm_weights
from rc1.scoring.pipeline import components_for
from rc1.scoring.weights import load_weights

HELP = "train the run again once per reward component without it, and compare each arm with the full reward"
# What an arm may change of the run's config: its name and its weights file. Anything else is another experiment.
GATES_FAILED = "its gates did not pass"
ARM_KEYS = {"run.name", "run.seeds", "reward.weights", "data.templates"}
STOP_REASON = (
    "rc1 ablate: a monitor halted this arm, and the halt is part of its result; its best checkpoint goes to the verdict"
)


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument("--component", metavar="NAME", help="one arm only: this component (default: every one)")
    parser.add_argument("--json", action="store_true", help="the report on stdout as JSON (it is written either way)")


def run(args: argparse.Namespace) -> int:
    loaded = config_for_reading(args)
    ws = Workspace.here(loaded.config.run.name)
    events = read_log(ws.log_path).events
    seed = loaded.config.run.seeds[0] if loaded.config.run.seeds else loaded.config.run.seed
    full, verdict = _line(events, seed, ws.log_path)
    weights = load_weights(loaded.weights_path, components_for(loaded))
    components = [name for name, weight in weights.items() if weight > 0]
    if args.component is not None:
        if args.component not in weights:
            raise BadInput(f"--component {args.component}: not a component; the components: {', '.join(weights)}")
        components = [args.component]
    if not kept_config_path(ws).exists():
        raise BadInput(f"{kept_config_path(ws)}: the run kept no config (an rc1 before configs were kept made it)")
    kept = msgspec.json.decode(kept_config_path(ws).read_bytes(), type=KeptConfig)
    arms, skipped, failed = [], {}, []
    for component in components:
        moved = arm_weights(weights, component)
        if moved is None or weights[component] == 0:
            skipped[component] = (
                "it weighs 0: there is nothing to move"
                if weights[component] == 0
                else "the others cannot take its weight under the cap of 0.5"
            )
            continue
        name = f"{ws.run}-without-{component}"
        arm_ws = Workspace.here(name)
        path = ws.data_dir / "ablation" / f"{component}.weights.json"
        overrides = [*(o for o in kept.overrides if not o.startswith("run.name=")), *_arm_overrides(loaded, ws, seed)]
        overrides += [f"run.name={name}", f"reward.weights={path}"]
        if loaded.config.reward.functions:  # a function's weight stands in its entry too (the weights check)
            entries = [
                msgspec.to_builtins(spec) | {"weight": moved[spec.name]} for spec in loaded.config.reward.functions
            ]
            overrides.append(f"reward.functions={msgspec.json.encode(entries).decode()}")
        _same_experiment(loaded, load_config(ws.root / kept.config_path, overrides))
        atomic_write_bytes(path, msgspec.json.format(msgspec.json.encode(moved)))
        if not _complete(arm_ws):
            moving = f"{component}'s {weights[component]:g} moved to the others"
            print(f"ablate: arm {name} ({moving}): training", file=sys.stderr, flush=True)
            command = [sys.executable, "-m", "rc1", "advance", "--all", "--config", kept.config_path]
            command += [part for override in overrides for part in ("--set", override)]
            # The arm's own console goes to stderr under --json, so that stdout is the report alone.
            console = 2 if args.json else None
            done = subprocess.run(command, cwd=ws.root, stdout=console)
            if done.returncode == 3 and _halted(arm_ws) is not None:
                # A monitor halted the arm: that is part of its result. The line is stopped with the reason recorded
                # (halt_acknowledged in the arm's log) and its best checkpoint goes to the verdict.
                stop = [sys.executable, "-m", "rc1", "advance", "--run", name, "--stop", "--because", STOP_REASON]
                done = subprocess.run(stop, cwd=ws.root, stdout=console)
            if done.returncode != 0:
                why = _why_not(arm_ws, done.returncode)
                if not why.startswith(GATES_FAILED):  # an arm the gates refuse is a result; a crash is not
                    failed.append(f"{name}: {why}")
                skipped[component] = f"its run {name}: {why}"
                continue
        try:
            arm_events = read_log(arm_ws.log_path).events
            arm_gate, arm_verdict = _line(arm_events, seed, arm_ws.log_path)
            paired = against_full(full, arm_gate, seed=loaded.config.run.seed)
        except (GateClosed, ValueError) as e:  # an arm without a verdict, or measured on other gate items
            skipped[component] = str(e)
            failed.append(f"{name}: {e}")
            continue
        arms.append(
            ArmResult(
                component=component,
                run=name,
                weights=moved,
                verdict_gain_pp=arm_verdict.hard_gain_pp,
                verdict_ci_pp=(arm_verdict.ci_low_pp, arm_verdict.ci_high_pp),
                verdict_passed=arm_verdict.passed,
                against_full=paired,
                step=arm_gate.step,
                halted=_halt_of(arm_events),
            )
        )
    report = AblationReport(
        run=ws.run,
        full_weights=weights,
        full_gain_pp=verdict.hard_gain_pp,
        full_ci_pp=(verdict.ci_low_pp, verdict.ci_high_pp),
        full_passed=verdict.passed,
        gate_sha256=full.gate_sha256,
        n=len(full.item_ids),
        samples=verdict.samples,
        arms=arms,
        skipped=skipped,
    )
    out = ws.reports_dir / f"ablation_{utc_stamp()}.json"
    write_and_show(out, ws.root, report, render(report), args.json)
    if failed:
        print(f"error: ablation: {'; '.join(failed)}; the report holds the other arms", file=sys.stderr)
        return int(ExitCode.RUNTIME_FAILURE)
    return 0


def _line(events: list[ev.Event], seed: int, log) -> tuple[GateRates, ev.ReleaseEvaluated]:
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
    from rc1.run.replay import replay

    p = replay(read_log(ws.log_path).events).projection if ws.log_path.exists() else None
    failed = sorted({key.partition(".")[2] for key, ok in p.checks.items() if not ok}) if p is not None else []
    if p is not None and failed and p.state in ("INIT", "R1_PASSED"):
        return f"{GATES_FAILED} (state {p.state}; failed: {', '.join(failed)}; rc1 runbook {failed[0]})"
    return f"exited {code}: see {ws.train_log_path}"


def _halted(ws: Workspace) -> str | None:
    """The halt the arm's run is in now ("rule at step N"), or None."""
    from rc1.run.replay import replay

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


def render(report: AblationReport) -> str:
    lines = [
        f"ablation of run {report.run}: gate set n={report.n} × {report.samples} samples "
        f"(sha256 {report.gate_sha256[:12]})",
        f"full reward  gain {report.full_gain_pp:+.1f} pp [{report.full_ci_pp[0]:+.1f}, {report.full_ci_pp[1]:+.1f}] "
        f"{'PASSED' if report.full_passed else 'NOT PASSED'}  weights {report.full_weights}",
        "",
        "without      arm's own verdict (vs its step 0)      arm − full on the same items (selected checkpoints)",
    ]
    for arm in report.arms:
        diff = arm.against_full
        own = f"{arm.verdict_gain_pp:+.1f} pp [{arm.verdict_ci_pp[0]:+.1f}, {arm.verdict_ci_pp[1]:+.1f}]"
        lines.append(
            f"{arm.component:<12} {own:<24} {'PASSED' if arm.verdict_passed else 'not passed':<12}  "
            f"{diff.gain_pp:+.1f} pp [{diff.ci_low_pp:+.1f}, {diff.ci_high_pp:+.1f}]  ({arm.run}, step {arm.step}"
            + (f"; halted by {arm.halted}, stopped)" if arm.halted else ")")
        )
    for component, why in report.skipped.items():
        lines.append(f"{component:<12} no arm: {why}")
    lines.append(
        "an interval of arm − full below 0: the component earned its weight on this run; across 0: this run cannot tell"
    )
    return "\n".join(lines)
