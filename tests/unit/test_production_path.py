"""The production path's decisions that a CPU can check: what rc1 refuses before anything is appended, what TRL and vLLM
are given, whether a resume is exact, and the memory plan behind round 1's accelerator_memory check and docs/gpu.md."""

from __future__ import annotations

import pytest
import torch
from conftest import REPO

from rc1.checks.memory_plan import GIB, QWEN3_4B, ModelShape, plan
from rc1.config.loading import load_config
from rc1.core.errors import BadInput
from rc1.train.launch import exact_resume, generation_backend, refuse_unsupported_launch

PRODUCTION = REPO / "configs" / "rc1.yaml"
# Qwen3-4B-Thinking-2507's config.json, the widths that matter to memory
QWEN3_4B_CONFIG = {
    "num_hidden_layers": 36,
    "hidden_size": 2560,
    "intermediate_size": 9728,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "vocab_size": 151936,
    "tie_word_embeddings": True,
}
LOCAL = REPO / "configs" / "local.yaml"


@pytest.mark.parametrize("rollouts", ["vllm", "vllm_server"])
def test_qlora_with_vllm_rollouts_is_refused_when_the_config_loads_and_the_way_that_works_is_named(rollouts):
    """TRL 1.16 merges the adapter into the 4-bit base at every weight sync and pushes its packed uint8 weights, which
    vLLM refuses (TRL #4973, #3654)."""
    with pytest.raises(BadInput) as refused:
        load_config(PRODUCTION, [f"train.rollouts={rollouts}"])
    message = str(refused.value)
    assert f"train.rollouts: {rollouts} cannot sample for finetune.method qlora" in message
    assert "use finetune.method lora" in message and "train.rollouts: transformers" in message
    assert load_config(PRODUCTION, [f"train.rollouts={rollouts}", "finetune.method=lora"]).config.train.rollouts


def test_auto_never_picks_vllm_for_a_4bit_base():
    assert generation_backend("trl", "grpo", "cuda", "auto", quantized=True) == "hf"
    with pytest.raises(BadInput, match="cannot sample for finetune.method qlora"):
        generation_backend("trl", "grpo", "cuda", "vllm", quantized=True)


def test_vllm_is_given_a_context_of_prompt_and_completion_and_its_share_of_the_gpu(tmp_path):
    """Without vllm_max_model_length vLLM sizes its KV cache for Qwen3-4B-Thinking-2507's 262,144 tokens and refuses to
    start in TRL's default 0.3 of the GPU."""
    from rc1.train.engine_trl import trl_args

    config = load_config(PRODUCTION, ["finetune.method=lora", "train.vllm_gpu_memory_utilization=0.45"]).config
    args = trl_args(config, tmp_path, "cpu", torch.float32, backend="vllm")
    assert (args.use_vllm, args.vllm_mode) == (True, "colocate")
    assert args.vllm_max_model_length == 1024 + 8192
    assert args.vllm_gpu_memory_utilization == 0.45


def test_trl_s_online_dpo_keeps_its_kv_cache_under_gradient_checkpointing(tmp_path):
    """TRL 1.16 turns the cache off when checkpointing is on (quadratic rollouts at 8,192 tokens); rc1 turns it back."""
    from rc1.train.engine_trl import trl_args

    config = load_config(
        PRODUCTION,
        [
            "engine.strategy=dpo",
            "train.num_generations=2",
            "train.beta=0.1",
            "train.target_kl=null",
            "train.mask_truncated_completions=false",
        ],
    ).config
    args = trl_args(config, tmp_path, "cpu", torch.float32, backend="hf")
    assert args.gradient_checkpointing and args.generation_kwargs == {"use_cache": True}


def test_trl_samples_as_the_model_card_says_and_masks_cut_replies(tmp_path):
    from rc1.train.engine_trl import trl_args

    config = load_config(PRODUCTION).config
    args = trl_args(config, tmp_path, "cpu", torch.float32, backend="hf")
    assert (config.train.temperature, config.train.top_k, config.train.top_p) == (0.6, 20, 0.95)  # the card's
    # transformers samples: the trainer gets top_p 1.0 and rc1 makes the cut, deterministic on CUDA (nucleus.py)
    assert (args.temperature, args.top_k, args.top_p) == (0.6, 20, 1.0)
    assert trl_args(config, tmp_path, "cpu", torch.float32, backend="vllm").top_p == 0.95  # vLLM cuts for itself
    assert args.max_completion_length == 8192 and args.mask_truncated_completions is True
    assert not args.use_vllm


def test_a_cut_of_cut_replies_is_refused_where_the_trainer_has_none():
    with pytest.raises(BadInput, match="train.mask_truncated_completions: .* torch×grpo has no such switch"):
        load_config(LOCAL, ["engine.name=torch", "finetune.method=lora", "train.mask_truncated_completions=true"])


def test_a_thinking_model_chooses_best_by_its_sampled_replies():
    with pytest.raises(BadInput, match="release.metric: hard_success chooses best/ by greedy replies"):
        load_config(PRODUCTION, ["release.metric=hard_success"])
    assert load_config(LOCAL, ["release.metric=hard_success"]).config.release.metric == "hard_success"


def test_a_resume_is_exact_on_the_cpu_and_on_cuda_only_with_deterministic_kernels_and_generate():
    """The production profile samples at the card's top_p 0.95 and its resume on CUDA with transformers' generate is
    still exact: the cut is rc1's deterministic one, and the launch no longer refuses it."""
    config = load_config(PRODUCTION).config
    assert config.train.top_p == 0.95 and config.train.deterministic
    refuse_unsupported_launch(config)  # on this machine's device; nothing about the cut is refused
    loose = load_config(PRODUCTION, ["train.deterministic=false"]).config
    assert exact_resume(config, "cpu", "hf") and exact_resume(loose, "cpu", "hf")
    assert exact_resume(config, "cuda", "hf") and not exact_resume(loose, "cuda", "hf")
    assert not exact_resume(config, "cuda", "vllm") and not exact_resume(config, "mps", "hf")


def test_the_memory_plan_counts_qwen3_4b_as_its_config_declares_it():
    """4,022,468,096 weights, 3,633,315,840 of them in the 36 layers' projections; LoRA r 8 on all seven: 16,515,072."""
    assert QWEN3_4B.projection_weights == 3_633_315_840
    assert QWEN3_4B.projection_weights + QWEN3_4B.other_weights == 4_022_468_096
    config = load_config(PRODUCTION).config
    assert plan(QWEN3_4B, config).trained == 16_515_072 * 16
    assert ModelShape.of(QWEN3_4B_CONFIG) == QWEN3_4B


def test_the_kv_cache_of_a_steps_replies_is_what_the_completion_limit_costs():
    """32 replies of 1,024 + 8,192 tokens: 43.5 GB on one GPU; the card's 32,768 would be 159 GB."""
    config = load_config(PRODUCTION).config
    production = plan(QWEN3_4B, config)
    assert round(production.rollouts / 1e9, 1) == 43.5 and production.peak < 80e9 * 0.6
    card = plan(QWEN3_4B, load_config(PRODUCTION, ["train.max_completion_tokens=32768"]).config)
    assert round(card.rollouts / 1e9) == 159
    four_gpus = plan(QWEN3_4B, config, processes=4)  # step_batch fixed: each generates a quarter of the step
    assert four_gpus.rollouts == production.rollouts // 4 and four_gpus.evaluation == production.evaluation
    assert production.fixed == GIB


def test_docs_gpu_memory_table_is_the_plans():
    from rc1.checks.memory_plan import markdown

    page = (REPO / "docs" / "gpu.md").read_text(encoding="utf-8")
    start, end = "<!-- memory plan: python -m rc1.checks.memory_plan -->\n", "<!-- /memory plan -->"
    block = page[page.index(start) + len(start) : page.index(end)]
    assert block == markdown(QWEN3_4B, load_config(PRODUCTION).config), "regenerate: python -m rc1.checks.memory_plan"


def test_round_ones_memory_plan_reads_the_models_own_config(tmp_path):
    """The accelerator_memory check plans from the model's config.json (a local directory here; a hub id on a
    machine with the hub) and needs the planned peak free on CUDA; a model whose config cannot be read says why."""
    import json

    from rc1.checks.resources import _planned

    qwen3 = {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], **QWEN3_4B_CONFIG}
    (tmp_path / "config.json").write_text(json.dumps(qwen3))
    config = load_config(PRODUCTION, [f"model.name={tmp_path}"]).config
    planned, _ = _planned(config)
    assert planned == plan(QWEN3_4B, config)
    missing, why = _planned(load_config(PRODUCTION, [f"model.name={tmp_path / 'absent'}"]).config)
    assert missing is None and "cannot be read" in why
    assert _planned(load_config(LOCAL).config) == (None, "the built-in model is not planned")


def test_the_production_profile_halts_on_cut_replies_above_what_round_two_let_through():
    config = load_config(PRODUCTION).config
    truncation = config.monitors.truncation
    assert (truncation.action, truncation.max_share) == ("halt", 2 * config.preflight.max_cut_share)
    assert config.monitors.shadow_regression.metrics == ["sampled"] and config.release.metric == "hard_sampled_success"
    assert config.shadow.samples == config.train.num_generations  # round 2 measures a training group's spread


def test_colocated_vllm_counts_on_top_of_the_plan_where_it_would_sample():
    from rc1.checks.resources import _colocated_vllm

    assert _colocated_vllm(load_config(PRODUCTION, ["finetune.method=lora", "train.rollouts=vllm"]).config)
    assert not _colocated_vllm(load_config(PRODUCTION).config)  # qlora: auto never picks vLLM
    assert not _colocated_vllm(load_config(PRODUCTION, ["finetune.method=lora", "train.rollouts=vllm_server"]).config)
    auto = load_config(PRODUCTION, ["finetune.method=lora"]).config  # auto: only where vllm is installed (not here)
    import importlib.util

    assert _colocated_vllm(auto) == (importlib.util.find_spec("vllm") is not None)
