"""A live run on the built-in reader (issue 50), through the CLI: the shipped weights as the base, its warm start cached
under the reader's digest, episodes whose wiki calls open pages, and a log that rescoring replays clean."""

import pytest
from conftest import events, make_workspace, rc1_here

from rc1.reader.shipped import reader_sha256

READER_LIVE = {
    "model.name": "builtin:reader",
    "model.warm_start_steps": 10,
    "data.episodes": "live",
    "data.pages": "mentions",
    "train.max_completion_tokens": 96,  # a call and its page; most episodes are cut after it
    "train.max_steps": 4,
    "train.save_steps": 4,
    "train.eval_steps": 4,
    "data.shadow_size": 18,
    "release.gate_size": 30,
    "release.min_hard_gain_pp": 20.0,
    "preflight.max_cut_share": 1.0,  # the subject here is what episodes do first, not how they end
}


@pytest.mark.e2e
@pytest.mark.long
def test_a_live_run_on_the_reader_opens_pages_from_step_0_and_rescores_clean(tmp_path):
    root = make_workspace(tmp_path, **READER_LIVE)
    done = rc1_here(root, "advance", "--all")
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"reader-{reader_sha256()[:12]}-live-mentions-" in done.stdout + "".join(
        p.name for p in (root / "data" / "models").iterdir()
    )
    log = events(root)
    first = next(e for e in log if e["type"] == "eval_completed" and e["step"] == 0)["episodes"]
    assert first["wiki_calls"] >= 4 and first["wiki_opened_share"] >= 0.3, first
    steps = [e for e in log if e["type"] == "train_step"]
    assert len(steps) == 4 and all(e["episodes"]["episodes"] > 0 for e in steps)
    assert any(e["type"] == "release_evaluated" for e in log)
    rescored = rc1_here(root, "audit", "--rescore")
    assert rescored.returncode == 0 and "audit passed" in rescored.stdout, rescored.stdout
