"""Load the policy model and tokenizer: a built-in model's folder, a local directory, or a hub id.

The hub path is the production one (`Qwen/Qwen3-4B-Thinking-2507`, sdpa attention, optional QLoRA on
CUDA); it is not exercised offline but stays real. Tokenizers are left-padded, as GRPO generation needs.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import peft
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from rc1.config.schema import ModelConfig
from rc1.core import distributed
from rc1.core.catalog import BUILTIN_MODELS, is_builtin
from rc1.core.errors import BadInput


def load_policy(
    model_cfg: ModelConfig, finetune_method: str, device: str, dtype: torch.dtype, builtin_dir: Path
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Return `(model, tokenizer)` on `device` in `dtype`; the model has no adapter yet (see `lora_config`)."""
    if finetune_method == "qlora" and device != "cuda":
        raise BadInput(f"finetune.method: qlora needs a CUDA GPU (this machine trains on {device}); use lora")
    if finetune_method == "qlora" and importlib.util.find_spec("bitsandbytes") is None:
        raise BadInput(
            "finetune.method: qlora loads the base model in 4 bits with bitsandbytes, which is not "
            "installed: pip install -e '.[qlora]'"
        )
    if model_cfg.name in BUILTIN_MODELS:
        if finetune_method == "qlora":
            raise BadInput("finetune.method: qlora needs a CUDA model from the hub; use lora with builtin models")
        source = str(builtin_dir)
        if not (Path(builtin_dir) / "config.json").is_file():
            raise BadInput(f"{builtin_dir}: the built-in model {model_cfg.name} has not been built there")
    elif is_builtin(model_cfg.name):
        raise BadInput(f"model.name: unknown built-in {model_cfg.name!r}; the built-in models are {BUILTIN_MODELS}")
    else:
        source = model_cfg.name

    kwargs: dict = {"dtype": dtype, "attn_implementation": model_cfg.attn_implementation}
    if finetune_method == "qlora":
        from transformers import BitsAndBytesConfig

        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=dtype,
        )
        kwargs["device_map"] = {"": distributed.placement(device)}  # this rank's GPU under accelerate
    try:
        model = AutoModelForCausalLM.from_pretrained(source, **kwargs)
        tokenizer = AutoTokenizer.from_pretrained(source, padding_side="left", truncation_side="left")
    except OSError as e:
        raise BadInput(f"model.name: cannot load {model_cfg.name!r}: {e}") from e
    if finetune_method != "qlora":
        model = model.to(distributed.placement(device))
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def lora_config(model_cfg: ModelConfig) -> peft.LoraConfig:
    lora = model_cfg.lora
    return peft.LoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=list(lora.target_modules),
        bias="none",
        task_type="CAUSAL_LM",
    )
