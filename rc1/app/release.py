"""The RC1 release verdict of a line of training, computed when it completes.

Selection and measurement never share items. The shadow set chose the checkpoint: the last one promoted to best/
(by `release.metric`), else the final checkpoint. The gate set, which nothing else ever reads, then measures it:
its step-0 evaluation (round 2's, on the base policy) against the selected checkpoint's, per item, success
averaged over `release.samples` sampled replies. The gain is the mean per-item difference with a 95 % paired
bootstrap interval over items (rc1/scoring/release_stats.py); PASSED only when the gain reaches
`release.min_hard_gain_pp` and the interval lies above 0.

With several seeds (`run.seeds`) each line of training gets that verdict, and the run gets one across them
(`release_across_seeds`): the mean gain minus its spread must reach the threshold, every seed having passed.
"""

from __future__ import annotations

import sys

from rc1.app.gate_set import Policy, evaluate_gate_set
from rc1.app.session import Session
from rc1.core import distributed
from rc1.core.catalog import is_release
from rc1.core.errors import TrainingError
from rc1.run import events as ev
from rc1.run.aggregate import RunAggregate
from rc1.run.projection import CheckpointRef, Projection
from rc1.run.verdicts import PairedGain, require_same_items
from rc1.scoring.release_stats import paired_gain
from rc1.views.release import gate_title, release_table, verdict_line


def selected_checkpoint(p: Projection, final: CheckpointRef) -> tuple[CheckpointRef, str]:
    """The checkpoint the shadow set chose, and how: the last best/ promotion ("best"), else the final one."""
    if p.best_step is not None:
        chosen = [c for c in p.checkpoints if c.step == p.best_step]
        if chosen:
            return chosen[-1], "best"
    return final, "final"


def gate_gain(base: ev.GateSetEvaluated, selected: ev.GateSetEvaluated) -> PairedGain:
    """The paired gain in sampled success between the gate set's two evaluations, item by item, with its bootstrap
    interval (seeded by the evaluations' own generation seed: the same log gives the same interval)."""
    return paired_gain(
        [k / base.samples for k in base.sampled],
        [k / selected.samples for k in selected.sampled],
        seed=base.generation_seed,
    )


def release_event(
    base: ev.GateSetEvaluated,
    selected: ev.GateSetEvaluated,
    threshold_pp: float,
    metric: str,
    seed: int | None,
    release: bool = True,
) -> ev.ReleaseEvaluated:
    """The verdict from two gate-set evaluations of the same items, derived again from the log (`rc1 audit
    --rescore`): the rule the run applied when it wrote it (rc1/run/verdicts.py)."""
    require_same_items(base, selected)
    return RunAggregate.verdict_event(base, selected, gate_gain(base, selected), threshold_pp, metric, seed, release)


def release_plan(p: Projection, final: CheckpointRef) -> tuple[CheckpointRef, str] | None:
    """The checkpoint the line's verdict still has to evaluate on the gate set, and how it was chosen; None when there
    is nothing to evaluate (the verdict is in the log, the log holds that evaluation, or round 2 left no base)."""
    if p.release is not None or p.gate_base is None:
        return None
    chosen, how = selected_checkpoint(p, final)
    selected = p.gate_selected
    return (chosen, how) if selected is None or selected.step != chosen.step else None


def join_release(session: Session, base_seed: int) -> None:
    """A rank other than 0 at the end of a line: its share of the gate-set replies to the checkpoint rank 0 names
    (rank 0 scores and records them)."""
    from rc1.app.gate_set import success_counts
    from rc1.data.task import read_items

    plan = distributed.share(None)
    if plan is not None:
        generated = success_counts(session, _policy_at(session, plan[0], base_seed), read_items(session.ws.gate_path))[
            3
        ]
        print(
            f"rank {distributed.rank()}: generated {generated} of the gate set's replies to step {plan[0].step}",
            file=sys.stderr,
            flush=True,
        )


def evaluate_release(session: Session, final: CheckpointRef, base_seed: int) -> None:
    """Evaluate the selected checkpoint on the gate set (unless the log already holds it: a crash came between),
    then append and print the verdict. `base_seed` builds the built-in base model the checkpoint's weights go on.
    Under a multi-process launch every rank calls it with rank 0 (`join_release`) and generates its share."""
    p = session.projection
    plan = distributed.share(release_plan(p, final))  # rank 0's plan: every rank generates its share of it
    if p.release is not None:
        return
    base = p.gate_base
    if base is None:
        print(
            "release: not evaluated (round 2 left no gate-set evaluation of the step-0 policy: a run begun before "
            "gate sets existed)",
            flush=True,
        )
        return
    chosen, how = selected_checkpoint(p, final)
    selected = p.gate_selected
    if plan is not None:
        policy = _policy_at(session, chosen, base_seed)
        print(
            f"  gate set: evaluating step {chosen.step} ({how}) on {len(base.item_ids)} items × {base.samples} samples",
            flush=True,
        )
        selected = evaluate_gate_set(
            session, policy, which="selected", step=chosen.step, checkpoint=chosen.dir, selected_by=how, seed=p.seed
        )
    require_same_items(base, selected)
    release = session.config.release
    event = session.append(
        session.run.judge_release(
            gate_gain(base, selected), release.min_hard_gain_pp, release.metric, is_release(session.config.profile)
        )
    )
    print(release_table(p.evals, chosen.step), flush=True)
    print(verdict_line(event), flush=True)


def _policy_at(session: Session, ref: CheckpointRef, base_seed: int) -> Policy:
    """The base policy with the checkpoint's weights, once its files match the hashes its event recorded."""
    from rc1.app.policy import load_run_policy
    from rc1.data.task import read_items
    from rc1.train import checkpoints
    from rc1.train.checkpoint_policy import policy_at

    directory = session.ws.root / ref.dir
    problems = checkpoints.verify(directory, ref.files)
    if problems:
        raise TrainingError(f"the selected checkpoint cannot be evaluated on the gate set: {'; '.join(problems)}")
    model, tokenizer, device, _ = load_run_policy(session, read_items(session.ws.balanced_pool_path), base_seed)
    return Policy(policy_at(model, directory, session.config.finetune.method), tokenizer, device)


def evaluate_release_across_seeds(session: Session) -> None:
    event = session.run.judge_across_seeds(session.config.release.min_hard_gain_pp, is_release(session.config.profile))
    if event is None:
        print("release across seeds: not evaluated (a line of training has no release of its own)", flush=True)
        return
    session.append(event)
    gains = ", ".join(f"seed {seed} {gain:+.1f}" for seed, gain in event.gains_pp.items())
    print(
        f"{gate_title(event.release)} across {len(event.gains_pp)} seeds: "
        f"{'PASSED' if event.passed else 'NOT PASSED'}: "
        f"hard gain mean {event.mean_pp:+.1f} pp, spread {event.spread_pp:.1f} pp ({gains}); "
        f"needs mean − spread ≥ {event.threshold_pp:g} pp and every seed passed",
        flush=True,
    )
