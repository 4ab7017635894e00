"""The rollout archive: every sampled completion of training and of evaluation, with what it was scored.

A row holds the item (id, task, difficulty, whether it needs clarification, the gold it was scored against, the
sha256 of the prompt the policy was shown), the completion and its token count, each reward component, the
questions it asked back, the penalty, the difficulty factor and the reward: enough to score the text again and
compare (`rc1 audit --rescore`). A live episode's row (data.episodes: live) also keeps its `episode`
(rc1/scoring/episode_record.py: the messages and the tool calls) where its text is kept; a one-turn row has none and
encodes byte for byte as before the field existed (`UNSET` is never written). Rows are stored as zstd-compressed
JSON lines, in shards written whole: training's in each checkpoint (`rollouts.jsonl.zst`: the steps since the one
before, hashed with the checkpoint's files in `checkpoint_saved`), an evaluation's beside the checkpoints (its sha256
in `eval_completed`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import msgspec
import zstandard

from rc1.config.schema import RewardConfig, RolloutsConfig
from rc1.data.task import TaskItem
from rc1.scoring.episode_record import Episode
from rc1.scoring.pipeline import Scored
from rc1.scoring.reward import configured_parts

SHARD_NAME = "rollouts.jsonl.zst"  # a checkpoint's training rollouts
LEVEL = 9  # zstd level: text of this kind compresses ~5× at 9 and barely more above; fixed, so shards are reproducible

TRAIN = "train"
EVAL = "eval"  # an evaluation's greedy reply to a shadow item
EVAL_SAMPLED = "eval_sampled"  # one of its sampled replies


class Rollout(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    kind: str  # train | eval | eval_sampled
    step: int  # the optimizer step that sampled it, or the step of the evaluated policy
    item_id: str
    task: str
    difficulty: str
    needs_clarification: bool
    gold: str  # the answer it was scored against (another item's, under `reward.answers: shuffled`)
    prompt_sha256: str
    completion: str | None  # None where `rollouts.keep_text` keeps no text for this step
    tokens: int
    components: dict[str, float]
    clarifications: int
    penalty: float
    difficulty_factor: float
    reward: float
    judge_request: str | None = None  # the request sha256 of its judge call (ledger and cache key), if judged
    advantage: float | None = None  # what the trainer made of its reward (GRPO, RLOO on the trl engine)
    # The completion's token ids, kept where a reward function names completion_ids (rescoring hands them back),
    # and what the reward functions logged for it (log_extra: column -> value).
    completion_ids: list[int] | None = None
    logged: dict[str, str] = msgspec.field(default_factory=dict)
    # A live episode's messages and tool calls (UNSET, and absent from the line, for a one-turn reply or no text kept).
    episode: Episode | msgspec.UnsetType = msgspec.UNSET


class MalformedRow(ValueError):
    """A shard line that does not decode as a row: its line number and msgspec's message, which names the field by
    its path (`$.episode.calls[0].ok`)."""


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(Rollout)


def prompt_sha256(item: TaskItem) -> str:
    return hashlib.sha256(item.prompt.encode()).hexdigest()


def keeps_text(rollouts: RolloutsConfig, kind: str, step: int) -> bool:
    if rollouts.keep_text == "none":
        return False
    if rollouts.keep_text == "all" or kind != TRAIN:
        return True
    return step % rollouts.every_n_steps == 0


def rows_of(
    kind: str,
    step: int,
    items: Sequence[TaskItem],
    completions: Sequence[str],
    tokens: Sequence[int],
    scored: Sequence[Scored],
    reward: RewardConfig,
    weights: dict[str, float],
    rollouts: RolloutsConfig,
    episodes: Sequence[Episode] | None = None,
) -> list[Rollout]:
    """One row per completion, its reward computed the way the trainer's is (rc1/scoring/reward.py); `episodes`, a
    live episode's record per completion (None: one-turn replies), kept with the text."""
    keep = keeps_text(rollouts, kind, step)
    if episodes is not None and len(episodes) != len(items):
        raise ValueError(f"{len(items)} completions archived with {len(episodes)} episode records")
    rows = []
    for index, (item, text, count, s) in enumerate(zip(items, completions, tokens, scored, strict=True)):
        parts = configured_parts(reward, s.components, weights, item, s.clarifications)
        rows.append(
            Rollout(
                kind=kind,
                step=step,
                item_id=item.id,
                task=item.task,
                difficulty=item.difficulty,
                needs_clarification=item.needs_clarification,
                gold=item.answer,
                prompt_sha256=prompt_sha256(item),
                completion=text if keep else None,
                tokens=int(count),
                components=dict(s.components),
                clarifications=s.clarifications,
                penalty=parts.penalty,
                difficulty_factor=parts.difficulty_factor,
                reward=parts.total,
                judge_request=s.judge_request,
                completion_ids=s.completion_ids,
                logged=dict(s.logged),
                episode=episodes[index] if episodes is not None and keep else msgspec.UNSET,
            )
        )
    return rows


def encode_shard(rows: Sequence[Rollout]) -> bytes:
    lines = b"".join(_ENCODER.encode(row) + b"\n" for row in rows)
    return zstandard.ZstdCompressor(level=LEVEL).compress(lines)


def decode_shard(data: bytes) -> list[Rollout]:
    """The shard's rows; MalformedRow names the first line that is not one."""
    lines = zstandard.ZstdDecompressor().decompress(data)
    try:
        return _DECODER.decode_lines(lines)
    except msgspec.DecodeError:
        for number, line in enumerate(lines.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                _DECODER.decode(line)
            except msgspec.DecodeError as e:
                raise MalformedRow(f"line {number}: {e}") from None
        raise


def item_of(row: Rollout) -> TaskItem:
    """The item as the scorer saw it: what the rule components read (task, gold, difficulty, clarification)."""
    return TaskItem(
        id=row.item_id,
        task=row.task,
        question="",
        answer=row.gold,
        difficulty=row.difficulty,
        prompt="",
        needs_clarification=row.needs_clarification,
    )


# What the archive of a run will take on disk, at most (round 1 counts it in its free-disk check):
TEXT_BYTES_PER_TOKEN = 4.0  # English in a BPE vocabulary such as Qwen3's: about 4 characters a token
TEXT_COMPRESSION = 3.3  # zstd level 9 on GSM8K's 7,473 reference solutions: 2.16 MB -> 0.65 MB (measured)
ROW_BYTES = 64  # a row without its text, compressed (measured 19 on the embedded default, whose rows repeat more)


def archive_estimate_gb(config) -> float:
    """The archive's size if every kept completion runs to train.max_completion_tokens, for every line of training,
    on one process (a multi-process launch samples world-size times as many replies a step)."""
    train = config.train
    lines = len(config.run.seeds)
    trained = train.max_steps * train.per_device_batch_size * train.gradient_accumulation_steps * lines
    evaluations = (train.max_steps // (train.eval_steps or train.save_steps) + 1) * lines
    evaluated = evaluations * config.data.shadow_size * (1 + config.release.samples)
    kept = {"all": 1.0, "none": 0.0, "every_n_steps": 1 / config.rollouts.every_n_steps}[config.rollouts.keep_text]
    text_bytes = train.max_completion_tokens * TEXT_BYTES_PER_TOKEN / TEXT_COMPRESSION
    with_text = trained * kept + (evaluated if config.rollouts.keep_text != "none" else 0)
    return (with_text * text_bytes + (trained + evaluated) * ROW_BYTES) / 1e9
