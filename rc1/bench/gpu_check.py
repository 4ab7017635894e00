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
be given on the GPU. A part that fails is reported under `errors` and the rest still runs; the exit status is 0 when
the check ran (its findings are in the JSON).

The machine needs rc1's dependencies (`make wheels DIR=…` on a networked machine: the wheels a CUDA PyTorch image
lacks), bitsandbytes for QLoRA, and about 10 GB of free disk for the random model."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def arguments_on_gpu() -> dict:
    """What TRL's GRPOConfig is given for the production profile on a GPU (built here whatever the machine)."""
    import torch

    from rc1.config.loading import load_config
    from rc1.train.engine_trl import trl_args
    from rc1.train.launch import exact_resume, rollout_backend
    from rc1.train.training_arguments import checkpointing_of

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
        "top_p": args.top_p,
        "mask_truncated_completions": args.mask_truncated_completions,
        "gradient_accumulation_steps": args.gradient_accumulation_steps,
        "steps_per_generation": args.steps_per_generation,
        "activation_checkpointing": checkpointing_of(args),
    }


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("torch", "transformers", "trl", "peft", "accelerate", "bitsandbytes", "datasets"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rc1.bench.gpu_check", description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="small models on the CPU (the default without CUDA)")
    parser.add_argument("--skip", action="append", default=[], choices=["probes", "gated", "bare"], help="leave out")
    args = parser.parse_args(argv)
    import torch

    from rc1.core.cuda_env import fix_cublas_workspace

    fix_cublas_workspace()  # the gated run's processes set it themselves; the probes run here
    on_gpu = torch.cuda.is_available() and not args.dry_run
    device = "cuda" if on_gpu else "cpu"
    started = time.perf_counter()
    report: dict = {
        "device": torch.cuda.get_device_name() if on_gpu else "cpu",
        "dry_run": not on_gpu,
        "versions": versions(),
        "cuda": torch.version.cuda,
        "errors": {},
    }
    from rc1.bench.gpu_gated import bare_tokens_per_s, gated_run
    from rc1.bench.gpu_probes import probe
    from rc1.config.loading import load_config
    from rc1.train.runtime import free_memory

    production = load_config(REPO / "configs" / "rc1.yaml").config
    report["arguments_on_gpu"] = _run(report, "arguments_on_gpu", arguments_on_gpu)
    with tempfile.TemporaryDirectory(prefix="rc1-gpu-check-") as tmp:
        root = Path(tmp)
        if "probes" not in args.skip:
            (root / "probes").mkdir()
            report["probes"] = _run(report, "probes", lambda: probe(production, root / "probes", device, not on_gpu))
            free_memory(device)  # the probe's model: TRL's fused head binds it into a cycle
        if "gated" not in args.skip:
            (root / "gated").mkdir()
            report["gated_run"] = _run(report, "gated_run", lambda: gated_run(root / "gated", on_gpu))
        gated = report.get("gated_run")
        if gated and gated["resumed_exit"] == 0 and "bare" not in args.skip:
            bare = _run(report, "bare", lambda: bare_tokens_per_s(root / "gated", device))
            if bare and gated["rc1_tokens_per_s"]:
                report["tokens_per_s"] = {
                    "rc1": gated["rc1_tokens_per_s"],
                    "bare_trl": bare,
                    "ratio": gated["rc1_tokens_per_s"] / bare,
                    "measured_as": "completion tokens over the time from one step's log to the next's, steps after a "
                    "checkpoint left out; rc1 as `rc1 advance` ran (events, hooks), both with the same kernels",
                }
    report["seconds"] = time.perf_counter() - started
    print(json.dumps(report, default=float), flush=True)
    return 0


def _run(report: dict, name: str, part):
    started = time.perf_counter()
    try:
        return part()
    except Exception as error:  # one part failing is a finding; the rest still runs
        report["errors"][name] = f"{type(error).__name__}: {error}"[:2000]
        print(traceback.format_exc(), file=sys.stderr)
        return None
    finally:
        print(f"gpu-check: {name} took {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
