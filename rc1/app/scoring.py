"""The run's scorer, composed from config and workspace: the policy's thinking mode, the rule scorer,
the configured judge (with its ledger and cache) and the weights that combine their components."""

from __future__ import annotations

import msgspec

from rc1.config.loading import LoadedConfig
from rc1.core.catalog import is_builtin
from rc1.core.errors import BadInput
from rc1.core.workspace import Workspace
from rc1.registry.providers import PROVIDERS
from rc1.scoring.judge import Judge
from rc1.scoring.openai_judge import api_key
from rc1.scoring.pipeline import ScoringPipeline, build_judge, components_for, reward_functions, rule_scorer
from rc1.scoring.thinking import resolve_thinking, template_opens_thinking
from rc1.scoring.weights import load_weights


class RunScoring(msgspec.Struct, frozen=True):
    pipeline: ScoringPipeline
    weights: dict[str, float] | None  # None where the weights file is the `weights` check's to judge

    @property
    def judge(self) -> Judge | None:
        return self.pipeline.judge


def policy_thinking(loaded: LoadedConfig, chat_template: str | None = None, *, template_known: bool = False) -> bool:
    """`model.thinking` resolved. With the policy's tokenizer at hand (`template_known`), an explicit
    on/off that contradicts its chat template is a config error: every reply would be scored wrong."""
    model = loaded.config.model
    mode = model.thinking_mode
    if template_known:
        opens = template_opens_thinking(chat_template)
        if mode != "auto" and (mode == "on") != opens:
            raise BadInput(
                f"{loaded.path}: model.thinking: {mode}, but the chat template of {model.name} "
                f"{'opens' if opens else 'does not open'} <think>; set model.thinking: auto"
            )
        return opens
    if mode != "auto":
        return mode == "on"
    return resolve_thinking("auto", _chat_template(loaded))


def _chat_template(loaded: LoadedConfig) -> str | None:
    name = loaded.config.model.name
    if is_builtin(name):
        from rc1.train.tiny_model import CHAT_TEMPLATE

        return CHAT_TEMPLATE
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(name).chat_template
    except OSError as e:
        raise BadInput(
            f"{loaded.path}: model.thinking: auto reads the chat template of {name!r}, which cannot be "
            f"loaded here ({e}); set model.thinking to on or off"
        ) from None


def judge_buildable(loaded: LoadedConfig) -> bool:
    """An API judge without its key is not built: the `scorer_live` check says what is missing."""
    return not PROVIDERS[loaded.config.scorer.provider].api or api_key() is not None


def open_scoring(
    loaded: LoadedConfig,
    ws: Workspace,
    thinking: bool,
    *,
    with_weights: bool = True,
    with_judge: bool = True,
    with_functions: bool = True,
) -> RunScoring:
    """The run's scorer. A preflight round opens it without the reward functions (`with_functions=False`): its
    reward_functions check imports and probes them, and fails the round on one that does not import."""
    judge = None
    if with_judge:
        judge = build_judge(loaded, ws.ledger_path, ws.scorer_cache_dir, _device())
    functions = reward_functions(loaded) if with_functions else None
    models = reward_models(loaded, _device()) if with_functions else []
    pipeline = ScoringPipeline(rule_scorer(loaded, thinking), judge, functions, models)
    weights = load_weights(loaded.weights_path, components_for(loaded)) if with_weights else None
    return RunScoring(pipeline=pipeline, weights=weights)


def reward_models(loaded: LoadedConfig, device: str) -> list:
    """The run's reward models (`reward.functions[]` with `model`), loaded on the policy's device and scored under
    the autocast its dtype gives, as TRL scores a model given in reward_funcs (rc1.scoring.reward_models
    ModelComponent; imported only where a run has one)."""
    specs = [spec for spec in loaded.config.reward.functions if spec.model is not None]
    if not specs:
        return []
    from rc1.core.model_files import model_source
    from rc1.scoring.reward_models import ModelComponent, RewardModel
    from rc1.train.device import select_dtype

    dtype = select_dtype(device, loaded.config.model.dtype)
    batch = loaded.config.train.per_device_batch_size
    return [
        ModelComponent(spec, RewardModel.load(model_source(spec.model, loaded.path.parent), device, dtype), batch)
        for spec in specs
    ]


def _device() -> str:
    from rc1.train.device import select_device

    return select_device()
