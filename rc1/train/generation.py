"""Replies of a policy to task items, decoded as the trainer decodes them: prompts through the chat
template fitted to max_prompt_tokens, left-padded batches, each reply cut after its first end token."""

from __future__ import annotations

import torch
from transformers import GenerationConfig, PreTrainedTokenizerBase

from rc1.data.task import TaskItem
from rc1.train.prompts import fit_prompt


def generate_replies(model, tokenizer: PreTrainedTokenizerBase, items: list[TaskItem], *, max_prompt_tokens: int,
                     generation: GenerationConfig, eos_ids: list[int], batch_size: int, device) -> tuple[list[str], list[int]]:
    """`generation.num_return_sequences` replies per item, item by item; returns (texts, token counts)."""
    texts: list[str] = []
    counts: list[int] = []
    with torch.no_grad():
        for start in range(0, len(items), batch_size):
            prompts = [fit_prompt(tokenizer, item, max_prompt_tokens)[0] for item in items[start : start + batch_size]]
            encoded = tokenizer(text=prompts, return_tensors="pt", padding=True, padding_side="left")
            encoded = {k: v.to(device) for k, v in encoded.items()}
            output = model.generate(**encoded, generation_config=generation)
            for row in output[:, encoded["input_ids"].size(1) :].tolist():
                ends = [i for i, token in enumerate(row) if token in eos_ids]
                kept = row[: ends[0] + 1] if ends else row
                counts.append(len(kept))
                texts.append(tokenizer.decode(kept, skip_special_tokens=True))
    return texts, counts
