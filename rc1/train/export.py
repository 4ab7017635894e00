"""The weights of an export (`rc1 export`): a published checkpoint written out as a model others can load.

- adapter: PEFT's layout, the checkpoint's `adapter_model.safetensors` byte for byte and its `adapter_config.json`
  with `base_model_name_or_path` set to what the export's reader loads the base from;
- merged: the base loaded whole and unquantized, the adapter put on it and merged into its weights
  (`merge_and_unload`), saved as a HF model directory;
- full: a full fine-tune's weights put onto the base (rc1/train/checkpoint_policy.py) and saved the same way.

A HF model directory is what `AutoModelForCausalLM.from_pretrained` and vLLM read: `config.json` (`use_cache` on),
`generation_config.json`, safetensors shards of at most `SHARD_SIZE` (with their index when there are several), the
tokenizer with its chat template. Everything is loaded on the CPU: an export needs memory, not an accelerator, and
QLoRA's base is loaded in the dtype it computed in (bf16), not in 4 bits, to merge, as PEFT recommends (merging
into 4-bit weights rounds the adapter away).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from rc1.core.errors import BadInput
from rc1.train import layout
from rc1.train.checkpoint_policy import policy_at

SHARD_SIZE = "5GB"  # the hub's customary shard size: files a browser, git-lfs and vLLM's loader all handle


def load_base(source: str, dtype: torch.dtype) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """The base model, whole and unquantized, on the CPU in `dtype`, and its own tokenizer (chat template included)."""
    if not sys.stderr.isatty():  # bars for loading and writing shards: noise in a log
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    try:
        model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype)
        tokenizer = AutoTokenizer.from_pretrained(source)
    except OSError as e:
        raise BadInput(f"model.name: cannot load the base model {source!r} to export: {e}") from e
    return model.eval(), tokenizer


def save_whole(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, out: Path) -> None:
    """A HF model directory in `out`: config, generation config, safetensors shards, the tokenizer."""
    model.config.use_cache = True  # a checkpoint trained with gradient checkpointing had it off
    model.save_pretrained(out, max_shard_size=SHARD_SIZE)
    tokenizer.save_pretrained(out)


def as_live_trained(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> PreTrainedTokenizerBase:
    """A live run's built-in model as its episodes were trained: the tokenizer with the tool-calling template, which
    renders the tools' schemas and `tool_calls` (the built model's own ChatML template renders neither, so a reader of
    the export would prompt it as it never was), and the model's generation ending a turn at `<|im_end|>` first, as
    TRL's loop did (rc1/train/live_tools.py `with_tool_calling`). A hub model keeps its own template, whose tools
    rendering is the model card's."""
    from rc1.train.live_tools import with_tool_calling

    live = with_tool_calling(tokenizer)
    del live.response_template  # TRL's parser of a turn, not part of a tokenizer's files
    ends = model.generation_config.eos_token_id
    ends = [] if ends is None else [ends] if isinstance(ends, int) else list(ends)
    model.generation_config.eos_token_id = [live.eos_token_id, *(e for e in ends if e != live.eos_token_id)]
    return live


def write_adapter(checkpoint: Path, out: Path, base_reference: str) -> None:
    """PEFT's layout in `out`: the checkpoint's adapter weights, unchanged (their sha256 is the one checkpoint_saved
    recorded), and its config naming `base_reference` as the base."""
    shutil.copyfile(checkpoint / layout.ADAPTER, out / layout.ADAPTER)
    config = json.loads((checkpoint / layout.ADAPTER_CONFIG).read_text(encoding="utf-8"))
    config["base_model_name_or_path"] = base_reference
    config["inference_mode"] = True
    (out / layout.ADAPTER_CONFIG).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def merged(base: PreTrainedModel, checkpoint: Path) -> PreTrainedModel:
    """The base with the checkpoint's adapter merged into its weights: a plain transformers model again."""
    return PeftModel.from_pretrained(base, str(checkpoint)).merge_and_unload()


def fine_tuned(base: PreTrainedModel, checkpoint: Path) -> PreTrainedModel:
    """A full fine-tune's checkpoint: its weights put onto the base, strictly (other shapes or names are refused)."""
    return policy_at(base, checkpoint, "full")


def parameters(model: PreTrainedModel) -> int:
    return sum(p.numel() for p in model.parameters())
