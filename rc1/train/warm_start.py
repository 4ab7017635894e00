"""A short supervised warm start of the built-in tiny model before RL, so its replies are well formed.

A randomly initialised model never ends a reply or writes `Answer: …`, so every completion scores the
same and GRPO has no advantage to follow. The warm start fine-tunes it with TRL's `SFTTrainer` on
(prompt, gold reply) pairs of the training pool — never the shadow set —, the prompts exactly as
training shows them (chat template, fitted to `max_prompt_tokens`) and the replies as the rule scorer
wants them (`Answer: <gold>`, or one clarification question), loss on the reply only. It is
deterministic (seeded, CPU, no shuffling beyond the seed) and cached beside the model: the output
directory carries the fingerprint of its inputs and is written whole (temp dir, fsync, rename).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

from rc1.core.fsutil import fsync_dir, fsync_tree
from rc1.registry.training_arguments import checkpointing

MARKER = "rc1_warm_start.json"


def warm_start(
    base_dir: Path,
    out_dir: Path,
    pairs: list[tuple[str, str]],
    *,
    steps: int,
    seed: int,
    learning_rate: float = 3e-3,
    batch_size: int = 16,
    on_cpu: bool = True,
) -> tuple[Path, bool]:
    """Fine-tune the model in `base_dir` on (prompt, reply) `pairs` for `steps` steps into `out_dir`;
    returns it and whether it was trained now (False: the cached one matched). `on_cpu` false: on the accelerator
    (`make gpu-check` warm-starts a model of Qwen3-4B's widths there), in fp32 still."""
    out_dir = Path(out_dir)
    fingerprint = _fingerprint(base_dir, pairs, steps, seed, learning_rate, batch_size)
    if _is_complete(out_dir, fingerprint):
        return out_dir, False
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.trainer_callback import PrinterCallback
    from trl import SFTConfig, SFTTrainer

    tmp = out_dir.with_name(f".{out_dir.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    model = AutoModelForCausalLM.from_pretrained(base_dir)
    tokenizer = AutoTokenizer.from_pretrained(base_dir)
    args = SFTConfig(
        output_dir=str(tmp / "trainer"),
        max_steps=steps,
        per_device_train_batch_size=batch_size,
        learning_rate=learning_rate,
        lr_scheduler_type="cosine",
        warmup_steps=0,
        seed=seed,
        data_seed=seed,
        logging_steps=max(1, steps // 4),
        save_strategy="no",
        report_to="none",
        use_cpu=on_cpu,
        dataloader_num_workers=0,
        disable_tqdm=not sys.stderr.isatty(),
        completion_only_loss=True,
        max_length=None,
        bf16=False,
        fp16=False,  # TRL defaults to bf16 autocast and checkpointing: slow on a CPU
        **checkpointing(False),
    )
    dataset = Dataset.from_dict({"prompt": [p for p, _ in pairs], "completion": [c for _, c in pairs]})
    trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer)
    trainer.remove_callback(PrinterCallback)  # the stage prints the loss once, not a dict per log step
    trainer.train()
    trainer.model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    shutil.rmtree(tmp / "trainer", ignore_errors=True)
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    (tmp / MARKER).write_text(json.dumps({**fingerprint, "losses": losses}, indent=2, sort_keys=True) + "\n")
    fsync_tree(tmp)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    os.rename(tmp, out_dir)
    fsync_dir(out_dir.parent)
    return out_dir, True


def warm_start_losses(out_dir: Path) -> list[float]:
    return json.loads((Path(out_dir) / MARKER).read_text())["losses"]


def _fingerprint(base_dir: Path, pairs: list[tuple[str, str]], steps: int, seed: int, lr: float, batch: int) -> dict:
    digest = hashlib.sha256()
    for prompt, reply in pairs:
        digest.update(hashlib.sha256(f"{prompt}\x00{reply}".encode()).digest())
    base = (Path(base_dir) / "model.safetensors").read_bytes()
    return {
        "base_sha256": hashlib.sha256(base).hexdigest(),
        "pairs_sha256": digest.hexdigest(),
        "steps": steps,
        "seed": seed,
        "learning_rate": lr,
        "batch_size": batch,
    }


def _is_complete(out_dir: Path, fingerprint: dict) -> bool:
    try:
        recorded = json.loads((out_dir / MARKER).read_text())
    except (OSError, json.JSONDecodeError):
        return False
    return {k: recorded.get(k) for k in fingerprint} == fingerprint
