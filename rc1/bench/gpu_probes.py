"""`make gpu-check`'s production-shape probes: a random-weight Qwen3 of Qwen3-4B's widths (36 layers, a vocabulary of
151,936), loaded as rc1 loads the production base (rc1/train/model_loading.py: 4-bit NF4 on CUDA), with the adapter
the trl engine trains (LoRA r 8 on every projection, in fp32); on it, what one training micro-batch and one evaluation
batch of the production profile hold, against the memory plan (rc1/checks/memory_plan.py), and what decoding costs,
projected to a line of training.

The micro-batch is what TRL 1.16's GRPOTrainer runs per micro-batch: gradient checkpointing, its fused LM head
(`trl.trainer.utils.add_fused_lm_head`) scoring the completion's tokens, the backward pass and AdamW's step, under bf16
autocast. The evaluation batch is the KV cache `generate` holds at the end of rc1's evaluation batch (per_device ×
accumulation replies of prompt + completion tokens), filled in chunks of 512 tokens, then decoding steps timed at the
start and at the end of a reply. Random weights never end a reply, so every reply runs to the limit: the worst case.
A dry run (no CUDA) builds a small model of the same layout (2 layers, 64 wide, the same vocabulary) and runs every
probe at a few tokens: the code, not the numbers.

The random model goes through files because rc1's 4-bit load does: transformers quantizes a weight as it reads it from
a checkpoint, and neither way around files works (measured with transformers 5.17 and 5.24, bitsandbytes 0.50:
`from_pretrained(None, config=..., state_dict=...)` fails on the missing path, and weights left out of the checkpoint
are initialised but never quantized, so the first forward fails in bitsandbytes). Its 8 GB (bf16) are written to
`/dev/shm` where that has room, memory rather than disk, else beside the check's work; the result says where and how
long writing and loading took."""

from __future__ import annotations

import math
import os
import shutil
import time
from pathlib import Path

import msgspec
import torch

from rc1.checks.memory_plan import QWEN3_4B, ModelShape, plan
from rc1.config.schema import Config, ModelConfig

SMALL = ModelShape(layers=2, hidden=64, intermediate=128, heads=4, kv_heads=2, head_dim=16, vocab=151936, tied=True)
CHUNK = 512  # prefill tokens at a time (what a chunked prefill holds besides the cache)
DECODE_STEPS = 8


def build_random_model(shape: ModelShape, directory: Path, device: str) -> Path:
    """A random-weight Qwen3 of `shape` with a small tokenizer, saved where `from_pretrained` reads it."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    config = Qwen3Config(
        vocab_size=shape.vocab,
        hidden_size=shape.hidden,
        intermediate_size=shape.intermediate,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        num_key_value_heads=shape.kv_heads,
        head_dim=shape.head_dim,
        tie_word_embeddings=shape.tied,
        max_position_embeddings=40960,
        eos_token_id=0,
        pad_token_id=0,
    )
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    with torch.device(device):
        torch.manual_seed(0)
        model = Qwen3ForCausalLM(config).to(dtype)
    model.save_pretrained(directory)
    del model
    words = {"<|endoftext|>": 0, "<unk>": 1, **{f"w{i}": i + 2 for i in range(254)}}
    backend = Tokenizer(models.WordLevel(words, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    tokenizer.save_pretrained(directory)
    return directory


def load_as_rc1(directory: Path, model: ModelConfig, method: str, device: str):
    """The model as rc1 loads a base (`load_policy`), wrapped in the adapter `model.lora` the trl engine trains, in
    fp32."""
    import peft

    from rc1.train.engine_trl import adapter_in_fp32
    from rc1.train.model_loading import load_policy, lora_config

    model_config = msgspec.structs.replace(model, name=str(directory))
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    base, _ = load_policy(model_config, method, device, dtype, Path(directory))
    model = peft.get_peft_model(base, lora_config(model_config))
    adapter_in_fp32(model)
    return model


class Peak:
    """The allocator's peak on CUDA from now (the resident-set peak of the process on a CPU), in GB."""

    def __init__(self, device: str):
        from rc1.train.runtime import PeakMemory

        if device == "cuda":
            torch.cuda.synchronize()
        self._device, self._peak, self.started = device, PeakMemory(device), time.perf_counter()

    def read(self) -> tuple[float, float]:
        if self._device == "cuda":
            torch.cuda.synchronize()
        return self._peak.read() * 2**20 / 1e9, time.perf_counter() - self.started


def micro_batch(model, config: Config, device: str, rows: int, prompt: int, completion: int) -> dict:
    """One training micro-batch: forward with the fused head on the completion's tokens, backward, AdamW's step."""
    from trl.trainer.utils import add_fused_lm_head

    model.train()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.enable_input_require_grads()
    add_fused_lm_head(model.get_base_model(), temperature=config.train.temperature)
    ids = torch.randint(2, 256, (rows, prompt + completion), device=device)
    mask = padded_mask(ids, prompt)
    labels = ids.masked_fill(mask == 0, -100)
    labels[:, :prompt] = -100
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.train.learning_rate)
    peak = Peak(device)
    with torch.autocast(device, dtype=torch.bfloat16, enabled=device == "cuda"):
        out = model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
    out.loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    measured, seconds = peak.read()
    del optimizer, out
    model.gradient_checkpointing_disable()
    return {"measured_gb": measured, "seconds": seconds, "finite": bool(all(p.isfinite().all() for p in trainable))}


def evaluation_batch(model, device: str, rows: int, prompt: int, completion: int) -> dict:
    """The KV cache of `rows` replies at prompt + completion tokens, filled in chunks, and a decoding step's time after
    the prompt and at the end."""
    from transformers import DynamicCache

    model.eval()
    ids = torch.randint(2, 256, (rows, prompt + completion), device=device)
    mask = padded_mask(ids, prompt)
    cache, filled, decode = DynamicCache(), 0, []
    peak = Peak(device)
    with torch.no_grad():
        for stop in (prompt, max(prompt, prompt + completion - 2 * DECODE_STEPS)):
            while filled < stop:
                end = min(stop, filled + CHUNK)
                model(
                    input_ids=ids[:, filled:end],
                    attention_mask=mask[:, :end],
                    past_key_values=cache,
                    use_cache=True,
                    logits_to_keep=1,
                )
                filled = end
            started = _sync(device)
            for _ in range(DECODE_STEPS):
                model(
                    input_ids=ids[:, filled : filled + 1],
                    attention_mask=mask[:, : filled + 1],
                    past_key_values=cache,
                    use_cache=True,
                    logits_to_keep=1,
                )
                filled += 1
            decode.append((_sync(device) - started) / DECODE_STEPS)
    measured, seconds = peak.read()
    del cache
    first, last = decode
    return {"measured_gb": measured, "seconds": seconds, "decode_s_after_prompt": first, "decode_s_at_end": last}


def padded_mask(ids: torch.Tensor, prompt: int) -> torch.Tensor:
    """An attention mask whose first row is left-padded by a quarter of the prompt, as a batch of prompts of unequal
    lengths is: with a padding mask transformers builds the 4-D mask and expands K/V for sdpa (5.17's
    `sdpa_attention.py`), and torch picks its memory-efficient kernel, where an all-ones mask would be dropped and
    flash attention run instead, a path production never takes."""
    mask = torch.ones_like(ids)
    mask[0, : max(1, prompt // 4)] = 0
    return mask


def _sync(device: str) -> float:
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter()


RAM_FOLDER = Path("/dev/shm")


def random_model_folder(shape: ModelShape, work: Path, ram: Path = RAM_FOLDER) -> Path:
    """Where the random model is written: in `ram` (a memory file system) when it has room for twice its bf16 weights,
    else in `work`."""
    needed = 2 * 2 * (shape.projection_weights + shape.other_weights)
    try:
        roomy = ram.is_dir() and shutil.disk_usage(ram).free >= needed
    except OSError:
        roomy = False
    return (ram if roomy else work) / f"rc1-random-qwen3-{os.getpid()}"


def probe(config: Config, root: Path, device: str, dry_run: bool) -> dict:
    """Every probe on the production profile's shape (a small one and a few tokens in a dry run), with the plan."""
    from rc1.train.device import deterministic_kernels

    shape = SMALL if dry_run else QWEN3_4B
    train = config.train
    deterministic_kernels(device, train.deterministic)  # the kernels production trains with (gpu_gated does the same)
    prompt, completion = (16, 32) if dry_run else (train.max_prompt_tokens, train.max_completion_tokens)
    folder = random_model_folder(shape, root)
    started = time.perf_counter()
    try:
        directory = build_random_model(shape, folder, device)
        written = time.perf_counter()
        model = load_as_rc1(directory, config.model, config.finetune.method if device == "cuda" else "lora", device)
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # a memory file system's room is the machine's memory
    random_model = {
        "folder": str(folder.parent),
        "write_s": written - started,
        "load_s": time.perf_counter() - written,
    }
    sized = msgspec.structs.replace(
        config, train=msgspec.structs.replace(train, max_prompt_tokens=prompt, max_completion_tokens=completion)
    )
    planned = plan(shape, sized)
    rows = train.per_device_batch_size * train.gradient_accumulation_steps
    measured = {
        "micro_batch": micro_batch(model, sized, device, train.per_device_batch_size, prompt, completion),
        "evaluation": evaluation_batch(model, device, rows, prompt, completion),
    }
    for name, part in measured.items():
        part["planned_gb"] = planned.phase(name) / 1e9
        part["ratio"] = part["measured_gb"] / part["planned_gb"]
        part["within_15pct"] = abs(part["ratio"] - 1) <= 0.15
    return {
        "shape": msgspec.to_builtins(shape),
        "tokens": {"prompt": prompt, "completion": completion, "rows": rows},
        "random_model": random_model,
        "plan_gb": {"peak": planned.peak / 1e9, **{k: v / 1e9 for k, v in msgspec.to_builtins(planned).items()}},
        **measured,
        "line": projected_line(sized, measured),
    }


def projected_line(config: Config, measured: dict) -> dict:
    """One evaluation's time against the training between two, from the measured decoding and micro-batch: a batch of
    replies decodes completion tokens at the mean of the step times at its start and end (the KV cache grows
    linearly); a training step generates one batch and trains `accumulation` micro-batches (a fourth more for the
    reference's forward at β > 0)."""
    train = config.train
    decode = measured["evaluation"]
    batch_s = train.max_completion_tokens * (decode["decode_s_after_prompt"] + decode["decode_s_at_end"]) / 2
    replies = train.per_device_batch_size * train.gradient_accumulation_steps
    samples = config.release.samples

    def batches(items: int) -> int:  # greedy replies `replies` to a batch, sampled ones `samples` per item
        return math.ceil(items / replies) + math.ceil(items / max(1, replies // samples))

    reference = 1.25 if train.beta > 0 else 1.0
    step_s = batch_s + train.gradient_accumulation_steps * measured["micro_batch"]["seconds"] * reference
    every = train.eval_steps or train.save_steps
    evaluations = train.max_steps // every + 1
    evaluation_s = batches(config.data.shadow_size) * batch_s
    gate_s = batches(config.release.gate_size) * batch_s  # the line's selected checkpoint on the gate set
    return {
        "batch_s": batch_s,
        "batches_per_evaluation": batches(config.data.shadow_size),
        "evaluation_s": evaluation_s,
        "train_step_s": step_s,
        "evaluations_per_line": evaluations,
        "eval_share_of_training_pct": 100 * evaluation_s / (every * step_s),
        "line_days": (train.max_steps * step_s + evaluations * evaluation_s + gate_s) / 86400,
    }
