"""Why a QLoRA adapter trains in fp32 (rc1/train/engine_trl.py `adapter_in_fp32`): AdamW on bf16 weights at the
production profile's learning rate rounds most updates away. One LoRA A matrix of Qwen3-4B's q_proj (r 8 × 2,560),
initialised as peft initialises it (Kaiming-uniform, a=√5), 200 AdamW steps at 1e-5 with random gradients."""

from __future__ import annotations

import math

import torch

LORA_A = (8, 2560)  # r × hidden_size of Qwen3-4B
STEPS = 200


def never_moved(dtype: torch.dtype) -> float:
    """The share of the matrix's entries that 200 steps left exactly where they started."""
    generator = torch.Generator().manual_seed(0)
    start = torch.empty(LORA_A)
    torch.nn.init.kaiming_uniform_(start, a=math.sqrt(5), generator=generator)
    weight = torch.nn.Parameter(start.to(dtype, copy=True))
    optimizer = torch.optim.AdamW([weight], lr=1e-5, weight_decay=0.0)
    for _ in range(STEPS):
        weight.grad = torch.randn(LORA_A, generator=generator).to(dtype)
        optimizer.step()
    return float((weight.detach().float() == start.to(dtype).float()).float().mean())


def test_adamw_at_1e_5_leaves_most_bf16_adapter_weights_where_they_started_and_moves_every_fp32_one():
    bf16, fp32 = never_moved(torch.bfloat16), never_moved(torch.float32)
    assert bf16 > 0.5, bf16  # measured: 0.80 of the entries never moved in bf16
    assert fp32 == 0.0, fp32
