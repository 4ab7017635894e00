"""The live judge over real HTTP: an OpenAI-compatible server on 127.0.0.1 serving the built-in tiny
model as the judge, with the faults a real provider has (429, 5xx, malformed answers, timeouts), the
ledger of every call, the cache, the anti-simulation checks, and the API key kept out of every file."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from conftest import REPO, events, make_workspace, rc1_here
from judge_server import JudgeServer

from rc1.checks.scorer import scorer_cache, scorer_live, scorer_probe
from rc1.config.loading import load_config
from rc1.core.errors import BadInput, ScorerError
from rc1.data.pool import build_shadow
from rc1.scoring.cache import JudgeCache
from rc1.scoring.hf_judge import HfJudgeBackend
from rc1.scoring.judge import VERDICT_CHOICES, Judge, load_rubric, parse_verdict
from rc1.scoring.ledger import Ledger, read_tail
from rc1.scoring.openai_judge import OpenAICompatBackend
from rc1.train.tiny_model import build_tiny_qwen3

KEY = "sk-rc1-test-7f3a9c1e5b2d4f60"
ITEMS = build_shadow(30, {"hotpotqa": 0.45, "strategyqa": 0.30, "gsm8k": 0.25}, seed=4242)
REPLIES = [f"Answer: {item.answer}" for item in ITEMS]


@pytest.fixture(scope="module")
def judge_model(tmp_path_factory) -> Path:
    rubric = (REPO / "configs/judge/rubric.md").read_text()
    texts = [rubric, *VERDICT_CHOICES, *(f"{i.question}\n{i.context}\nAnswer: {i.answer}" for i in ITEMS)]
    return build_tiny_qwen3(texts, tmp_path_factory.mktemp("judge") / "tiny-judge", seed=7)


@pytest.fixture(scope="module")
def server(judge_model):
    with JudgeServer(HfJudgeBackend(str(judge_model), "cpu"), KEY) as running:
        yield running


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("SCORER_API_KEY", KEY)


def make_judge(server, tmp_path, *, provider="openai_compat", cache=False, max_retries=2, timeout_s=30.0) -> Judge:
    server.faults.clear()
    backend = OpenAICompatBackend(provider, server.base_url, "tiny-judge", timeout_s)
    return Judge(
        backend,
        load_rubric(REPO / "configs/judge/rubric.md"),
        Ledger(tmp_path / "ledger.jsonl"),
        JudgeCache(tmp_path / "cache") if cache else None,
        max_retries=max_retries,
        backoff_s=0.01,
        max_concurrency=4,
    )


def test_a_local_model_judges_in_the_verdict_format(judge_model):
    backend = HfJudgeBackend(str(judge_model), "cpu")
    answer = backend.ask([{"role": "system", "content": "grade"}, {"role": "user", "content": "reply: Answer: 4"}])
    assert answer.text in VERDICT_CHOICES and answer.prompt_tokens > 0
    assert parse_verdict(answer.text).correct in (True, False)


def test_a_live_judge_scores_over_real_http_and_every_call_is_in_the_ledger(server, tmp_path, key):
    judge = make_judge(server, tmp_path)
    before = len(server.requests)
    scores = judge.score(ITEMS[:6], REPLIES[:6])
    assert len(scores) == 6 and set(scores) <= {0.0, 1.0}
    assert len(server.requests) - before == 6
    assert server.authorizations[-1] == f"Bearer {KEY}"
    assert server.requests[-1]["response_format"]["type"] == "json_schema"
    records = read_tail(tmp_path / "ledger.jsonl", 100)
    assert len(records) == 6 and all(r.latency_ms > 0 and r.prompt_tokens > 0 and r.attempts == 1 for r in records)
    assert not any(r.billable or r.cached or r.error for r in records)  # a server on this machine bills nothing
    summary = judge.ledger.drain()
    assert summary.calls == 6 and summary.latency_p95_ms >= summary.latency_p50_ms > 0


def test_a_reply_whose_thinking_never_closed_is_not_sent(server, tmp_path, key):
    judge = make_judge(server, tmp_path)
    before = len(server.requests)
    assert judge.score(ITEMS[:2], [None, None]) == [0.0, 0.0]
    assert len(server.requests) == before and read_tail(tmp_path / "ledger.jsonl", 10) == []


def test_a_judge_left_unnamed_is_the_one_the_server_serves(server, key):
    assert OpenAICompatBackend("openai_compat", server.base_url, "", 5.0).model == "tiny-judge"


def test_a_429_is_retried_and_then_succeeds(server, tmp_path, key):
    judge = make_judge(server, tmp_path)
    server.faults.extend(["429"])
    before = len(server.requests)
    judge.score(ITEMS[:1], REPLIES[:1])
    assert len(server.requests) - before == 2
    [record] = read_tail(tmp_path / "ledger.jsonl", 10)
    assert record.attempts == 2 and not record.error


@pytest.mark.parametrize(
    "fault, message", [("500", "500 server error"), ("malformed", "malformed answer: not a verdict")]
)
def test_a_judge_that_keeps_failing_is_a_runtime_error_after_the_retries(server, tmp_path, key, fault, message):
    judge = make_judge(server, tmp_path, max_retries=2)
    server.faults.extend([fault] * 3)
    with pytest.raises(ScorerError, match=f"{message}.*gave up after 3 attempts"):
        judge.score(ITEMS[:1], REPLIES[:1])
    [record] = read_tail(tmp_path / "ledger.jsonl", 10)
    assert record.attempts == 3 and message in record.error


def test_a_judge_that_does_not_answer_in_time_times_out(server, tmp_path, key):
    judge = make_judge(server, tmp_path, max_retries=0, timeout_s=0.3)
    server.faults.extend(["slow:1.5"])
    with pytest.raises(ScorerError, match="timed out; gave up after 1 attempts"):
        judge.score(ITEMS[:1], REPLIES[:1])


def test_a_wrong_key_is_refused_without_retries_and_never_echoed(server, tmp_path, monkeypatch):
    monkeypatch.setenv("SCORER_API_KEY", "sk-wrong-key-123456")
    judge = make_judge(server, tmp_path)
    with pytest.raises(ScorerError, match="HTTP 401.*check SCORER_API_KEY") as caught:
        judge.score(ITEMS[:1], REPLIES[:1])
    assert "sk-wrong-key-123456" not in str(caught.value)


def test_an_api_judge_without_its_key_is_not_built(server, monkeypatch):
    monkeypatch.delenv("SCORER_API_KEY", raising=False)
    with pytest.raises(BadInput, match="SCORER_API_KEY: not set"):
        OpenAICompatBackend("openai_compat", server.base_url, "tiny-judge", 5.0)


def test_the_probe_passes_on_real_calls_and_fails_when_answers_do_not_parse(server, tmp_path, key):
    judge = make_judge(server, tmp_path, max_retries=0)
    passed = scorer_probe(judge, ITEMS[:4])
    assert passed.passed, passed.detail
    assert passed.measured["parsed"] == 4 and passed.measured["latency_p50_ms"] > 0
    server.faults.extend(["malformed"] * 4)
    failed = scorer_probe(judge, ITEMS[:4])
    assert not failed.passed and "4 of 4 answers did not parse" in failed.detail


def test_a_paid_provider_is_billed_and_the_probe_requires_it(server, tmp_path, key):
    judge = make_judge(server, tmp_path, provider="openai")  # the openai preset, pointed at this server
    result = scorer_probe(judge, ITEMS[:3])
    assert result.passed and result.measured["paid"] == 1 and result.measured["billable"] == 3


def test_the_cache_answers_repeats_and_a_replayed_round_fails_the_cache_check(server, tmp_path, key):
    judge = make_judge(server, tmp_path, cache=True)
    first = judge.score(ITEMS[:10], REPLIES[:10])
    assert scorer_cache(tmp_path / "ledger.jsonl", 0.90).passed
    before = len(server.requests)
    for _ in range(10):
        assert judge.score(ITEMS[:10], REPLIES[:10]) == first
    assert len(server.requests) == before  # every repeat came from the cache
    result = scorer_cache(tmp_path / "ledger.jsonl", 0.90)
    assert not result.passed and result.measured["hit_rate"] == 1.0 and "replayed" in result.detail
    # The probe never reads the cache: its calls are real.
    assert scorer_probe(judge, ITEMS[:2]).passed and len(server.requests) == before + 2


def test_the_production_profile_refuses_a_non_live_scorer_or_a_missing_key(monkeypatch):
    monkeypatch.delenv("SCORER_API_KEY", raising=False)
    production = load_config(REPO / "configs/rc1.yaml").config
    missing = scorer_live(production)
    assert not missing.passed and "SCORER_API_KEY is not set" in missing.detail
    offline = load_config(
        REPO / "configs/rc1.yaml", ["scorer.provider=none", "scorer.model=", "scorer.cache=false"]
    ).config
    assert "needs a live API judge" in scorer_live(offline).detail
    monkeypatch.setenv("SCORER_API_KEY", KEY)
    assert scorer_live(production).passed
    assert scorer_live(load_config(REPO / "configs/local.yaml").config).passed
    assert not scorer_live(load_config(REPO / "configs/local.yaml").config, require_api=True).passed


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["scorer.provider=openai_compat"], "scorer.base_url: openai_compat needs the server's URL"),
        (["scorer.provider=hf_judge"], "scorer.model: hf_judge needs the judge model's name"),
        (["scorer.model=m"], "scorer.model: no judge is configured"),
        (["scorer.base_url=http://127.0.0.1:1/v1"], "scorer.base_url: only API judges use it"),
        (["scorer.provider=gemini", "scorer.base_url=ftp://x"], "is not an http(s) URL"),
        (["scorer.cache=true"], "scorer.cache: only judges are cached"),
        (["scorer.provider=claude"], "scorer.provider: Invalid enum value .claude."),
    ],
)
def test_a_scorer_section_that_would_not_act_is_refused(overrides, message):
    with pytest.raises(BadInput, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(REPO / "configs/local.yaml", overrides)


@pytest.mark.e2e
def test_a_run_judged_live_records_its_calls_and_writes_the_key_nowhere(server, tmp_path):
    server.faults.clear()
    root = make_workspace(tmp_path, **{"train.max_steps": 4, "train.save_steps": 2})
    # As a user types it; the model is the one the server lists at /v1/models.
    judge = [
        "--set",
        "scorer.provider=openai_compat",
        "--set",
        f"scorer.base_url={server.base_url}",
        "--set",
        "reward.weights=weights_judge.json",
    ]
    result = rc1_here(root, "advance", "--all", *judge, env={"SCORER_API_KEY": KEY})
    assert result.returncode == 0, result.stdout + result.stderr
    log = events(root)
    probes = [e for e in log if e.get("name") == "scorer_probe"]
    assert [p["round"] for p in probes] == [1, 2] and all(p["measured"]["parsed"] == 8 for p in probes)
    assert next(e for e in log if e["type"] == "round1_passed")["scoring"]["calls"] == 8
    steps = [e for e in log if e["type"] == "train_step"]
    assert len(steps) == 4 and all(s["scoring"]["calls"] >= 1 for s in steps)  # one per reply it could see
    evals = [e for e in log if e["type"] == "eval_completed"]
    assert evals and all(e["scoring"]["calls"] >= 1 for e in evals)
    ledger = (root / "events/local.ledger.jsonl").read_text().splitlines()
    [shadow] = [e for e in log if e["type"] == "shadow_run_completed"]
    assert shadow["scoring"]["calls"] >= 1  # round 2's shadow run is judged too
    counted = (
        16
        + shadow["scoring"]["calls"]
        + sum(s["scoring"]["calls"] for s in steps)
        + sum(e["scoring"]["calls"] for e in evals)
    )
    assert len(ledger) == counted
    # Every judged completion's request is in the ledger; without scorer.cache its answer is not kept to derive again.
    rescore = rc1_here(root, "audit", "--rescore", "--json", *judge)
    assert rescore.returncode == 0, rescore.stdout
    report = json.loads(rescore.stdout)["rescore"]
    assert report["judge_unverifiable"] > 0 and report["judged"] == 0
    # Asked again (--rejudge): each request rebuilt from the run's data files is the recorded one, and the judge (this
    # server's model, deterministic) gives the recorded component again.
    asked = len(server.requests)
    rejudged = rc1_here(root, "audit", "--rescore", "--rejudge", "--json", *judge, env={"SCORER_API_KEY": KEY})
    assert rejudged.returncode == 0, rejudged.stdout
    again = json.loads(rejudged.stdout)["rescore"]
    assert again["rejudged"] == report["judge_unverifiable"] == len(server.requests) - asked

    # Trained again from step 2's checkpoint, the judge asked anew (this server's model is deterministic): every step
    # and file as recorded, and the retrain's calls in the run's ledger under their own scope.
    before = len((root / "events/local.ledger.jsonl").read_text().splitlines())
    retrained = rc1_here(root, "audit", "--retrain", "step_4", "--json", *judge, env={"SCORER_API_KEY": KEY})
    assert retrained.returncode == 0, retrained.stdout + retrained.stderr
    assert json.loads(retrained.stdout)["retrain"][0]["verified"]
    added = [json.loads(line) for line in (root / "events/local.ledger.jsonl").read_text().splitlines()[before:]]
    assert added and {entry["scope"] for entry in added} == {"retrain"}

    probe = rc1_here(root, "scorer", "probe", "--n", "4", *judge, env={"SCORER_API_KEY": KEY})
    assert probe.returncode == 0, probe.stdout + probe.stderr
    server.faults.extend(["500"] * 10)  # a judge that fails: exit 1 with an error report
    completion = root / "reply.txt"
    completion.write_text("Answer: 42")
    failed = rc1_here(
        root,
        "score",
        "--task",
        "gsm8k",
        "--gold",
        "42",
        "--completion-file",
        str(completion),
        "--completion-tokens",
        "4",
        *judge,
        "--set",
        "scorer.max_retries=1",
        "--set",
        "scorer.backoff_s=0",
        "--accept-changed-inputs",
        env={"SCORER_API_KEY": KEY},
    )  # not the run's scorer settings: said so
    assert failed.returncode == 1 and "FATAL" in failed.stderr and "500 server error" in failed.stderr
    assert list((root / "reports").glob("ERROR_*.json"))
    server.faults.clear()
    pack = rc1_here(root, "failpack", *judge, env={"SCORER_API_KEY": KEY})
    assert pack.returncode == 0

    written = [p for p in root.rglob("*") if p.is_file() and "configs" not in p.parts]
    assert (
        len(written) > 30
        and root / "events/local.ledger.jsonl" in written
        and list((root / "reports").glob("*.tar.gz"))
    )
    leaks = [str(p) for p in written if KEY.encode() in p.read_bytes()]
    assert not leaks, leaks
    for output in (result, probe, failed, pack):
        assert KEY not in output.stdout + output.stderr


def test_rescoring_derives_each_judge_component_again_from_the_cached_answer_its_ledger_request_names(
    server, tmp_path, key
):
    from rc1.app.rescore import _judge_findings
    from rc1.core.workspace import Workspace
    from rc1.scoring.archive import Rollout, prompt_sha256

    ws = Workspace(root=tmp_path, run="local")
    backend = OpenAICompatBackend("openai_compat", server.base_url, "tiny-judge", 30.0)
    judge = Judge(
        backend,
        load_rubric(REPO / "configs/judge/rubric.md"),
        Ledger(ws.ledger_path),
        JudgeCache(ws.scorer_cache_dir),
        max_retries=2,
        backoff_s=0.01,
        max_concurrency=4,
    )
    items = ITEMS[:6]
    judged = judge.judged(items, REPLIES[:6])
    rows = [
        (
            9,
            Rollout(
                kind="train",
                step=1,
                item_id=item.id,
                task=item.task,
                difficulty=item.difficulty,
                needs_clarification=item.needs_clarification,
                gold=item.answer,
                prompt_sha256=prompt_sha256(item),
                completion="(the reply)",
                tokens=4,
                components={"judge": score},
                clarifications=0,
                penalty=0.0,
                difficulty_factor=1.0,
                reward=score,
                judge_request=request,
            ),
        )
        for item, (score, request) in zip(items, judged)
    ]
    judging = [
        "scorer.provider=openai_compat",
        f"scorer.base_url={server.base_url}",
        "reward.weights=weights_judge.json",
    ]
    cached = load_config(REPO / "configs/local.yaml", [*judging, "scorer.cache=true"])
    assert _judge_findings(ws, cached, rows) == (6, 0, [])

    seq, first = rows[0]
    flipped = [(seq, msgspec.structs.replace(first, components={"judge": 1.0 - first.components["judge"]})), *rows[1:]]
    _, _, findings = _judge_findings(ws, cached, flipped)
    assert [f.message for f in findings] == [
        f"train step 1 item {first.item_id}: judge recorded "
        f"{1.0 - first.components['judge']}, the cached answer gives "
        f"{first.components['judge']}"
    ]
    unasked = [(seq, msgspec.structs.replace(first, judge_request="0" * 64))]
    assert "is not in the ledger" in _judge_findings(ws, cached, unasked)[2][0].message
    # Without the cache, nothing says what the judge answered: counted, never a finding (and never asked again).
    asked = len(server.requests)
    assert _judge_findings(ws, load_config(REPO / "configs/local.yaml", judging), rows) == (0, 6, [])
    assert len(server.requests) == asked
