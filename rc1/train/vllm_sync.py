"""The weights vLLM is sent at every sync, with the LoRA adapter merged out of place, so the frozen base never moves.

TRL 1.16 (`trl/generation/vllm_generation.py`, `VLLMGeneration._iter_named_params`, PEFT branch) calls peft's
`merge_adapter()`, yields the parameters, then `unmerge_adapter()`: in place, on the base. peft's merge adds the delta
into the bf16 weight (`weight.data += delta`, rounded once), its unmerge subtracts the delta rounded to bf16
(`weight.data -= delta.to(bf16)`, peft 0.21 `tuners/lora/layer.py` `Linear.merge`/`unmerge`): the two roundings do not
cancel, and over a line's thousands of syncs the "frozen" base walks (trl#6688, open; measured here by
tests/e2e/test_vllm_sync.py). The drift monitor, which takes the adapter switched off as the step-0 policy, and the
exported adapter, which is shipped for the base, would both be wrong.

`merged_out_of_place` yields what TRL's iterator yields, under the same names (TRL's own renaming), each LoRA layer's
weight computed as a new tensor: (base in fp32 + peft's `get_delta_weight`) rounded once to the base's dtype, which is
the value peft's first merge writes, so vLLM gets the bytes it got before; nothing is written to the model.
`keep_base_at_sync` puts it in place of the trainer's iterator (both of TRL's modes, colocate and server, sync through
it)."""

from __future__ import annotations

from collections.abc import Iterator

import torch

from rc1.core.errors import BadInput


def merged_out_of_place(generation) -> Iterator[tuple[str, torch.Tensor]]:
    """TRL's `VLLMGeneration._iter_named_params` for a peft model, without touching it: (vLLM's name, tensor)."""
    from peft.tuners.lora import LoraLayer

    model = generation.model
    layers = {name: module for name, module in model.named_modules() if isinstance(module, LoraLayer)}
    with generation._dist.gather_params(list(model.parameters())):  # ZeRO-3's gather, as TRL does; else a no-op
        for name, param in model.named_parameters():
            if model.prefix in name or "original_module" in name:  # the adapter's own weights; a saved module's copy
                continue
            owner, _, leaf = name.rpartition(".")
            layer = layers.get(owner.removesuffix(".base_layer")) if owner.endswith(".base_layer") else None
            tensor = param.data
            if layer is not None and leaf == "weight" and not layer.disable_adapters:
                tensor = _merged(layer, param.data)
            vllm_name = name.removeprefix("base_model.model.").replace(".base_layer", "")
            yield generation._fix_param_name_to_vllm(vllm_name, extra_prefixes=["modules_to_save.default."]), tensor


def _merged(layer, weight: torch.Tensor) -> torch.Tensor:
    merged = weight.float()
    for adapter in layer.active_adapters:
        if adapter not in layer.lora_A:
            continue
        if adapter in layer.lora_variant:  # DoRA and the other variants merge by rules of their own
            raise BadInput(
                f"model.lora: adapter {adapter!r} is a {type(layer.lora_variant[adapter]).__name__}, "
                "which rc1 does not merge for vLLM without touching the base"
            )
        merged = merged + layer.get_delta_weight(adapter).float()
    return merged.to(weight.dtype)


def keep_base_at_sync(trainer) -> None:
    """Make the trainer's vLLM syncs send `merged_out_of_place`'s weights (a peft model on one process or under
    DeepSpeed; FSDP merges through a path of TRL's own and is refused)."""
    generation = getattr(trainer, "vllm_generation", None)
    if generation is None:
        raise TypeError(f"{type(trainer).__name__} has no vllm_generation to sync through")
    if not hasattr(generation.model, "get_base_model"):
        return  # a full fine-tune: nothing is merged, TRL sends the parameters as they are
    if generation._dist.is_fsdp:
        raise BadInput(
            "train.rollouts: vLLM with an FSDP-sharded LoRA model: TRL 1.16 merges the adapter into the base in "
            "place at every sync, which moves the frozen base; use one process per GPU (DDP) or ZeRO-3"
        )
    generation._iter_named_params = lambda: merged_out_of_place(generation)
