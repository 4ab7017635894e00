"""`rc1 shadow run`: K sampled replies per shadow item from a policy (the base model, best/ or a
checkpoint), each scored by the old and the new scoring, and the statistics of seed 002 §2.3
(rc1/scoring/shadow_stats.py) written to reports/shadow_run_<tag>.json and a shadow_run_completed event.

Old scoring: the weighted components alone (`shadow.old_weights`, or the run's weights), without the
over-clarification penalty and the difficulty factor. New: the run's reward.
"""

from __future__ import annotations

import json

import msgspec

from rc1.app.gate_set import Policy, sampled_as_trained
from rc1.app.scoring import open_scoring, policy_thinking
from rc1.app.session import Session
from rc1.checks.component_spread import RUNBOOK as SPREAD_RUNBOOK
from rc1.checks.component_spread import component_spread
from rc1.checks.result import CheckResult
from rc1.checks.spec import Check, Floor
from rc1.checks.thinking_fits import RUNBOOK as THINKING_RUNBOOK
from rc1.checks.thinking_fits import SampledReplies, thinking_fits
from rc1.core.errors import BadInput
from rc1.core.fsutil import atomic_write_text, sha256_file
from rc1.core.runbook import Runbook
from rc1.data.task import read_items
from rc1.run import events as ev
from rc1.scoring.functions import BatchContext, StepState, token_ids_of
from rc1.scoring.pipeline import components_for, evaluated_inputs, rewards_of
from rc1.scoring.reward import weighted_sum
from rc1.scoring.shadow_stats import Sample, shadow_statistics
from rc1.scoring.weights import load_weights

PRE_RUN_TAG = "pre_run_check"


class ShadowRun(msgspec.Struct, frozen=True, kw_only=True):
    """A shadow run: its event, and the replies it scored (round 2's `thinking_fits` reads them too)."""

    event: ev.ShadowRunCompleted
    replies: SampledReplies
    thinking: bool  # the policy's chat template opens <think>
    components: list[dict[str, float]]  # each reply's scores by component, as `replies` orders them
    weights: dict[str, float]  # the run's


def run_shadow(
    session: Session, tag: str, checkpoint: str = "base", samples: int | None = None, base: Policy | None = None
) -> ShadowRun:
    """`base`: the base policy when the caller has it loaded already (round 2), for `checkpoint` base."""
    from rc1.app.policy import line_session, load_run_policy
    from rc1.data.user_tools import tools_of

    base_seed = session.config.run.seed
    if session.projection.seed is not None:  # the line of training the checkpoints belong to
        session = line_session(session, session.projection.seed, list(session.config.run.seeds))
    config = session.config
    k = samples or config.shadow.samples
    shadow = read_items(session.ws.shadow_path)
    trained = 0  # the optimizer steps behind the policy evaluated: 0 for the base
    if base is not None and checkpoint == "base":
        model, tokenizer, device = base.model, base.tokenizer, base.device
    else:
        pool = read_items(session.ws.balanced_pool_path)
        model, tokenizer, device, _ = load_run_policy(session, pool, base_seed)
        model, trained = _policy_of(session, model, checkpoint)
    thinking = policy_thinking(session.loaded, tokenizer.chat_template, template_known=True)
    scoring = open_scoring(session.loaded, session.ws, thinking)
    old_weights = (
        load_weights(session.loaded.resolve(config.shadow.old_weights), components_for(session.loaded))
        if config.shadow.old_weights
        else scoring.weights
    )
    replies = sampled_as_trained(config, model, tokenizer, device, shadow, k, tools_of(session.loaded))
    inputs = evaluated_inputs(shadow, replies)  # a live episode's reply read as training reads it
    items, texts, counts = inputs.items, inputs.texts, inputs.tokens
    if scoring.judge is not None:
        scoring.judge.ledger.scope = f"shadow {tag}"
    # What a reward function of yours reads as TRL would hand it: the replies' ids, and the steps the policy trained.
    context = BatchContext(
        encode=token_ids_of(tokenizer), trainer_state=StepState(global_step=trained, max_steps=config.train.max_steps)
    )
    scored = scoring.pipeline.score(items, texts, counts, context, inputs.clarifications, inputs.live)
    new = rewards_of(config.reward, scoring.weights, items, scored)
    runs = [
        Sample(item.id, item.difficulty, weighted_sum(s.components, old_weights), reward, s.components["correctness"])
        for item, s, reward in zip(items, scored, new, strict=True)
    ]
    stats = shadow_statistics(runs, config.shadow.unstable_variance)
    path = session.ws.reports_dir / f"shadow_run_{tag}.json"
    atomic_write_text(
        path,
        json.dumps(
            {
                "tag": tag,
                "checkpoint": checkpoint,
                "samples": k,
                "items": len(shadow),
                "old": f"weighted components ({config.shadow.old_weights or session.config.reward.weights}), no "
                "penalty or difficulty factor",
                "new": "the run's reward",
                "statistics": stats.statistics,
                "by_difficulty": stats.by_difficulty,
                "unstable": stats.unstable,
            },
            indent=2,
        ),
    )
    event = session.append(
        session.run.record_shadow_run(
            tag=tag,
            checkpoint=checkpoint,
            samples=k,
            statistics=stats.statistics,
            unstable=stats.unstable,
            report=str(path.relative_to(session.ws.root)),
            sha256=sha256_file(path),
            scoring=scoring.judge.ledger.drain() if scoring.judge is not None else ev.ScoringSummary(),
        )
    )
    sampled = SampledReplies(
        items=shadow,
        samples=k,
        texts=texts,
        tokens=counts,
        ended=replies.ended,
        correct=[s.components["correctness"] for s in scored],
    )
    return ShadowRun(
        event=event,
        replies=sampled,
        thinking=thinking,
        components=[s.components for s in scored],
        weights=dict(scoring.weights or {}),
    )


def _policy_of(session: Session, model, checkpoint: str) -> tuple:
    """The base `model` as it is (`base`), or with the weights of the named checkpoint of this run; and the optimizer
    steps behind it (0 for the base)."""
    if checkpoint == "base":
        return model, 0
    p = session.projection
    if checkpoint == "best":
        if p.best_step is None:
            raise BadInput("--checkpoint best: no checkpoint of this run has been promoted to best/ yet")
        step = p.best_step
        directory = session.ws.checkpoints_dir / "best" / f"step_{step:05d}"
    elif checkpoint.startswith("step_") and checkpoint[5:].isdigit():
        step = int(checkpoint[5:])
        refs = [c for c in p.checkpoints if c.step == step]
        if not refs:
            raise BadInput(f"--checkpoint {checkpoint}: no checkpoint_saved event for step {step}")
        directory = session.ws.root / refs[-1].dir
    else:
        raise BadInput(f"--checkpoint {checkpoint!r}: use base, best or step_N")
    from rc1.train.checkpoint_policy import policy_at

    return policy_at(model, directory, session.config.finetune.method), step


def pre_run_shadow_run(session: Session, base: Policy) -> ShadowRun:
    """Round 2's shadow run on the base model, which its `shadow_run` and `thinking_fits` checks read."""
    return run_shadow(session, PRE_RUN_TAG, base=base)


def shadow_run_result(shadow: ShadowRun) -> CheckResult:
    """The base model's shadow run must compute (rank agreement defined on stable items)."""
    event = shadow.event
    s = event.statistics
    problems = [name for name in ("spearman", "kendall_tau") if s.get(name) is None]
    stable = (s.get("items") or 0) - (s.get("unstable_items") or 0)
    if stable < 2:
        problems.append(f"only {stable:.0f} stable items")
    return CheckResult(
        name="shadow_run",
        passed=not problems,
        tags=[PRE_RUN_TAG],
        measured={name: value for name, value in s.items() if value is not None},
        thresholds={"stable_items": 2.0},
        detail=(
            "cannot be computed: " + ", ".join(problems)
            if problems
            else f"{event.samples} samples × {s['items']:.0f} items on the base model: spearman {s['spearman']:.3f}, "
            f"kendall {s['kendall_tau']:.3f}, {s['unstable_items']:.0f} unstable; report {event.report}"
        ),
    )


SHADOW_RUN = Check(
    name="shadow_run",
    rounds=(2,),
    run=lambda r: shadow_run_result(r.base_shadow),
    runbook=Runbook(
        means="the base model's shadow run cannot rank its items: the old or new scores of the stable replies are all "
        "equal (no usable replies), or fewer than 2 items stay within shadow.unstable_variance",
        tries=(
            "read shadow_run_pre_run_check.json under reports/: equal scores everywhere mean the base policy "
            "answers nothing usable; check train.max_completion_tokens, model.name and model.thinking",
            "builtin:tiny-qwen3: model.warm_start_steps > 0 teaches it well-formed replies before RL",
            "most items unstable: raise shadow.unstable_variance (round 2: with --accept-changed-inputs)",
            "reproduce it alone: rc1 shadow run --tag probe --checkpoint base",
        ),
    ),
)


THINKING_FITS = Check(
    name="thinking_fits",
    rounds=(2,),
    thresholds={"preflight.max_cut_share": Floor("max", 0.10), "preflight.max_no_signal_share": Floor("max", 0.85)},
    run=lambda r: thinking_fits(
        r.base_shadow.replies,
        thinking=r.base_shadow.thinking,
        max_tokens=r.config.train.max_completion_tokens,
        max_cut_share=r.config.preflight.max_cut_share,
        max_no_signal_share=r.config.preflight.max_no_signal_share,
    ),
    runbook=THINKING_RUNBOOK,
)


COMPONENT_SPREAD = Check(
    name="component_spread",
    rounds=(2,),
    run=lambda r: component_spread(
        r.base_shadow.components,
        r.base_shadow.replies.samples,
        r.base_shadow.weights,
        {f.name: f.path or f.model or "" for f in r.config.reward.functions},
        [f.name for f in r.config.reward.functions if f.constant_ok],
    ),
    runbook=SPREAD_RUNBOOK,
)
