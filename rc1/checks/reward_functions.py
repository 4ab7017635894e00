"""The `reward_functions` check: each of your reward functions (reward.functions) imports, and answers probe
completions twice with the same numbers, each finite and in the documented range, one per completion, and the
same for a completion asked about alone as in its batch (rescoring asks one at a time).

The probe: shadow items, each with its gold reply, a wrong reply and a completion whose thinking never closed,
shaped as the policy answers. A function whose answers change between two calls on the same completions would
make the reward a draw and `audit --rescore` meaningless, so the check fails on it, naming the function and the
item.
"""

from __future__ import annotations

from pathlib import Path

from rc1.checks.result import CheckResult
from rc1.checks.spec import PROBE_ITEMS, Check, spread
from rc1.core.runbook import Runbook
from rc1.data.task import TaskItem
from rc1.scoring.functions import BatchContext, RewardFunction, RewardFunctionFailed, StepState, call
from rc1.scoring.rules import as_completion, gold_reply


def probe_completions(items: list[TaskItem], thinking: bool) -> tuple[list[TaskItem], list[str]]:
    """Three completions per item: the gold reply, a wrong answer, and thinking that never ends."""
    probe_items, completions = [], []
    for item in items:
        for completion in (
            as_completion(gold_reply(item), thinking),
            as_completion("Answer: xyzzy", thinking),
            "I keep thinking about this and never reach an answer",
        ):
            probe_items.append(item)
            completions.append(completion)
    return probe_items, completions


def reward_functions_check(reward, folder: Path, items: list[TaskItem], *, thinking: bool) -> CheckResult:
    specs = list(reward.functions)
    probe_items, completions = probe_completions(items, thinking)
    tokens = [len(completion.split()) for completion in completions]
    problems = [
        problem
        for spec in specs
        if (
            problem := _probe(spec, reward, folder, probe_items, completions, tokens)
            if spec.path is not None
            else _probe_model(spec, folder, probe_items, completions)
        )
        is not None
    ]
    n = len(completions)
    names = ", ".join(spec.name for spec in specs) or "none configured"
    return CheckResult(
        name="reward_functions",
        passed=not problems,
        measured={
            "functions": float(len(specs)),
            "probe_completions": float(n if specs else 0),
            "failing": float(len(problems)),
        },
        thresholds={"failing": 0.0},
        detail="; ".join(problems)
        if problems
        else (
            f"reward functions ({names}): imported, answered {n} probe completions of {len(items)} items twice "
            f"alike and alone as in a batch, each finite and in range"
            if specs
            else "no reward functions configured (reward.functions)"
        ),
    )


def _probe(spec, reward, folder: Path, items: list[TaskItem], completions: list[str], tokens: list[int]) -> str | None:
    """What is wrong with one function on the probe, or None. It is handed what TRL would hand it (its format, the
    columns and their aliases, trainer_state, completion ids: here each completion's UTF-8 bytes, which no policy's
    tokenizer is needed for and which are the same alone as in a batch), an async one within the timeout."""
    try:
        function = RewardFunction.load(spec, folder, reward.columns)
    except RewardFunctionFailed as e:
        return str(e)
    except Exception as e:  # the user's module: whatever it raises on import is the finding
        return f"{spec.name} ({spec.path}) does not import: {type(e).__name__}: {e}"

    def scored(batch: list[TaskItem], texts: list[str], counts: list[int]) -> list[float]:
        context = BatchContext(
            encode=lambda text: list(text.encode()), trainer_state=StepState(global_step=0, max_steps=1)
        )
        return call(function, batch, texts, counts, context, reward.function_timeout_s)

    try:
        first = scored(items, completions, tokens)
        second = scored(items, completions, tokens)
        # Rescoring asks about one archived completion at a time: an answer must not depend on its batch.
        alone = [
            scored([item], [completion], [count])[0] for item, completion, count in zip(items, completions, tokens)
        ]
    except RewardFunctionFailed as e:
        return str(e)
    for other, how, rule in (
        (second, "then", "it must be deterministic"),
        (alone, "in a batch and alone:", "it must score each completion on its own"),
    ):
        differ = [(item.id, a, b) for item, a, b in zip(items, first, other) if a != b]
        if differ:
            item_id, a, b = differ[0]
            return (
                f"reward function {spec.name} answered {a!r} {how} {b!r} for the same completion of item "
                f"{item_id} ({len(differ)} of {len(first)} answers differ); {rule}"
            )
    return None


# A reward model's score of a completion alone and in a padded batch agree up to float rounding, not bit for bit.
MODEL_TOLERANCE = 1e-4


def _probe_model(spec, folder: Path, items: list[TaskItem], completions: list[str]) -> str | None:
    """What is wrong with one reward model on the probe, or None: it loads (on the GPU where there is one, else the
    CPU, in fp32), answers every probe completion with a number that its scale and clip bring into [-1, 1], the same
    twice, and alone as in a batch (within MODEL_TOLERANCE)."""
    import torch

    from rc1.core.model_files import model_source
    from rc1.scoring.reward_models import ModelComponent, RewardModel

    device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        model = RewardModel.load(model_source(spec.model, folder), device, torch.float32)
    except Exception as e:  # whatever loading it raises is the finding
        return f"reward model {spec.name} ({spec.model}) does not load: {type(e).__name__}: {e}"
    component = ModelComponent(spec, model, batch_size=len(completions))
    try:
        first = component.score(items, completions)
        second = component.score(items, completions)
        alone = [component.score([item], [completion])[0] for item, completion in zip(items, completions)]
    except RewardFunctionFailed as e:
        return str(e)
    if first != second:
        return f"reward model {spec.name} scored the same completions differently twice; it must be deterministic"
    differ = [(item.id, a, b) for item, a, b in zip(items, first, alone) if abs(a - b) > MODEL_TOLERANCE]
    if differ:
        item_id, a, b = differ[0]
        return (
            f"reward model {spec.name} scored item {item_id}'s completion {a!r} in a batch and {b!r} alone "
            f"({len(differ)} of {len(first)} differ by more than {MODEL_TOLERANCE:g}); padding must not change a score"
        )
    return None


CHECK = Check(
    name="reward_functions",
    rounds=(1, 2),
    run=lambda r: reward_functions_check(
        r.config.reward,
        r.loaded.path.parent,
        spread(r.shadow, PROBE_ITEMS),
        thinking=r.pipeline.rule.thinking,
    ),
    runbook=Runbook(
        means="one of reward.functions does not import, raises, answers other than one finite number in [-1, 1] (or "
        "None) per completion, or answers differently on a second call or alone than in its batch",
        tries=(
            "fix the function the detail names at its reward.functions path (package.module:function, imported "
            "with the config's folder first)",
            "make it deterministic and per-completion: seed any sampling, keep no state between calls, no "
            "batch-level normalization",
            "or take it out of reward.functions and drop its weight from the reward.weights file",
        ),
    ),
)
