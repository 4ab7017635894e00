"""reward_hacking: the training reward rising while the shadow set's success falls, over the same `window` of
evaluations; or one reward component growing its share of the weighted reward while correctness does not grow.

Over a window of K evaluations, from evaluation E(j−K) to the latest E(j): the rise is the mean reward of the steps
just before E(j) (those since the evaluation before it) minus that of the steps just before E(j−K), with Welch's
interval over steps; the fall is the shadow set's sampled success at E(j) minus at E(j−K), paired over items. A
component's share is w·component / Σ w·components per step; its gain compares the same two stretches of steps."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from rc1.monitors.spec import Action, MonitorSpec, RuleParams
from rc1.monitors.state import MonitorState, Reading
from rc1.monitors.stats import paired_interval, welch_interval
from rc1.runbook import Runbook

CORRECTNESS = "correctness"


class RewardHacking(RuleParams):
    """Reward hacking: reward up while shadow success is down over the same evaluations, or a component's share of
    the reward up while correctness is not."""

    window: Annotated[int, Meta(ge=1, description="Evaluations back to compare with: the latest evaluation and the "
                                                  "steps before it against the one `window` evaluations earlier and "
                                                  "the steps before that.")] = 2
    min_reward_rise: Annotated[float, Meta(ge=0.0, description="The smallest rise of the mean training reward "
                                                              "(last interval − first) that counts.")] = 0.02
    max_share_gain: Annotated[float, Meta(gt=0.0, le=1.0, description="Trips when a component's share of the "
                                                                     "weighted reward grows by more than this while "
                                                                     "correctness does not grow.")] = 0.15
    confidence: Annotated[float, Meta(gt=0.5, lt=1.0, description="The intervals' confidence: the rise, the fall "
                                                                  "and the share gain must each be significant.")] = 0.95
    action: Annotated[Action, Meta(description="warn, halt or stop (end the line early as complete).")] = "halt"


def read(params: RewardHacking, state: MonitorState) -> Reading | None:
    evals = state.evals
    k = params.window
    if len(evals) < k + 2:  # the earlier evaluation needs steps before it (the first evaluation, at step 0, has none)
        return None
    first, last = evals[-k - 1].since_previous, evals[-1].since_previous
    rise = welch_interval(last.reward, first.reward, params.confidence)
    fall = paired_interval(evals[-1].sampled_rates, evals[-k - 1].sampled_rates, params.confidence) \
        if evals[-1].samples and len(evals[-1].sampled) == len(evals[-k - 1].sampled) else None
    if rise is None:
        return None
    measured = {"reward_rise": rise.mean, "reward_rise_ci_low": rise.low, "reward_rise_ci_high": rise.high,
                "from_step": float(evals[-k - 1].step)}
    hacked_reward = False
    if fall is not None:
        measured.update(success_change_pp=100 * fall.mean, success_ci_low_pp=100 * fall.low,
                        success_ci_high_pp=100 * fall.high)
        hacked_reward = rise.mean >= params.min_reward_rise and rise.low > 0 and fall.high < 0
    # Without a correctness component (a weights file without it) whether correctness grew is unknown: no share trip.
    correctness = last.correctness.mean - first.correctness.mean if first.correctness.n and last.correctness.n else None
    grown: tuple[str, float] | None = None
    for name in sorted(last.shares.keys() & first.shares.keys() - {CORRECTNESS}):
        gain = welch_interval(last.shares[name], first.shares[name], params.confidence)
        if gain is None:
            continue
        measured[f"{name}_share_gain"] = gain.mean
        if (correctness is not None and correctness <= 0 and gain.mean > params.max_share_gain and gain.low > 0
                and (grown is None or gain.mean > grown[1])):
            grown = (name, gain.mean)
    if correctness is not None:
        measured["correctness_change"] = correctness
    if hacked_reward:
        detail = (f"training reward {rise.mean:+.3f} (interval {rise.low:+.3f} to {rise.high:+.3f}) while shadow "
                  f"success {measured['success_change_pp']:+.1f} pp (interval {measured['success_ci_low_pp']:+.1f} to "
                  f"{measured['success_ci_high_pp']:+.1f}) since step {evals[-k - 1].step}")
    elif grown is not None:
        detail = (f"component {grown[0]} grew its share of the reward by {grown[1]:+.2f} since step "
                  f"{evals[-k - 1].step} while correctness changed {correctness:+.3f}")
    else:
        detail = f"training reward {rise.mean:+.3f} since step {evals[-k - 1].step}" + (
            f", shadow success {measured['success_change_pp']:+.1f} pp" if fall is not None else "")
    return Reading(step=state.step, value=rise.mean, threshold=params.min_reward_rise,
                   breach=hacked_reward or grown is not None, measured=measured,
                   thresholds={"min_reward_rise": params.min_reward_rise, "max_share_gain": params.max_share_gain,
                               "confidence": params.confidence},
                   window=k, detail=detail)


SPEC = MonitorSpec(
    name="reward_hacking",
    about="training reward up while shadow success falls, or a component's share of the reward up without "
          "correctness, over a window of evaluations",
    params=RewardHacking,
    checked=("eval",),
    read=read,
    signal="train_step.reward and components; eval_completed.item_sampled",
    runbook=Runbook(
        means="the policy found a way to score that is not the task: a format or length component it can satisfy "
              "without answering, a reward function of yours that pays for padding, or a judge it can sway",
        tries=("read the highest-rewarded replies: rc1 rollouts --step N --best 5",
               "lower the weight of the component that grew, or fix the function (both go through the gates again)",
               "roll back to the best checkpoint: rc1 advance --from best --because …, or stop the line: "
               "rc1 advance --stop --because …"),
    ),
)
