"""One evaluation of a gated workspace's base policy, written as JSON to argv[2]: its greedy and its sampled replies
to the shadow items, with drift against the step-0 policy. Run in one process, or under torchrun with `--shard`, where
the policy's parameters are first sharded across the ranks with FSDP2 (`fully_shard`, what accelerate applies under
an FSDP config with `fsdp_version: 2`), so that every forward pass gathers them from every rank."""

import copy
import json
import sys
from pathlib import Path

import torch

from rc1.app.policy import load_run_policy
from rc1.app.session import FollowerSession
from rc1.config.loading import load_config
from rc1.core import distributed
from rc1.data.task import read_items
from rc1.train.drift import DriftProbe, frozen_copy
from rc1.train.generation import eos_token_ids, evaluate_policy
from rc1.train.metrics import Sampling

root, out, shard = Path(sys.argv[1]), Path(sys.argv[2]), "--shard" in sys.argv
distributed.join()
with FollowerSession.open(load_config(root / "configs/short.yaml")) as session:
    pool = read_items(session.ws.balanced_pool_path)
    model, tokenizer, device, _ = load_run_policy(session, pool)
    items = read_items(session.ws.shadow_path)[
        :9
    ]  # greedy: 2 batches (8 + 1 items); sampled: 5 of 2 items, 3 for rank 0
    max_prompt_tokens = (
        session.config.train.max_prompt_tokens
    )  # 11 items in batches of 2 or 4: the ranks' shares are uneven
reference = copy.deepcopy(model)
with torch.no_grad():  # the policy moves away from its step-0 copy, so drift has something to measure
    for parameter in model.model.layers[-1].parameters():
        parameter.mul_(1.25)
if shard:
    from torch.distributed.fsdp import fully_shard

    for module in (model, reference):
        for layer in module.model.layers:
            fully_shard(layer)
        fully_shard(module)
    assert distributed.sharded(model)
common = dict(
    max_prompt_tokens=max_prompt_tokens,
    max_new_tokens=24,
    eos_ids=eos_token_ids(model, tokenizer),
    batch_size=8,
    device=device,
)
greedy = evaluate_policy(model, tokenizer, items, **common)
probe = DriftProbe(frozen_copy(reference), temperature=1.0, replies_per_item=2)
sampled = evaluate_policy(
    model, tokenizer, items, **common, sampling=Sampling(samples=4, temperature=1.0, seed=7), drift=probe
)
if distributed.is_writer():
    out.write_text(
        json.dumps(
            {
                "greedy": greedy.completions,
                "sampled": sampled.completions,
                "tokens": sampled.completion_tokens,
                "drift": None
                if sampled.drift is None
                else [sampled.drift.kl, sampled.drift.items, sampled.drift.tokens],
                "generated_here": [greedy.generated_here, sampled.generated_here],
            }
        )
    )
