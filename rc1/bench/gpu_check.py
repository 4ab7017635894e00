"""`make gpu-check`: the production path on a CUDA machine with no network, in one command, one JSON line at the end.

On CUDA (goal: ≤ 8 minutes on one H100):
- probes at the production shape (rc1/bench/gpu_probes.py): a random-weight Qwen3 of Qwen3-4B's widths, 36 layers and
  the 151,936 vocabulary, loaded in 4 bits as rc1 loads it; the peak of a training micro-batch and of an evaluation
  batch of configs/rc1.yaml against the memory plan (docs/gpu.md's table; goal: within 15 %), decoding's time, and
  one evaluation against the training between two, projected to a line;
- a gated run through rc1's CLI on a 2-layer model of those widths (rc1/bench/gpu_gated.py): QLoRA, GRPO, priority
  sampling, a SIGKILL at a step and the resume (exact or not, as `training_started.exact_resume` recorded it and as
  the steps trained again compare), the release verdict; then tokens/s of `rc1 train` against a bare GRPOTrainer on
  the same steps.
Without CUDA (`--dry-run`, what the suite runs): the same code on small models on the CPU, and the arguments TRL would
be given on the GPU.

Four phases (`PHASES`: environment and versions, probes, gated, bare), each in a child process of its own (its own
imports and CUDA context: a sticky CUDA fault or an import error in one is that phase's finding) with a time limit of
its own (`LIMITS`), its process group killed past it. The report is rewritten after every phase (`--out`, default
`$OUT/gpu_check.json`, else `.gpu-check/gpu_check.json`; whole or absent), so a check killed at the device's limit
still returns every phase before (and the gated run's logs, in `gpu-check-logs/` beside it); `--failed` runs again
only the phases it does not hold as ok, `--phases a,b` the ones named (the others keep their results). The phases
work in `.gpu-check/` (kept: `bare` times the gated run's folder). The exit status is 0 when the check ran (its
findings are in the JSON), 2 on bad arguments.

The machine needs rc1's dependencies (`make wheels DIR=…` on a networked machine: the wheels a CUDA PyTorch image
lacks), bitsandbytes for QLoRA, and about 10 GB of free disk for the random model."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from rc1.core.fsutil import atomic_write_text

REPO = Path(__file__).resolve().parents[2]


def arguments_on_gpu() -> dict:
    """What TRL's GRPOConfig is given for the production profile on a GPU (built here whatever the machine)."""
    import torch

    from rc1.config.loading import load_config
    from rc1.registry.training_arguments import checkpointing_of
    from rc1.train.engine_trl import trl_args
    from rc1.train.launch import exact_resume, rollout_backend

    config = load_config(REPO / "configs" / "rc1.yaml").config
    backend = rollout_backend(config, "cuda")
    with tempfile.TemporaryDirectory() as tmp:
        args = trl_args(config, Path(tmp), "cpu", torch.bfloat16, backend=backend)
    return {
        "rollouts": backend,
        "exact_resume": exact_resume(config, "cuda", backend),
        "bf16": args.bf16,
        "max_completion_length": args.max_completion_length,
        "temperature": args.temperature,
        "top_k": args.top_k,
        "top_p": config.train.top_p,  # the cut the rollouts are drawn with
        "trl_top_p": args.top_p,  # 1.0 where transformers samples: rc1 makes the cut (rc1/train/nucleus.py)
        "mask_truncated_completions": args.mask_truncated_completions,
        "gradient_accumulation_steps": args.gradient_accumulation_steps,
        "steps_per_generation": args.steps_per_generation,
        "activation_checkpointing": checkpointing_of(args),
    }


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("torch", "transformers", "trl", "peft", "accelerate", "bitsandbytes", "datasets", "pyarrow", "fsspec"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


PHASES = ("environment", "probes", "gated", "bare")
# Each phase's wall-clock limit on the device (seconds), its child process group killed past it: together under the
# 10 minutes one device command may run, so a check killed at its limit has written every phase before. Not yet
# measured on a GPU (docs/gpu.md says what each rests on); the dry run's phases take far less here.
LIMITS = {"environment": 90, "probes": 180, "gated": 240, "bare": 60}
# What each phase is expected to take on one H200 (seconds): 5.5 minutes together, beside a machine start of 1-2.
# Estimates from the dry run's times here and the phase's work at the GPU's rates (docs/gpu.md, "The plan"); every
# report puts them beside the phase's measured seconds, so the first run on a GPU says how far off they were.
ESTIMATES = {"environment": 30, "probes": 110, "gated": 150, "bare": 45}
DRY_RUN_LIMITS = {"environment": 600, "probes": 1200, "gated": 1800, "bare": 600}  # CPU cores beside other work
REPORT = "gpu_check.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rc1.bench.gpu_check", description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="small models on the CPU (the default without CUDA)")
    parser.add_argument("--phases", default=",".join(PHASES), help=f"comma-separated, of {', '.join(PHASES)}")
    parser.add_argument(
        "--failed", action="store_true", help="of those, only the ones the report in --out does not hold as ok"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"the report, written after every phase (default $OUT/{REPORT}, else .gpu-check/{REPORT})",
    )
    parser.add_argument(
        "--max-phase-s", type=float, default=None, help="cap every phase's limit (a device session with less time left)"
    )
    parser.add_argument("--work", type=Path, default=None, help="the phases' folder, kept (default: .gpu-check)")
    parser.add_argument("--phase", choices=PHASES, help=argparse.SUPPRESS)  # a child: one phase, its JSON on stdout
    args = parser.parse_args(argv)
    work = (args.work or REPO / ".gpu-check").resolve()  # the gated run works in its own folder: no relative path
    if args.phase:
        return _child(args.phase, work, args.dry_run)
    chosen = [name.strip() for name in args.phases.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in PHASES]
    if unknown:
        parser.error(f"--phases: unknown {', '.join(unknown)} (of {', '.join(PHASES)})")
    out = args.out or (Path(os.environ["OUT"]) if os.environ.get("OUT") else work) / REPORT
    try:
        report = _read_report(out) if args.failed or chosen != list(PHASES) else {"phases": {}}  # a whole run: anew
    except ValueError as error:
        print(f"gpu-check: {error}", file=sys.stderr)
        return 2
    if args.failed:
        chosen = [name for name in chosen if report["phases"].get(name, {}).get("status") != "ok"]
    for name in chosen:
        report["phases"][name] = _run_phase(name, work, args.dry_run, args.max_phase_s)
        if name == "gated":
            _keep_run_logs(work / "gated", out.parent / "gpu-check-logs")
        atomic_write_text(out, json.dumps(_summary(report), default=float, indent=2) + "\n")  # whole or absent
        print(
            f"gpu-check: {name} {report['phases'][name]['status']} in {report['phases'][name]['seconds']:.1f} s "
            f"(report: {out})",
            file=sys.stderr,
            flush=True,
        )
    print(json.dumps(_summary(report), default=float), flush=True)
    return 0


def _run_phase(name: str, work: Path, dry_run: bool, cap: float | None) -> dict:
    """One phase in a child process of its own (its own CUDA context and imports), killed with its process group
    past its limit; its status (ok | failed | timed_out), seconds, and result or error."""
    import signal
    import subprocess

    started = time.perf_counter()
    command = [sys.executable, "-m", "rc1.bench.gpu_check", "--phase", name, "--work", str(work)]
    on_cpu = dry_run or not _has_cuda()
    limit = min((DRY_RUN_LIMITS if on_cpu else LIMITS)[name], cap or float("inf"))
    timing = {"limit_s": limit, **({} if on_cpu else {"estimate_s": ESTIMATES[name]})}
    child = subprocess.Popen(
        [*command, *(["--dry-run"] if dry_run else [])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = child.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        stdout, stderr = child.communicate()
        return {
            "status": "timed_out",
            "seconds": time.perf_counter() - started,
            **timing,
            "error": f"past its {limit} s limit",
            "stderr_tail": stderr[-2000:],
        }
    seconds = time.perf_counter() - started
    lines = stdout.strip().splitlines()
    if child.returncode != 0 or not lines:
        return {
            "status": "failed",
            "seconds": seconds,
            **timing,
            "error": f"exit {child.returncode}: {stderr.strip()[-2000:]}",
        }
    return {"status": "ok", "seconds": seconds, **timing, "result": json.loads(lines[-1])}


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:  # the environment phase reports why
        return False
    return torch.cuda.is_available()


def _child(name: str, work: Path, dry_run: bool) -> int:
    import torch

    from rc1.core.cuda_env import fix_cublas_workspace

    fix_cublas_workspace()  # the gated run's processes set it themselves; the probes run here
    on_gpu = torch.cuda.is_available() and not dry_run
    device = "cuda" if on_gpu else "cpu"
    work.mkdir(parents=True, exist_ok=True)
    if name == "environment":
        from rc1.bench.wheels import rc1_requirements, unmet_here

        unmet = unmet_here(rc1_requirements())
        result = {
            "device": torch.cuda.get_device_name() if on_gpu else "cpu",
            "dry_run": not on_gpu,
            "versions": versions(),
            "cuda": torch.version.cuda,
            "arguments_on_gpu": arguments_on_gpu(),
            "unmet_requirements": unmet,
        }
        if unmet:  # the phase fails, naming them, before the others spend minutes finding out one by one
            print(json.dumps(result, default=float), flush=True)
            raise SystemExit("requirements the image does not meet: " + "; ".join(unmet))
    elif name == "probes":
        from rc1.bench.gpu_probes import probe
        from rc1.config.loading import load_config

        production = load_config(REPO / "configs" / "rc1.yaml").config
        result = probe(production, _fresh(work / "probes"), device, not on_gpu)
    elif name == "gated":
        from rc1.bench.gpu_gated import gated_run

        result = gated_run(_fresh(work / "gated"), on_gpu)
    else:
        from rc1.bench.gpu_gated import bare_tokens_per_s

        if not (work / "gated" / "configs").is_dir():
            raise SystemExit(f"{work / 'gated'}: no gated run to time against; run the gated phase first")
        result = {"bare_trl_tokens_per_s": bare_tokens_per_s(work / "gated", device)}
    print(json.dumps(result, default=float), flush=True)
    return 0


def _keep_run_logs(run: Path, into: Path) -> None:
    """The gated run's event log, run logs and reports beside the report (`$OUT` comes back from the device; the
    phases' folder does not), replacing an earlier call's; the models and checkpoints stay behind."""
    import shutil

    shutil.rmtree(into, ignore_errors=True)
    for part in ("events", "logs", "reports"):
        if (run / part).is_dir():
            shutil.copytree(run / part, into / part)


def _fresh(folder: Path) -> Path:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def _summary(report: dict) -> dict:
    """The report with each phase's result also under the names the check has always printed."""
    phases = report["phases"]

    def result(name: str) -> dict | None:
        return phases.get(name, {}).get("result")

    environment = result("environment") or {}
    summary = {
        "device": environment.get("device"),
        "dry_run": environment.get("dry_run"),
        "versions": environment.get("versions"),
        "cuda": environment.get("cuda"),
        "arguments_on_gpu": environment.get("arguments_on_gpu"),
        "probes": result("probes"),
        "gated_run": result("gated"),
        "errors": {name: phase["error"] for name, phase in phases.items() if phase.get("status") != "ok"},
        "seconds": sum(phase["seconds"] for phase in phases.values()),
        "phases": phases,
    }
    gated, bare = result("gated"), result("bare")
    if gated and bare and gated.get("rc1_tokens_per_s") and bare.get("bare_trl_tokens_per_s"):
        summary["tokens_per_s"] = {
            "rc1": gated["rc1_tokens_per_s"],
            "bare_trl": bare["bare_trl_tokens_per_s"],
            "ratio": gated["rc1_tokens_per_s"] / bare["bare_trl_tokens_per_s"],
            "measured_as": "completion tokens over the time from one step's log to the next's, steps after a "
            "checkpoint left out; rc1 as `rc1 advance` ran (events, hooks), both with the same kernels",
        }
    return summary


def _read_report(out: Path) -> dict:
    try:
        report = json.loads(out.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"phases": {}}
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"{out}: not a gpu-check report ({error}); move it away or drop --failed/--phases") from error
    return {"phases": dict(report.get("phases") or {})}


if __name__ == "__main__":
    raise SystemExit(main())
