"""`openai_compat`: a live judge over the OpenAI-compatible chat-completions API, through the `openai`
client with any `base_url` (OpenAI, DeepSeek, Gemini's compatible endpoint, vLLM, llama.cpp).

The key comes from the environment (`SCORER_API_KEY`) and is handed to the client only: it is never
written to an event, log, report or error message. The client's own retries are off: rc1's judge
retries (rc1.scoring.judge), so that each call is one ledger record with its attempts.
"""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlparse

from rc1.core.errors import BadInput, ScorerError
from rc1.registry.providers import PROVIDERS
from rc1.scoring.judge import VERDICT_SCHEMA, Answer, Retryable

API_KEY_ENV = "SCORER_API_KEY"


def api_key() -> str | None:
    return os.environ.get(API_KEY_ENV) or None


def is_loopback(url: str) -> bool:
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def backend_for(scorer, device: str) -> OpenAICompatBackend:
    """`scorer.provider` openai_compat and its presets (rc1/registry/providers.py); the device is not theirs."""
    return OpenAICompatBackend(scorer.provider, scorer.base_url, scorer.model, scorer.timeout_s)


class OpenAICompatBackend:
    def __init__(self, provider: str, base_url: str, model: str, timeout_s: float):
        """`provider` openai_compat or a preset (its endpoint and model where `base_url` and `model` are empty)."""
        preset = PROVIDERS[provider].preset
        self.provider = provider
        self.base_url = base_url or (preset.base_url if preset else "")
        self.model = model or (preset.model if preset else "")
        self.where = f"{self.model} at {self.base_url}"
        self._json_schema = preset.json_schema if preset else True
        # A preset is a paid service; a server of your own on this machine is not.
        self.paid = preset is not None or not is_loopback(self.base_url)
        key = api_key()
        if key is None:
            raise BadInput(
                f"{API_KEY_ENV}: not set; the {provider} judge ({self.where}) needs its API key in this "
                "environment variable (never in a file of the repo)"
            )
        import openai

        self._openai = openai
        self._key = key
        self._client = openai.OpenAI(api_key=key, base_url=self.base_url, timeout=timeout_s, max_retries=0)
        if not self.model:
            self.model = self._served_model()
            self.where = f"{self.model} at {self.base_url}"

    def _served_model(self) -> str:
        """The model a server of one model serves (vLLM, llama.cpp), when `scorer.model` is left empty."""
        openai = self._openai
        try:
            served = [m.id for m in self._client.models.list()]
        except openai.APIError as e:
            raise ScorerError(
                f"scorer {self.provider}: scorer.model is empty and {self.base_url}/models could not be "
                f"read ({type(e).__name__}); name the judge model with scorer.model"
            ) from None
        if len(served) != 1:
            raise BadInput(
                f"scorer.model: {self.base_url} serves {len(served)} models ({', '.join(served[:5])}); "
                "name the judge with scorer.model"
            )
        return served[0]

    def ask(self, messages: list[dict[str, str]]) -> Answer:
        openai = self._openai
        extra = {}
        if self._json_schema:
            extra["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "verdict", "schema": VERDICT_SCHEMA, "strict": True},
            }
        try:
            response = self._client.chat.completions.create(model=self.model, messages=messages, temperature=0, **extra)
        except openai.RateLimitError as e:
            raise Retryable("429 rate limited", _retry_after(e.response)) from None
        except openai.InternalServerError as e:
            raise Retryable(f"{e.status_code} server error", _retry_after(e.response)) from None
        except openai.APITimeoutError:
            raise Retryable("timed out") from None
        except openai.APIConnectionError:
            raise Retryable("connection failed") from None
        except openai.APIStatusError as e:
            raise ScorerError(
                f"scorer {self.provider} ({self.where}): HTTP {e.status_code}: {self._scrub(e.message)}"
                + ("; check SCORER_API_KEY" if e.status_code in (401, 403) else "")
            ) from None
        if not response.choices:
            raise Retryable("an answer with no choices")
        usage = response.usage
        return Answer(
            text=response.choices[0].message.content or "",
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
        )

    def _scrub(self, text: str) -> str:
        return str(text).replace(self._key, "***")[:300]


def _retry_after(response) -> float | None:
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return min(float(value), 60.0) if value is not None else None
    except ValueError:
        return None
