"""The run's policy: the base model every line of training starts from (the configured model, or the built-in
one built and warm-started on the balanced pool, cached), and the session as one line of training sees it.
Training, round 2, the shadow run and the release verdict load it here; `rc1 score` finds the built-in
model's tokenizer here."""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from pathlib import Path

import msgspec

from rc1.app.session import Session
from rc1.core.catalog import is_builtin
from rc1.core.fsutil import held_lock, sha256_file
from rc1.core.workspace import Workspace
from rc1.data.task import TaskItem
from rc1.scoring.rules import gold_reply


def line_session(session: Session, seed: int, seeds: list[int]) -> Session:
    """The session as one line of training sees it: `run.seed` is the line's seed (adapter initialisation, data
    order, sampling, generation), and with several seeds its checkpoints live in checkpoints/<run>/seed_<s>/.
    It appends to the same log."""
    loaded = session.loaded
    config = msgspec.structs.replace(loaded.config, run=msgspec.structs.replace(loaded.config.run, seed=seed))
    line = copy.copy(session)
    line.loaded = msgspec.structs.replace(loaded, config=config)
    line.ws = msgspec.structs.replace(session.ws, line=f"seed_{seed}" if len(seeds) > 1 else "")
    return line


def load_run_policy(session: Session, pool: list[TaskItem], base_seed: int | None = None):
    """The run's base policy (the built-in model built and warm-started on `pool`, or the configured one),
    its tokenizer, device and dtype; no adapter yet. `base_seed` builds the built-in model (default
    `run.seed`): every line of training of a run starts from the same base, as it would from a hub model."""
    from rc1.train.device import select_device, select_dtype
    from rc1.train.model_loading import load_policy

    config = session.config
    if not sys.stderr.isatty():
        _quiet_library_progress_bars()
    device = select_device()
    dtype = select_dtype(device, config.model.dtype)
    if device == "mps":
        print(
            "warning: training on MPS in fp16: no flash-attention and no torch.compile there; sdpa attention",
            file=sys.stderr,
        )
    seed = config.run.seed if base_seed is None else base_seed
    builtin_dir = _builtin_model(session, pool, seed) if is_builtin(config.model.name) else None
    model, tokenizer = load_policy(config.model, config.finetune.method, device, dtype, builtin_dir)
    return model, tokenizer, device, dtype


def base_model_source(session: Session, pool: list[TaskItem], base_seed: int) -> str:
    """What `from_pretrained` loads the run's base model from: the built-in model's directory (built and
    warm-started on `pool` with `base_seed`, or found in the cache), else `model.name` (a hub id or a directory)."""
    if is_builtin(session.config.model.name):
        return str(_builtin_model(session, pool, base_seed))
    return session.config.model.name


def builtin_model_dir(ws: Workspace, seed: int, *, live: bool = False, pages_by: str = "titles") -> Path:
    """Where the built-in tiny model of this run's balanced pool and seed is (or will be) built. A live run's has a
    name of its own: its tokenizer is trained on other texts (the rendered gold episodes, which differ by how the
    material is cut into pages), and a recorded and a live run of one pool share the cache (`make bench` runs them side
    by side), each loading its own."""
    kind = ("tiny-qwen3-live" + ("-mentions" if pages_by == "mentions" else "")) if live else "tiny-qwen3"
    return ws.model_cache_dir / f"{kind}-{sha256_file(ws.balanced_pool_path)[:12]}-seed{seed}"


def _builtin_model(session: Session, pool: list[TaskItem], seed: int) -> Path:
    """The built-in model (the reader as shipped, or the tiny model built on the training pool), then warm-started
    on the pool's gold replies or gold turns (cached)."""
    from transformers import AutoTokenizer

    from rc1.core.catalog import BUILTIN_READER
    from rc1.data.user_tools import tools_of
    from rc1.train.prompts import fit_prompt
    from rc1.train.warm_start import warm_start, warm_start_losses

    config = session.config
    live = config.data.episodes == "live"
    tools = tools_of(session.loaded) if live else ()
    pages_by = config.data.pages
    base, place = builtin_folders(session.ws, session.loaded, seed)
    # Runs may share the cache (data/models): of those that need the same folder one builds it and the others wait,
    # then reuse it. Each folder has a lock of its own, so a run never waits on the build of a model it does not load.
    if config.model.name != BUILTIN_READER:
        from rc1.train.tiny_model import build_tiny_qwen3

        with held_lock(_build_lock(base)):
            texts = gold_texts(pool, pages_by) if live else [_answered(item) for item in pool]
            build_tiny_qwen3(texts, base, seed)
    if place is None:
        return base
    with held_lock(_build_lock(place)):
        tokenizer = AutoTokenizer.from_pretrained(base)
        if live:
            pairs = live_pairs(pool, tools, pages_by)
        else:
            pairs = [
                (fit_prompt(tokenizer, item, config.train.max_prompt_tokens)[0], gold_reply(item)) for item in pool
            ]
        steps = config.model.warm_start_steps
        out, trained = warm_start(base, place, pairs, steps=steps, seed=seed)
    if trained:
        losses = warm_start_losses(out)
        print(
            f"  warm start: {steps} SFT steps on {len(pairs)} gold {'turns' if live else 'replies'} "
            f"of the training pool, loss {losses[0]:.3f} -> {losses[-1]:.3f}",
            flush=True,
        )
    return out


def _build_lock(folder: Path) -> Path:
    """The lock a build of `folder` in the model cache is made under (beside it: the reader's own folder is in the
    package, its warm starts in the cache)."""
    return folder.with_name(f".{folder.name}.lock")


def builtin_folders(ws: Workspace, loaded, seed: int) -> tuple[Path, Path | None]:
    """Where the built-in model's base is (the reader as shipped, or the tiny model of this pool and seed) and where
    its warm start is (None with `model.warm_start_steps` 0): the folders `_builtin_model` builds, named without
    building anything."""
    from rc1.core.catalog import BUILTIN_READER
    from rc1.data.user_tools import tools_of

    config = loaded.config
    live = config.data.episodes == "live"
    tools = tools_of(loaded) if live else ()
    pages_by = config.data.pages
    steps = config.model.warm_start_steps
    if config.model.name == BUILTIN_READER:
        from rc1.reader.shipped import reader_dir

        base = reader_dir()
        return base, reader_warm_start_dir(ws, seed, steps, tools, live=live, pages_by=pages_by) if steps else None
    base = builtin_model_dir(ws, seed, live=live, pages_by=pages_by)
    return base, warm_start_dir(base, steps, tools, pages_by) if steps else None


def built_base_source(ws: Workspace, loaded, seed: int) -> str | None:
    """What the run's base loads from, where it exists already: `model.name`, or the built-in model's folder as
    built (None where it was never built here). For a command that reads a run and must not build one."""
    if not is_builtin(loaded.config.model.name):
        return loaded.config.model.name
    base, place = builtin_folders(ws, loaded, seed)
    source = place or base
    return str(source) if source.is_dir() else None


def warm_start_dir(base: Path, steps: int, tools=(), pages_by: str = "titles") -> Path:
    """Where the built-in tiny model at `base` warm-started `steps` steps is cached. With tools of yours its prompts
    offer them (`live_pairs`), so it has a name of its own per set of their schemas (and of wiki's, which follow
    data.pages): runs of one pool with other tools share the base, never the warm start."""
    if not tools:
        return base.with_name(f"{base.name}-sft{steps}")
    return base.with_name(f"{base.name}-sft{steps}-tools-{_schemas_digest(tools, pages_by)}")


def reader_warm_start_dir(
    ws: Workspace, seed: int, steps: int, tools=(), *, live: bool, pages_by: str = "titles"
) -> Path:
    """Where the reader warm-started on this run's balanced pool is cached: one folder per pool, seed, steps, kind of
    episode (recorded, or live with its pages) and set of tools of yours, so runs that share the cache never share a
    warm start they did not ask for."""
    from rc1.reader.shipped import reader_sha256

    kind = f"live-{pages_by}" if live else "recorded"
    name = f"reader-{reader_sha256()[:12]}-{kind}-{sha256_file(ws.balanced_pool_path)[:12]}-seed{seed}-sft{steps}"
    return ws.model_cache_dir / (name + (f"-tools-{_schemas_digest(tools, pages_by)}" if tools else ""))


def _schemas_digest(tools, pages_by: str) -> str:
    from rc1.data.environment import WikiView
    from rc1.train.live_generation import tool_schemas

    schemas = tool_schemas(tools, WikiView(pages=pages_by))
    return hashlib.sha256(json.dumps(schemas, sort_keys=True).encode()).hexdigest()[:12]


def _answered(item: TaskItem) -> str:
    """An item's prompt and gold answer: what the built-in tokenizer learns its pieces from."""
    return f"{item.prompt}\nAnswer: {item.answer}"


def gold_texts(pool: list[TaskItem], pages_by: str = "titles") -> list[str]:
    """The texts a live run's tiny tokenizer learns its pieces from: the pool's gold episodes as the tool-calling
    template renders them (tools block, calls, results, answer), so a tool call's markup is a few tokens (an item
    without a gold episode as a recorded run's). They offer the built-in tools only, so runs with and without tools
    of yours share one tokenizer and base."""
    from rc1.data.environment import WikiView
    from rc1.train.gold_episodes import gold_episode_text
    from rc1.train.live_generation import tool_schemas
    from rc1.train.live_tools import TOOL_CHAT_TEMPLATE

    built_in = tool_schemas(wiki=WikiView(pages=pages_by))
    return [gold_episode_text(item, TOOL_CHAT_TEMPLATE, built_in, pages_by) or _answered(item) for item in pool]


def live_pairs(pool: list[TaskItem], tools=(), pages_by: str = "titles") -> list[tuple[str, str]]:
    """A live run's warm-start (prompt, turn) pairs: every assistant turn of every gold episode of the pool with its
    prompt as TRL renders a live rollout's. `tools`: the run's tools of yours, offered in the prompts as training
    offers them (a gold episode never calls one)."""
    from rc1.data.environment import WikiView
    from rc1.train.gold_episodes import gold_turn_pairs
    from rc1.train.live_generation import tool_schemas
    from rc1.train.live_tools import TOOL_CHAT_TEMPLATE

    offered = tool_schemas(tools, WikiView(pages=pages_by))
    return [pair for item in pool for pair in gold_turn_pairs(item, TOOL_CHAT_TEMPLATE, offered, pages_by)]


def _quiet_library_progress_bars() -> None:
    """transformers/datasets draw bars for shard writes and loads; in a log file they are noise."""
    import datasets
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    datasets.disable_progress_bars()
