"""Every event rc1 writes, as frozen msgspec Structs in one tagged union (tag field `type`).

Events are facts, named in the past tense. The envelope (seq, ts, run, v, prev) is
filled in by the log at append time; callers build only the payload.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Union

import msgspec

from rc1.run.monitors.sections import WatchedRules
from rc1.run.monitors.state import Drift

# The version every line is written at. A breaking change to an event's shape raises it by one and gives that event
# an `upcast_v<old>_v<new>` static method, beside its fields, that reads a line of the old shape as the new one
# (what each version changed is that method's docstring); `UPCASTERS` below collects them, and
# tests/unit/test_event_versions.py holds this number to the newest upcaster and a frozen log of every older version.
SCHEMA_VERSION = 3
GENESIS_HASH = "0" * 64


# gc=False: events are immutable, acyclic data, so the cycle collector need not track them. A 1M-event log
# decodes in 1.5 s instead of 3.6 s, because the collector no longer walks every decoded event again and again.
class Event(msgspec.Struct, frozen=True, kw_only=True, gc=False, tag_field="type", forbid_unknown_fields=False):
    seq: int = -1
    ts: str = ""
    run: str = ""
    v: int = SCHEMA_VERSION
    prev: str = ""


class Fingerprints(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """sha256 of every input a gate vouches for. Training refuses to run when any differs."""

    pool: str
    shadow: str
    config: str
    weights: str
    # Added after schema v1 shipped: "" in an older gate means "not recorded", never compared.
    balanced_pool: str = ""
    templates: str = ""
    gate: str = ""  # the gate set (schema v3)


GATED_INPUTS = ("pool", "balanced_pool", "shadow", "gate", "config", "weights", "templates")


def changed_inputs(recorded: Fingerprints, current: Fingerprints) -> list[tuple[str, str, str]]:
    """(input, recorded sha, current sha) for every recorded input that differs, in a fixed order."""
    return [
        (name, getattr(recorded, name), getattr(current, name))
        for name in GATED_INPUTS
        if getattr(recorded, name) and getattr(recorded, name) != getattr(current, name)
    ]


class ScoringSummary(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The judge calls made for one round, step or evaluation (one record each in events/<run>.ledger.jsonl)."""

    calls: int = 0
    cache_hits: int = 0
    billable: int = 0
    errors: int = 0
    latency_p50_ms: float = 0.0
    latency_p95_ms: float = 0.0
    # Added with the budget monitor (0 in older lines): the calls' tokens and their cost at the scorer's prices.
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class RunStarted(Event, frozen=True, kw_only=True, tag="run_started"):
    config_path: str
    config_sha256: str
    code_version: str
    packages: dict[str, str]
    host: str
    device: str
    python: str
    # This command fixed the run's config (data/<run>/config.json, sha256 `config_sha256`): the run's first command,
    # or one told to change it (--accept-changed-inputs). An older rc1 kept the config at round 1's pass instead.
    keeps: bool = False


class CheckOutcome(Event, frozen=True, kw_only=True):
    """A check's result (passed or failed: the tag says which): its round (0 for checks run by hand outside any
    round), name, what it measured and the thresholds it held that to."""

    round: int
    name: str
    measured: dict[str, float]
    thresholds: dict[str, float]
    detail: str = ""
    tags: list[str] = msgspec.field(default_factory=list)  # e.g. ["pre_run_check"]


class CheckPassed(CheckOutcome, frozen=True, kw_only=True, tag="check_passed"):
    pass


class CheckFailed(CheckOutcome, frozen=True, kw_only=True, tag="check_failed"):
    pass


class ArtifactWritten(Event, frozen=True, kw_only=True, tag="artifact_written"):
    path: str
    sha256: str
    bytes: int
    kind: str = ""


class RoundPassed(Event, frozen=True, kw_only=True):
    """A preflight round passed (the tag says which): the fingerprints of every input its gate vouches for."""

    fingerprints: Fingerprints
    checks: list[str]
    scoring: ScoringSummary = msgspec.field(default_factory=ScoringSummary)


class Round1Passed(RoundPassed, frozen=True, kw_only=True, tag="round1_passed"):
    pass


class Round2Passed(RoundPassed, frozen=True, kw_only=True, tag="round2_passed"):
    pass


class GateFailed(Event, frozen=True, kw_only=True, tag="gate_failed"):
    round: int
    failures: list[str]
    scoring: ScoringSummary = msgspec.field(default_factory=ScoringSummary)


class GateInvalidated(Event, frozen=True, kw_only=True, tag="gate_invalidated"):
    input: str  # which gated input changed: one of GATED_INPUTS
    old_sha256: str
    new_sha256: str


class TrainingStarted(Event, frozen=True, kw_only=True, tag="training_started"):
    resume_from_step: int  # 0 for a fresh start
    resume_from_dir: str | None
    max_steps: int
    engine: str
    strategy: str
    model: str
    device: str
    dtype: str
    # `run.seeds`: the seed of this line of training and every seed the run trains, one line after another
    # (None and [] in logs written before seeds were lines of their own).
    seed: int | None = None
    seeds: list[int] = msgspec.field(default_factory=list)
    generation: str = "hf"  # who sampled the rollouts: hf (transformers generate) or vllm
    # The rules the line is watched with (None: a log from before monitors: no rule) and what they read besides the
    # events: the reward's weights (a component's share) and the processes training runs on (accelerator hours).
    monitors: WatchedRules | None = None
    weights: dict[str, float] = msgspec.field(default_factory=dict)
    processes: int = 1
    # Whether a resume of this line re-trains bit-identical steps on this path and device (rc1/train/launch.py
    # `exact_resume`): the CPU, or CUDA with train.deterministic and transformers' generate; vLLM's sampling is not.
    # An older line did not say; it was taken as exact.
    exact_resume: bool = True
    # The policy's chat template opens <think> (model.thinking resolved): a thinking model is sampled, never decoded
    # greedily, so its greedy evaluation is a view that decides nothing (shadow_regression reads sampled success).
    thinking: bool = False
    # A live line (data.episodes: live): sha256 of the chat template its episodes render with
    # (rc1/train/live_tools.py `tool_template_sha256`: TRL's instruct template, or rc1's thinking one for a policy
    # whose template opens <think>). UNSET, and absent from the line, for a recorded line and in older logs.
    tool_template_sha256: str | msgspec.UnsetType = msgspec.UNSET
    # A line with a frozen base (LoRA, QLoRA): sha256 of a sample of its frozen tensors as this segment loaded them
    # (rc1/train/frozen_base.py), checked against the line's first record (the always-on frozen_base guard). UNSET,
    # and absent from the line, for a full fine-tune and in older logs.
    frozen_sha256: dict[str, str] | msgspec.UnsetType = msgspec.UNSET


class TrainStep(Event, frozen=True, kw_only=True, tag="train_step"):
    step: int
    loss: float
    kl: float
    ratio: float
    lr: float
    reward: float
    reward_std: float = 0.0
    mem_used_mb: float
    sec_per_step: float
    tokens: int
    scoring: ScoringSummary = msgspec.field(default_factory=ScoringSummary)
    epochs: int = 1  # update passes over the batch (PPO stops early at target_kl)
    kl_coef: float = 0.0  # the KL coefficient β in force (GRPO adapts it to target_kl)
    # The batch (rc1/train/sampler.py): prompts per measured difficulty, the share from the seed pool (the
    # rest fresh items), and how many were drawn because the policy was failing them.
    batch_difficulty: dict[str, int] = msgspec.field(default_factory=dict)
    seed_share: float = 1.0
    low_perf: int = 0
    # The step's sampled completions (rc1/scoring/archive.py): the mean of each reward component and of the
    # over-clarification penalty ({} and 0 in a log from before the archive, or for a strategy that samples none).
    components: dict[str, float] = msgspec.field(default_factory=dict)
    penalty: float = 0.0
    # The trainer's diagnostics where the engine has them (rc1/train/metrics.py DIAGNOSTICS): entropy,
    # clip_ratio, frac_reward_zero_std, completion_length_mean/max, clipped_ratio.
    diagnostics: dict[str, float] = msgspec.field(default_factory=dict)
    grad_norm: float | None = None  # the gradient's global L2 norm before clipping (None: not recorded)
    # A live line's rollouts (data.episodes: live): what they did with the tools (rc1/scoring/episode_stats.py:
    # calls and failures, hops, asks where needed and where not, each share beside its count). UNSET, and absent from
    # the line, for a recorded line and in older logs.
    episodes: dict[str, float] | msgspec.UnsetType = msgspec.UNSET


class CheckpointSaved(Event, frozen=True, kw_only=True, tag="checkpoint_saved"):
    step: int
    dir: str
    files: dict[str, str]  # relative path -> sha256
    # The frozen base's sampled tensors as they stand at this checkpoint (training_started.frozen_sha256's). UNSET,
    # and absent from the line, where the line has no frozen base and in older logs.
    frozen_sha256: dict[str, str] | msgspec.UnsetType = msgspec.UNSET


class EvalBucket(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One cell of an evaluation: a task × difficulty bucket, a task ("all" difficulties), a difficulty
    ("all" tasks) or everything. `delta_pp`: success minus step 0's, in percentage points."""

    task: str
    difficulty: str
    n: int
    success: float  # share of replies scored correct (a clarification, for an item that needs one)
    mean_reward: float
    overclar_rate: float  # share of replies asking a question their item did not need
    avg_turns: float  # user turns of the episodes
    delta_pp: float | None = None
    # Success averaged over `samples` sampled replies per item (EvalCompleted.samples), at the training temperature:
    # greedy success hides what RL sharpens when the greedy reply does not change. None before v3.
    sampled_success: float | None = None


class EvalCompleted(Event, frozen=True, kw_only=True, tag="eval_completed"):
    step: int
    n: int
    mean_reward: float
    success: float  # the share of replies that succeeded (v1: `accuracy`)
    per_task_success: dict[str, float]  # (v1: `per_task_accuracy`)
    scoring: ScoringSummary = msgspec.field(default_factory=ScoringSummary)
    # Added with the release gate; an older line has none.
    buckets: list[EvalBucket] = msgspec.field(default_factory=list)
    hard_success: float | None = None  # success on the hard items of release.tasks (greedy)
    hard_sampled_success: float | None = None  # the same, averaged over `samples` sampled replies per item
    samples: int = 0  # sampled replies per item behind the sampled figures (0: none taken, before v3)
    rollouts: dict[str, str] = msgspec.field(default_factory=dict)  # the evaluation's archive shard: path -> sha256
    # Item by item, in the shadow set's order (the monitors pair evaluations over items; [] before monitors): greedy
    # success (0/1) and how many of the `samples` sampled replies were scored correct.
    item_ids: list[str] = msgspec.field(default_factory=list)
    item_greedy: list[float] = msgspec.field(default_factory=list)
    item_sampled: list[int] = msgspec.field(default_factory=list)
    drift: Drift | None = None  # KL of the policy to the step-0 policy on the sampled replies (None: not measured)
    seconds: float = 0.0  # the evaluation's own time
    # The evaluation's own peak: accelerator memory on CUDA (its peak counter reset when it starts), else the
    # process's resident-set peak; 0: not recorded (an older line).
    mem_peak_mb: float = 0.0
    # A live line's greedy replies: what they did with the tools, as train_step.episodes (UNSET when not live).
    episodes: dict[str, float] | msgspec.UnsetType = msgspec.UNSET

    @staticmethod
    def upcast_v1_v2(raw: dict) -> dict:
        """v2: eval_completed says `success` and `per_task_success` (v1 measured success, the release gate's word,
        under the name `accuracy`)."""
        raw = dict(raw)
        raw["success"] = raw.pop("accuracy")
        raw["per_task_success"] = raw.pop("per_task_accuracy")
        return raw


class BestPromoted(Event, frozen=True, kw_only=True, tag="best_promoted"):
    step: int
    dir: str
    metric: str
    value: float
    files: dict[str, str] = msgspec.field(default_factory=dict)  # relative path -> sha256 of the copy in best/


class ShadowRunCompleted(Event, frozen=True, kw_only=True, tag="shadow_run_completed"):
    """K sampled replies per shadow item scored by the old and the new scoring; the statistics (None where
    a correlation is undefined, e.g. constant success) and the report they are written to."""

    tag: str
    checkpoint: str  # base | best | step_N
    samples: int
    statistics: dict[str, float | None]
    unstable: list[str]  # item ids left out: their score varied more than the threshold across samples
    report: str
    sha256: str
    scoring: ScoringSummary = msgspec.field(default_factory=ScoringSummary)  # the judge calls it made


class GateSetEvaluated(Event, frozen=True, kw_only=True, tag="gate_set_evaluated"):
    """The gate set's replies from one policy, item by item: the step-0 policy (`policy` "base", round 2's
    `release_power` check; a LoRA adapter starts at zero and full fine-tuning at the base weights, so it is every
    line's step 0) or the checkpoint the shadow set chose for a line of training (`policy` "selected")."""

    policy: str  # base | selected
    step: int  # 0 for the base
    checkpoint: str | None  # the selected checkpoint's directory (best/step_N or the final one)
    selected_by: str = ""  # best (the last best/ promotion) | final (no checkpoint beat step 0 on the shadow set)
    seed: int | None = None  # the line of training (None: the base, shared by every line)
    gate_sha256: str
    samples: int
    temperature: float
    generation_seed: int
    item_ids: list[str]
    sampled: list[int]  # per item: how many of its `samples` sampled replies were scored correct
    greedy: list[int]  # per item: 1 when its greedy reply was scored correct
    sampled_success: float
    greedy_success: float
    seconds: float = 0.0
    top_p: float = 1.0  # the sampling's cut (train.top_p, train.top_k); an older line sampled without one
    top_k: int = 0


class ReleaseEvaluated(Event, frozen=True, kw_only=True, tag="release_evaluated"):
    """The RC1 release verdict of a line of training, computed from its two gate-set evaluations: the mean
    per-item gain in sampled success (selected checkpoint − step 0) with a paired bootstrap interval over items.
    Passed only when the gain reaches the threshold and the interval lies above 0 (`failed` says what did not)."""

    step: int | None  # the selected checkpoint's step (v2: the best checkpoint's, None when none beat step 0)
    selected_by: str = ""  # best | final
    items: str = "gate"  # what it measured: the gate set (v3); v2 lines, upcast: shadow_hard
    n: int = 0  # items (v2: not recorded)
    samples: int = 0  # sampled replies per item (v2: 0, greedy)
    baseline_success: float  # step 0, sampled (v2: greedy)
    selected_success: float
    baseline_greedy: float | None = None
    selected_greedy: float | None = None
    hard_gain_pp: float
    ci_low_pp: float | None = None  # None: v2, no interval
    ci_high_pp: float | None = None
    confidence: float = 0.95
    resamples: int = 0  # bootstrap resamples behind the interval, drawn from a generator seeded with `bootstrap_seed`
    bootstrap_seed: int = 0
    threshold_pp: float
    passed: bool
    failed: list[str] = msgspec.field(default_factory=list)  # each part of the rule that failed, in words
    metric: str  # what chose the checkpoint (release.metric, on the shadow set)
    seed: int | None = None  # the line of training it judges
    release: bool = True  # False: a smoke run's (profile smoke), computed by the same rule and not a release

    @staticmethod
    def upcast_v2_v3(raw: dict) -> dict:
        """v3: release_evaluated is the gate set's paired verdict (sampled success of the selected checkpoint vs step 0,
        with its interval). v2 measured hard success on the shadow set, greedily, at the best checkpoint (or none): the
        same items that had chosen it. Its numbers are kept as they were, named as v3 names them, with what they were
        measured on."""
        raw = dict(raw)
        raw["baseline_success"] = raw["baseline_greedy"] = raw.pop("baseline_hard_success")
        raw["selected_success"] = raw["selected_greedy"] = raw.pop("hard_success")
        raw.update(items="shadow_hard", samples=0, n=0, selected_by="best" if raw.get("step") is not None else "final")
        if not raw["passed"]:
            raw["failed"] = [
                "no checkpoint beat step 0"
                if raw.get("step") is None
                else f"the gain {raw['hard_gain_pp']:+.1f} pp is below the threshold {raw['threshold_pp']:g} pp"
            ]
        return raw


class ReleaseAcrossSeeds(Event, frozen=True, kw_only=True, tag="release_across_seeds"):
    """The RC1 release verdict of a run that trains several seeds: their hard gains' mean and spread
    (sample standard deviation). Passed when mean − spread ≥ the threshold and every seed's own gate passed."""

    gains_pp: dict[str, float]  # seed -> hard_gain_pp
    mean_pp: float
    spread_pp: float
    threshold_pp: float
    passed: bool
    release: bool = True  # False: a smoke run's


class TrainingFailed(Event, frozen=True, kw_only=True, tag="training_failed"):
    error: str
    report: str  # path of reports/ERROR_<ts>.json
    step: int


class RunCompleted(Event, frozen=True, kw_only=True, tag="run_completed"):
    """A line of training finished (`seed`); the run is complete when every seed of `run.seeds` has one."""

    step: int
    best_step: int | None
    final_checkpoint: str
    seed: int | None = None
    # Why it ended: max_steps; or early, "stopped by <rule> at step N" (a `stop` trip) or "stopped after <rule>'s halt
    # at step N: <reason>" (rc1 advance --stop).
    reason: str = "max_steps"


class MonitorTripped(Event, frozen=True, kw_only=True, tag="monitor_tripped"):
    """A monitor rule tripped (rc1/run/monitors/): what it measured against its thresholds over its window, and its
    action: warn (training goes on), halt (the run is HALTED until a person chooses the way forward) or stop (the line
    ends early as complete). Every trip but a non-finite one is derived again from the events before it by replay and
    audit; a non-finite trip's `not_finite` holds the value that was not finite."""

    rule: str
    step: int  # the step it was measured at (non_finite: the step that was not applied)
    seed: int | None = None
    measured: dict[str, float]
    threshold: dict[str, float]
    window: int
    action: str  # warn | halt | stop
    detail: str = ""
    # A non-finite trip's values that were not finite, as text ("nan", "inf", "-inf"): JSON has no such numbers.
    not_finite: dict[str, str] = msgspec.field(default_factory=dict)


class HaltAcknowledged(Event, frozen=True, kw_only=True, tag="halt_acknowledged"):
    """The way forward from a halt, chosen by a person and recorded with their reason: continue (from the newest
    checkpoint), rollback (from the checkpoint named, with amended training keys in the training_amended before it),
    or stop (the line ends here and its best checkpoint goes to the release verdict)."""

    rule: str
    step: int  # the halt's step
    seed: int | None = None
    choice: str  # continue | rollback | stop
    reason: str
    from_checkpoint: str | None  # the checkpoint training resumes from (None: stop, or the line starts over)
    from_step: int | None  # its step (0: the line starts over from the base; None: stop)
    # The rule stays quiet for the line until it clears past the halt's step: going on with nothing changed replays
    # the same steps exactly, and would halt there again.
    silenced: bool = False


class Amended(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    old: float | None
    new: float | None


class TrainingAmended(Event, frozen=True, kw_only=True, tag="training_amended"):
    """Training keys changed for the rest of the run on a rollback from a halt (dotted key -> old and new value);
    only the keys rc1.app.amend.AMENDABLE names, after round 2's config checks passed on the amended config."""

    changes: dict[str, Amended]


class LogRepaired(Event, frozen=True, kw_only=True, tag="log_repaired"):
    torn_bytes: int
    offset: int
    quarantine: str
    sha256: str


class TrackerAttached(Event, frozen=True, kw_only=True, tag="tracker_attached"):
    """A tracker of `tracking.report_to` was given this run: its id (for tensorboard, the folder of its event
    files), reused by every later session so a resumed run goes on in the same tracker run."""

    backend: str
    run_id: str


class ExportedFile(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    sha256: str
    bytes: int


class ModelExported(Event, frozen=True, kw_only=True, tag="model_exported"):
    """`rc1 export` wrote a checkpoint of a line of training out as a model (docs/export.md): `form` adapter (PEFT's
    layout; with the built-in base exported beside it in base/), merged (the adapter merged into a whole model) or
    full (a full fine-tune's model, whole). Every file of the directory with its sha256 and size (`audit` checks
    them), the model card's sha256, and the log's head the card names (seq and hash: lines cut off the end show)."""

    out: str  # the export directory: relative to the workspace root when inside it, else absolute
    form: str  # adapter | merged | full
    asked: str  # what --checkpoint asked for: best | latest | step_N
    step: int
    checkpoint: str  # the checkpoint's directory, as its checkpoint_saved recorded it
    checkpoint_seq: int  # the checkpoint_saved that vouches for it (its files were verified against it first)
    seed: int | None = None  # the line of training
    base_model: str  # model.name; in an adapter export, what its base_model_name_or_path says
    dtype: str  # the weights' dtype as exported
    files: dict[str, ExportedFile]  # relative path -> sha256 and bytes, README.md (the model card) included
    card_sha256: str
    log_seq: int  # the log's head when the card was written (the card names it)
    log_hash: str


class RefusedSetAside(Event, frozen=True, kw_only=True, tag="refused_set_aside"):
    """Events an older rc1 wrote although the state machine refused them (rc1 now refuses them at the write),
    set aside by `rc1 repair`: they stay in the log (the chain covers them) and are still never folded in; the
    run goes on from what the log holds without them, and `audit` lists them as set aside."""

    seqs: list[int]
    messages: list[str]


def _event_classes(base: type[Event]) -> list[type[Event]]:
    """Every event class under `base`, in the order they are declared: the tagged leaves (a shared base such
    as CheckOutcome carries no tag of its own and is never written)."""
    found = []
    for cls in base.__subclasses__():
        found += [cls] if cls.__struct_config__.tag != cls.__name__ else _event_classes(cls)
    return found


# The tagged union every line decodes into, built from the classes above: declaring an event is all it takes.
EVENT_CLASSES: tuple[type[Event], ...] = tuple(_event_classes(Event))
AnyEvent = Union[EVENT_CLASSES]  # type: ignore[valid-type]  # noqa: UP007 (a tuple of classes: no `|` form)

EVENT_TYPES: dict[str, type[Event]] = {cls.__struct_config__.tag: cls for cls in EVENT_CLASSES}


def event_type(event: Event) -> str:
    return type(event).__struct_config__.tag


def recorded_fields(event: Event) -> dict:
    """The event's fields as its line holds them: a field this line does not record (UNSET) is left out."""
    return {k: v for k, v in msgspec.structs.asdict(event).items() if v is not msgspec.UNSET}


_UPCASTER = re.compile(r"upcast_v(\d+)_v(\d+)")


def _upcasters(classes: tuple[type[Event], ...]) -> dict[tuple[str, int], Callable[[dict], dict]]:
    found = {}
    for cls in classes:
        for attribute in vars(cls):
            match = _UPCASTER.fullmatch(attribute)
            if match is None:
                continue
            old, new = int(match[1]), int(match[2])
            if new != old + 1:
                raise TypeError(f"{cls.__name__}.{attribute}: an upcaster reads one version into the next")
            found[(cls.__struct_config__.tag, old)] = getattr(cls, attribute)
    return found


# (event type, version) -> what turns a raw line of that type and version into the next version's shape: the
# events' own `upcast_v<n>_v<n+1>` methods. A type a version bump did not change needs none: its line is the same at
# the next version.
UPCASTERS: dict[tuple[str, int], Callable[[dict], dict]] = _upcasters(EVENT_CLASSES)


def needs_upcast(event: Event) -> bool:
    """Whether a line decoded as this event was written at a version whose shape of its type has changed since
    (its fields must then be read through the upcasters, never as decoded)."""
    kind = event_type(event)
    return any((kind, version) in UPCASTERS for version in range(event.v, SCHEMA_VERSION))


def upcast(raw: dict) -> dict:
    """A raw line of any older version, in the current version's shape."""
    version, kind = raw.get("v", 1), raw.get("type")
    while version < SCHEMA_VERSION:
        change = UPCASTERS.get((kind, version))
        raw = {**(change(raw) if change else raw), "v": version + 1}
        version += 1
    return raw
