"""The smoke profile's CPU dry run: configs/rc1-smoke.yaml as shipped, with a tiny model in the production model's
place and CPU-sized sets and limits, goes through both rounds under the smoke profile's rules (the production path's,
every check at its production floor, a live judge over real HTTP) to a completed run whose verdict is computed by the
release rule and labelled "smoke run, not a release" in the log, the console, status and the audit.

What the dry run changes, and why: the model (a 2-layer Qwen3 warm-started on the pool, as `make gpu-check`'s dry
run builds it), LoRA for QLoRA (rc1 refuses a 4-bit base without CUDA), no hub (the generators), a live judge on
127.0.0.1, the sizes, and StrategyQA alone: the tiny model answers nothing else, and thinking_fits' production floor
refuses a shadow set whose items all fail, rightly."""

import json
import shutil

import pytest
import yaml
from conftest import REPO, events, rc1_here
from judge_server import JudgeServer

pytestmark = [pytest.mark.e2e, pytest.mark.long]

KEY = "sk-rc1-smoke-5c2e"


@pytest.fixture(scope="module")
def judge(tmp_path_factory):
    from rc1.data.pool import build_shadow
    from rc1.scoring.hf_judge import HfJudgeBackend
    from rc1.scoring.judge import VERDICT_CHOICES
    from rc1.train.tiny_model import build_tiny_qwen3

    items = build_shadow(30, {"strategyqa": 1.0}, seed=4242)
    rubric = (REPO / "configs/judge/rubric.md").read_text()
    texts = [rubric, *VERDICT_CHOICES, *(f"{i.question}\n{i.context}\nAnswer: {i.answer}" for i in items)]
    model = build_tiny_qwen3(texts, tmp_path_factory.mktemp("judge") / "tiny-judge", seed=7)
    with JudgeServer(HfJudgeBackend(str(model), "cpu"), KEY) as running:
        yield running


def dry_run_config(root, judge_url: str) -> dict:
    raw = yaml.safe_load((REPO / "configs/rc1-smoke.yaml").read_text())
    assert raw["profile"] == "smoke"
    del raw["data"]["sources"]
    raw["data"] |= {"pool_size": 240, "shadow_size": 30, "mix": {"strategyqa": 1.0}}
    raw["model"] |= {"name": str(root / "models/policy"), "dtype": "auto", "thinking": "auto"}
    raw["finetune"]["method"] = "lora"
    raw["train"] |= {
        "max_steps": 4,
        "save_steps": 2,
        "eval_steps": 2,
        "warmup_steps": 0,
        "per_device_batch_size": 16,
        "gradient_accumulation_steps": 1,
        "num_generations": 4,
        "max_prompt_tokens": 448,
        "max_completion_tokens": 24,
    }
    raw["release"] |= {"gate_size": 60, "samples": 2, "tasks": ["strategyqa"]}
    raw["scorer"] = {"provider": "openai_compat", "base_url": judge_url, "cache": True}
    return raw


def test_the_smoke_profile_runs_its_dry_run_to_a_verdict_labelled_not_a_release(judge, tmp_path):
    from rc1.bench.gpu_gated import build_policy
    from rc1.config.loading import load_config

    root = tmp_path
    shutil.copytree(REPO / "configs", root / "configs")
    (root / "data").mkdir()
    (root / "configs/smoke.yaml").write_text(yaml.safe_dump(dry_run_config(root, judge.base_url)))
    build_policy(root / "models", load_config(root / "configs/smoke.yaml"), on_gpu=False)

    done = rc1_here(root, "advance", "--all", config="configs/smoke.yaml", env={"SCORER_API_KEY": KEY})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    log = events(root, "rc1-smoke")
    rules = [e for e in log if e["type"] == "check_passed" and e["name"] == "training_config"]
    assert [e["round"] for e in rules] == [1, 2] and all("smoke profile: all" in e["detail"] for e in rules)
    assert all(e["measured"]["smoke_profile"] == 1.0 for e in rules)
    live = next(e for e in log if e["type"] == "check_passed" and e["name"] == "scorer_live")
    assert live["measured"]["api_judge"] == 1.0  # the production path's judge, over HTTP
    (verdict,) = [e for e in log if e["type"] == "release_evaluated"]
    assert verdict["release"] is False and verdict["n"] == 60 and verdict["ci_low_pp"] is not None
    assert "smoke run, not a release (the RC1 gate's rule, computed): " in done.stdout
    assert "release (RC1 gate)" not in done.stdout

    status = rc1_here(root, "status", config="configs/smoke.yaml")
    assert "release    smoke run, not a release: " in status.stdout
    assert "a smoke run, not a release: read its memory peaks, step time" in status.stdout
    assert "s/step" in status.stdout and "memory peak" in status.stdout
    rescored = rc1_here(root, "audit", "--rescore", config="configs/smoke.yaml", env={"SCORER_API_KEY": KEY})
    assert rescored.returncode == 0 and "audit passed" in rescored.stdout  # the label is derived again too
    out = tmp_path / "out"
    card = rc1_here(root, "export", "--out", str(out), "--checkpoint", "latest", config="configs/smoke.yaml")
    assert card.returncode == 0, card.stderr
    assert "rule on a smoke run's small gate set (profile smoke)" in (out / "README.md").read_text()
    assert ": smoke run, not a release: " in (out / "README.md").read_text()
    assert (
        json.loads(rc1_here(root, "status", "--json", config="configs/smoke.yaml").stdout)["release"]["release"]
        is False
    )
