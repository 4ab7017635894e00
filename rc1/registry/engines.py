"""The engines `engine.name` may name: who runs the training loop. Which strategies each runs is declared by
the strategies (rc1/registry/strategies/); what both share is set up in rc1/train/engines.py."""

from __future__ import annotations

from rc1.registry.spec import EngineSpec


def _one_update_per_generation(config) -> list[str]:
    if config.train.update_epochs != 1:
        return [
            "train.update_epochs: the trl engine makes one update per generation; use engine.name torch for more passes"
        ]
    return []


def _adapters_only(config) -> list[str]:
    if config.finetune.method == "full":
        return [
            "finetune.method: full is trained by the trl engine; the torch engine's strategies take their "
            "reference policy by switching the LoRA adapter off and checkpoint the adapter alone. Use "
            "engine.name trl, or finetune.method lora with the torch engine"
        ]
    return []


ENGINES: dict[str, EngineSpec] = {
    spec.name: spec
    for spec in (
        EngineSpec(
            name="trl",
            about="TRL's trainers (the production path)",
            engine="rc1.train.engine_trl:TrlEngine",
            multi_process=True,
            rules=(_one_update_per_generation,),
        ),
        EngineSpec(
            name="torch",
            about="rc1's own loop (adapters only)",
            engine="rc1.train.engine_torch:TorchEngine",
            multi_process=False,
            rules=(_adapters_only,),
        ),
    )
}
