"""`make bench`, the frozen_base guard's cost (`python -m rc1.bench --frozen-base-only`): hashing a LoRA line's
sampled frozen tensors (rc1/train/frozen_base.py, at every checkpoint and every segment's start) against one training
step of the same model, both measured here in the same run (best of 5), and per step at the embedded default's
checkpoint interval. Two models: the built-in one's widths (rc1/train/tiny_model.py ARCH, what every CPU run trains)
and a 2-layer model of Qwen3-4B's widths (its sampled tensors are the production's sizes; its step is not)."""

from __future__ import annotations

from pathlib import Path

import torch
import yaml

from rc1.bench.main import _best_of
from rc1.train.frozen_base import frozen_sha256

REPO = Path(__file__).resolve().parents[2]
ROWS, TOKENS = 16, 128  # one step's replies and their length, about the embedded default's


def _lora_model(widths: dict):
    import peft
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(0)
    model = Qwen3ForCausalLM(Qwen3Config(vocab_size=4096, **widths))
    targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    return peft.get_peft_model(model, peft.LoraConfig(r=8, lora_alpha=16, target_modules=targets))


def _step(model, optimizer) -> None:
    ids = torch.randint(0, 4096, (ROWS, TOKENS), generator=torch.Generator().manual_seed(1))
    model(input_ids=ids, labels=ids).loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def bench_frozen_base() -> None:
    from rc1.train.tiny_model import ARCH

    save_steps = yaml.safe_load((REPO / "configs" / "local.yaml").read_text())["train"]["save_steps"]
    shapes = {
        "built-in widths": dict(ARCH),
        "Qwen3-4B widths, 2 layers": dict(
            hidden_size=2560,
            intermediate_size=9728,
            num_hidden_layers=2,
            num_attention_heads=32,
            num_key_value_heads=8,
            head_dim=128,
            tie_word_embeddings=True,
        ),
    }
    print(f"frozen_base guard: sampled hashes vs one LoRA step ({ROWS} x {TOKENS} tokens), best of 5")
    print(
        f"{'model':<28} {'hash s':>9} {'step s':>9} {'hash/step':>10} {'per step':>10} (checkpoints every {save_steps})"
    )
    for name, widths in shapes.items():
        hashing, step = _measured(widths)
        print(f"{name:<28} {hashing:>9.4f} {step:>9.4f} {hashing / step:>10.4f} {hashing / step / save_steps:>10.5f}")


def _measured(widths: dict) -> tuple[float, float]:
    """(seconds to hash the sampled frozen tensors, seconds of one training step), each the best of 5."""
    model = _lora_model(widths)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    return _best_of(lambda: frozen_sha256(model), 5), _best_of(lambda: _step(model, optimizer), 5)
