"""Live episodes (issue 43) through the CLI, killed and launched on two ranks.

A SIGKILL in the middle of a multi-turn step (a rollout's tool call about to run: the `tool` kill point) resumes from
the newest checkpoint to exactly the uninterrupted run: its step metrics and its archive, transcripts included. Two
ranks archive every rollout's transcript, and `audit --rescore` replays each one's tools clean.

The run is the suite's short run with live episodes on the built-in reader and its pages, the model `make run` trains
(configs/local.yaml, whose drift monitor is on here too), warm-started 10 steps on the pool's gold episodes instead of
100 and with 128 completion tokens instead of 512: it writes tool calls that open pages from step 0
(tests/e2e/test_reader_run.py), and a learning rate low enough keeps it writing them past the first checkpoint, where
the kill lands.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter

import msgspec
import pytest
from conftest import events, failure, launch, make_workspace, rc1, rc1_forked, rc1_here

from rc1.eventlog.log import read_log
from rc1.views.archive import archive_shards, read_shard

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.long,
    pytest.mark.filterwarnings("ignore:You are using 'environment_factory'"),
]

LIVE = {
    "model.name": "builtin:reader",
    "model.warm_start_steps": 10,
    "data.episodes": "live",
    "data.pages": "mentions",
    "train.max_completion_tokens": 128,
    "train.max_steps": 4,
    "train.save_steps": 2,
    "train.eval_steps": 2,
    "train.learning_rate": 1e-4,
    "preflight.max_cut_share": 1.0,  # the subject is a kill inside a tool call, not how episodes end
}
STEPS = (1, 2, 3, 4)
COMPARED = ("loss", "kl", "ratio", "lr", "reward", "reward_std", "tokens", "episodes")


@pytest.fixture(scope="module")
def gated(tmp_path_factory):
    """A live short run through round 2, not yet trained."""
    root = make_workspace(tmp_path_factory.mktemp("live") / "gated", **LIVE)
    result = rc1_here(root, "advance", "--until", "R2_PASSED")
    assert result.returncode == 0, result.stdout + result.stderr
    return root


@pytest.fixture(scope="module")
def whole(gated, tmp_path_factory):
    """The run trained without interruption."""
    root = tmp_path_factory.mktemp("live-whole") / "run"
    shutil.copytree(gated, root, symlinks=True)
    result = rc1_forked(root, "train")
    assert result.returncode == 0, result.stdout + result.stderr
    return root


def step_metrics(root) -> dict[int, tuple]:
    """Per step, the metrics of the segment that last ran it (a resumed segment re-runs steps)."""
    return {e["step"]: tuple(e[k] for k in COMPARED) for e in events(root) if e["type"] == "train_step"}


def archived(root, kind: str) -> list:
    """Every archived row of `kind` the run's log vouches for, in archive order."""
    shards = archive_shards(read_log(root / "events/local.jsonl").events)
    return [row for shard in shards if shard.kind == kind for row in read_shard(root, shard)]


def calls_by_step(rows) -> Counter:
    """How many tool calls the rollouts of each step ran."""
    return Counter(row.step for row in rows for _ in row.episode.calls)


def test_a_sigkill_during_a_tool_call_resumes_to_the_uninterrupted_run_transcript_for_transcript(
    whole, gated, tmp_path
):
    rows = archived(whole, "train")
    calls = calls_by_step(rows)
    assert calls[3] >= 2, f"step 3 must run tool calls for the kill to land inside it: {dict(calls)}"
    # The process dies as it is about to run the middle call of step 3: past the checkpoint of step 2, mid-episode.
    kill_at = calls[1] + calls[2] + calls[3] // 2 + 1
    killed = tmp_path / "killed"
    shutil.copytree(gated, killed, symlinks=True)
    died = rc1(killed, "train", env={**os.environ, "RC1_KILL_AT": f"tool@{kill_at}"})
    assert died.returncode == -9, died.stdout + died.stderr
    assert [e["step"] for e in events(killed) if e["type"] == "train_step"] == [1, 2]

    resumed = rc1_here(killed, "train")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    starts = [e for e in events(killed) if e["type"] == "training_started"]
    assert [s["resume_from_step"] for s in starts] == [0, 2]

    assert step_metrics(killed) == step_metrics(whole) and sorted(step_metrics(whole)) == list(STEPS)
    # The archive too, row for row: each rollout's messages, its calls with their arguments and results, its reward.
    assert [msgspec.to_builtins(r) for r in archived(killed, "train")] == [msgspec.to_builtins(r) for r in rows]
    rescored = rc1_here(killed, "audit", "--rescore")
    assert rescored.returncode == 0 and "audit passed" in rescored.stdout, rescored.stdout
    # The resumed segment's checkpoint, trained again from the one it resumed from: its episodes' tools replay from
    # their items, and every step, weight and transcript comes out as recorded.
    retrained = rc1_here(killed, "audit", "--retrain", "step_4")
    assert retrained.returncode == 0 and "re-derived bit for bit" in retrained.stdout, retrained.stdout
    # The drift monitor is on (configs/local.yaml's): every evaluation measured its episodes' first turns' drift.
    evaluations = [e for e in events(killed) if e["type"] == "eval_completed"]
    assert [e["step"] for e in evaluations] == [0, 2, 4] and all(e["drift"]["items"] > 0 for e in evaluations)


def test_two_ranks_archive_every_rollout_s_transcript_and_rescore_clean(gated, tmp_path):
    two = tmp_path / "two"
    shutil.copytree(gated, two, symlinks=True)
    result = launch(two, 2)
    assert result.returncode == 0, failure(result)

    rows = archived(two, "train")
    # each rank samples its own 16 completions a step (train.per_device_batch_size), and rank 0 archives both shares
    assert sorted(r.step for r in rows) == [step for step in STEPS for _ in range(2 * 16)]
    assert all(r.episode is not None and r.episode.messages for r in rows)
    assert sum(calls_by_step(rows).values()) > 0
    evaluated = archived(two, "eval")
    assert evaluated and all(r.episode is not None for r in evaluated)
    rescored = rc1_here(two, "audit", "--rescore")
    assert rescored.returncode == 0 and "audit passed" in rescored.stdout, rescored.stdout


def test_an_exported_live_model_prompts_as_it_was_trained(whole, tmp_path):
    """The reader's own template renders no tools: the export carries the tool-calling template the episodes
    were trained with, and ends a turn where TRL's loop did."""
    from transformers import AutoTokenizer, GenerationConfig

    from rc1.core.workspace import Workspace
    from rc1.data.task import episode_messages, read_items
    from rc1.reader.shipped import reader_dir
    from rc1.train.live_generation import tool_schemas
    from rc1.train.live_tools import with_tool_calling

    copy = tmp_path / "run"
    shutil.copytree(whole, copy, symlinks=True)
    exported = rc1_here(copy, "export", "--checkpoint", "latest", "--out", str(tmp_path / "out"))
    assert exported.returncode == 0, exported.stdout + exported.stderr
    served = AutoTokenizer.from_pretrained(tmp_path / "out")
    ws = Workspace(root=copy, run="local")
    trained = with_tool_calling(AutoTokenizer.from_pretrained(reader_dir()))
    messages = episode_messages(read_items(ws.balanced_pool_path)[0])
    render = dict(tools=tool_schemas(), add_generation_prompt=True, tokenize=False)
    assert served.apply_chat_template(messages, **render) == trained.apply_chat_template(messages, **render)
    assert "<tools>" in served.apply_chat_template(messages, **render)
    assert GenerationConfig.from_pretrained(tmp_path / "out").eos_token_id[0] == served.convert_tokens_to_ids(
        "<|im_end|>"
    )
