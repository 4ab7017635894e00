"""What the training stage does around the engine: a train_step event per optimizer step; per checkpoint
the publish, the event, `latest`, the shadow-set evaluation and the promotion to best/."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from rc1.app.gate_set import correct_counts, gate_sampling, score_replies
from rc1.app.rollouts import RolloutRecorder, StepMeans
from rc1.app.scoring import RunScoring
from rc1.app.session import Session
from rc1.core import distributed, failpoints
from rc1.core.fsutil import atomic_write_bytes, sha256_file
from rc1.core.progress import StepProgress
from rc1.data.task import TaskItem
from rc1.run import events as ev
from rc1.run.monitors.rules import frozen_base
from rc1.run.verdicts import metric_value
from rc1.scoring.archive import EVAL, EVAL_SAMPLED, SHARD_NAME, encode_shard, rows_of
from rc1.scoring.episode_stats import episode_stats
from rc1.scoring.evaluation import evaluate_buckets, hard_success
from rc1.scoring.functions import BatchContext, StepState, token_ids_of
from rc1.scoring.pipeline import ScorerInputs, evaluated_inputs, rewards_of
from rc1.train import checkpoints
from rc1.train.frozen_base import frozen_sha256, planted_move
from rc1.train.metrics import EvalResult, StepMetrics
from rc1.train.protocols import Verdict
from rc1.train.sampler import BatchMix
from rc1.train.together import PUBLISHED, wait_for_publication


class EventHooks:
    """Turns engine callbacks into events, published checkpoints, evaluations and best promotions."""

    def __init__(
        self,
        session: Session,
        engine,
        shadow: list[TaskItem],
        scoring: RunScoring,
        batch_mix: Callable[[int], BatchMix],
        rollouts: RolloutRecorder,
    ):
        self.session = session
        self.rollouts = rollouts
        train = session.config.train
        self.progress = StepProgress(train.max_steps, train.log_steps or max(1, train.max_steps // 100))
        self.batch_mix = batch_mix
        self.engine = engine
        self.shadow = shadow
        self.scoring = scoring
        self._scope(f"step {session.projection.step + 1}")

    def _scope(self, scope: str) -> None:
        if self.scoring.judge is not None:
            self.scoring.judge.ledger.scope = scope

    def _judge_calls(self) -> ev.ScoringSummary:
        return self.scoring.judge.ledger.drain() if self.scoring.judge is not None else ev.ScoringSummary()

    def on_step(self, m: StepMetrics) -> Verdict | None:
        means = self.rollouts.close_step(m.step, m.advantages)  # first: every rank gathers its rollouts here
        failpoints.reached("step")
        fields = step_fields(m, means, self.batch_mix(m.step))
        self.session.append(self.session.run.record_step(**fields, scoring=self._judge_calls()))
        verdict = record_trips(self.session)
        self._scope(f"step {m.step + 1}")
        self.progress.step(
            m.step, m.sec_per_step, m.tokens, f"loss {m.loss:+.4f}  kl {m.kl:.4f}  reward {m.reward:.4f}"
        )
        return verdict

    def close(self) -> None:
        self.progress.close()

    def on_checkpoint(self, step: int, staged_dir: Path) -> Verdict | None:
        ws = self.session.ws
        final = ws.checkpoint_dir(step)
        shard = self.rollouts.take_shard()
        if shard is not None:  # published, hashed and vouched for with the checkpoint's own files
            atomic_write_bytes(staged_dir / SHARD_NAME, shard)
        seq, digest = self.session.log.head
        meta = {
            "run": ws.run,
            "step": step,
            "config_sha256": self.session.loaded.sha256,
            "log_seq": seq,
            "log_hash": digest,
        }
        files = checkpoints.publish(staged_dir, final, meta)
        failpoints.reached("checkpoint")
        rel = str(final.relative_to(ws.root))
        planted_move(self.engine.model, step)  # a test hook, unset in real runs (rc1/train/frozen_base.py)
        frozen = frozen_sha256(self.engine.model)
        self.session.append(self.session.run.save_checkpoint(step, rel, files, frozen))
        checkpoints.update_latest(ws.checkpoints_dir, final)
        verdict = None
        if evaluates_at(self.session.config, step):
            distributed.share(PUBLISHED)  # the other ranks join the evaluation now
            self.evaluate(step)
            self._promote(step, final)
            verdict = record_trips(self.session)
        if verdict is None or verdict.action != "halt":  # after the evaluation the other ranks take part in
            verdict = base_moved(self.session, frozen, step, f"at step {step}'s checkpoint") or verdict
        return verdict

    def evaluate(self, step: int) -> float:
        """Greedy replies to the shadow set, scored by the run's scorer, and `release.samples` sampled replies per
        item scored by the rule scorer: an eval_completed event; returns the value of `release.metric`."""
        config = self.session.config
        started = time.perf_counter()
        result, sampled = shadow_replies(self.engine, self.shadow, config)
        self._scope(f"eval {step}")
        context = BatchContext(  # after `step` steps; the replies' ids re-encoded by the policy's tokenizer
            encode=token_ids_of(self.engine.tokenizer),
            trainer_state=StepState(global_step=step, max_steps=config.train.max_steps),
        )
        greedy = evaluated_inputs(self.shadow, result)  # a live episode's reply read as training reads it
        scored = self.scoring.pipeline.score(
            greedy.items, greedy.texts, greedy.tokens, context, greedy.clarifications, greedy.live
        )
        rewards = rewards_of(config.reward, self.scoring.weights, greedy.items, scored)
        rule = self.scoring.pipeline.rule
        sampled_scored = score_replies(rule, self.shadow, sampled)
        counts = correct_counts(rule, self.shadow, sampled, sampled_scored)
        rates = [c / sampled.samples for c in counts]
        sampled_inputs = evaluated_inputs(self.shadow, sampled)
        step0 = next((e for e in self.session.projection.evals if e.step == 0), None)
        buckets = evaluate_buckets(self.shadow, scored, rewards, step0.buckets if step0 and step else (), rates)
        tasks = list(config.release.tasks)
        hard = hard_success(self.shadow, [s.components["correctness"] for s in scored], tasks)
        hard_sampled = hard_success(self.shadow, rates, tasks)
        overall = buckets[-1]
        per_task = {b.task: b.success for b in buckets if b.difficulty == "all" and b.task != "all"}
        self.session.append(
            self.session.run.record_evaluation(
                step=step,
                n=overall.n,
                mean_reward=overall.mean_reward,
                success=overall.success,
                per_task_success=per_task,
                scoring=self._judge_calls(),
                buckets=buckets,
                hard_success=hard,
                hard_sampled_success=hard_sampled,
                samples=sampled.samples,
                rollouts=self._archive_evaluation(step, greedy, scored, sampled_inputs, sampled_scored),
                item_ids=[item.id for item in self.shadow],
                item_greedy=[s.components["correctness"] for s in scored],
                item_sampled=counts,
                drift=sampled.drift,
                seconds=time.perf_counter() - started,
                mem_peak_mb=max(result.mem_peak_mb, sampled.mem_peak_mb),
                episodes=_tool_use(self.shadow, result),
            )
        )
        self._scope(f"step {step + 1}")
        return metric_value(config.release.metric, hard, hard_sampled, buckets)

    def _archive_evaluation(
        self, step: int, greedy: ScorerInputs, scored, sampled: ScorerInputs, sampled_scored
    ) -> dict[str, str]:
        """The evaluation's shard: its greedy replies (the run's scorer) and its sampled ones (the rule scorer:
        their reward is the rule components' alone where a judge also weighs in), each as it was scored (the items
        and texts the scorer read: `evaluated_inputs`), a live episode with its record (messages, tool calls)."""
        config = self.session.config
        weights = self.scoring.weights
        rule_weights = {name: weights[name] for name in sampled_scored[0].components} if sampled_scored else weights
        rows = rows_of(
            EVAL,
            step,
            greedy.items,
            greedy.texts,
            greedy.tokens,
            scored,
            config.reward,
            weights,
            config.rollouts,
            greedy.episodes,
        )
        rows += rows_of(
            EVAL_SAMPLED,
            step,
            sampled.items,
            sampled.texts,
            sampled.tokens,
            sampled_scored,
            config.reward,
            rule_weights,
            config.rollouts,
            sampled.episodes,
        )
        ws = self.session.ws
        path = ws.evaluations_dir / f"step_{step:05d}.jsonl.zst"
        atomic_write_bytes(path, encode_shard(rows))
        return {str(path.relative_to(ws.root)): sha256_file(path)}

    def _promote(self, step: int, final: Path) -> None:
        """best/ grows by a copy of each checkpoint that beats every evaluation before it, step 0 included: the run
        decides from the evaluations in the log (`promotion_value`, the rule the release verdict's simulations
        test), before the copy and again at the write."""
        metric = self.session.config.release.metric
        value = self.session.run.promotion_value(step, metric)
        if value is None:
            return
        best_dir = self.session.ws.checkpoints_dir / "best" / final.name
        files = checkpoints.promote_best(final, best_dir)
        rel = str(best_dir.relative_to(self.session.ws.root))
        self.session.append(self.session.run.promote_best(step, rel, metric, files))
        print(f"  best/ <- step {step} ({metric} {value:.4f})", file=sys.stdout, flush=True)


def step_fields(m: StepMetrics, means: StepMeans, mix: BatchMix) -> dict:
    """A train_step event's fields from the engine's metrics, the step's rollouts (their means) and its batch mix: all
    but the judge's calls (`scoring`). What `rc1 audit --retrain` compares a retrained step with."""
    return dict(
        step=m.step,
        loss=m.loss,
        kl=m.kl,
        ratio=m.ratio,
        lr=m.lr,
        reward=m.reward,
        reward_std=m.reward_std,
        mem_used_mb=m.mem_used_mb,
        sec_per_step=m.sec_per_step,
        tokens=m.tokens,
        epochs=m.epochs,
        kl_coef=m.kl_coef,
        batch_difficulty=mix.difficulty,
        seed_share=mix.seed_share,
        low_perf=mix.low_perf,
        components=means.components,
        penalty=means.penalty,
        diagnostics=m.diagnostics,
        episodes=means.episodes or msgspec.UNSET,
        grad_norm=m.grad_norm,
    )


def evaluates_at(config, step: int) -> bool:
    """Whether checkpoint `step` is evaluated on the shadow set (every `eval_steps`, else every checkpoint, and the
    last)."""
    train = config.train
    return step % (train.eval_steps or train.save_steps) == 0 or step == train.max_steps


def shadow_replies(engine, shadow: list[TaskItem], config) -> tuple[EvalResult, EvalResult]:
    """An evaluation's replies: greedy ones, then `release.samples` sampled ones per item (with their drift where the
    drift monitor is on). Under a multi-process launch every rank calls it and generates its share."""
    max_tokens = config.train.max_completion_tokens
    greedy = engine.evaluate(shadow, max_tokens)
    sampled = engine.evaluate(
        shadow,
        max_tokens,
        sampling=gate_sampling(config),
        drift=config.monitors.drift.replies_per_item if config.monitors.drift else 0,
    )
    return greedy, sampled


class EvalWorker:
    """The hooks of a rank other than 0: it records nothing; it sends its rollouts of each step to rank 0's archive
    and generates its share of every shadow evaluation, which rank 0 gathers, scores and records
    (rc1/train/generation.py `evaluate_policy`)."""

    def __init__(self, config, engine, shadow: list[TaskItem], rollouts: RolloutRecorder):
        self.config, self.engine, self.shadow, self.rollouts = config, engine, shadow, rollouts

    def on_step(self, metrics: StepMetrics) -> Verdict | None:
        self.rollouts.close_step(metrics.step)  # this rank's rollouts of the step, to rank 0's archive
        return None

    def on_checkpoint(self, step: int, staged_dir: Path) -> Verdict | None:
        if evaluates_at(self.config, step):
            wait_for_publication(step)
            self.evaluate(step)
        return None

    def evaluate(self, step: int) -> None:
        greedy, sampled = shadow_replies(self.engine, self.shadow, self.config)
        print(
            f"rank {distributed.rank()}: generated {greedy.generated_here} of {len(greedy.completions)} greedy and "
            f"{sampled.generated_here} of {len(sampled.completions)} sampled replies of step {step}'s evaluation",
            file=sys.stderr,
            flush=True,
        )

    def close(self) -> None:
        pass


def base_moved(session: Session, frozen: dict[str, str], step: int, at: str) -> Verdict | None:
    """The frozen_base guard (rc1/run/monitors/rules/frozen_base.py): its trip, appended, and the halt, where the
    sampled frozen tensors no longer hash as at the line's start; None where they do (or nothing was sampled)."""
    moved = frozen_base.moved(session.projection.frozen_base, frozen)
    if not moved:
        return None
    trip = session.append(session.run.trip_frozen_base(step, moved, frozen_base.detail(moved, at)))
    print(f"  monitor {trip.rule} (halt) at step {step}: {trip.detail}", file=sys.stderr, flush=True)
    return Verdict(action="halt", rule=trip.rule, step=step, message=trip.detail)


def record_trips(session: Session, up_to_step: int | None = None) -> Verdict | None:
    """Append the trips the monitors give at the check just recorded (warns first, then at most one halt or stop:
    rc1/run/monitors/fold.py `due`), and say each on the console; the halt or stop, as the Verdict that ends training.
    `up_to_step`: only a check at or before it (a resume: later ones are trained and checked again)."""
    failpoints.reached("trips")
    verdict = None
    for trip in session.run.monitor_trips(up_to_step):
        session.append(trip)
        print(f"  monitor {trip.rule} ({trip.action}) at step {trip.step}: {trip.detail}", file=sys.stderr, flush=True)
        if trip.action != "warn":
            verdict = Verdict(action=trip.action, rule=trip.rule, step=trip.step, message=trip.detail)
    return verdict


def _tool_use(items: list[TaskItem], replies: EvalResult) -> dict[str, float] | msgspec.UnsetType:
    """A live evaluation's tool use (`episode_stats`), item by item; UNSET for one-turn replies."""
    if replies.outcomes is None:
        return msgspec.UNSET
    needed = [item.needs_clarification for item in items for _ in range(replies.samples)]
    return episode_stats(needed, replies.outcomes)
