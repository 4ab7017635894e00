"""Which engine runs a config, and what both engines set up the same way.

`engine.name` picks the engine class and `engine.strategy` the spec the engine reads its recipe from, both in
the registry (rc1/registry/); config has refused every pair the registry does not declare, before anything is
loaded. The engine class is imported here only when it is built: a torch-engine run never imports trl's
trainers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rc1.config.schema import Config
from rc1.core import distributed
from rc1.core.errors import BadInput
from rc1.data.task import TaskItem
from rc1.registry.engines import ENGINES
from rc1.registry.spec import StrategySpec, load
from rc1.registry.strategies import STRATEGIES
from rc1.train.generation import eos_token_ids
from rc1.train.launch import launch_accumulation
from rc1.train.prompts import FittedPrompts
from rc1.train.protocols import RewardFn, TrainingEngine
from rc1.train.sampler import PassSampler, Sampler


@dataclass(frozen=True)
class Setup:
    """What an engine starts from, whichever it is."""

    spec: StrategySpec  # the strategy the config names
    eos_ids: list[int]  # the tokens that end a reply
    prompts: FittedPrompts  # each item's prompt, fitted to train.max_prompt_tokens
    replies_per_step: int  # sampled replies per optimizer step, over every rank
    prompts_per_step: int
    sampler: Sampler  # the step's items


def shared_setup(
    config: Config, items: list[TaskItem], model, tokenizer, staging_dir: Path, make_sampler: Callable[[int], Sampler]
) -> Setup:
    """Refuse an empty pool, make the staging folder, switch the KV cache off under gradient checkpointing, fit
    the prompts, and build the sampler for the strategy's prompts per step (its replies per prompt on this
    engine divide the batch of replies)."""
    if not items:
        raise BadInput("data: no task items to train on")
    Path(staging_dir).mkdir(parents=True, exist_ok=True)
    if config.train.gradient_checkpointing:
        model.config.use_cache = False
    spec = STRATEGIES[config.engine.strategy]
    train = config.train
    # Replies per optimizer step over every rank: TRL's sampler hands each step's rows out across processes.
    batch = train.per_device_batch_size * launch_accumulation(train) * distributed.world_size()
    per_step = batch // spec.replies(config.engine.name, train.num_generations)
    return Setup(
        spec=spec,
        eos_ids=eos_token_ids(model, tokenizer),
        prompts=FittedPrompts(tokenizer, items, train.max_prompt_tokens),
        replies_per_step=batch,
        prompts_per_step=per_step,
        sampler=make_sampler(per_step),
    )


def build_engine(
    config: Config,
    items: list[TaskItem],
    reward_fn: RewardFn,
    model,
    tokenizer,
    staging_dir: Path,
    device: str,
    make_sampler: Callable[[int], Sampler] | None = None,
    tools: Sequence = (),
) -> TrainingEngine:
    """The engine for `config.engine`; batches come from `make_sampler(prompts per step)`, by default seeded
    passes over `items`."""
    if make_sampler is None:
        make_sampler = lambda per_step: PassSampler(items, per_step, config.train.max_steps, config.run.seed)  # noqa: E731
    engine_class = load(ENGINES[config.engine.name].engine)
    yours = {"tools": tuple(tools)} if tools else {}  # tools of yours: live episodes, trl×grpo only (config rules)
    return engine_class(config, items, reward_fn, model, tokenizer, staging_dir, device, make_sampler, **yours)
