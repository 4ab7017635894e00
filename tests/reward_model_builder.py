"""A tiny sequence-classification reward model built offline: Qwen3ForSequenceClassification (num_labels=1) with the
built-in tiny model's dimensions and a byte-level BPE tokenizer carrying ChatML's template and a pad token of its own
(`<|endoftext|>`, not eos), saved with save_pretrained. Same seed, same files, byte for byte. Randomly initialised:
it prefers nothing in particular, but different texts get different scores, spread over a few units."""

from __future__ import annotations

from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForSequenceClassification

from rc1.train.tiny_model import ARCH, CHAT_TEMPLATE

PAD, EOS = "<|endoftext|>", "<|im_end|>"
SPECIAL_TOKENS = [PAD, "<|im_start|>", EOS]
CORPUS = [
    "You are a helpful assistant. Answer the question, then give the final answer on a line of its own.",
    "What is 17 plus 25? Let me add: 17 + 25 = 42. Answer: 42",
    "Is the sky green? No, the sky is blue on a clear day. Answer: no",
    "Which river flows through Paris? The Seine flows through Paris. Answer: the Seine",
    "I am not sure what you mean; could you say which city you are asking about?",
] * 4


def build_tiny_reward_model(out_dir: Path, seed: int = 0) -> Path:
    """Write the model, its config and its tokenizer to `out_dir` (created); return `out_dir`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer()
    tokenizer.save_pretrained(out_dir)
    pad_id = tokenizer.convert_tokens_to_ids(PAD)
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        max_position_embeddings=1024,
        num_labels=1,
        pad_token_id=pad_id,
        eos_token_id=tokenizer.convert_tokens_to_ids(EOS),
        bos_token_id=None,
        **{**ARCH, "tie_word_embeddings": False},
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen3ForSequenceClassification(config)
        torch.nn.init.normal_(model.score.weight, std=0.1)  # logits of a few units, not hundredths
    model.to(torch.float32).save_pretrained(out_dir)
    return out_dir


def _tokenizer() -> PreTrainedTokenizerFast:
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        min_frequency=2,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(CORPUS, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        eos_token=EOS,
        pad_token=PAD,
        padding_side="right",
        chat_template=CHAT_TEMPLATE,
    )
