"""`builtin:tiny-qwen3`: a small Qwen3-architecture model with a byte-level BPE tokenizer trained on the pool.

Built offline in seconds, deterministic (same texts + seed → byte-identical files), written to a temp
sibling and renamed, so `out_dir` is a whole build or absent. It is randomly initialised: it trains for
real, it is not expected to be good.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import torch
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

from rc1.core.catalog import BUILTIN_TINY
from rc1.core.fsutil import fsync_dir, fsync_tree

EOS = "<|endoftext|>"
SPECIAL_TOKENS = [EOS, "<|im_start|>", "<|im_end|>"]
VOCAB_SIZE = 2000
BUILD_NAME = "rc1_build.json"
MAX_POSITIONS = 4096
# ChatML, as Qwen3 writes it (a tool result goes back in a user turn inside <tool_response>), so the
# local run shows the policy its episodes the way the production model sees them.
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{%- if message.role == 'tool' %}"
    "{{- '<|im_start|>user\\n<tool_response>\\n' + message.content + '\\n</tool_response><|im_end|>\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

ARCH = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "intermediate_size": 128,
    "tie_word_embeddings": True,
}


def build_tiny_qwen3(texts: list[str], out_dir: Path, seed: int, arch: dict | None = None) -> Path:
    """Build (or reuse) the tiny model and tokenizer for `texts` in `out_dir`; return `out_dir`. `arch`: widths and
    depth other than ARCH's (the reader's: rc1/reader/build.py; the tiny model uses ARCH)."""
    out_dir = Path(out_dir)
    arch = ARCH if arch is None else {**ARCH, **arch}
    fingerprint = _fingerprint(texts, seed, arch)
    if _is_complete(out_dir, fingerprint):
        return out_dir
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.with_name(f".{out_dir.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    tokenizer = train_tokenizer(texts)
    tokenizer.save_pretrained(tmp)
    model = init_model(tokenizer, seed, arch)
    model.save_pretrained(tmp)
    (tmp / BUILD_NAME).write_text(json.dumps(fingerprint, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    fsync_tree(tmp)
    if out_dir.exists():  # a build for other texts or seed: replace it
        old = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
        os.rename(out_dir, old)
        os.rename(tmp, out_dir)
        shutil.rmtree(old)
    else:
        os.rename(tmp, out_dir)
    fsync_dir(out_dir.parent)
    return out_dir


def _fingerprint(texts: list[str], seed: int, arch: dict) -> dict:
    digest = hashlib.sha256()
    for text in texts:
        digest.update(hashlib.sha256(text.encode("utf-8")).digest())
    return {
        "kind": BUILTIN_TINY,
        "seed": seed,
        "texts_sha256": digest.hexdigest(),
        "arch": arch,
        "vocab_size": VOCAB_SIZE,
        "chat_template_sha256": hashlib.sha256(CHAT_TEMPLATE.encode()).hexdigest(),
    }


def _is_complete(out_dir: Path, fingerprint: dict) -> bool:
    marker = out_dir / BUILD_NAME
    if not marker.is_file():
        return False
    try:
        return json.loads(marker.read_text(encoding="utf-8")) == fingerprint
    except (OSError, json.JSONDecodeError):
        return False


def train_tokenizer(
    texts: list[str], vocab_size: int = VOCAB_SIZE, *, split_before_capitals: bool = False
) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained on `texts`, with the ChatML template. `split_before_capitals`: a space
    before a capital or a digit is a piece of its own, so a name is the same tokens mid-sentence and at the start of a
    call's argument (the reader's; rc1/reader/build.py)."""
    backend = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.pre_tokenizer = (
        pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(r" (?=[\p{Lu}\p{N}])"), behavior="isolated"), byte_level])
        if split_before_capitals
        else byte_level
    )
    backend.decoder = decoders.ByteLevel()
    backend.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        eos_token=EOS,
        pad_token=EOS,
        padding_side="left",
        truncation_side="left",
        model_max_length=MAX_POSITIONS,
        chat_template=CHAT_TEMPLATE,
    )


def init_model(tokenizer: PreTrainedTokenizerFast, seed: int, arch: dict) -> Qwen3ForCausalLM:
    """A randomly initialised Qwen3 of `arch` for `tokenizer`, from `seed` (the global generator left as it was)."""
    eos_id = tokenizer.convert_tokens_to_ids(EOS)
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        max_position_embeddings=MAX_POSITIONS,
        eos_token_id=eos_id,
        pad_token_id=eos_id,
        bos_token_id=None,
        **arch,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen3ForCausalLM(config)
    model.generation_config.eos_token_id = eos_id
    model.generation_config.pad_token_id = eos_id
    return model.to(torch.float32)
