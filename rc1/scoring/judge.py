"""The LLM judge: one rubric, one prompt, one strict answer format, whatever model answers.

The judge sees the item (task, question, context, gold answer, whether it is under-specified) and the
visible reply, and answers with one JSON object `{"correct": bool, "clarification_ok": bool, "reason": str}`
(`reason` optional, no other keys). Its component `judge` is `correct` for an ordinary item and
`clarification_ok` (one good clarifying question, no answer) for an under-specified one. A reply whose
thinking never closed is not sent: it said nothing, so it scores 0 without a call.

Every call goes to the ledger. Transient failures (429, 5xx, timeouts, lost connections) and malformed
answers are retried `max_retries` times with exponential backoff; after that the scorer raises
`ScorerError` (exit 1). It never falls back to another scorer, and answers from the cache only when
the cache is on and the caller allows it.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

import msgspec

from rc1.core.catalog import JUDGE_COMPONENT  # noqa: F401 (re-exported)
from rc1.core.errors import BadInput, ScorerError
from rc1.data.task import TaskItem
from rc1.scoring.cache import JudgeCache, request_key
from rc1.scoring.ledger import Ledger, LedgerRecord, now

MAX_CONTEXT_CHARS = 6000  # the judge needs the evidence, not every paragraph of a long context


class Verdict(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    correct: bool
    clarification_ok: bool
    reason: str = ""


VERDICT_SCHEMA = {
    "type": "object",
    "properties": {
        "correct": {"type": "boolean"},
        "clarification_ok": {"type": "boolean"},
        "reason": {"type": "string"},
    },
    "required": ["correct", "clarification_ok"],
    "additionalProperties": False,
}
# Every verdict a constrained decoder may choose (the booleans are the verdict; `reason` is optional).
VERDICT_CHOICES = tuple(json.dumps({"correct": c, "clarification_ok": k}) for c in (True, False) for k in (True, False))
_VERDICT_DECODER = msgspec.json.Decoder(Verdict)


class Rubric(msgspec.Struct, frozen=True):
    text: str
    sha256: str


def load_rubric(path: Path) -> Rubric:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise BadInput(f"{path}: cannot read the judge rubric (scorer.rubric): {e.strerror}") from None
    text = data.decode("utf-8", errors="replace").strip()
    if not text:
        raise BadInput(f"{path}: the judge rubric (scorer.rubric) is empty")
    return Rubric(text=text, sha256=hashlib.sha256(data).hexdigest())


def judge_messages(rubric: Rubric, item: TaskItem, visible: str) -> list[dict[str, str]]:
    case = {
        "task": item.task,
        "question": item.question,
        "context": item.context[:MAX_CONTEXT_CHARS],
        "gold_answer": item.answer,
        "needs_clarification": item.needs_clarification,
        "reply": visible,
    }
    return [
        {"role": "system", "content": rubric.text},
        {"role": "user", "content": json.dumps(case, ensure_ascii=False, indent=1)},
    ]


class MalformedAnswer(ValueError):
    pass


def parse_verdict(text: str) -> Verdict:
    """The answer as a Verdict: the whole text one JSON object (a lone ```json fence around it allowed)."""
    body = text.strip()
    if body.startswith("```"):
        body = body.removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        return _VERDICT_DECODER.decode(body)
    except msgspec.DecodeError as e:
        raise MalformedAnswer(f"not a verdict object ({e}): {text[:120]!r}") from None


def component(item: TaskItem, verdict: Verdict) -> float:
    return float(verdict.clarification_ok if item.needs_clarification else verdict.correct)


class Answer(msgspec.Struct, frozen=True):
    text: str
    prompt_tokens: int
    completion_tokens: int


class Retryable(Exception):
    """A failure worth another try (429, 5xx, timeout, lost connection); `wait_s` from Retry-After."""

    def __init__(self, what: str, wait_s: float | None = None):
        super().__init__(what)
        self.wait_s = wait_s


class Backend(Protocol):
    provider: str
    model: str
    where: str  # the endpoint or model it asks, for messages
    paid: bool

    def ask(self, messages: list[dict[str, str]]) -> Answer:
        """One request; raises Retryable for a transient failure and ScorerError for a final one."""


class Judge:
    def __init__(
        self,
        backend: Backend,
        rubric: Rubric,
        ledger: Ledger,
        cache: JudgeCache | None,
        *,
        max_retries: int,
        backoff_s: float,
        max_concurrency: int,
    ):
        self.backend = backend
        self.rubric = rubric
        self.ledger = ledger
        self.cache = cache
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_concurrency = max_concurrency

    def score(
        self, items: Sequence[TaskItem], visibles: Sequence[str | None], *, use_cache: bool = True
    ) -> list[float]:
        """The `judge` component of each reply (0 without a call for a reply that is None); raises the first
        call's ScorerError once every call is in the ledger."""
        return [score for score, _ in self.judged(items, visibles, use_cache=use_cache)]

    def judged(
        self, items: Sequence[TaskItem], visibles: Sequence[str | None], *, use_cache: bool = True
    ) -> list[tuple[float, str | None]]:
        """Each reply's `judge` component and the request sha256 of its call (the ledger's and the cache's key; None
        where no call was made)."""
        asked = [i for i, visible in enumerate(visibles) if visible is not None]
        results = self._call_all([items[i] for i in asked], [visibles[i] for i in asked], use_cache)
        scores: list[tuple[float, str | None]] = [(0.0, None)] * len(items)
        for i, (verdict, record, error) in zip(asked, results):
            if error is not None:
                raise error
            scores[i] = (component(items[i], verdict), record.request_sha256)
        return scores

    def verdicts(
        self, items: Sequence[TaskItem], visibles: Sequence[str], *, use_cache: bool
    ) -> list[tuple[Verdict | None, LedgerRecord]]:
        """Each call's verdict and ledger record, errors included (for the probe, which judges them)."""
        return [(verdict, record) for verdict, record, _ in self._call_all(items, visibles, use_cache)]

    def _call_all(self, items: Sequence[TaskItem], visibles: Sequence[str], use_cache: bool):
        """One call per reply, `max_concurrency` at a time, in order; all of them go to the ledger."""
        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            results = list(
                pool.map(lambda pair: self._one(pair[0], pair[1], use_cache), zip(items, visibles, strict=True))
            )
        self.ledger.append([record for _, record, _ in results])
        return results

    def _one(
        self, item: TaskItem, visible: str, use_cache: bool
    ) -> tuple[Verdict | None, LedgerRecord, ScorerError | None]:
        backend = self.backend
        messages = judge_messages(self.rubric, item, visible)
        key = request_key(backend.provider, backend.model, self.rubric.sha256, messages)
        started = time.perf_counter()
        if self.cache is not None and use_cache:
            cached = self.cache.get(key)
            if cached is not None:
                try:
                    verdict = parse_verdict(cached)
                    return verdict, self._record(key, started, 1, cached=True), None
                except MalformedAnswer:
                    pass  # a damaged entry is asked again, and overwritten
        attempts, problem, wait = 0, "", 0.0
        answer = None
        while attempts <= self.max_retries:
            if attempts:
                time.sleep(wait)
            attempts += 1
            try:
                answer = backend.ask(messages)
                verdict = parse_verdict(answer.text)
            except Retryable as e:
                problem, wait = str(e), e.wait_s if e.wait_s is not None else self.backoff_s * 2 ** (attempts - 1)
                continue
            except MalformedAnswer as e:
                problem, wait = f"malformed answer: {e}", self.backoff_s * 2 ** (attempts - 1)
                continue
            except ScorerError as e:
                return None, self._record(key, started, attempts, error=str(e)), e
            if self.cache is not None:
                self.cache.put(key, answer.text)
            return verdict, self._record(key, started, attempts, answer=answer), None
        error = ScorerError(
            f"scorer {backend.provider} ({backend.where}): {problem}; gave up after {attempts} attempts "
            f"(scorer.max_retries is {self.max_retries})"
        )
        return None, self._record(key, started, attempts, answer=answer, error=str(error)), error

    def _record(
        self,
        key: str,
        started: float,
        attempts: int,
        *,
        cached: bool = False,
        answer: Answer | None = None,
        error: str = "",
    ) -> LedgerRecord:
        return LedgerRecord(
            ts=now(),
            scope=self.ledger.scope,
            provider=self.backend.provider,
            model=self.backend.model,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            cached=cached,
            billable=self.backend.paid and not cached and answer is not None,
            prompt_tokens=answer.prompt_tokens if answer else 0,
            completion_tokens=answer.completion_tokens if answer else 0,
            request_sha256=key,
            attempts=attempts,
            error=error,
        )
