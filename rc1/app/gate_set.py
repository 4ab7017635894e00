"""The gate set at work: a policy's replies to it, item by item, as a gate_set_evaluated event; and round 2's
`release_power` check, which takes the step-0 policy's evaluation and asks whether a verdict on this gate set can
tell a gain of the threshold's size from noise.

Each item is answered greedily once and `release.samples` times sampled (at `train.temperature`, `train.top_p` and
`train.top_k`, the sampler seeded with `data.shadow_seed`, so the same weights give the same numbers); a reply succeeds
when the rule scorer's `correctness` says so (no judge call: success is the rule component, as in every evaluation).
"""

from __future__ import annotations

import msgspec

from rc1.app.scoring import policy_thinking
from rc1.app.session import Session
from rc1.checks.result import CheckResult
from rc1.checks.spec import Check
from rc1.config.schema import Config
from rc1.core.catalog import is_release
from rc1.core.fsutil import sha256_file
from rc1.core.runbook import Runbook
from rc1.data.environment import wiki_view
from rc1.data.episodes import dressed_live
from rc1.data.task import TaskItem, read_items
from rc1.run import events as ev
from rc1.scoring.pipeline import Scored, evaluated_inputs, rule_scorer
from rc1.scoring.release_stats import release_power
from rc1.scoring.rules import RuleScorer, clarification_count
from rc1.train.metrics import EvalResult, Sampling


class Policy(msgspec.Struct, frozen=True):
    """A loaded policy to evaluate: the model (with its checkpoint's weights, if any), its tokenizer, its device."""

    model: object
    tokenizer: object
    device: str


def gate_sampling(config: Config) -> Sampling:
    train = config.train
    return Sampling(
        samples=config.release.samples,
        temperature=train.temperature,
        top_p=train.top_p,
        top_k=train.top_k,
        seed=config.data.shadow_seed,
    )


def as_trained(config: Config, tokenizer, items: list[TaskItem]) -> tuple[object, int | None]:
    """The tokenizer and tool rounds `evaluate_policy` takes to answer `items` as the run trains on them: live items
    (data.episodes: live, dressed live) are live episodes, run with the tool tokenizer the trl engine trains with and
    `data.max_tool_rounds`; any other item is one turn, with the policy's own tokenizer."""
    if config.data.episodes != "live" or not all(map(dressed_live, items)):
        return tokenizer, None
    from rc1.train.live_tools import with_tool_calling

    return with_tool_calling(tokenizer), config.data.max_tool_rounds


def sampled_as_trained(
    config: Config, model, tokenizer, device, items: list[TaskItem], samples: int, tools: tuple = ()
) -> EvalResult:
    """`samples` replies per item as a training group samples them (train's temperature, top_p, top_k, prompt and
    completion limits; live episodes where the items are dressed live, with the run's tools of yours `tools` and its
    data.wiki), the
    sampler seeded by `run.seed`: round 2's shadow run and round 1's difficulty probe (whose records are asked as
    one-turn episodes)."""
    from rc1.train.generation import eos_token_ids, evaluate_policy

    train = config.train
    asked_with, live_rounds = as_trained(config, tokenizer, items)
    return evaluate_policy(
        model,
        asked_with,
        items,
        max_prompt_tokens=train.max_prompt_tokens,
        max_new_tokens=train.max_completion_tokens,
        eos_ids=eos_token_ids(model, tokenizer),
        batch_size=replies_per_pass(config),
        device=device,
        sampling=Sampling(
            samples=samples,
            temperature=train.temperature,
            top_p=train.top_p,
            top_k=train.top_k,
            seed=config.run.seed,
        ),
        live_rounds=live_rounds,
        live_tools=tools if live_rounds is not None else (),
        live_wiki=wiki_view(config.data),
    )


def replies_per_pass(config: Config) -> int:
    return config.train.per_device_batch_size * config.train.gradient_accumulation_steps


def score_replies(rule: RuleScorer, items: list[TaskItem], replies: EvalResult) -> list[Scored]:
    """Each reply scored by the rule scorer (`replies.samples` per item, item by item) on the scorer's inputs
    (rc1/scoring/pipeline.py `evaluated_inputs`): components and the penalty's `c` (the questions a reply asks back,
    or a live episode's needless asks)."""
    inputs = evaluated_inputs(items, replies)
    asks = inputs.clarifications
    return [
        Scored(
            components=rule.score(item, text, tokens),
            clarifications=clarification_count(rule.reply(text).visible) if asks is None else asks[index],
        )
        for index, (item, text, tokens) in enumerate(zip(inputs.items, inputs.texts, inputs.tokens, strict=True))
    ]


def correct_counts(
    rule: RuleScorer, items: list[TaskItem], replies: EvalResult, scored: list[Scored] | None = None
) -> list[int]:
    """Per item, how many of its replies the rule scorer calls correct (`scored`: those replies already scored)."""
    k = replies.samples
    scored = score_replies(rule, items, replies) if scored is None else scored
    return [sum(round(s.components["correctness"]) for s in scored[i * k : (i + 1) * k]) for i in range(len(items))]


def success_counts(session: Session, policy: Policy, items: list[TaskItem]) -> tuple[list[int], list[int], float, int]:
    """Per item: sampled replies scored correct (of `release.samples`), whether the greedy reply was; seconds taken;
    how many of the replies this process generated (under a launch, every rank generates its share)."""
    from rc1.data.user_tools import tools_of
    from rc1.train.generation import eos_token_ids, evaluate_policy

    config = session.config
    rule = rule_scorer(
        session.loaded, policy_thinking(session.loaded, policy.tokenizer.chat_template, template_known=True)
    )
    asked_with, live_rounds = as_trained(config, policy.tokenizer, items)
    common = dict(
        max_prompt_tokens=config.train.max_prompt_tokens,
        max_new_tokens=config.train.max_completion_tokens,
        eos_ids=eos_token_ids(policy.model, policy.tokenizer),
        batch_size=replies_per_pass(config),
        device=policy.device,
        live_rounds=live_rounds,
        live_tools=tools_of(session.loaded) if live_rounds is not None else (),
        live_wiki=wiki_view(config.data),
    )
    greedy = evaluate_policy(policy.model, asked_with, items, **common)
    sampled = evaluate_policy(policy.model, asked_with, items, **common, sampling=gate_sampling(config))
    return (
        correct_counts(rule, items, sampled),
        correct_counts(rule, items, greedy),
        greedy.seconds + sampled.seconds,
        greedy.generated_here + sampled.generated_here,
    )


def evaluate_gate_set(
    session: Session,
    policy: Policy,
    *,
    which: str,
    step: int,
    checkpoint: str | None = None,
    selected_by: str = "",
    seed: int | None = None,
) -> ev.GateSetEvaluated:
    """`policy`'s replies to the gate set, appended as a gate_set_evaluated event (`which`: base | selected)."""
    gate = read_items(session.ws.gate_path)
    sampled, greedy, seconds, _ = success_counts(session, policy, gate)
    k = session.config.release.samples
    sampling = gate_sampling(session.config)
    return session.append(
        session.run.record_gate_set_evaluation(
            policy=which,
            step=step,
            checkpoint=checkpoint,
            selected_by=selected_by,
            seed=seed,
            gate_sha256=sha256_file(session.ws.gate_path),
            samples=k,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            top_k=sampling.top_k,
            generation_seed=sampling.seed,
            item_ids=[item.id for item in gate],
            sampled=sampled,
            greedy=greedy,
            sampled_success=sum(sampled) / (k * len(gate)),
            greedy_success=sum(greedy) / len(gate),
            seconds=seconds,
        )
    )


def release_power_check(session: Session, policy: Policy) -> CheckResult:
    """Round 2: the step-0 policy on the gate set (its evaluation is every line's step 0), and the smallest gain the
    verdict would detect with 80 % power (rc1/scoring/release_stats.py); fails above the threshold, naming the gate
    size that would suffice."""
    base = evaluate_gate_set(session, policy, which="base", step=0)
    release = session.config.release
    power = release_power([k / base.samples for k in base.sampled], base.samples, release.min_hard_gain_pp)
    measured = {
        "n": float(power.n),
        "samples": float(power.samples),
        "base_success": power.base_success,
        "base_greedy_success": base.greedy_success,
        "sd_diff": power.sd_diff,
        "mde_pp": power.mde_pp,
        "n_needed": float(power.n_needed),
    }
    said = (
        f"{power.n} gate items × {power.samples} samples, step-0 success {power.base_success:.3f}: the verdict "
        f"detects a gain of {power.mde_pp:.1f} pp with 80 % power"
    )
    detail = (
        f"{said} (threshold {release.min_hard_gain_pp:g} pp; {power.n_needed} items would do)"
        if power.passed
        else f"{said}, above the threshold {release.min_hard_gain_pp:g} pp: a verdict on this gate set would be "
        f"decided by noise; set release.gate_size to at least {power.n_needed} (or raise release.samples)"
    )
    # A smoke run's verdict is not a release: its gate set is small on purpose, and its power is said, not gated.
    smoke = not is_release(session.config.profile)
    return CheckResult(
        name="release_power",
        passed=power.passed or smoke,
        measured=measured,
        thresholds={"mde_pp": release.min_hard_gain_pp, "power": 0.8},
        detail=f"{'smoke profile, not a release, so not gated: ' if smoke and not power.passed else ''}{detail}",
    )


RELEASE_POWER = Check(
    name="release_power",
    rounds=(2,),
    thresholds={"release.min_hard_gain_pp": None, "release.samples": None},
    run=lambda r: release_power_check(r.session, r.policy),
    runbook=Runbook(
        means="the gate set is too small, or sampled too few times, for the release verdict to tell a gain of "
        "release.min_hard_gain_pp from noise at 80 % power, given the step-0 policy's spread on it",
        tries=(
            "enlarge it to the size the detail names: rc1 advance --set release.gate_size=N "
            "--accept-changed-inputs, then rc1 advance with the same --set (both rounds run again)",
            "or raise release.samples (the same way), which shrinks each item's sampling noise",
            "a task of yours must hold enough held-out records to fill it: add records or raise "
            "data.tasks.<name>.held_out_share",
        ),
    ),
)
