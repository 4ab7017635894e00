"""Text units shared by the data, its checks and the scorers: one normalization, one token, one n-gram."""

from __future__ import annotations

import random
import re
import string
from collections.abc import Sequence
from itertools import chain

import numpy as np

# A token is a run of word characters, kept whole across an inner `'`, `.` or `,` so that "1,250",
# "3.5" and "Dorvel's" each count once. This is the unit of every length bound.
_TOKEN = re.compile(r"\w+(?:['.,]\w+)*")
# Sentence boundaries: after ., ! or ? and whitespace, or at a line break.
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_PUNCTUATION = str.maketrans("", "", string.punctuation + "‘’“”–—")


def normalize(text: str) -> str:
    """Lowercase, delete punctuation, collapse whitespace: texts differing only in those compare equal."""
    return " ".join(text.lower().translate(_PUNCTUATION).split())


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def ngrams(words: Sequence[str], n: int) -> list[tuple[str, ...]]:
    """Contiguous word n-grams; a text shorter than n has none."""
    if n < 1:
        raise ValueError(f"n-gram size must be >= 1, got {n}")
    return list(zip(*(words[i:] for i in range(n))))


# Fixed odd multipliers from Python's Mersenne Twister, which is stable across versions and platforms.
_MIX = np.array([random.Random(f"ngram|{k}").getrandbits(64) | 1 for k in range(32)], dtype=np.uint64)


def ngram_keys(texts: Sequence[Sequence[str]], n: int) -> tuple[np.ndarray, np.ndarray]:
    """A uint64 key for every word n-gram of every text, and the index of the text it comes from.

    The fast path behind distinct-2, shingling and the leak index: words are numbered in order of
    first appearance (so the keys are the same in every process), and an n-gram's key mixes its
    word numbers with fixed odd multipliers. Equal n-grams get equal keys within one call; two
    different n-grams collide with probability about 2^-64. Keys are in text order.
    """
    if not 1 <= n <= len(_MIX):
        raise ValueError(f"n-gram size must be in [1, {len(_MIX)}], got {n}")
    words = list(chain.from_iterable(texts))
    number = {w: i for i, w in enumerate(dict.fromkeys(words))}  # first appearance order
    flat = np.array(list(map(number.__getitem__, words)), dtype=np.uint64)
    owner = np.repeat(np.arange(len(texts), dtype=np.int64), [len(text) for text in texts])
    count = len(flat) - n + 1
    if count <= 0:
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64)
    keys = np.zeros(count, dtype=np.uint64)
    for k in range(n):
        keys += flat[k : k + count] * _MIX[k]  # uint64 arithmetic wraps, as intended
    same_text = owner[:count] == owner[n - 1 :]
    return keys[same_text], owner[:count][same_text]


def count_distinct(keys: np.ndarray) -> int:
    """Distinct values of a key array (by sorting: numpy's hash-based `unique` is slower on uint64 keys)."""
    if not keys.size:
        return 0
    ordered = np.sort(keys)
    return int(np.count_nonzero(ordered[1:] != ordered[:-1])) + 1
