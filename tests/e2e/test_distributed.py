"""A multi-process launch (torchrun: two CPU processes on gloo; `accelerate launch` sets the same RANK and
WORLD_SIZE on GPUs, but runs a single process on CPUs): only rank 0 takes the lock and writes the log and publishes
checkpoints; the other rank trains its share, generates its share of every evaluation and never touches the log."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import PATIENCE, REPO, events, failure, launch, make_workspace, rc1_forked, rc1_here

from rc1.core import distributed
from rc1.core.errors import BadInput
from rc1.eventlog.log import read_log
from rc1.views.archive import archive_shards, read_shard

pytestmark = pytest.mark.long

# What differs between two runs of the same evaluation: when (and in which session) it was written, how long it took.
CIRCUMSTANCE = {"seq", "ts", "prev", "seconds", "mem_peak_mb"}  # a process's own time and memory


def payload(event: dict) -> dict:
    """An event without its circumstances (drift's own seconds included)."""
    kept = {k: v for k, v in event.items() if k not in CIRCUMSTANCE}
    if isinstance(kept.get("drift"), dict):
        kept["drift"] = {k: v for k, v in kept["drift"].items() if k != "seconds"}
    return kept


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    """A gated run of two seeds (two steps each), a copy of it before training (`one`), and the run trained by one
    launch of two ranks: `rc1 train --all`."""
    tmp = tmp_path_factory.mktemp("launch")
    two = make_workspace(
        tmp / "two",
        **{
            "run.seeds": [1234, 2345],
            "train.max_steps": 2,
            "train.save_steps": 2,
            "train.eval_steps": 2,
        },
    )
    assert rc1_here(two, "advance", "--until", "R2_PASSED").returncode == 0
    shutil.copytree(two, tmp / "one", symlinks=True)
    result = launch(two, 2, args=("--all", "--rank-wait", "45"))
    assert result.returncode == 0, failure(result)
    return two, tmp / "one", result


def test_one_launch_trains_every_line_and_only_rank_0_writes(launched):
    root, _, result = launched
    log = events(root)
    assert [e["seed"] for e in log if e["type"] == "training_started"] == [1234, 2345]
    steps = [e for e in log if e["type"] == "train_step"]
    assert [e["step"] for e in steps] == [1, 2, 1, 2]  # once each: rank 1 appended nothing
    assert "rank 1 of 2: waits up to 45 min at a collective for the others" in result.stderr
    # A step trains both ranks' prompts: 4 prompts per rank, 4 replies each.
    assert all(sum(e["batch_difficulty"].values()) == 8 for e in steps)
    for seed in (1234, 2345):
        final = root / f"checkpoints/local/seed_{seed}/step_00002"
        assert (final / "rng.pt").is_file() and (final / "rng_state_1.pth").is_file()  # each rank's RNG, published
    assert [e["type"] for e in log].count("run_completed") == 2 and log[-1]["type"] == "release_across_seeds"
    assert rc1_here(root, "audit").returncode == 0


def test_every_rank_generates_its_share_of_each_evaluation(launched):
    _, _, result = launched
    shares = re.findall(
        r"rank 1: generated (\d+) of (\d+) greedy and (\d+) of (\d+) sampled replies of step (\d+)'s", result.stderr
    )
    assert [int(step) for *_, step in shares] == [0, 2, 0, 2]  # rank 1 generated about half of each evaluation
    assert all(0 < int(mine) < int(every) for share in shares for mine, every in (share[0:2], share[2:4]))
    gate = re.findall(r"rank 1: generated (\d+) of the gate set's replies to step 2", result.stderr)
    assert len(gate) == 2 and all(int(n) > 0 for n in gate)


def test_the_archive_holds_every_ranks_replies_and_rescores(launched):
    """Every rank's replies of every step, in the order the trainer gathered their rewards: audit --rescore finds each
    step's mean equal to the trainer's all-rank reward and each advantage regrouped as the trainer grouped it."""
    root, _, _ = launched
    shards = [shard for shard in archive_shards(read_log(root / "events/local.jsonl").events) if shard.kind == "train"]
    assert [(shard.seed, shard.step) for shard in shards] == [(1234, 2), (2345, 2)]
    for shard in shards:
        rows = read_shard(root, shard)
        assert [sum(1 for row in rows if row.step == step) for step in (1, 2)] == [8 * 4, 8 * 4]
        assert all(row.advantage is not None for row in rows)
    rescored = rc1_here(root, "audit", "--rescore")
    assert rescored.returncode == 0 and "audit passed" in rescored.stdout, rescored.stdout


def test_a_sharded_policy_evaluates_in_lockstep_to_the_replies_of_a_whole_one(launched, tmp_path):
    """Under FSDP2 every forward pass gathers the parameters from every rank, so the ranks generate in lockstep, a rank
    with fewer batches generating one again and discarding it. The base policy (its last layer moved, so drift has
    something to measure), sharded across two ranks with torch's `fully_shard` on gloo, gives the same greedy and
    sampled replies and the same drift as the whole policy in one process; without the lockstep the ranks' collectives
    cross and the launch fails. (accelerate applies FSDP on GPUs only: a TRL training step under FSDP2 runs on GPUs.)"""
    _, gated, _ = launched
    script = [str(REPO / "tests" / "sharded_evaluation.py"), ".", str(tmp_path / "whole.json")]
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    whole = subprocess.run(
        [sys.executable, *script], cwd=gated, capture_output=True, text=True, timeout=PATIENCE, env=env
    )
    assert whole.returncode == 0, whole.stderr[-3000:]
    script[-1] = str(tmp_path / "sharded.json")
    sharded = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", *script, "--shard"],
        cwd=gated,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        env=env,
    )
    assert sharded.returncode == 0, sharded.stderr[-3000:]
    one, two = (json.loads((tmp_path / name).read_text()) for name in ("whole.json", "sharded.json"))
    assert one.pop("generated_here") == [9, 9 * 4]
    assert two.pop("generated_here") == [8, 5 * 4]  # rank 0's share: greedy batch 0; sampled batches 0, 2 and 4
    assert one["drift"][0] > 0 and two == one


def test_what_cannot_be_sharded_is_refused_by_name(monkeypatch):
    """FSDP1's root keeps its parameters flat outside its own forward pass, so nothing can generate from it; QLoRA's
    4-bit base is placed whole on each GPU. FSDP2 and ZeRO-3 of a full or LoRA fine-tune on GPUs are accepted."""
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")
    monkeypatch.setenv("FSDP_VERSION", "1")
    with pytest.raises(BadInput, match="set fsdp_version: 2"):
        distributed.require_supported_sharding("cuda", "lora")
    monkeypatch.setenv("FSDP_VERSION", "2")
    distributed.require_supported_sharding("cuda", "lora")
    with pytest.raises(BadInput, match="finetune.method: qlora"):
        distributed.require_supported_sharding("cuda", "qlora")
    monkeypatch.delenv("ACCELERATE_USE_FSDP")
    monkeypatch.setenv("ACCELERATE_DEEPSPEED_ZERO_STAGE", "3")
    distributed.require_supported_sharding("cuda", "full")
    with pytest.raises(BadInput, match="finetune.method: qlora"):
        distributed.require_supported_sharding("cuda", "qlora")
    monkeypatch.setenv("ACCELERATE_DEEPSPEED_ZERO_STAGE", "2")
    distributed.require_supported_sharding("cuda", "qlora")  # ZeRO-2 keeps the policy whole


def test_an_evaluation_and_a_verdict_are_the_same_on_one_and_on_two_processes(launched, tmp_path):
    """Each batch of items is sampled under a seed of its own items, never of a rank: the step-0 evaluation and the
    release verdict of the same weights are the same events on two processes as on one."""
    two, one, _ = launched
    trained = rc1_forked(one, "train", env={"OMP_NUM_THREADS": "1"})  # one process, the first line: a
    assert trained.returncode == 0, trained.stderr  # different step 1, the same step 0
    first = [
        [payload(e) for e in events(root) if e["type"] == "eval_completed" and e["step"] == 0][:1]
        for root in (one, two)
    ]
    assert first[0] == first[1] and len(first[0]) == 1
    assert first[0][0]["drift"] is not None and first[0][0]["n"] == len(first[0][0]["item_ids"])

    # The two-process run's first verdict, evaluated again on one process: its log cut before the gate-set evaluation
    # of the first line's chosen checkpoint (as if killed there), and the line completed by `rc1 train` alone.
    log = (two / "events/local.jsonl").read_bytes().splitlines(keepends=True)
    full = events(two)
    cut = next(i for i, e in enumerate(full) if e["type"] == "gate_set_evaluated" and e["policy"] == "selected")
    again = tmp_path / "again"
    shutil.copytree(two, again, symlinks=True)
    (again / "events/local.jsonl").write_bytes(b"".join(log[:cut]))
    completed = rc1_forked(again, "train", env={"OMP_NUM_THREADS": "1"})
    assert completed.returncode == 0, completed.stderr
    for kind in ("gate_set_evaluated", "release_evaluated"):
        by_two = [payload(e) for e in full if e["type"] == kind and e.get("policy") != "base"][:1]
        by_one = [payload(e) for e in events(again) if e["type"] == kind and e.get("policy") != "base"]
        assert by_one == by_two and len(by_two) == 1, kind
    assert rc1_here(again, "audit").returncode == 0


def test_ranks_that_read_different_logs_are_refused_before_anything_is_appended(launched, tmp_path):
    """Rank 0 writes the log and the others read it, so a launch over nodes needs a workspace they all share: a rank
    whose copy lags one event behind (a node with its own disk) is refused on every rank, exit 2."""
    root, _, _ = launched
    lagging = tmp_path / "node1"
    shutil.copytree(root, lagging, symlinks=True)
    lines = (lagging / "events/local.jsonl").read_bytes().splitlines(keepends=True)
    (lagging / "events/local.jsonl").write_bytes(b"".join(lines[:-1]))
    for stale in lagging.glob("events/*snapshot*"):
        stale.unlink()
    before = (root / "events/local.jsonl").read_bytes()
    node = tmp_path / "node.py"  # each rank in its own node's folder: rank 1 in the lagging copy
    node.write_text(
        "import os, sys\nos.chdir(sys.argv[1] if os.environ['RANK'] == '1' else sys.argv[2])\n"
        "from rc1.cli.main import main\nraise SystemExit(main(['train', '--config', 'configs/short.yaml']))\n"
    )
    refused = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node",
            "2",
            str(node),
            str(lagging),
            str(root),
        ],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"},
    )
    assert refused.returncode != 0 and "the ranks of this launch read different logs" in refused.stderr, refused.stderr
    assert "on a filesystem every node shares" in refused.stderr
    assert (root / "events/local.jsonl").read_bytes() == before


def test_commands_other_than_train_refuse_a_multi_process_launch(tmp_path):
    root = make_workspace(tmp_path)
    refused = rc1_here(root, "status", env={"WORLD_SIZE": "2", "RANK": "1"})
    assert refused.returncode == 2
    assert "only `rc1 train` runs (rank 1 of 2)" in refused.stderr and "advance --until R2_PASSED" in refused.stderr
    assert not (root / "events/local.jsonl").exists()


PRIORITY = {
    "by_difficulty": {"easy": 0.2, "medium": 0.4, "hard": 0.4},
    "low_perf_cap": 0.3,
    "seed_ratio_schedule": [[0, 0.5]],
}
COMPARED = (
    "loss",
    "kl",
    "ratio",
    "lr",
    "reward",
    "reward_std",
    "tokens",
    "kl_coef",
    "batch_difficulty",
    "seed_share",
    "low_perf",
    "components",
)


def test_a_two_rank_run_with_priority_sampling_killed_and_relaunched_equals_the_uninterrupted_one(tmp_path):
    """Every rank's sampler observes every rank's rewards, so both draw the same batches (half of them fresh items,
    a share of failing ones), and a relaunch after a SIGKILL resumes each rank's sampler from the checkpoint."""
    # step_batch fixed: a step trains on 16 × 2 completions on any number of processes (on two, 16 × 1 each).
    whole = make_workspace(
        tmp_path / "whole",
        **{
            "train.max_steps": 4,
            "train.save_steps": 2,
            "train.eval_steps": 2,
            "priority_sampling": PRIORITY,
            "train.step_batch": "fixed",
            "train.gradient_accumulation_steps": 2,
        },
    )
    assert rc1_here(whole, "advance", "--until", "R2_PASSED").returncode == 0
    killed = tmp_path / "killed"
    shutil.copytree(whole, killed, symlinks=True)
    before = (whole / "events/local.jsonl").read_bytes()
    three = launch(whole, 3)  # three processes cannot share an accumulation of 2: refused by name, nothing appended
    assert (
        three.returncode != 0 and "train.step_batch: fixed" in three.stderr and "launch 1, 2 processes" in three.stderr
    )
    # what `accelerate launch` with an FSDP2 config sets: on CPUs accelerate would quietly train with DDP instead
    sharded = launch(whole, 2, {"ACCELERATE_USE_FSDP": "true", "FSDP_VERSION": "2"})
    assert sharded.returncode != 0 and "accelerate applies FSDP on GPUs only" in sharded.stderr
    assert (whole / "events/local.jsonl").read_bytes() == before
    uninterrupted = launch(whole, 2)
    assert uninterrupted.returncode == 0, failure(uninterrupted)

    died = launch(killed, 2, {"RC1_KILL_AT": "append:train_step@3"})  # rank 0 dies as it logs step 3
    assert died.returncode != 0 and [e["step"] for e in events(killed) if e["type"] == "train_step"][-1] == 3
    relaunched = launch(killed, 2)
    assert relaunched.returncode == 0, failure(relaunched)

    def steps(root):
        return {e["step"]: tuple(e[k] for k in COMPARED) for e in events(root) if e["type"] == "train_step"}

    assert steps(killed) == steps(whole) and sorted(steps(whole)) == [1, 2, 3, 4]
    assert any(e["seed_share"] == 0.5 for e in events(whole) if e["type"] == "train_step")  # fresh items drawn
    rows = [
        row
        for shard in archive_shards(read_log(killed / "events/local.jsonl").events)
        if shard.kind == "train"
        for row in read_shard(killed, shard)
    ]
    assert sorted(row.step for row in rows) == [step for step in (1, 2, 3, 4) for _ in range(8 * 4)]
    assert rc1_here(killed, "audit").returncode == 0
    rescored = rc1_here(killed, "audit", "--rescore")
    assert rescored.returncode == 0 and "audit passed" in rescored.stdout, rescored.stdout

    # The relaunched segment's last checkpoint, trained again from the one it resumed from on two ranks, as it was.
    one = rc1_here(killed, "audit", "--retrain", "step_4")
    assert one.returncode == 2 and "torchrun --nproc-per-node 2 -m rc1 audit --retrain" in one.stderr
    retrained = launch(killed, 2, args=("--retrain", "step_4", "--json"), command="audit")
    assert retrained.returncode == 0, failure(retrained)
    [report] = json.loads(retrained.stdout)["retrain"]
    assert report["verified"] and report["steps"] == [3, 4] and report["start"] == "checkpoints/local/step_00002"
    assert {"rng.pt", "rng_state_1.pth", "model.safetensors"} <= set(report["checkpoints"][0]["equal"])


@pytest.mark.parametrize("name", ["deepspeed_zero2.yaml", "deepspeed_zero3.yaml"])
def test_the_deepspeed_configs_leave_accumulation_and_clipping_to_the_trainer(name, monkeypatch):
    """`accelerate launch` turns the YAML's deepspeed_config into the environment DeepSpeedPlugin reads; a number there
    for gradient_accumulation_steps or gradient_clipping that is not rc1's (each rank's accumulation, max_grad_norm) is
    transformers' ValueError when training starts (integrations/deepspeed.py trainer_config_finalize). Left out, the
    plugin says "auto" and the Trainer fills them in."""
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser
    from accelerate.utils import DeepSpeedPlugin
    from accelerate.utils.launch import prepare_deepspeed_cmd_env

    argv = ["--config_file", str(REPO / "configs" / "accelerate" / name), "--num_processes", "4", "-m", "rc1", "train"]
    args, defaults, _ = _validate_launch_command(launch_command_parser().parse_args(argv))
    args.deepspeed_fields_from_accelerate_config = ",".join(defaults.deepspeed_config)  # as launch_command sets it
    _, env = prepare_deepspeed_cmd_env(args)
    for key, value in env.items():
        if key.startswith("ACCELERATE_"):
            monkeypatch.setenv(key, value)
    config = DeepSpeedPlugin().deepspeed_config
    assert (config["gradient_accumulation_steps"], config["gradient_clipping"]) == ("auto", "auto")
    assert config["zero_optimization"]["stage"] == int(name[-6])


def test_the_accelerate_configs_load_and_leave_the_process_count_to_the_launch():
    from accelerate.commands.config.config_args import load_config_from_file
    from accelerate.utils import DistributedType

    for name, kind in (
        ("ddp.yaml", DistributedType.MULTI_GPU),
        ("deepspeed_zero2.yaml", DistributedType.DEEPSPEED),
        ("deepspeed_zero3.yaml", DistributedType.DEEPSPEED),
        ("fsdp2.yaml", DistributedType.FSDP),
    ):
        config = load_config_from_file(str(REPO / "configs" / "accelerate" / name))
        assert config.distributed_type == kind and config.num_processes == -1, (
            name
        )  # accelerate asks for --num_processes
