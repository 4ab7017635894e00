"""Build the reader: its tokenizer, then the copy curriculum, then reading, bit for bit the same on a machine of one
kind (one CPU thread, deterministic algorithms, every random draw from a seeded generator).

1. Tokenizer: byte-level BPE (`VOCAB` pieces) learned from the corpus, with one change from the built-in tiny model's:
   a space before a capital letter or a digit is a token of its own, so a name or a number is the same tokens after a
   space (in a question) as after a quote (in a call's JSON): copying it is repeating tokens, not translating them.
2. Copy curriculum: random-token repeats (`corpus.repeats`) alone until the model predicts `INDUCTION_TARGET` of the
   repeated halves (measured on each batch, every 50 steps; at most `max_induction_steps`). The heads that copy form
   in one sudden drop of the loss, the phase change of the induction-head literature (Olsson et al., 2022).
3. Reading: language modelling on windows of the packed episodes, a `repeat_share` of each batch still repeats (so
   the copying heads are kept while the episodes are learned), with a cosine schedule over `reading_steps`.

The training loop is rc1's own, about forty lines: a packed-window pretraining with a stop on a measured condition is
neither TRL's SFT (prompt/completion pairs) nor worth a Trainer subclass; the warm start on a run's pool stays TRL's
`SFTTrainer` (rc1/train/warm_start.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
import torch

from rc1.core.fsutil import fsync_dir, fsync_tree
from rc1.reader.corpus import build_corpus, repeats

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = REPO / "configs" / "templates" / "pack_v2"
BUILD_RECORD = "reader_build.json"
INDUCTION_TARGET = 0.9
VOCAB = 2000


class Recipe(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the build depends on besides the code: change one and the weights change."""

    seed: int = 2
    layers: int = 2  # the tiny model's widths (rc1/train/tiny_model.py ARCH), this deep
    live_items: int = 12000
    recorded_items: int = 6000
    schema_share: float = 0.5  # live texts rendered with the tools' schema block, as every run shows it
    max_induction_steps: int = 3000
    reading_steps: int = 2500
    batch: int = 16
    window: int = 1024  # reading windows, as long as a live episode's prompt (docs/DESIGN.md §13); the curriculum's 256
    repeat_share: float = 0.25
    learning_rate: float = 3e-3
    warmup_steps: int = 100
    require_copying: bool = True  # refuse to write a model whose curriculum did not reach INDUCTION_TARGET (a test's
    # build of a few steps sets it off)


RECIPE = Recipe()  # the shipped reader's


class BuildRecord(msgspec.Struct, frozen=True, kw_only=True):
    """What a build did, written beside the weights (`reader_build.json`)."""

    recipe: Recipe
    arch: dict
    corpus_sha256: str
    live_texts: int
    recorded_texts: int
    stream_tokens: int
    induction_steps: int
    induction_accuracy: float  # on the last measured curriculum batch
    reading_losses: list[float]  # every 100 steps
    seconds: float
    torch_version: str


def build_reader(
    out: Path,
    recipe: Recipe = RECIPE,
    *,
    say: Callable[[str], None] = print,
    state: Path | None = None,
    save_every: int = 100,
) -> BuildRecord:
    """Build the reader into `out` (written to a temp sibling, fsynced, renamed: `out` is a whole build or absent).
    With `state`, its progress is saved there every `save_every` steps and a build stopped part-way goes on from it,
    to the same bytes (rc1/reader/progress.py)."""
    from transformers import Qwen3ForCausalLM

    from rc1.train.tiny_model import init_model, train_tokenizer

    started = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    try:
        corpus = recipe_corpus(recipe)
        say(f"corpus: {len(corpus.live)} live episodes, {len(corpus.recorded)} recorded ones")
        tokenizer = train_tokenizer(corpus.tokenizer_texts, VOCAB, split_before_capitals=True)
        model = init_model(tokenizer, recipe.seed, architecture(recipe))
        generator = torch.Generator().manual_seed(recipe.seed)
        optimizer = torch.optim.AdamW(model.parameters(), lr=recipe.learning_rate, betas=(0.9, 0.95), weight_decay=0.01)
        keeper = _Keeper(state, save_every, recipe, model, optimizer, generator, say)
        saved = keeper.resume()
        if saved is None or saved.phase == "curriculum":
            steps, accuracy = _copy_curriculum(model, optimizer, len(tokenizer), generator, recipe, say, keeper)
            if recipe.require_copying and accuracy < INDUCTION_TARGET:  # a reader that cannot copy is not one
                raise RuntimeError(
                    f"the copy curriculum did not form copying heads in {recipe.max_induction_steps} steps (repeated "
                    f"halves predicted {accuracy:.3f} < {INDUCTION_TARGET}): raise Recipe.max_induction_steps"
                )
            keeper.curriculum_done(steps, accuracy)
        else:
            steps, accuracy = saved.induction_steps, saved.induction_accuracy
        stream = keeper.packed(lambda: _packed(tokenizer, corpus.live + corpus.recorded, generator))
        losses = _reading(model, optimizer, stream, len(tokenizer), generator, recipe, say, keeper)
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(False)
    assert isinstance(model, Qwen3ForCausalLM)
    record = BuildRecord(
        recipe=recipe,
        arch=architecture(recipe),
        corpus_sha256=corpus_digest(corpus.live + corpus.recorded),
        live_texts=len(corpus.live),
        recorded_texts=len(corpus.recorded),
        stream_tokens=len(stream),
        induction_steps=steps,
        induction_accuracy=accuracy,
        reading_losses=losses,
        seconds=round(time.perf_counter() - started, 1),
        torch_version=str(torch.__version__),
    )
    _write(out, model, tokenizer, record)
    return record


def architecture(recipe: Recipe) -> dict:
    from rc1.train.tiny_model import ARCH

    return {**ARCH, "num_hidden_layers": recipe.layers}


def _step(model, optimizer, ids: torch.Tensor, learning_rate: float) -> torch.Tensor:
    for group in optimizer.param_groups:
        group["lr"] = learning_rate
    model.train()
    logits = model(input_ids=ids).logits[:, :-1]
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return logits.detach()


def _copy_curriculum(model, optimizer, vocab: int, generator, recipe: Recipe, say, keeper) -> tuple[int, float]:
    """Repeats alone until the repeated halves are predicted (`INDUCTION_TARGET`); the steps taken and the last
    accuracy measured."""
    accuracy = keeper.accuracy
    for step in range(keeper.first_step("curriculum"), recipe.max_induction_steps + 1):
        ids, mask = repeats(recipe.batch, 256, vocab, generator)
        logits = _step(model, optimizer, ids, recipe.learning_rate * min(1.0, step / recipe.warmup_steps))
        if step % 50 == 0:
            hit = (logits.argmax(-1) == ids[:, 1:]) & (mask[:, 1:] == 1)
            accuracy = hit.sum().item() / mask[:, 1:].sum().item()
            say(f"copy curriculum step {step}: repeated halves predicted {accuracy:.3f}")
            if accuracy >= INDUCTION_TARGET:
                return step, accuracy
        keeper.done("curriculum", step, accuracy)
    return recipe.max_induction_steps, accuracy


def _packed(tokenizer, texts: list[str], generator) -> torch.Tensor:
    """The texts in a seeded order, each ended by the end-of-text token, as one stream of ids."""
    order = torch.randperm(len(texts), generator=generator).tolist()
    ids: list[int] = []
    for i in order:
        ids += tokenizer(texts[i])["input_ids"] + [tokenizer.eos_token_id]
    return torch.tensor(ids)


def _reading(model, optimizer, stream: torch.Tensor, vocab: int, generator, recipe: Recipe, say, keeper) -> list[float]:
    rows = round(recipe.batch * recipe.repeat_share)
    losses = keeper.losses
    for step in range(keeper.first_step("reading"), recipe.reading_steps + 1):
        rate = recipe.learning_rate * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / recipe.reading_steps)))
        starts = torch.randint(0, len(stream) - recipe.window, (recipe.batch - rows,), generator=generator).tolist()
        windows = [stream[s : s + recipe.window] for s in starts]
        ids = torch.cat([torch.stack(windows), repeats(rows, recipe.window, vocab, generator)[0]])
        logits = _step(model, optimizer, ids, rate)
        if step % 100 == 0:
            episodes = logits[: recipe.batch - rows]
            loss = torch.nn.functional.cross_entropy(
                episodes.reshape(-1, episodes.shape[-1]), ids[: recipe.batch - rows, 1:].reshape(-1)
            )
            losses.append(round(loss.item(), 4))
            say(f"reading step {step}/{recipe.reading_steps}: loss on the episodes {loss.item():.3f}")
        keeper.done("reading", step, losses=losses)
    return losses


class _Keeper:
    """Saves the build's progress every `save_every` steps into `state` (none without it) and puts a saved one back."""

    def __init__(self, state: Path | None, save_every: int, recipe: Recipe, model, optimizer, generator, say):
        from rc1.reader import progress

        self._progress, self._state, self._every, self._say = progress, state, save_every, say
        self._model, self._optimizer, self._generator = model, optimizer, generator
        self._record = progress.Progress(recipe_sha256=progress.recipe_sha256(recipe), phase="curriculum", step=0)
        self._recipe = recipe
        self._packing: torch.Tensor | None = None

    @property
    def accuracy(self) -> float:
        return self._record.induction_accuracy

    @property
    def losses(self) -> list[float]:
        return list(self._record.losses)

    def resume(self):
        """Put the saved state back (weights, optimizer, generator) and return its record; None with nothing saved."""
        saved = self._progress.load(self._state, self._recipe)
        if saved is None:
            return None
        self._model.load_state_dict(saved["model"])
        self._optimizer.load_state_dict(saved["optimizer"])
        self._generator.set_state(saved["generator"])
        self._packing = saved["packing"]
        self._record = saved["progress"]
        self._say(f"going on from {self._state}: {self._record.phase} step {self._record.step}")
        return self._record

    def first_step(self, phase: str) -> int:
        return self._record.step + 1 if self._record.phase == phase else 1

    def curriculum_done(self, steps: int, accuracy: float) -> None:
        self._record = msgspec.structs.replace(
            self._record, phase="reading", step=0, induction_steps=steps, induction_accuracy=accuracy
        )

    def packed(self, pack: Callable[[], torch.Tensor]) -> torch.Tensor:
        """The packed stream: drawn from the generator as it stands before packing (kept, so a resumed build draws
        the same stream again and then goes on from where its reading was)."""
        if self._packing is None:
            self._packing = self._generator.get_state()
            return pack()
        reading = self._generator.get_state()
        self._generator.set_state(self._packing)
        stream = pack()
        if self._record.step:  # reading had begun: its generator, not the one just after packing
            self._generator.set_state(reading)
        return stream

    def done(self, phase: str, step: int, accuracy: float | None = None, losses: list[float] | None = None) -> None:
        changes = {"phase": phase, "step": step}
        if accuracy is not None:
            changes["induction_accuracy"] = accuracy
        if losses is not None:
            changes["losses"] = list(losses)
        self._record = msgspec.structs.replace(self._record, **changes)
        if self._state is not None and step % self._every == 0:
            packing = self._packing if phase == "reading" else None
            self._progress.save(self._state, self._record, self._model, self._optimizer, self._generator, packing)
            self._say(f"progress saved: {phase} step {step}")


def recipe_corpus(recipe: Recipe):
    """The texts `recipe`'s build reads (rc1/reader/corpus.py)."""
    return build_corpus(
        live=recipe.live_items,
        recorded=recipe.recorded_items,
        schema_share=recipe.schema_share,
        seed=recipe.seed,
        templates=TEMPLATES,
    )


def corpus_digest(texts: list[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        digest.update(hashlib.sha256(text.encode("utf-8")).digest())
    return digest.hexdigest()


def _write(out: Path, model, tokenizer, record: BuildRecord) -> None:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    (tmp / BUILD_RECORD).write_text(
        json.dumps(msgspec.to_builtins(record), indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    fsync_tree(tmp)
    if out.exists():
        shutil.rmtree(out)
    os.rename(tmp, out)
    fsync_dir(out.parent)
