"""The run's scorer: the rule components always, the configured judge's beside them, and the reward
function the trainer is given, built from both and the reward config."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import msgspec

from rc1.config.loading import LoadedConfig
from rc1.config.schema import RewardConfig
from rc1.data.task import TaskItem
from rc1.registry.providers import PROVIDERS
from rc1.registry.spec import load
from rc1.scoring.cache import JudgeCache
from rc1.scoring.episode_record import Episode, episode_of
from rc1.scoring.functions import BatchContext, RewardFunction, RewardFunctionFailed, RewardFunctions
from rc1.scoring.judge import JUDGE_COMPONENT, Judge, load_rubric
from rc1.scoring.ledger import Ledger, Prices
from rc1.scoring.reward import configured_parts
from rc1.scoring.rules import RuleScorer, clarification_count

if TYPE_CHECKING:  # torch is imported only where a run has a reward model
    from rc1.scoring.episode_outcome import EpisodeOutcome
    from rc1.scoring.reward_models import ModelComponent


class EvaluatedReplies(Protocol):
    """What scoring reads of an evaluation's replies (rc1/train/metrics.py `EvalResult`, a layer above, has it)."""

    samples: int
    completions: list[str]
    completion_tokens: list[int]
    outcomes: list[EpisodeOutcome] | None
    episodes: list[Episode] | None  # each live reply's record, for the rollout archive


RewardFn = Callable[..., list[float]]  # (items, completions, completion_tokens, context=None) -> rewards


class Scored(msgspec.Struct, frozen=True):
    components: dict[str, float]
    clarifications: int  # questions the visible reply asks back
    judge_request: str | None = None  # the sha256 of the judge call behind the `judge` component (ledger, cache)
    # The completion's token ids, where a reward function reads them (the archive keeps them to rescore it), and
    # what the functions logged for it with log_extra (column -> value).
    completion_ids: list[int] | None = None
    logged: dict[str, str] = msgspec.field(default_factory=dict)


class ScoringPipeline:
    def __init__(
        self,
        rule: RuleScorer,
        judge: Judge | None = None,
        functions: RewardFunctions | None = None,
        models: Sequence[ModelComponent] = (),
    ):
        self.rule = rule
        self.judge = judge
        self.functions = functions
        self.models = list(models)

    @property
    def components(self) -> tuple[str, ...]:
        return (
            self.rule.components
            + ((JUDGE_COMPONENT,) if self.judge else ())
            + (self.functions.names if self.functions else ())
            + tuple(model.name for model in self.models)
        )

    def score(
        self,
        items: Sequence[TaskItem],
        completions: Sequence[str],
        completion_tokens: Sequence[int],
        context: BatchContext | None = None,
        clarifications: Sequence[int] | None = None,
        live: Sequence[dict[str, float]] | None = None,
    ) -> list[Scored]:
        """Every component of each completion; `context` is what TRL would pass the reward functions beside them
        (token ids, the trainer's step), gathering what they log. `clarifications`: the penalty's `c` per completion
        where the episode counts it (a live episode's needless asks), else the questions each reply asks back.
        `live`: each live episode's own components (`episode_outcome.live_components`: tool_success)."""
        context = context if context is not None else BatchContext()
        replies = [self.rule.reply(c) for c in completions]
        judged = self.judge.judged(items, [r.visible for r in replies]) if self.judge else [None] * len(items)
        yours = self.functions.score(items, completions, completion_tokens, context) if self.functions else {}
        yours.update({model.name: model.score(items, completions) for model in self.models})
        ids = context.ids_for(completions) if self.functions is not None and self.functions.read_ids else None
        logged = {column: values for column, values in context.extra.items() if len(values) == len(items)}
        # log_metric's values are the batch's: their mean goes on each of its completions' rows, as metric.<name>.
        logged |= {f"metric.{name}": [sum(v) / len(v)] * len(items) for name, v in context.metrics.items() if v}
        scored = []
        for index, (item, completion, tokens, reply, verdict) in enumerate(
            zip(items, completions, completion_tokens, replies, judged, strict=True)
        ):
            checked = yours.get(self.rule.check_of(item.task))  # a task checked by one of the functions scored
            components = self.rule.score(item, completion, tokens, checked[index] if checked else None)
            if verdict is not None:
                components[JUDGE_COMPONENT] = verdict[0]
            components.update({name: values[index] for name, values in yours.items()})
            components.update(live[index] if live is not None else {})
            scored.append(
                Scored(
                    components=components,
                    clarifications=(
                        clarification_count(reply.visible) if clarifications is None else clarifications[index]
                    ),
                    judge_request=verdict[1] if verdict is not None else None,
                    completion_ids=list(ids[index]) if ids is not None else None,
                    logged={column: str(values[index]) for column, values in logged.items()},
                )
            )
        return scored


def rewards_of(
    reward: RewardConfig, weights: dict[str, float], items: Sequence[TaskItem], scored: Sequence[Scored]
) -> list[float]:
    return [
        configured_parts(reward, s.components, weights, item, s.clarifications).total
        for item, s in zip(items, scored, strict=True)
    ]


# What a reward function may also hand each scored batch to (the rollout archive): items, completions, token
# counts, their scores, and each live episode's record (rc1/scoring/episode_record.py; None for one-turn replies).
Record = Callable[[Sequence[TaskItem], Sequence[str], Sequence[int], Sequence[Scored], Sequence[Episode] | None], None]


class ScorerInputs(msgspec.Struct, frozen=True, kw_only=True):
    """What the scorer takes for a list of replies, one entry per reply: the item each is checked against, its text,
    its token count, and the penalty's `c` per reply where the episode counts it (None: the questions each reply asks
    back are counted from its text); a live episode's record per reply where the evaluation kept them (for the
    archive)."""

    items: list[TaskItem]
    texts: list[str]
    tokens: list[int]
    clarifications: list[int] | None = None
    episodes: list[Episode] | None = None
    live: list[dict[str, float]] | None = None  # each live episode's own components (tool_success); None: one-turn


def live_read(
    items: Sequence[TaskItem], outcomes: Sequence[EpisodeOutcome]
) -> tuple[list[TaskItem], list[str], list[int], list[dict[str, float]]]:
    """Live episodes' outcomes (rc1/scoring/episode_outcome.py) read into what the scorer takes: the item with
    `needs_clarification` off (the clarification was the `ask`), the final reply's text ("" where the episode is forced
    wrong: unfinished, or an unclear item answered without asking), the needless asks as the penalty's `c`, and the
    episode's own components (`live_components`: tool_success). The one
    reading of an episode, for training's rewards (`live_inputs`) and every evaluation's scores (`evaluated_inputs`)."""
    from rc1.scoring.episode_outcome import clarifications, correctness_input, live_components

    checked, texts, asks, live = [], [], [], []
    for item, episode in zip(items, outcomes, strict=True):
        read = correctness_input(item, episode)
        checked.append(read.item)
        texts.append(read.reply)
        asks.append(clarifications(episode))
        live.append(live_components(episode))
    return checked, texts, asks, live


def live_inputs(
    items: Sequence[TaskItem], completions: Sequence[object], environments: Sequence[object]
) -> tuple[list[TaskItem], list[str], list[int], list[dict[str, float]]]:
    """Training's live rollouts (data.episodes: live): each rollout's message list and its environment's transcript
    read as `live_read` reads an outcome. `environments[i]` is rollout i's (TRL hands them in rollout order); each has
    the `transcript` of `rc1.train.live_tools.LiveEnvironment`."""
    from rc1.scoring.episode_outcome import outcome

    if len(environments) != len(items) or len(completions) != len(items):
        raise ValueError(f"{len(items)} live rollouts scored with {len(environments)} environments")
    outcomes = [
        outcome(item, messages, environment.transcript)
        for item, messages, environment in zip(items, completions, environments, strict=True)
    ]
    return live_read(items, outcomes)


def evaluated_inputs(items: Sequence[TaskItem], replies: EvaluatedReplies) -> ScorerInputs:
    """An evaluation's replies (`replies.samples` per item, item by item) as the scorer's inputs: the one place every
    evaluation (round 2's shadow run, a checkpoint's shadow evaluation, the gate set, round 1's difficulty probe)
    turns what `evaluate_policy` returned into what it scores. One-turn replies are scored as they are; live episodes
    (`replies.outcomes`) as training scores them (`live_read`), so a right answer given after an `ask` to an item that
    needed it is right, and one given without asking is wrong."""
    repeated = [item for item in items for _ in range(replies.samples)]
    if replies.outcomes is None:
        return ScorerInputs(items=repeated, texts=list(replies.completions), tokens=list(replies.completion_tokens))
    checked, texts, asks, live = live_read(repeated, replies.outcomes)
    return ScorerInputs(
        items=checked,
        texts=texts,
        tokens=list(replies.completion_tokens),
        clarifications=asks,
        live=live,
        episodes=list(replies.episodes) if replies.episodes is not None else None,
    )


def make_reward_fn(
    reward: RewardConfig, weights: dict[str, float], pipeline: ScoringPipeline, record: Record | None = None
) -> RewardFn:
    def reward_fn(
        items: Sequence[TaskItem],
        completions: Sequence[str],
        completion_tokens: Sequence[int],
        context: BatchContext | None = None,
        environments: Sequence[object] | None = None,
    ) -> list[float]:
        """`environments` (live episodes): `completions` are then TRL's message lists, scored by `live_inputs`, and
        each rollout's messages and transcript go to `record` beside its scores (`episode_of`). A tool of yours that
        raised or hung in one of them (its `failure`) is raised here: ToolOfYoursFailed, exit 1."""
        asks = episodes = live = None
        if environments is not None:
            for environment in environments:  # a tool of yours that raised or hung fails the batch, by its name
                if environment.failure is not None:
                    raise environment.failure
            rolled = items
            items, texts, asks, live = live_inputs(rolled, completions, environments)
            episodes = [
                episode_of(item, messages, environment.transcript)
                for item, messages, environment in zip(rolled, completions, environments, strict=True)
            ]
            completions = texts
        scored = pipeline.score(items, completions, completion_tokens, context, asks, live)
        if record is not None:
            record(items, completions, completion_tokens, scored, episodes)
        return rewards_of(reward, weights, items, scored)

    return reward_fn


def components_for(loaded: LoadedConfig) -> tuple[str, ...]:
    """The components the configured scorer gives, whether or not its judge can be reached now; a live run's
    episodes add theirs (tool_success, which its weights file may leave out: weight 0)."""
    from rc1.core.catalog import LIVE_COMPONENTS
    from rc1.scoring.rules import RULE_COMPONENTS

    functions = loaded.config.reward.functions
    return (
        RULE_COMPONENTS
        + ((JUDGE_COMPONENT,) if PROVIDERS[loaded.config.scorer.provider].judges else ())
        + tuple(spec.name for spec in functions if spec.path is not None)
        + tuple(spec.name for spec in functions if spec.model is not None)
        + (LIVE_COMPONENTS if loaded.config.data.episodes == "live" else ())
    )


def reward_functions(loaded: LoadedConfig) -> RewardFunctions | None:
    """The run's reward functions, imported (None where there are none). Round 1 probed them; one that no longer
    imports is the run's failure (exit 1), named."""
    specs = [spec for spec in loaded.config.reward.functions if spec.path is not None]
    if not specs:
        return None
    try:
        return RewardFunctions.of(loaded.config.reward, loaded.path.parent)
    except RewardFunctionFailed:
        raise
    except Exception as e:
        raise RewardFunctionFailed(
            f"{loaded.path}: reward.functions: cannot import "
            f"{', '.join(spec.path for spec in specs)}: {type(e).__name__}: {e}"
        ) from e


def rule_scorer(loaded: LoadedConfig, thinking: bool) -> RuleScorer:
    train = loaded.config.train
    cache = max(1, round(loaded.config.reward.overlong_cache_fraction * train.max_completion_tokens))
    specs = {spec.name: spec for spec in loaded.config.reward.functions}

    def check_function(name: str) -> RewardFunction:
        return RewardFunction.load(specs[name], loaded.path.parent, loaded.config.reward.columns)

    return RuleScorer(
        thinking=thinking,
        max_completion_tokens=train.max_completion_tokens,
        overlong_cache=cache,
        checks={name: task.check for name, task in loaded.config.data.tasks.items()},
        check_function=check_function,
    )


def build_judge(loaded: LoadedConfig, ledger_path: Path, cache_dir: Path, device: str) -> Judge | None:
    """The configured judge (None where the provider has none: `scorer.provider: none`); API judges need
    SCORER_API_KEY. The provider's backend is imported only now (rc1/registry/providers.py names it)."""
    scorer = loaded.config.scorer
    spec = PROVIDERS[scorer.provider]
    if not spec.judges:
        return None
    backend = load(spec.backend)(scorer, device)
    return Judge(
        backend,
        load_rubric(loaded.rubric_path),
        Ledger(
            ledger_path,
            Prices(input=scorer.price_per_million_input_tokens, output=scorer.price_per_million_output_tokens),
        ),
        JudgeCache(cache_dir) if scorer.cache else None,
        max_retries=scorer.max_retries,
        backoff_s=scorer.backoff_s,
        max_concurrency=scorer.max_concurrency,
    )
