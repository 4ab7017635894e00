"""A sequence-classification reward model as one reward component (`reward.functions[].model`): scored as TRL 1.16
scores a model given in `reward_funcs`, so a reward model trained for TRL answers here what it answers there.

TRL's way (GRPOTrainer.__init__ and `_calculate_rewards`):
- the model is `AutoModelForSequenceClassification.from_pretrained(source, num_labels=1)`, its weights in the
  checkpoint's dtype (transformers' "auto"); its own tokenizer is the processing class, eos standing in for a missing
  pad token, and the model's `pad_token_id` is set to the tokenizer's (the model pools the last token not a pad);
- the trainer's accelerator prepares it, so with `bf16`/`fp16` (rc1 sets them from the policy's dtype) its forward
  runs under that autocast: `dtype` here is the policy's, and half precision means that autocast;
- a conversational prompt (a list of messages) is rendered with the *reward* tokenizer's chat template over the
  prompt's messages plus the completion as one assistant message, no generation prompt; a text prompt is
  concatenated with its completion;
- the texts are tokenized with right padding, no special tokens added, no truncation, and the reward is the raw
  `logits[:, 0]`, under `torch.inference_mode`.

Batches here are `batch_size` texts at a time (TRL scores the whole generation batch at once): right padding with
last-non-pad pooling makes a text's score independent of its batch, up to float rounding.

What the fingerprint holds for the model is rc1/core/model_files.py's `weights_sha256`.
"""

from __future__ import annotations

import threading

import torch

from rc1.core.errors import BadInput

Message = dict[str, str]


class RewardModel:
    """A loaded reward model and its tokenizer, in eval mode on one device."""

    def __init__(self, source: str, model, tokenizer, autocast: torch.dtype | None):
        self.source = source
        self._model = model
        self._tokenizer = tokenizer
        self._autocast = autocast
        self._lock = threading.Lock()  # one forward pass at a time: scorers may share the model across threads

    @classmethod
    def load(cls, source: str, device: str, dtype: torch.dtype = torch.float32) -> RewardModel:
        """`source` (a local directory or a hub id) on `device`, loaded as TRL's GRPOTrainer loads it, scored under
        the autocast TRL's accelerator gives a policy of `dtype` (none for fp32)."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        if dtype not in (torch.float32, torch.bfloat16, torch.float16):
            raise ValueError(f"dtype must be the policy's: torch.float32, bfloat16 or float16, got {dtype}")
        try:
            model = AutoModelForSequenceClassification.from_pretrained(source, num_labels=1)
            tokenizer = AutoTokenizer.from_pretrained(source)
        except (OSError, ValueError) as e:
            raise BadInput(f"{source}: cannot load it as a sequence-classification reward model: {e}") from None
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        model.config.get_text_config().pad_token_id = tokenizer.pad_token_id
        autocast = None if dtype == torch.float32 else dtype
        return cls(source, model.to(device).eval().requires_grad_(False), tokenizer, autocast)

    @property
    def device(self) -> torch.device:
        return self._model.device

    def texts(self, prompts: list[list[Message]] | list[str], completions: list[str]) -> list[str]:
        """What the model reads for each (prompt, completion), as TRL renders it."""
        if len(prompts) != len(completions):
            raise ValueError(f"{len(prompts)} prompts but {len(completions)} completions; give one prompt each")
        if not prompts:
            return []
        if isinstance(prompts[0], str):
            if not all(isinstance(p, str) for p in prompts):
                raise ValueError("prompts mix text and message lists; give all of one kind")
            return [p + c for p, c in zip(prompts, completions)]
        if self._tokenizer.chat_template is None:
            raise BadInput(
                f"{self.source}: its tokenizer has no chat template, so it cannot read conversational prompts; "
                "score it with text prompts (format: text) or give the model a tokenizer with a chat template"
            )
        return [
            self._tokenizer.apply_chat_template([*p, {"role": "assistant", "content": c}], tokenize=False)
            for p, c in zip(prompts, completions)
        ]

    def score(self, prompts: list[list[Message]] | list[str], completions: list[str], batch_size: int) -> list[float]:
        """The model's raw logit for each completion of its prompt, `batch_size` texts per forward pass."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        texts = self.texts(prompts, completions)
        scores: list[float] = []
        device = self._model.device
        autocast = torch.autocast(device.type, dtype=self._autocast, enabled=self._autocast is not None)
        with self._lock, torch.inference_mode(), autocast:
            for start in range(0, len(texts), batch_size):
                inputs = self._tokenizer(
                    text=texts[start : start + batch_size],
                    return_tensors="pt",
                    padding=True,
                    padding_side="right",
                    add_special_tokens=False,
                ).to(device)
                scores += self._model(**inputs).logits[:, 0].float().tolist()
        return scores


class ModelComponent:
    """A reward model as one reward component: its spec (`reward.functions[]` with `model`) and the loaded model,
    scoring a batch `batch_size` texts at a time; the logits are brought into [-1, 1] by the spec's scale and clip."""

    def __init__(self, spec, model: RewardModel, batch_size: int):
        self.spec = spec
        self.name = spec.name
        self.model = model
        self.batch_size = batch_size

    def score(self, items, completions: list[str]) -> list[float]:
        from rc1.data.task import episode_messages
        from rc1.scoring.functions import RewardFunctionFailed, bounded

        prompts = (
            [episode_messages(item) for item in items]
            if self.spec.format == "conversational"
            else [item.prompt for item in items]
        )
        try:
            logits = self.model.score(prompts, list(completions), self.batch_size)
        except BadInput:
            raise
        except Exception as e:
            raise RewardFunctionFailed(
                f"reward model {self.name} ({self.model.source}) raised {type(e).__name__}: {e}"
            ) from e
        return bounded(self.spec, items, logits)
