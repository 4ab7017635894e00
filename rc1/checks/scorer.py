"""The scorer's checks: the rule components are right, the judge is real and live, scores are not
being replayed from the cache.

- `scorer_selfcheck`: the rule scorer rewards every gold reply and refuses a wrong one (a
  clarification is the gold reply to an under-specified item; answering it is wrong), shaped as the
  policy will answer (after `</think>` for a thinking model).
- `scorer_probe`: real calls to the configured judge (the cache bypassed) on gold replies: every answer
  parses, every call took time (latency_ms > 0), and a paid provider billed at least one.
- `scorer_cache`: of the last 100 judge calls in the ledger, the share answered from the cache stays
  under the round's ceiling.
- `scorer_live`: an API judge has its key; the production profile scores with a live API judge.
"""

from __future__ import annotations

from pathlib import Path

from rc1.checks.result import CheckResult
from rc1.checks.spec import PROBE_ITEMS, Check, Floor, spread
from rc1.config.schema import Config
from rc1.core.catalog import PRODUCTION_PATH_PROFILES
from rc1.core.runbook import Runbook
from rc1.data.task import TaskItem
from rc1.registry.providers import API_PROVIDERS, PROVIDERS
from rc1.scoring.judge import Judge
from rc1.scoring.ledger import read_tail, summarize
from rc1.scoring.openai_judge import API_KEY_ENV, api_key
from rc1.scoring.rules import RuleScorer, as_completion, gold_reply

CACHE_WINDOW = 100


def _wrong_answer(item: TaskItem, kind: str) -> str:
    if kind == "yes_no":
        return "no" if item.answer.strip().lower() == "yes" else "yes"
    if kind == "math":
        try:
            return str(int(float(item.answer.replace(",", ""))) + 1)
        except ValueError:
            return item.answer + "1"
    return item.answer + " xyzzy"


def scorer_selfcheck(items: list[TaskItem], rule: RuleScorer) -> CheckResult:
    def correct(item: TaskItem, visible: str) -> float:
        completion = as_completion(visible, rule.thinking)
        return rule.score(item, completion, len(completion.split()))["correctness"]

    # Answering an under-specified question, even with the gold answer, is the wrong reply.
    wrong = {
        item.id: f"Answer: {item.answer if item.needs_clarification else _wrong_answer(item, rule.check_of(item.task))}"
        for item in items
    }
    gold_hits = sum(correct(item, gold_reply(item)) >= 1.0 for item in items)
    wrong_hits = sum(correct(item, wrong[item.id]) > 0.0 for item in items)
    n = len(items)
    gold_rate = gold_hits / n if n else 0.0
    wrong_rate = wrong_hits / n if n else 1.0
    return CheckResult(
        name="scorer_selfcheck",
        passed=n > 0 and gold_rate == 1.0 and wrong_rate == 0.0,
        measured={
            "items": float(n),
            "gold_scored_correct": gold_rate,
            "wrong_scored_correct": wrong_rate,
            "thinking": float(rule.thinking),
        },
        thresholds={"gold_scored_correct": 1.0, "wrong_scored_correct": 0.0},
        detail=f"rule scorer on {n} shadow items: gold answers {gold_rate:.3f} correct, wrong answers {wrong_rate:.3f} "
        "correct",
    )


def scorer_probe(judge: Judge, items: list[TaskItem]) -> CheckResult:
    results = judge.verdicts(items, [gold_reply(item) for item in items], use_cache=False)
    records = [record for _, record in results]
    summary = summarize(records)
    parsed = sum(verdict is not None for verdict, _ in results)
    timed = sum(record.latency_ms > 0 for record in records)
    agreed = sum(
        bool(v) and (v.clarification_ok if item.needs_clarification else v.correct)
        for (v, _), item in zip(results, items)
    )
    problems = []
    if not items:
        problems.append("no items to probe with")
    if parsed < len(items):
        errors = sorted({record.error for record in records if record.error})
        problems.append(f"{len(items) - parsed} of {len(items)} answers did not parse: {errors[0]}")
    if timed < len(items):
        problems.append(f"{len(items) - timed} calls took no time: they were not made")
    if judge.backend.paid and summary.billable < 1:
        problems.append(f"{judge.backend.provider} is a paid provider but no call was billable")
    return CheckResult(
        name="scorer_probe",
        passed=not problems,
        measured={
            "calls": float(len(items)),
            "parsed": float(parsed),
            "timed": float(timed),
            "billable": float(summary.billable),
            "paid": float(judge.backend.paid),
            "latency_p50_ms": summary.latency_p50_ms,
            "latency_p95_ms": summary.latency_p95_ms,
            "gold_judged_right": float(agreed),
        },
        thresholds={"parsed": float(len(items)), "timed": float(len(items)), "billable": float(judge.backend.paid)},
        detail="; ".join(problems)
        if problems
        else f"{len(items)} live calls to {judge.backend.where}: all parsed, latency p50 {summary.latency_p50_ms:.0f} "
        "ms "
        f"p95 {summary.latency_p95_ms:.0f} ms, {summary.billable} billable; the judge called {agreed} gold replies "
        "right",
    )


def scorer_cache(ledger_path: Path, max_hit_rate: float) -> CheckResult:
    records = read_tail(ledger_path, CACHE_WINDOW)
    hits = sum(r.cached for r in records)
    rate = hits / len(records) if records else 0.0
    return CheckResult(
        name="scorer_cache",
        passed=rate < max_hit_rate,
        measured={"window": float(len(records)), "cache_hits": float(hits), "hit_rate": rate},
        thresholds={"max_hit_rate": max_hit_rate},
        detail=f"{hits} of the last {len(records)} judge calls came from the cache ({rate:.2f}; must stay under "
        f"{max_hit_rate:g})" + ("" if rate < max_hit_rate else ": scores are being replayed, not made"),
    )


def scorer_live(config: Config, *, require_api: bool = False) -> CheckResult:
    """`require_api` (`rc1 scorer probe --live`) holds any profile to production's rule."""
    provider = config.scorer.provider
    api = PROVIDERS[provider].api
    key = api_key() is not None
    production = config.profile in PRODUCTION_PATH_PROFILES
    problems = []
    if (production or require_api) and not api:
        who = f"the {config.profile} profile" if production else "--live"
        problems.append(f"scorer.provider is {provider}; {who} needs a live API judge ({', '.join(API_PROVIDERS)})")
    if api and not key:
        problems.append(f"{API_KEY_ENV} is not set; the {provider} judge needs it")
    return CheckResult(
        name="scorer_live",
        passed=not problems,
        measured={"api_judge": float(api), "api_key_present": float(key), "production_profile": float(production)},
        thresholds={"api_judge": float(production or require_api), "api_key_present": float(api)},
        detail="; ".join(problems)
        if problems
        else (
            f"live {provider} judge, key present"
            if api
            else f"scorer.provider {provider}: rule components"
            + (" and a local judge" if PROVIDERS[provider].judges else " only")
            + " (allowed on the local profile)"
        ),
    )


LIVE = Check(
    name="scorer_live",
    rounds=(1, 2),
    run=lambda r: scorer_live(r.config),
    runbook=Runbook(
        means="the judge cannot be live: an API provider without SCORER_API_KEY in the environment, or the production "
        "profile (or --live) with scorer.provider none or hf_judge",
        tries=(
            "export SCORER_API_KEY in the shell that runs rc1",
            "production: set scorer.provider to an API judge (openai, gemini, deepseek_r1, or openai_compat with "
            "scorer.base_url)",
            "check it alone: rc1 scorer probe --live",
        ),
    ),
)


PROBE = Check(
    name="scorer_probe",
    rounds=(1, 2),
    run=lambda r: None if r.judge is None else scorer_probe(r.judge, spread(r.shadow, PROBE_ITEMS)),
    runbook=Runbook(
        means="real judge calls failed: answers that do not parse (the judge model ignores the rubric's format), an "
        "endpoint, key or timeout error, or calls that were not made",
        tries=(
            "run rc1 scorer probe --n 8 and read the first error the detail names",
            "an endpoint or auth error: check scorer.base_url, scorer.model and SCORER_API_KEY; timeouts or 429s: "
            "raise scorer.timeout_s / scorer.max_retries, or lower scorer.max_concurrency",
            "malformed answers: a judge model that follows the rubric (scorer.model), or a rubric (scorer.rubric) "
            "that asks for the verdict format rc1 parses",
        ),
    ),
)


CACHE = Check(
    name="scorer_cache",
    rounds=(1, 2),
    thresholds={
        "preflight.max_cache_hit_rate_round1": Floor("max", 0.9),
        "preflight.max_cache_hit_rate_round2": Floor("max", 0.95),
    },
    run=lambda r: scorer_cache(
        r.ws.ledger_path,
        r.config.preflight.max_cache_hit_rate_round1
        if r.round_no == 1
        else r.config.preflight.max_cache_hit_rate_round2,
    ),
    runbook=Runbook(
        means="most of the last 100 judge calls in the ledger came from data/scorer_cache/ (scorer.cache true): "
        "scores are being replayed rather than made",
        tries=(
            "switch the cache off for the run: scorer.cache=false",
            "find what replayed: the scope of each call in events/<run>.ledger.jsonl names the command behind it",
            "production may not raise preflight.max_cache_hit_rate_round1 / preflight.max_cache_hit_rate_round2 "
            "above 0.90 / 0.95 (PRODUCTION_FLOORS)",
        ),
    ),
)


SELFCHECK = Check(
    name="scorer_selfcheck",
    rounds=(2,),
    run=lambda r: scorer_selfcheck(r.shadow, r.pipeline.rule),
    runbook=Runbook(
        means="the rule scorer misjudges the shadow set's own gold replies, or credits a wrong one: a task's answer "
        "check does not fit its answers, usually data.tasks.<name>.check or its answer column",
        tries=(
            "set data.tasks.<name>.check to what its gold answers need (math for numbers, yes_no, exact, f1), or "
            "fix the reward function it names",
            "check that data.tasks.<name>.answer names the gold-answer column",
            "score one gold reply by hand: rc1 score --task T --gold G --completion-file F; rc1 scorer probe "
            "re-runs this check (in round 2 a config change needs --accept-changed-inputs)",
        ),
    ),
)
