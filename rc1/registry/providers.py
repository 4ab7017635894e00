"""The scorer providers `scorer.provider` may name: one table. Config refuses a scorer section the chosen
provider cannot use (rc1/config/rules.py reads `requires`, `api` and `judges` here), the pipeline builds the
judge `backend` names, and the scorer checks ask which providers are live API judges.

A new provider: one row here and, where no backend fits, its backend module under rc1/scoring/ (a
`backend_for(scorer, device)` function)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Preset:
    """Where a preset's judge is and how it is asked: `base_url` and `model` when the config leaves them empty,
    and whether the strict JSON answer is asked for as a JSON schema (or, like DeepSeek-R1, by the prompt alone)."""

    base_url: str
    model: str
    json_schema: bool


@dataclass(frozen=True, kw_only=True)
class ProviderSpec:
    """A judge beside the rule components (or none), and what the scorer section must give it."""

    name: str
    # "module:attr" of `backend_for(scorer section, device) -> judge backend`; None: the rule components only.
    backend: str | None
    # An OpenAI-compatible API judge: needs SCORER_API_KEY, takes scorer.base_url; production requires one.
    api: bool = False
    preset: Preset | None = None  # a paid service's endpoint and model
    requires: dict[str, str] = field(default_factory=dict)  # scorer keys it cannot do without -> what to give

    @property
    def judges(self) -> bool:
        """Whether a judge scores beside the rule components (the `judge` component)."""
        return self.backend is not None


_API_BACKEND = "rc1.scoring.openai_judge:backend_for"

PROVIDERS: dict[str, ProviderSpec] = {
    spec.name: spec
    for spec in (
        ProviderSpec(name="none", backend=None),
        ProviderSpec(
            name="openai_compat",
            backend=_API_BACKEND,
            api=True,
            requires={"base_url": "the server's URL, e.g. http://127.0.0.1:8000/v1"},
        ),
        ProviderSpec(
            name="hf_judge", backend="rc1.scoring.hf_judge:backend_for", requires={"model": "the judge model's name"}
        ),
        ProviderSpec(
            name="openai",
            backend=_API_BACKEND,
            api=True,
            preset=Preset("https://api.openai.com/v1", "gpt-4.1-mini", json_schema=True),
        ),
        ProviderSpec(
            name="gemini",
            backend=_API_BACKEND,
            api=True,
            preset=Preset(
                "https://generativelanguage.googleapis.com/v1beta/openai/", "gemini-2.5-flash", json_schema=True
            ),
        ),
        ProviderSpec(
            name="deepseek_r1",
            backend=_API_BACKEND,
            api=True,
            preset=Preset("https://api.deepseek.com", "deepseek-reasoner", json_schema=False),
        ),
    )
}

API_PROVIDERS: tuple[str, ...] = tuple(name for name, spec in PROVIDERS.items() if spec.api)
