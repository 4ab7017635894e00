"""`make gpu-check` without CUDA: its dry run, the same code as the device check on small models on the CPU (what it
runs on a GPU is the production path: rc1/bench/gpu_check.py); and what `make wheels` would fetch for a CUDA node."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import PATIENCE, REPO

from rc1.bench.gpu_check import ESTIMATES, LIMITS, PHASES


def check(*args: str, cwd) -> tuple[subprocess.CompletedProcess, dict]:
    result = subprocess.run(
        [sys.executable, "-m", "rc1.bench.gpu_check", "--dry-run", "--work", str(cwd / "work"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        check=False,
        env={**os.environ, "OUT": str(cwd)},
    )
    return result, json.loads((cwd / "gpu_check.json").read_text()) if (cwd / "gpu_check.json").exists() else {}


def test_a_phase_that_fails_is_a_finding_the_others_keep_and_failed_runs_only_it_again(tmp_path):
    """The bare phase times the gated run's folder: alone, it fails, and says so; the environment phase beside it
    reports; `--failed` runs the failed phase again and keeps the other's result."""
    result, report = check("--phases", "environment,bare", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert report["phases"]["environment"]["status"] == "ok" and report["device"] == "cpu"
    assert report["phases"]["bare"]["status"] == "failed"
    assert "no gated run to time against; run the gated phase first" in report["errors"]["bare"]
    kept = report["phases"]["environment"]
    result, again = check("--phases", "environment,bare", "--failed", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert again["phases"]["environment"] == kept  # not run again
    assert again["phases"]["bare"]["status"] == "failed" and again["phases"]["bare"] != report["phases"]["bare"]


def test_a_phase_past_its_limit_is_killed_and_the_report_holds_every_phase_before_it(tmp_path):
    result, report = check("--phases", "environment,gated", "--max-phase-s", "5", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert report["phases"]["gated"]["status"] == "timed_out" and report["phases"]["gated"]["limit_s"] == 5
    assert report["errors"]["gated"] == "past its 5.0 s limit"
    assert report["phases"]["environment"]["status"] in ("ok", "timed_out")  # importing TRL may itself take 5 s


def test_bad_phase_names_and_an_unreadable_report_are_refused_with_exit_2(tmp_path):
    result, _ = check("--phases", "probes,warp", cwd=tmp_path)
    assert result.returncode == 2 and "--phases: unknown warp" in result.stderr
    (tmp_path / "gpu_check.json").write_text("{not json")
    result, _ = (
        subprocess.run(
            [
                sys.executable,
                "-m",
                "rc1.bench.gpu_check",
                "--dry-run",
                "--failed",
                "--out",
                str(tmp_path / "gpu_check.json"),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=PATIENCE,
            check=False,
        ),
        None,
    )
    assert result.returncode == 2 and "gpu_check.json: not a gpu-check report" in result.stderr


@pytest.mark.long
def test_make_gpu_check_runs_its_dry_run_here_and_ends_on_one_json_line(tmp_path):
    result = subprocess.run(
        ["make", "-s", "gpu-check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        check=False,
        env={**os.environ, "OUT": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert (report["device"], report["dry_run"], report["errors"]) == ("cpu", True, {})
    # each phase in its own process, reported as it ended, the file under $OUT the JSON printed
    assert [(name, p["status"]) for name, p in report["phases"].items()] == [(n, "ok") for n in PHASES]
    assert json.loads((tmp_path / "gpu_check.json").read_text()) == report
    assert (tmp_path / "gpu-check-logs" / "events" / "gpu-check.jsonl").stat().st_size > 0  # the gated run's log back
    # What TRL would be given on a GPU for the production profile
    gpu = report["arguments_on_gpu"]
    assert (gpu["rollouts"], gpu["exact_resume"], gpu["bf16"]) == ("hf", True, True)
    assert (gpu["temperature"], gpu["top_k"], gpu["top_p"], gpu["max_completion_length"]) == (0.6, 20, 0.95, 8192)
    assert gpu["trl_top_p"] == 1.0  # transformers samples: the cut is rc1's, deterministic on CUDA
    assert gpu["mask_truncated_completions"] and gpu["steps_per_generation"] == gpu["gradient_accumulation_steps"]
    # The probes ran on a small model of the production layout, and the plan beside what was measured
    probes = report["probes"]
    assert probes["shape"]["vocab"] == 151936 and probes["micro_batch"]["finite"]
    assert probes["random_model"]["write_s"] > 0 and probes["random_model"]["load_s"] > 0
    for phase in ("micro_batch", "evaluation"):
        assert probes[phase]["measured_gb"] > 0 and probes[phase]["planned_gb"] > 0
    assert probes["line"]["batches_per_evaluation"] == 8 + 62  # 245 greedy in 32s, 245 × 8 sampled 4 items a batch
    # The gated run: killed by SIGKILL at step 4, resumed to its verdict, the step trained again identical
    gated = report["gated_run"]
    assert (gated["killed_exit"], gated["resumed_exit"], gated["state"]) == (-9, 0, "CHECKPOINTED")
    assert [s["resume_from_step"] for s in gated["training_started"]] == [0, 2]
    assert all(s["exact_resume"] and s["generation"] == "hf" for s in gated["training_started"])
    assert gated["steps_trained_again"] == [3] and gated["steps_trained_again_identical"] is True
    assert gated["release"]["n"] == 60 and len(gated["eval_mem_peak_mb"]) == 3
    assert report["tokens_per_s"]["rc1"] > 0 and report["tokens_per_s"]["bare_trl"] > 0


def test_the_plan_fits_eight_minutes_by_estimate_and_one_device_command_by_its_limits():
    """docs/gpu.md, "The plan": each phase's estimate under its limit; the estimates within 8 minutes, the limits
    within the 10 minutes one device command may run."""
    assert all(ESTIMATES[phase] < LIMITS[phase] for phase in PHASES)
    assert sum(ESTIMATES.values()) <= 8 * 60 and sum(LIMITS.values()) < 10 * 60


def test_the_environment_phase_names_every_requirement_the_installed_packages_do_not_meet():
    """The device installs its wheels with --no-deps: the first phase walks rc1's requirements (from pyproject.toml,
    rc1 being run from its tree there) through the installed distributions and names what is unmet."""
    from packaging.requirements import Requirement

    from rc1.bench.wheels import rc1_requirements, unmet_here

    declared = rc1_requirements()
    assert {r.name for r in declared} >= {"trl", "transformers", "peft", "bitsandbytes", "datasets"}
    assert unmet_here(declared) == []  # this environment, as make setup installed it
    assert unmet_here([Requirement("torch>=99"), Requirement("no-such-package-rc1")]) == [
        f"rc1 requires torch>=99, installed {torch_version()}",
        "rc1 requires no-such-package-rc1, which is not installed",
    ]


def torch_version() -> str:
    from importlib.metadata import version

    return version("torch")


def test_the_random_model_is_written_to_memory_where_it_fits_and_beside_the_work_where_not(tmp_path):
    """Qwen3-4B's random weights are 8 GB in bf16: a memory file system takes them when it has room for twice that."""
    from rc1.bench.gpu_probes import SMALL, random_model_folder
    from rc1.checks.memory_plan import QWEN3_4B

    ram, work = tmp_path / "ram", tmp_path / "work"
    ram.mkdir()
    assert random_model_folder(SMALL, work, ram).parent == ram  # ~40 MB
    assert random_model_folder(QWEN3_4B, work, tmp_path / "no-such-ram").parent == work


def test_the_wheels_for_a_cuda_node_are_rcs_needs_less_torchs_and_the_images():
    from rc1.bench.wheels import needed

    wanted = needed("3.12", set())
    assert {"trl", "transformers", "peft", "datasets", "msgspec", "bitsandbytes", "zstandard"} <= wanted.keys()
    assert not {"torch", "triton", "sympy", "networkx", "jinja2"} & wanted.keys()
    assert not any(name.startswith("nvidia-") for name in wanted)
    lean = needed("3.12", {"transformers", "peft", "accelerate", "pyarrow", "scipy", "matplotlib"})
    assert "trl" in lean and not {"transformers", "peft", "pyarrow"} & lean.keys()


def test_make_wheels_refuses_an_image_whose_version_a_carried_wheel_does_not_accept_naming_both(tmp_path):
    """The device installs the wheels with --no-deps, so nothing there would notice: TRL needs transformers ≥ 4.56.2
    and datasets pyarrow ≥ 24 (their installed metadata); an image with older ones is refused before any download."""
    have = tmp_path / "image.txt"
    have.write_text("transformers==4.40.0\npeft\naccelerate==1.15.0\npyarrow==19.0.1\n")
    result = subprocess.run(
        [sys.executable, "-m", "rc1.bench.wheels", "--dir", str(tmp_path / "whl"), "--have", str(have)],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        check=False,
    )
    assert result.returncode == 3, result.stderr
    assert (
        "trl " in result.stderr and "requires transformers>=4.56.2, the image has transformers 4.40.0" in result.stderr
    )
    assert "requires pyarrow>=24.0.0, the image has pyarrow 19.0.1" in result.stderr
    assert "accelerate" not in result.stderr  # 1.15.0 meets every carried wheel's requirement
    assert not (tmp_path / "whl").exists() or not any((tmp_path / "whl").iterdir())


def test_the_h200_image_takes_every_wheel_rc1_would_carry_to_it():
    """A dependency bumped here past what the device image holds fails here, not in the device's first minute."""
    from rc1.bench.wheels import image_versions, needed, unmet

    image = image_versions((REPO / "configs" / "images" / "h200.txt").read_text())
    assert image["transformers"] == "5.17.0" and image["peft"] is None and "absl-py" in image
    carried = needed("3.12", set(image))
    assert "trl" in carried and "transformers" not in carried
    assert unmet(carried, image, "3.12") == []


def test_the_rehearsal_overlays_the_images_versions_that_differ_and_keeps_torch():
    from importlib.metadata import version

    from rc1.bench.rehearsal import overlay

    image = {"transformers": "5.17.0", "torch": "2.11.0", "peft": None, "msgspec": version("msgspec")}
    assert overlay(image, "3.12") == {"transformers": (version("transformers"), "5.17.0")}
