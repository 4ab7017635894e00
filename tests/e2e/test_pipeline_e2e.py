"""End to end through the real CLI: the gated pipeline on a short embedded-default run."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import subprocess
import sys

import pytest
from conftest import FULL_VERDICT, PATIENCE, SHORT, events, make_workspace, rc1, rc1_here, types

from rc1.app.checks import CHECKS

pytestmark = pytest.mark.e2e

# The completed run's verdict: SHORT's samples per gate item and threshold (test_each_seed_… takes the embedded
# default's, FULL_VERDICT).
SAMPLES, THRESHOLD = SHORT["release.samples"], SHORT["release.min_hard_gain_pp"]


def status_json(root):
    result = rc1(root, "status", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_fresh_workspace_runs_gated_to_a_checkpointed_complete_run(completed_run):
    seen = types(completed_run)
    # The order the gates impose.
    assert seen[0] == "run_started"
    assert seen.index("round1_passed") < seen.index("round2_passed") < seen.index("training_started")
    assert seen[-1] == "run_completed"
    steps = [e["step"] for e in events(completed_run) if e["type"] == "train_step"]
    assert steps == list(range(1, 13))
    saved = [e["step"] for e in events(completed_run) if e["type"] == "checkpoint_saved"]
    assert saved == [4, 8, 12]
    for e in events(completed_run):
        if e["type"] == "train_step":
            assert e["tokens"] > 0 and e["sec_per_step"] > 0 and e["mem_used_mb"] > 0 and e["lr"] > 0
    [started] = [e for e in events(completed_run) if e["type"] == "training_started"]
    assert started["exact_resume"] is True and started["thinking"] is False  # the CPU; the tiny model's ChatML

    status = status_json(completed_run)
    assert {
        "run",
        "state",
        "allowed",
        "step",
        "max_steps",
        "complete",
        "latest_checkpoint",
        "gates",
        "last_error",
        "events",
    } <= status.keys()
    assert (status["state"], status["step"], status["max_steps"], status["complete"]) == ("CHECKPOINTED", 12, 12, True)
    assert status["latest_checkpoint"] == {"step": 12, "dir": "checkpoints/local/step_00012"}
    assert status["gates"]["round2"]["passed"] and status["gates"]["round2"]["inputs_match"]
    assert set(status["gates"]["round2"]["fingerprints"]) == {
        "pool",
        "balanced_pool",
        "shadow",
        "gate",
        "config",
        "weights",
        "templates",
    }
    assert status["events"] == len(seen)

    ckpts = completed_run / "checkpoints" / "local"
    assert os.readlink(ckpts / "latest") == "step_00012"
    log = events(completed_run)
    evals = [e for e in log if e["type"] == "eval_completed"]
    assert [e["step"] for e in evals] == [0, 4, 8, 12]  # the untrained policy first, before any optimizer step
    assert seen.index("eval_completed") < seen.index("train_step")
    cells = {(b["task"], b["difficulty"]) for b in evals[-1]["buckets"]}
    assert {("hotpotqa", "hard"), ("strategyqa", "hard"), ("gsm8k", "easy"), ("all", "all")} <= cells
    assert all(b["delta_pp"] is None for b in evals[0]["buckets"]) and all(
        b["delta_pp"] is not None for b in evals[-1]["buckets"]
    )
    assert all(e["samples"] == SAMPLES and e["hard_sampled_success"] is not None for e in evals)  # beside greedy
    assert all(e["mem_peak_mb"] > 0 for e in evals)  # on the CPU, the process's resident-set peak
    promoted = [e for e in log if e["type"] == "best_promoted"]
    overall = [
        next(b["sampled_success"] for b in e["buckets"] if (b["task"], b["difficulty"]) == ("all", "all"))
        for e in evals
    ]
    values = [overall[0]] + [e["value"] for e in promoted]  # release.metric: sampled_success
    assert values == sorted(set(values))  # each promotion strictly beats every evaluation before it
    best = ckpts / "best"
    assert (sorted(p.name for p in best.iterdir()) if best.exists() else []) == [
        f"step_{e['step']:05d}" for e in promoted
    ]

    # The verdict: the gate set, evaluated on the step-0 policy in round 2 and on the checkpoint the shadow set chose.
    [release] = [e for e in log if e["type"] == "release_evaluated"]
    assert seen.index("release_evaluated") == len(seen) - 2
    base, selected = [e for e in log if e["type"] == "gate_set_evaluated"]
    assert seen.index("gate_set_evaluated") < seen.index("round2_passed")
    chosen = promoted[-1]["step"] if promoted else 12
    assert (base["policy"], base["step"], selected["policy"], selected["step"]) == ("base", 0, "selected", chosen)
    assert selected["selected_by"] == ("best" if promoted else "final") == release["selected_by"]
    assert base["item_ids"] == selected["item_ids"] and len(base["item_ids"]) == release["n"] == 60
    gain = 100 * (sum(selected["sampled"]) - sum(base["sampled"])) / (SAMPLES * 60)
    assert release["hard_gain_pp"] == pytest.approx(gain) and release["ci_low_pp"] <= gain <= release["ci_high_pp"]
    assert release["passed"] == (gain >= THRESHOLD and release["ci_low_pp"] > 0) == (not release["failed"])
    assert {
        "passed": release["passed"],
        "hard_gain_pp": release["hard_gain_pp"],
        "threshold": THRESHOLD,
        "step": chosen,
        "ci_low_pp": release["ci_low_pp"],
        "ci_high_pp": release["ci_high_pp"],
        "n": 60,
        "samples": SAMPLES,
    }.items() <= status["release"].items()
    assert status["release"]["seeds"]["1234"]["hard_gain_pp"] == release["hard_gain_pp"]
    for view in (
        "reports/metrics.jsonl",
        "reports/ckpt_manifest.jsonl",
        "reports/config_effective.yaml",
        "reports/preflight/round1.json",
        "reports/preflight/round2_pass.json",
        "logs/train.log",
    ):
        assert (completed_run / view).stat().st_size > 0, view
    assert len((completed_run / "reports/metrics.jsonl").read_text().splitlines()) == 12

    audit = rc1(completed_run, "audit")
    assert audit.returncode == 0, audit.stdout
    assert "audit passed" in audit.stdout


def test_gated_inputs_are_not_rebuilt_once_a_gate_has_passed_on_them(finished_copy):
    before = {
        p: (finished_copy / p).read_bytes()
        for p in (
            "data/local/pool.jsonl",
            "data/local/shadow.jsonl",
            "data/local/pool_balanced.jsonl",
            "events/local.jsonl",
        )
    }
    for command in (("pool", "build"), ("shadow", "materialize"), ("difficulty", "bucketize")):
        refused = rc1_here(finished_copy, *command)
        assert (
            refused.returncode == 3
            and "it rewrites a gated input" in refused.stderr
            and "not allowed in state CHECKPOINTED" in refused.stderr
        )
    assert {p: (finished_copy / p).read_bytes() for p in before} == before


def test_handoff_bundles_each_stage_from_the_log(completed_run):
    bundle = json.loads(rc1_here(completed_run, "handoff", "--json").stdout)
    assert bundle["stage"] == "training" and bundle["state"] == "CHECKPOINTED" and not bundle["blockers"]
    checkpoints = [e for e in events(completed_run) if e["type"] == "checkpoint_saved"]
    assert [(a["path"], a["sha256"]) for a in bundle["artifacts"]] == [
        (e["dir"], e["files"]["model.safetensors"]) for e in checkpoints
    ]
    assert bundle["from"].startswith("rc1 ") and bundle["next_actions"]
    round1 = json.loads(rc1_here(completed_run, "handoff", "--round", "1", "--json").stdout)
    assert all(round1["checks"].values()) and len(round1["checks"]) == 20 and not round1["risks"]
    assert "data/local/gate.jsonl" in {artifact["path"] for artifact in round1["artifacts"]}
    for artifact in round1["artifacts"]:  # what the log recorded is what lies on disk
        assert hashlib.sha256((completed_run / artifact["path"]).read_bytes()).hexdigest() == artifact["sha256"]
    text = rc1_here(completed_run, "handoff", "--round", "2").stdout
    assert text.startswith("SYNC local: round 2") and "reports/shadow_run_pre_run_check.json" in text


def test_advance_on_a_complete_run_says_so_and_appends_nothing(finished_copy):
    before = (finished_copy / "events/local.jsonl").read_bytes()
    result = rc1(finished_copy, "advance")
    assert result.returncode == 0 and "complete" in result.stdout
    assert (finished_copy / "events/local.jsonl").read_bytes() == before
    # `train` on it is refused by the machine's guard (a complete run trains no more), not a second completion.
    trained = rc1_here(finished_copy, "train")
    assert trained.returncode == 3 and "the run is complete" in trained.stderr
    assert (finished_copy / "events/local.jsonl").read_bytes() == before


@pytest.mark.parametrize(
    "until, state, step",
    [
        ("step_6", "TRAINING", 6),
        ("round1_passed", "R1_PASSED", 0),
        ("checkpoint_saved", "CHECKPOINTED", 4),
    ],
)
def test_replay_until_shows_the_run_as_it_stood(completed_run, until, state, step):
    result = rc1(completed_run, "replay", "--until", until, "--json")
    assert result.returncode == 0, result.stderr
    view = json.loads(result.stdout)
    assert (view["state"], view["step"], view["complete"]) == (state, step, False)


def test_status_of_a_complete_run_names_the_next_command_and_the_metric_that_chose_best(completed_run):
    promoted = [e for e in events(completed_run) if e["type"] == "best_promoted"][-1]
    view = json.loads(rc1_here(completed_run, "status", "--json").stdout)
    assert (view["best_step"], view["best_metric"]) == (promoted["step"], promoted["metric"])
    released = view["release"]["passed"]
    assert view["next"].startswith("rc1 export --out DIR" if released else "rc1 report (plots; the release verdict")
    text = rc1_here(completed_run, "status").stdout
    assert f"best       step {promoted['step']} (chosen on the shadow set by {promoted['metric']} " in text
    assert f"next       {view['next']}" in text


def test_replay_past_the_end_names_the_last_step(completed_run):
    shown = rc1_here(completed_run, "replay", "--until", "step_99999")
    last_step = [e for e in events(completed_run) if e["type"] == "train_step"][-1]["step"]
    assert shown.returncode == 2 and f"its last step is step_{last_step};" in shown.stderr


def test_replay_until_seq_and_iso_time(completed_run):
    log = events(completed_run)
    view = json.loads(rc1(completed_run, "replay", "--until", "seq:3", "--json").stdout)
    assert view["events"] == 4
    view = json.loads(rc1(completed_run, "replay", "--until", log[0]["ts"], "--json").stdout)
    assert view["events"] == sum(1 for e in log if e["ts"] <= log[0]["ts"])
    assert rc1(completed_run, "replay", "--until", "tomorrow").returncode == 2


def test_views_are_rebuilt_from_the_log_and_editing_them_opens_nothing(finished_copy):
    (finished_copy / "reports/metrics.jsonl").write_text("")
    assert rc1(finished_copy, "report").returncode == 0
    assert len((finished_copy / "reports/metrics.jsonl").read_text().splitlines()) == 12


def test_failpack_packs_logs_reports_configs_and_the_event_log(finished_copy):
    import tarfile

    result = rc1(finished_copy, "failpack", "--out", "pack.tar.gz")
    assert result.returncode == 0, result.stderr
    names = tarfile.open(finished_copy / "pack.tar.gz").getnames()
    assert "events/local.jsonl" in names and "logs/train.log" in names and "configs/short.yaml" in names


def test_training_refuses_before_round_two(tmp_path):
    root = make_workspace(tmp_path)
    result = rc1_here(root, "train")
    assert result.returncode == 3 and "not allowed in state INIT" in result.stderr
    assert "what is, now: rc1 advance (round 1" in result.stderr  # a command, not a trigger
    ghost = rc1_here(root, "train", "--run", "ghost")
    assert ghost.returncode == 3 and "rc1 advance --run ghost (round 1" in ghost.stderr
    # a refused command leaves nothing for a run that does not exist: no lock, no views, no folders made for them
    assert sorted(p.name for p in root.iterdir()) == ["configs", "data"]
    assert rc1_here(root, "preflight", "--round", "1").returncode == 0
    result = rc1_here(root, "train")
    assert result.returncode == 3 and "not allowed in state R1_PASSED" in result.stderr
    assert "training_started" not in types(root)


def test_hand_written_round2_report_opens_nothing(tmp_path):
    root = make_workspace(tmp_path)
    assert rc1_here(root, "advance").returncode == 0  # round 1
    (root / "reports/preflight/round2_pass.json").write_text('{"passed": true}')
    assert rc1_here(root, "train").returncode == 3


def test_changed_inputs_after_round_two_invalidate_the_gate(tmp_path):
    root = make_workspace(tmp_path)
    assert rc1_here(root, "advance", "--until", "R2_PASSED").returncode == 0
    with open(root / "data/local/pool.jsonl", "a") as fh:
        fh.write((root / "data/local/pool.jsonl").read_text().splitlines()[0] + "\n")
    before = types(root)
    refused = rc1_here(root, "advance")
    assert refused.returncode == 3 and "pool" in refused.stderr and "nothing was appended" in refused.stderr
    assert types(root) == before and status_json(root)["state"] == "R2_PASSED"
    result = rc1_here(root, "advance", "--accept-changed-inputs")
    assert result.returncode == 3 and "pool" in result.stderr
    assert types(root)[-1] == "gate_invalidated" and events(root)[-1]["input"] == "pool"
    assert status_json(root)["state"] == "INIT"
    assert rc1_here(root, "audit").returncode == 0  # the log recorded the invalidation: it is consistent


def test_a_round_whose_check_fails_records_it_and_exits_3(tmp_path):
    root = make_workspace(tmp_path)
    (root / "configs/weights.json").write_text('{"correctness": 0.6, "f1": 0.1, "format": 0.2, "length": 0.1}')
    result = rc1_here(root, "advance")
    assert result.returncode == 3 and "weights" in result.stderr
    failed = [e for e in events(root) if e["type"] == "check_failed"]
    assert [e["name"] for e in failed] == ["weights"]
    assert types(root)[-1] == "gate_failed" and status_json(root)["state"] == "INIT"
    # The handoff of the round names the failure as a blocker and what to do next.
    bundle = json.loads(rc1_here(root, "handoff", "--json").stdout)
    assert bundle["stage"] == "round 1" and bundle["checks"]["weights"] is False
    assert [(b["kind"], b["message"].split(":")[0]) for b in bundle["blockers"]] == [
        ("check_failed", "weights"),
        ("gate_failed", "round 1 failed"),
    ]
    assert "fix what the failed checks name" in bundle["next_actions"][0]
    assert [a["path"] for a in bundle["artifacts"]] == [
        "data/local/shadow.jsonl",
        "data/local/gate.jsonl",
        "data/local/pool.jsonl",
        "data/local/pool_balanced.jsonl",
    ]


@pytest.mark.parametrize(
    "override, message",
    [
        ("train.max_steps=zero", "train.max_steps: Expected `int`, got `str`"),
        ("train.nonsense=1", "train.nonsense: unknown key"),
    ],
)
def test_bad_config_exits_2_naming_the_key_and_appends_nothing(finished_copy, override, message):
    before = (finished_copy / "events/local.jsonl").read_bytes()
    result = rc1(finished_copy, "advance", "--set", override)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert (finished_copy / "events/local.jsonl").read_bytes() == before


def test_malformed_yaml_exits_2(finished_copy):
    (finished_copy / "configs/broken.yaml").write_text("profile: local\nrun: {name: [\n")
    result = rc1(finished_copy, "advance", config="configs/broken.yaml")
    assert result.returncode == 2 and "configs/broken.yaml:" in result.stderr and "malformed YAML" in result.stderr


def test_a_second_writer_exits_4_and_appends_nothing(finished_copy):
    import fcntl

    (finished_copy / "events/local.lock").touch()
    before = (finished_copy / "events/local.jsonl").read_bytes()
    with open(finished_copy / "events/local.lock", "r+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        result = rc1(finished_copy, "repair")
    assert result.returncode == 4 and "another rc1 process" in result.stderr
    assert (finished_copy / "events/local.jsonl").read_bytes() == before


def _write_gsm8k(path, first: int, count: int) -> None:
    """`count` records in the official GSM8K format, 1 to 6 worked steps each (so every difficulty)."""
    lines = []
    for i in range(first, first + count):
        steps = 1 + i % 6
        work = "\n".join(f"Stage {k} costs {i} + {k} = <<{i}+{k}={i + k}>>{i + k} coins." for k in range(steps))
        question = (
            f"Merchant number {i} from the river town buys {steps} crates of figs at {i + 3} coins each, "
            f"sells {i % 7 + 2} of them at the market and keeps the rest for winter. How many coins did merchant {i} "
            "spend?"
        )
        lines.append(json.dumps({"question": question, "answer": f"{work}\n#### {steps * (i + 3)}"}))
    path.write_text("\n".join(lines) + "\n")


def test_a_pool_drawn_from_the_shadow_sets_own_file_fails_the_leak_check(tmp_path):
    root = make_workspace(tmp_path)
    _write_gsm8k(root / "configs/gsm8k_a.jsonl", 0, 60)  # the short pool has 60 gsm8k items: all of them
    _write_gsm8k(root / "configs/gsm8k_b.jsonl", 1000, 60)
    same = ["--set", "data.sources.gsm8k.path=gsm8k_a.jsonl", "--set", "data.sources.gsm8k.shadow_path=gsm8k_a.jsonl"]
    result = rc1_here(root, "preflight", "--round", "1", *same)
    assert result.returncode == 3 and "leak" in result.stderr
    leak = [e for e in events(root) if e.get("name") == "leak"][-1]
    shadow_gsm8k = sum(
        1 for line in (root / "data/local/shadow.jsonl").read_text().splitlines() if '"task":"gsm8k"' in line
    )
    assert leak["type"] == "check_failed" and shadow_gsm8k > 0
    assert leak["measured"]["gsm8k.leaked"] == shadow_gsm8k and leak["measured"]["hotpotqa.leaked"] == 0
    assert types(root)[-1] == "gate_failed" and status_json(root)["state"] == "INIT"

    held_out = [
        "--set",
        "data.sources.gsm8k.path=gsm8k_a.jsonl",
        "--set",
        "data.sources.gsm8k.shadow_path=gsm8k_b.jsonl",
    ]
    # the run keeps the config it was started with, failed round or not: another one is asked for by name
    refused = rc1_here(root, "preflight", "--round", "1", *held_out)
    assert refused.returncode == 3 and "data.sources.gsm8k.shadow_path: gsm8k_a.jsonl (kept) -> gsm8k_b.jsonl" in (
        refused.stderr
    )
    rc1_here(root, "preflight", "--round", "1", *held_out, "--accept-changed-inputs")
    leak = [e for e in events(root) if e.get("name") == "leak"][-1]
    assert leak["type"] == "check_passed" and leak["measured"]["leaked"] == 0


def test_each_data_step_runs_alone_and_writes_its_artifacts_and_events_without_opening_a_gate(tmp_path):
    root = make_workspace(tmp_path)
    early = rc1_here(root, "pool", "validate")
    assert early.returncode == 2 and "no pool yet" in early.stderr and "Traceback" not in early.stderr

    for step in (("shadow", "materialize"), ("pool", "build"), ("difficulty", "metrics"), ("difficulty", "bucketize")):
        result = rc1_here(root, *step)
        assert result.returncode == 0, (step, result.stderr)
    data = root / "data/local"
    for name in (
        "shadow.jsonl",
        "shadow_manifest.json",
        "pool.jsonl",
        "difficulty_metrics.jsonl",
        "pool_balanced.jsonl",
    ):
        assert (data / name).stat().st_size > 0, name

    validated = rc1_here(root, "pool", "validate")
    assert validated.returncode == 0, validated.stdout
    judged = rc1_here(root, "difficulty", "validate")
    assert judged.returncode == 0 and (root / "reports/rc1/difficulty_report.json").stat().st_size > 0
    names = [e["name"] for e in events(root) if e["type"] == "check_passed"]
    # live_episodes checks live items only: a recorded run records nothing of it (it returns None)
    table = [check.name for check in CHECKS if "pool validate" in check.commands and check.name != "live_episodes"]
    assert table[:2] == ["seed_pool", "distinct2"] and "duplicates" in table  # the pool's own, in the table's order
    assert names == table + ["difficulty"]
    assert status_json(root)["state"] == "INIT"  # checks run alone open no gate

    pool_file = data / "pool.jsonl"
    lines = pool_file.read_text().splitlines()
    pool_file.write_text("\n".join(lines + lines[:12]) + "\n")  # 12 exact copies: 5% of 240
    failed = rc1_here(root, "pool", "validate")
    assert failed.returncode == 3 and "FAIL  duplicates" in failed.stdout
    duplicates = [e for e in events(root) if e.get("name") == "duplicates"][-1]
    assert duplicates["type"] == "check_failed" and duplicates["measured"]["exact"] == 12


def test_report_draws_the_runs_pictures(finished_copy):
    result = rc1(finished_copy, "report")
    assert result.returncode == 0, result.stderr
    for name in ("training.png", "success_by_difficulty.png", "pool_difficulty.png"):
        path = finished_copy / "reports" / "plots" / name
        assert f"plot: reports/plots/{name}" in result.stdout
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000, name
    assert result.stdout.count("release (RC1 gate)") == 1  # the verdict, as the line printed it
    # make run: `advance --all` has just printed it, and its report says it once, not twice
    quiet = rc1_here(finished_copy, "report", "--no-verdicts")
    assert quiet.returncode == 0 and "release (RC1 gate)" not in quiet.stdout and "plot: reports/plots" in quiet.stdout


def test_round_two_runs_the_shadow_run_on_the_base_model(completed_run):
    import hashlib

    seen = types(completed_run)
    [run] = [e for e in events(completed_run) if e["type"] == "shadow_run_completed"]
    assert seen.index("shadow_run_completed") < seen.index("round2_passed")
    assert (run["tag"], run["checkpoint"], run["samples"]) == ("pre_run_check", "base", SHORT["shadow.samples"])
    report = completed_run / run["report"]
    assert hashlib.sha256(report.read_bytes()).hexdigest() == run["sha256"]
    assert json.loads(report.read_text())["statistics"] == run["statistics"]
    [check] = [e for e in events(completed_run) if e.get("name") == "shadow_run"]
    assert check["type"] == "check_passed" and check["tags"] == ["pre_run_check"]
    # thinking_fits reads the same replies: none of the tiny model's reaches the 24-token limit, and most items' two
    # replies all fail (configs/local.yaml says why the local profile measures that without gating on it)
    [fits] = [e for e in events(completed_run) if e.get("name") == "thinking_fits"]
    m = fits["measured"]
    assert fits["type"] == "check_passed" and (m["items"], m["samples"], m["max_completion_tokens"]) == (30, 2, 24)
    assert m["cut_share"] == m["cut_share_low"] == 0.0 < m["cut_share_high"] < 0.1 and m["closed_share"] == 1.0
    assert 0 < m["closed_tokens_p50"] <= m["closed_tokens_p99"] <= m["closed_tokens_max"] < 24
    assert 0.5 < m["no_signal_share"] <= 1.0 and m["no_signal_share"] == m["all_fail_share"] + m["all_succeed_share"]
    assert {f"task.{t}.no_signal_share" for t in ("gsm8k", "hotpotqa", "strategyqa")} <= m.keys()
    # component_spread reads them too: the embedded default has no functions of its own, so nothing of it can fail
    [spread] = [e for e in events(completed_run) if e.get("name") == "component_spread"]
    assert spread["type"] == "check_passed" and spread["measured"]["replies"] == 60
    assert {"correctness.min", "format.max", "length.sd", "f1.groups_varying"} <= spread["measured"].keys()


def test_replies_cut_at_a_tiny_completion_limit_fail_round_two_with_the_runbook(tmp_path):
    """4 tokens: the tiny model's replies (5 tokens at the median, measured) are cut before they answer."""
    root = make_workspace(tmp_path, **{"train.max_completion_tokens": 4})
    result = rc1_here(root, "advance", "--until", "R2_PASSED")
    assert result.returncode == 3, result.stderr
    [failed] = [e for e in events(root) if e["type"] == "check_failed"]
    assert failed["name"] == "thinking_fits" and failed["round"] == 2
    assert failed["measured"]["cut_share"] > 0.5 and failed["measured"]["cut_share_low"] > 0.1
    assert "of the replies were cut at 4 tokens" in failed["detail"]
    assert "thinking_fits" in result.stderr and "raise train.max_completion_tokens" in result.stderr
    assert types(root)[-1] == "gate_failed" and status_json(root)["state"] == "R1_PASSED"


def test_a_shadow_run_of_a_checkpoint_writes_its_report_and_event(finished_copy):
    result = rc1_here(finished_copy, "shadow", "run", "--tag", "after", "--checkpoint", "step_12", "--samples", "2")
    assert result.returncode == 0, result.stderr
    last = events(finished_copy)[-1]
    assert (last["type"], last["tag"], last["checkpoint"], last["samples"]) == (
        "shadow_run_completed",
        "after",
        "step_12",
        2,
    )
    assert (finished_copy / "reports/shadow_run_after.json").exists() and "spearman" in result.stdout
    bad = rc1_here(finished_copy, "shadow", "run", "--checkpoint", "step_7")
    assert bad.returncode == 2 and "no checkpoint_saved event for step 7" in bad.stderr


def _alive(kind: type) -> set[int]:
    """The objects of `kind` this process still holds, once the cyclic collector has run."""
    gc.collect()
    return {id(obj) for obj in gc.get_objects() if isinstance(obj, kind)}


def test_each_seed_of_run_seeds_trains_its_own_line_and_the_release_verdict_spans_them(tmp_path):
    """Two seeds, each with priority sampling (one pipeline run for both: a line of training costs a warm start)."""
    root = make_workspace(
        tmp_path,
        **{"train.max_steps": 2, "train.save_steps": 2, "train.eval_steps": 2, "run.seeds": [1234, 99], **FULL_VERDICT},
    )
    sampling = [
        "--set",
        "priority_sampling.low_perf_cap=0.5",
        "--set",
        "priority_sampling.seed_ratio_schedule=[[0, 1.0], [2, 0.5]]",
        "--set",
        "priority_sampling.by_difficulty={easy: 0.2, medium: 0.4, hard: 0.4}",
    ]
    from transformers import PreTrainedModel, Trainer

    before = _alive(Trainer) | _alive(PreTrainedModel)
    result = rc1_here(root, "advance", "--all", *sampling)
    assert result.returncode == 0, result.stderr
    # Each line let go of its trainer and policy (rc1/app/train.py: engine.close, free_memory): none is left alive.
    assert _alive(Trainer) | _alive(PreTrainedModel) <= before
    log = events(root)

    steps = [e for e in log if e["type"] == "train_step"]
    prompts_per_step = 16 // 4  # per_device_batch_size / num_generations
    assert [e["seed_share"] for e in steps] == [1.0, 0.5] * 2  # from step 2, half the prompts are fresh
    assert all(sum(e["batch_difficulty"].values()) == prompts_per_step and e["low_perf"] <= 2 for e in steps)
    for seed in (1234, 99):
        sampler = json.loads((root / f"checkpoints/local/seed_{seed}/step_00002/sampler.json").read_text())
        assert sampler["kind"] == "priority" and sampler["next_step"] == 3 and sampler["seed"] == seed

    started = [e for e in log if e["type"] == "training_started"]
    assert [(e["seed"], e["seeds"], e["resume_from_step"]) for e in started] == [
        (1234, [1234, 99], 0),
        (99, [1234, 99], 0),
    ]
    completed = [e for e in log if e["type"] == "run_completed"]
    assert [(e["seed"], e["step"]) for e in completed] == [(1234, 2), (99, 2)]
    for seed in (1234, 99):  # each line keeps its own checkpoints, step 0 evaluation and release
        assert (root / f"checkpoints/local/seed_{seed}/step_00002/model.safetensors").is_file()
    releases = [e for e in log if e["type"] == "release_evaluated"]
    assert [e["seed"] for e in releases] == [1234, 99]
    assert sum(1 for e in log if e["type"] == "eval_completed" and e["step"] == 0) == 2
    gates = [(e["policy"], e["seed"]) for e in log if e["type"] == "gate_set_evaluated"]
    assert gates == [("base", None), ("selected", 1234), ("selected", 99)]  # one step 0 for both lines
    (across,) = [e for e in log if e["type"] == "release_across_seeds"]
    gains = [e["hard_gain_pp"] for e in releases]
    assert across["gains_pp"] == {"1234": gains[0], "99": gains[1]}
    assert across["mean_pp"] == pytest.approx(sum(gains) / 2)
    assert across["spread_pp"] == pytest.approx(abs(gains[0] - gains[1]) / 2**0.5)
    assert across["passed"] == (across["mean_pp"] - across["spread_pp"] >= 5.0 and all(e["passed"] for e in releases))
    status = json.loads(rc1_here(root, "status", "--json", *sampling).stdout)
    assert status["complete"] and [line["seed"] for line in status["finished"]] == [1234, 99]
    assert status["across_seeds"]["mean_pp"] == across["mean_pp"]
    text = rc1_here(root, "status", *sampling).stdout
    assert "seed 1234" in text and "seed 99" in text and "release across seeds" in text
    assert rc1_here(root, "audit", *sampling).returncode == 0
    # Each line's steps are its own: rescoring compares a step of seed 2's line with seed 2's train_step only.
    rescored = rc1_here(root, "audit", "--rescore", *sampling)
    assert rescored.returncode == 0, rescored.stdout
    assert rc1_here(root, "advance", *sampling).stdout.startswith("run local is complete")


def test_status_reads_the_snapshot_and_says_what_the_whole_log_says_without_the_training_stack(finished_copy):
    snapshot = finished_copy / "events/local.snapshot.json"
    assert snapshot.is_file()  # every writing command leaves one when it closes
    fast = rc1_here(finished_copy, "status", "--json").stdout
    snapshot.unlink()
    assert rc1_here(finished_copy, "status", "--json").stdout == fast  # the whole log, replayed: the same
    probe = (
        "import sys; from rc1.cli.main import main; main(['status', '--json', '--config', 'configs/short.yaml']); "
        "print(sorted(m for m in ('torch', 'transformers', 'trl', 'peft') if m in sys.modules), file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=finished_copy, capture_output=True, text=True, timeout=PATIENCE
    )
    assert result.returncode == 0 and result.stderr.strip().endswith("[]")  # a read-only command imports none of them
