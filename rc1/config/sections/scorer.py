"""The `scorer` section: the judge scored beside the rule components, its provider one of the registry's
(rc1/registry/providers.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from rc1.config.sections.base import NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt, Section
from rc1.registry.providers import PROVIDERS

ScorerProvider = Literal[tuple(PROVIDERS)]  # rc1/registry/providers.py: none, openai_compat, hf_judge, openai, …


class ScorerConfig(Section):
    """The judge scored beside the always-computed rule components (see rc1/scoring/)."""

    provider: Annotated[
        ScorerProvider,
        Meta(
            description="none: rule components only; openai_compat: a live judge over the OpenAI-compatible API; "
            "openai, gemini, deepseek_r1: presets of it; hf_judge: a local transformers model. API judges "
            "read their key from SCORER_API_KEY."
        ),
    ] = "none"
    base_url: Annotated[
        str,
        Meta(
            description="The API's URL: required by openai_compat, optional for the presets (their default otherwise)."
        ),
    ] = ""
    model: Annotated[
        str,
        Meta(description="The judge model: required for hf_judge; presets have a default; openai_compat asks /models."),
    ] = ""
    rubric: Annotated[str, Meta(description="The judge's system message, relative to the config file's folder.")] = (
        "judge/rubric.md"
    )
    timeout_s: Annotated[PositiveFloat, Meta(description="Seconds per judge request.")] = 60.0
    max_retries: Annotated[
        NonNegativeInt,
        Meta(
            description="Retries after the first try, on 429, 5xx, timeouts and malformed answers; then the command "
            "fails (exit 1)."
        ),
    ] = 3
    backoff_s: Annotated[
        NonNegativeFloat,
        Meta(description="The first retry's wait in seconds, doubled each retry (a Retry-After header wins)."),
    ] = 1.0
    max_concurrency: Annotated[PositiveInt, Meta(description="Judge calls in flight at once.")] = 8
    cache: Annotated[
        bool,
        Meta(
            description="Answer a repeated (provider, model, rubric, prompt, reply) from data/scorer_cache/; probes "
            "bypass it."
        ),
    ] = False
    price_per_million_input_tokens: Annotated[
        NonNegativeFloat | None,
        Meta(
            description="USD per million prompt tokens of the judge: the judge's cost in every event's scoring "
            "summary, "
            "`rc1 status` (spend) and monitors.budget; absent: cost not counted."
        ),
    ] = None
    price_per_million_output_tokens: Annotated[
        NonNegativeFloat | None,
        Meta(description="USD per million completion tokens of the judge (as price_per_million_input_tokens)."),
    ] = None
