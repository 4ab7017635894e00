"""`hf_judge`: the judge prompt run by a local transformers model (an HF id or a local directory).

The answer is decoded under the verdict's grammar: of the verdicts the format allows
(`VERDICT_CHOICES`), the model's answer is the one it finds most likely after the prompt (summed token
log-probabilities), as a JSON-schema-guided decoder would give for this finite format. So a small
local model always answers in the format, and what it answers is its own.
"""

from __future__ import annotations

import threading

import torch

from rc1.core.errors import BadInput
from rc1.scoring.judge import VERDICT_CHOICES, Answer


def backend_for(scorer, device: str) -> HfJudgeBackend:
    """`scorer.provider: hf_judge` (rc1/registry/providers.py): `scorer.model` on this machine's device."""
    return HfJudgeBackend(scorer.model, device)


class HfJudgeBackend:
    provider = "hf_judge"
    paid = False

    def __init__(self, model: str, device: str):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.model = model
        self.where = f"{model} on {device}"
        try:
            self._lm = AutoModelForCausalLM.from_pretrained(model).to(device).eval()
            self._tokenizer = AutoTokenizer.from_pretrained(model)
        except OSError as e:
            raise BadInput(f"scorer.model: cannot load the hf_judge model {model!r}: {e}") from None
        self._device = device
        self._lock = threading.Lock()  # one forward pass at a time: the model is shared by the judge's threads
        self._choices = [self._tokenizer(text=c, add_special_tokens=False)["input_ids"] for c in VERDICT_CHOICES]

    def prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        if self._tokenizer.chat_template:
            text = self._tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        else:
            text = "\n\n".join(m["content"] for m in messages) + "\n\n"
        ids = self._tokenizer(text=text, add_special_tokens=False)["input_ids"]
        room = self._lm.config.max_position_embeddings - max(len(c) for c in self._choices)
        return ids[-room:]  # a prompt too long for the model keeps its end: the case and the reply

    def ask(self, messages: list[dict[str, str]]) -> Answer:
        prompt = self.prompt_ids(messages)
        totals = []
        # One unpadded row per verdict: a padded batch sends sdpa to its slow masked path (8x on CPU).
        with self._lock, torch.no_grad():
            for choice in self._choices:
                row = torch.tensor([prompt + choice], device=self._device)
                logprobs = torch.log_softmax(self._lm(input_ids=row).logits[0, len(prompt) - 1 : -1].float(), dim=-1)
                totals.append(float(logprobs[torch.arange(len(choice)), torch.tensor(choice)].sum()))
        best = max(range(len(totals)), key=totals.__getitem__)
        return Answer(text=VERDICT_CHOICES[best], prompt_tokens=len(prompt), completion_tokens=len(self._choices[best]))
