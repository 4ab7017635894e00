"""The drift probe at Qwen3-4B's vocabulary (151,936) without holding every reply's logits: measured in a process of its
own (its resident-set peak, the kernel's count) on a model of a small hidden size, where the logits are all there is."""

from __future__ import annotations

import json
import subprocess
import sys

import torch
from conftest import PATIENCE, REPO

from rc1.train.policy_math import Rollout, completion_mask, scored_logprobs, token_logprobs

ROWS, PROMPT, COMPLETION, VOCAB = 8, 16, 512, 151_936

PROBE = f"""
import json, resource, torch
from transformers import Qwen3Config, Qwen3ForCausalLM
from rc1.train.policy_math import Rollout, scored_logprobs

torch.manual_seed(0)
config = Qwen3Config(vocab_size={VOCAB}, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                     num_attention_heads=2, num_key_value_heads=1, head_dim=8, tie_word_embeddings=True)
model = Qwen3ForCausalLM(config).eval()
ids = torch.randint(3, {VOCAB}, ({ROWS}, {PROMPT + COMPLETION}))
mask = torch.ones({ROWS}, {COMPLETION}, dtype=torch.long)
rollout = Rollout(["item"] * {ROWS}, ids, torch.ones_like(ids), mask, [], [])
with torch.no_grad():
    model(input_ids=ids[:1, :8])  # warm: what the process holds before the probe
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
logprobs = scored_logprobs(model, rollout, 0.6)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"before_mb": before / 1024, "peak_mb": after / 1024, "finite": bool(torch.isfinite(logprobs).all()),
                   "shape": list(logprobs.shape)}}))
"""


def test_the_drift_probe_scores_a_large_vocabulary_a_row_group_at_a_time():
    """8 replies of 512 tokens at 151,936 tokens of vocabulary: 2.5 GB of fp32 logits, and `token_logprobs` holds them
    with their scaled copy and their log-softmax (about 7.5 GB). The probe holds at most LOGITS_BUDGET of logits
    (1 GiB: 3 rows here) and a 256 MiB slice of their log-softmax."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=PATIENCE, check=True
    )
    measured = json.loads(result.stdout.strip().splitlines()[-1])
    assert measured["finite"] and measured["shape"] == [ROWS, COMPLETION]
    grew_mb = measured["peak_mb"] - measured["before_mb"]
    whole = ROWS * (COMPLETION + 1) * VOCAB * 4 / 2**20  # one fp32 copy of every reply's logits: 2,378 MiB
    assert grew_mb < 0.8 * whole, measured  # measured: +1,406 MiB here; token_logprobs, the same way: +7,129 MiB


def test_the_drift_probe_scores_what_token_logprobs_scores():
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(1)
    config = Qwen3Config(
        vocab_size=300,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=8,
    )
    model = Qwen3ForCausalLM(config).eval()
    ids = torch.randint(3, 300, (5, 24))
    attention = torch.ones(5, 8, dtype=torch.long)
    attention[0, :3] = 0  # a left-padded prompt
    mask = completion_mask(ids[:, 8:], [5], 0)  # rows end at their first token 5, if any
    rollout = Rollout(["i"] * 5, ids, torch.cat([attention, mask], 1), mask, [], [])
    with torch.no_grad():
        expected = token_logprobs(model, rollout, 0.7)
    torch.testing.assert_close(scored_logprobs(model, rollout, 0.7), expected)
