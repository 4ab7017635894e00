"""A line of training's engine and what it is built with: the run's policy, its scoring, the rollout recorder, the
sampler and the engine of the run's config (with a rollback's amendments). `rc1 train` builds it to train a line
(rc1/app/train.py) and `rc1 audit --retrain` to train a line's recorded steps again (rc1/app/retrain.py): one
recipe, so the audit retrains what training trained."""

from __future__ import annotations

import sys
from pathlib import Path

from rc1.app.amend import apply_amendments
from rc1.app.fresh import FreshItems
from rc1.app.policy import load_run_policy
from rc1.app.rollouts import RolloutRecorder
from rc1.app.scoring import RunScoring, open_scoring, policy_thinking
from rc1.data.task import TaskItem, read_items
from rc1.scoring.control import with_shuffled_answers
from rc1.scoring.pipeline import make_reward_fn
from rc1.train.sampler import PassSampler, PrioritySampler, Sampler


class LineEngine:
    """The engine of one line and the parts the stage around it reads (the shadow set, the scoring, the recorder the
    reward function hands its batches to, the sampler's batch mix, the policy's tokenizer, device and dtype)."""

    def __init__(self, engine, shadow, scoring, recorder, sampling, tokenizer, device: str, dtype, thinking: bool):
        self.engine = engine
        self.shadow: list[TaskItem] = shadow
        self.scoring: RunScoring = scoring
        self.recorder: RolloutRecorder = recorder
        self.sampling: Sampling = sampling
        self.tokenizer = tokenizer
        self.device = device
        self.dtype = dtype
        self.thinking = thinking


def build_line_engine(line, base_seed: int, amendments: dict[str, float | None], staging_dir: Path) -> LineEngine:
    """The engine of `line` (a session, or a read-only view with `loaded`, `ws` and `config`: its run.seed is the
    line's seed), trained on the balanced pool from the run's base (built with `base_seed`), with `amendments` (dotted
    key -> value, a rollback's) over the config, staging its checkpoints in `staging_dir`."""
    from rc1.data.user_tools import tools_of
    from rc1.train.engines import build_engine

    config, ws = line.config, line.ws
    pool = read_items(ws.balanced_pool_path)  # training uses the difficulty-balanced pool
    shadow = read_items(ws.shadow_path)
    model, tokenizer, device, dtype = load_run_policy(line, pool, base_seed)
    thinking = policy_thinking(line.loaded, tokenizer.chat_template, template_known=True)
    scoring = open_scoring(line.loaded, ws, thinking)
    recorder = RolloutRecorder(config, scoring.weights)
    reward_fn = make_reward_fn(config.reward, scoring.weights, scoring.pipeline, record=recorder.record)
    if config.reward.answers == "shuffled":  # a control arm: rewarded against another item's gold
        reward_fn = with_shuffled_answers(reward_fn, pool, base_seed)
    sampling = Sampling(line, pool, shadow + read_items(ws.gate_path))
    engine = build_engine(
        apply_amendments(line.loaded, amendments).config,
        pool,
        reward_fn,
        model,
        tokenizer,
        staging_dir,
        device,
        sampling.make,
        tools=tools_of(line.loaded),
    )
    if engine.truncated_prompts:
        print(
            f"note: {engine.truncated_prompts} of {len(pool)} prompts were cut to fit "
            f"train.max_prompt_tokens ({config.train.max_prompt_tokens}); their earliest turns are left out",
            file=sys.stderr,
        )
    return LineEngine(engine, shadow, scoring, recorder, sampling, tokenizer, device, dtype, thinking)


class Sampling:
    """Builds the sampler the engine draws its batches from, for the engine's prompts per step, and keeps
    it for the train_step events (the batch mix)."""

    def __init__(self, line, pool: list[TaskItem], held_out: list[TaskItem]):
        self._line, self._pool, self._held_out = line, pool, held_out
        self.sampler: Sampler | None = None

    def make(self, prompts_per_step: int) -> Sampler:
        config = self._line.config
        if config.priority_sampling is None:
            self.sampler = PassSampler(self._pool, prompts_per_step, config.train.max_steps, config.run.seed)
        else:
            fresh = FreshItems(self._line, self._pool, self._held_out)
            self.sampler = PrioritySampler(
                self._pool, prompts_per_step, config.run.seed, config.priority_sampling, fresh
            )
        return self.sampler
