"""The accelerator memory a line of training needs, by arithmetic on the model's widths and the config: what round 1's
`accelerator_memory` check holds the GPU to, what docs/gpu.md's memory table prints, and what `make gpu-check`
measures against (its goal: within 15 %). An estimate, not a measurement: every term names what it assumes.

Per process, in bytes, with d the bytes of the compute dtype (2: bf16):
- weights: a QLoRA base keeps its projections in NF4 with double quantization (0.5 B a weight, 1 B of 8-bit block
  scale per 64 weights, 4 B of fp32 second-level scale per 256 blocks) and its embeddings, LM head and norms in d;
  LoRA and a full fine-tune keep every weight in d. A full fine-tune at β > 0 holds TRL's frozen reference too;
- trained state: an adapter in fp32 (rc1 keeps it so: rc1/train/engine_trl.py `adapter_in_fp32`) with its gradient
  and AdamW's two moments, 16 B a weight; a full fine-tune's weights' gradient and moments in d (3d);
- rollouts: transformers' generate holds the KV cache of the step's generation batch (per_device_batch_size ×
  this process's gradient accumulation replies, TRL's generation batch) up to prompt + completion tokens, every
  row as long as the longest (2 × layers × kv heads × head_dim × d a token);
- a training micro-batch: with gradient checkpointing each layer's input (hidden × d a token, every layer) and one
  layer recomputed in the backward pass with its gradient (twice its activations: the attention projections, the
  MLP's gate, up and product, the norms), plus TRL's fused LM head tile (4,096 tokens × 32,768 vocabulary columns
  in fp32); without checkpointing every layer's activations;
- an evaluation batch: rc1's evaluation batch (per_device_batch_size × gradient_accumulation_steps replies, on
  every process) in the KV cache, and the drift probe's one reply of logits in d and a 256 MiB fp32 slice
  (rc1/train/policy_math.py `scored_logprobs`);
- fixed: the CUDA context and cuBLAS's workspace, 1 GiB assumed.
The peak is the fixed part plus the largest of the three phases, which never overlap."""

from __future__ import annotations

from typing import Literal

import msgspec

Phase = Literal["rollouts", "micro_batch", "evaluation"]
GIB = 2**30
CONTEXT = 1 * GIB  # CUDA context + cuBLAS workspace: an assumption, what gpu-check's measured peaks leave out
FUSED_HEAD_TILE = 4096 * 32768 * 4  # trl/kernels/chunked_logprob.py: TOKEN_CHUNK_SIZE × chunk_size, fp32
DRIFT_SLICE = 2**28  # rc1/train/policy_math.py SLICE_BUDGET


class ModelShape(msgspec.Struct, frozen=True, kw_only=True):
    """A decoder's widths, as its config.json gives them."""

    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    tied: bool

    @classmethod
    def of(cls, config: dict) -> ModelShape:
        """From a transformers config (config.json's keys)."""
        heads = config["num_attention_heads"]
        return cls(
            layers=config["num_hidden_layers"],
            hidden=config["hidden_size"],
            intermediate=config["intermediate_size"],
            heads=heads,
            kv_heads=config.get("num_key_value_heads", heads),
            head_dim=config.get("head_dim") or config["hidden_size"] // heads,
            vocab=config["vocab_size"],
            tied=bool(config.get("tie_word_embeddings", False)),
        )

    @property
    def projections(self) -> dict[str, tuple[int, int]]:
        """Each layer's projections, (in, out)."""
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        h, i = self.hidden, self.intermediate
        return {
            "q_proj": (h, q),
            "k_proj": (h, kv),
            "v_proj": (h, kv),
            "o_proj": (q, h),
            "gate_proj": (h, i),
            "up_proj": (h, i),
            "down_proj": (i, h),
        }

    @property
    def projection_weights(self) -> int:
        return self.layers * sum(a * b for a, b in self.projections.values())

    @property
    def other_weights(self) -> int:
        """Embeddings, the LM head when it is not tied to them, the norms (two per layer, Qwen3's q/k norms, final)."""
        norms = self.layers * (2 * self.hidden + 2 * self.head_dim) + self.hidden
        return self.vocab * self.hidden * (1 if self.tied else 2) + norms

    def kv_bytes_per_token(self, d: int) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * d

    def layer_activations_per_token(self) -> int:
        """Values one layer keeps for its backward pass, per token (norms, q/k/v/o, attention output, MLP)."""
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        return 4 * self.hidden + 2 * q + 2 * kv + 3 * self.intermediate


# Qwen3-4B-Thinking-2507's config.json (the production model): 36 layers, 2,560 wide, MLP 9,728, 32 query and 8
# key/value heads of 128, a vocabulary of 151,936, embeddings tied to the LM head.
QWEN3_4B = ModelShape(
    layers=36, hidden=2560, intermediate=9728, heads=32, kv_heads=8, head_dim=128, vocab=151936, tied=True
)


class MemoryPlan(msgspec.Struct, frozen=True, kw_only=True):
    """Bytes per process: what stays (`weights`, `trained`, `fixed`) and each phase's own part."""

    weights: int
    trained: int
    fixed: int
    rollouts: int
    micro_batch: int
    evaluation: int

    @property
    def peak(self) -> int:
        return self.weights + self.trained + self.fixed + max(self.rollouts, self.micro_batch, self.evaluation)

    def phase(self, name: Phase) -> int:
        """What the GPU holds in one phase, the fixed part left out (what torch's allocator counts:
        `torch.cuda.max_memory_allocated`)."""
        own = {"rollouts": self.rollouts, "micro_batch": self.micro_batch, "evaluation": self.evaluation}[name]
        return self.weights + self.trained + own


def micro_batch_terms(shape: ModelShape, config, d: int = 2) -> dict[str, int]:
    """A training micro-batch's own bytes, by term."""
    train = config.train
    rows, tokens = train.per_device_batch_size, train.max_prompt_tokens + train.max_completion_tokens
    lora = config.model.lora
    # peft keeps each adapted projection's dropped-out input for lora_A's backward (none without dropout)
    adapted = sum(a for n, (a, _) in shape.projections.items() if n in lora.target_modules)
    adapted = adapted if config.finetune.method != "full" and lora.dropout > 0 else 0
    per_layer = shape.layer_activations_per_token() + adapted
    kept = shape.layers if not train.gradient_checkpointing else 1  # checkpointed: one layer at a time
    completion = rows * train.max_completion_tokens
    return {
        "layer inputs": rows * tokens * shape.layers * shape.hidden * d if train.gradient_checkpointing else 0,
        "layers' activations": 2 * rows * tokens * per_layer * d * kept,  # and as much again for their gradients
        # TRL's fused LM head: one tile of logits, the completion's hidden states gathered, their gradient in fp32
        "fused LM head": FUSED_HEAD_TILE // 4 * d + completion * shape.hidden * (d + 4),
    }


def evaluation_terms(shape: ModelShape, config, d: int = 2) -> dict[str, int]:
    """An evaluation batch's own bytes, by term (they come one after the other: the larger counts)."""
    train = config.train
    rows, tokens = train.per_device_batch_size * train.gradient_accumulation_steps, train.max_prompt_tokens
    tokens += train.max_completion_tokens
    return {
        "KV cache": rows * tokens * shape.kv_bytes_per_token(d),
        # one reply's logits, and a slice's fp32 copy, its scaled copy and logsumexp's exponentials
        "drift probe": (train.max_completion_tokens + 1) * shape.vocab * d + 3 * DRIFT_SLICE,
    }


def plan(shape: ModelShape, config, processes: int = 1, d: int = 2) -> MemoryPlan:
    """The plan of `config` (rc1's Config) for a model of `shape` on `processes` processes in a dtype of d bytes. The
    trl engine's: the torch engine's strategies hold a micro-batch's whole logits."""
    train, method = config.train, config.finetune.method
    if method == "qlora":
        weights = shape.projection_weights * (0.5 + 1 / 64 + 4 / (64 * 256)) + shape.other_weights * d
    else:
        total = shape.projection_weights + shape.other_weights
        reference = total * d if method == "full" and train.beta > 0 else 0
        weights = total * d + reference
    if method == "full":
        trained = (shape.projection_weights + shape.other_weights) * 3 * d
    else:
        lora = config.model.lora
        adapter = shape.layers * sum(
            lora.r * (a + b) for n, (a, b) in shape.projections.items() if n in lora.target_modules
        )
        trained = adapter * 16
    tokens = train.max_prompt_tokens + train.max_completion_tokens
    accumulation = train.gradient_accumulation_steps
    if train.step_batch == "fixed":
        accumulation //= processes
    return MemoryPlan(
        weights=round(weights),
        trained=round(trained),
        fixed=CONTEXT,
        rollouts=train.per_device_batch_size * accumulation * tokens * shape.kv_bytes_per_token(d),
        micro_batch=sum(micro_batch_terms(shape, config, d).values()),
        evaluation=max(evaluation_terms(shape, config, d).values()),
    )


def markdown(shape: ModelShape, config) -> str:
    """docs/gpu.md's memory table: each term of the plan for `config` on one process, and the peaks (GB, 1e9 B)."""
    train = config.train
    tokens = train.max_prompt_tokens + train.max_completion_tokens
    p, gb = plan(shape, config), 1e9
    kv = shape.kv_bytes_per_token(2)
    micro, evaluation = micro_batch_terms(shape, config), evaluation_terms(shape, config)
    rows, eval_rows = train.per_device_batch_size, train.per_device_batch_size * train.gradient_accumulation_steps
    per_layer = micro["layers' activations"] // (2 * rows * tokens * 2)
    table = [
        (
            "weights",
            f"{config.finetune.method}: the projections' {shape.projection_weights:,} weights and the other "
            f"{shape.other_weights:,} (embeddings tied to the head, norms)",
            p.weights,
        ),
        ("adapter and AdamW", "fp32 weight, gradient and two moments: 16 B a weight", p.trained),
        ("CUDA context, cuBLAS workspace", "assumed", p.fixed),
        (
            "rollouts: KV cache",
            f"{eval_rows} replies × {tokens:,} tokens × {kv:,} B (2 × {shape.layers} layers × "
            f"{shape.kv_heads} heads × {shape.head_dim} × 2 B)",
            p.rollouts,
        ),
        (
            "micro-batch: layer inputs",
            f"{rows} × {tokens:,} tokens × {shape.layers} layers × {shape.hidden:,} × 2 B (gradient checkpointing)",
            micro["layer inputs"],
        ),
        (
            "micro-batch: one layer recomputed",
            f"{rows} × {tokens:,} tokens × {per_layer:,} values (the layer's, and "
            "the adapted projections' dropped-out inputs) × 2 B, and as much again for their gradients",
            micro["layers' activations"],
        ),
        (
            "micro-batch: TRL's fused LM head",
            f"a tile of 4,096 tokens × 32,768 columns × 2 B, and the {rows} × "
            f"{train.max_completion_tokens:,} completion tokens' hidden states (2 B) and their gradient (4 B)",
            micro["fused LM head"],
        ),
        ("evaluation: KV cache", f"{eval_rows} replies × {tokens:,} tokens × {kv:,} B", evaluation["KV cache"]),
        (
            "evaluation: drift probe",
            f"one reply's logits, {train.max_completion_tokens + 1:,} × {shape.vocab:,} × 2 B, "
            "and three 256 MiB slices",
            evaluation["drift probe"],
        ),
    ]
    lines = ["| part | arithmetic | GB |", "|---|---|---|"]
    lines += [f"| {name} | {how} | {value / gb:.2f} |" for name, how, value in table]
    peaks = {name: p.phase(name) / gb for name in ("rollouts", "micro_batch", "evaluation")}
    lines += [
        f"| **peak while generating rollouts** | weights + adapter + KV cache | **{peaks['rollouts']:.1f}** |",
        f"| **peak of a micro-batch** | weights + adapter + its three terms | **{peaks['micro_batch']:.1f}** |",
        f"| **peak of an evaluation batch** | weights + adapter + the larger term | **{peaks['evaluation']:.1f}** |",
        f"| **planned peak, with the context** | accelerator_memory needs this free | **{p.peak / gb:.1f}** |",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # docs/gpu.md's table: python -m rc1.checks.memory_plan
    import argparse
    from pathlib import Path

    argparse.ArgumentParser(
        prog="python -m rc1.checks.memory_plan",
        description="print docs/gpu.md's memory table: configs/rc1.yaml's plan for Qwen3-4B on each GPU",
    ).parse_args()

    from rc1.config.loading import load_config

    production = load_config(Path(__file__).resolve().parents[2] / "configs" / "rc1.yaml").config
    print(markdown(QWEN3_4B, production), end="")
