"""What every section of the run config shares: its base struct (frozen, keyword-only, an unknown key refused), the
bounded numbers its keys take, and the helpers that write a key's help from the registry's specs."""

from __future__ import annotations

from typing import Annotated

import msgspec

from rc1.registry.strategies import STRATEGIES

Probability = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
PositiveInt = Annotated[int, msgspec.Meta(ge=1)]
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0)]
NonNegativeFloat = Annotated[float, msgspec.Meta(ge=0.0)]
PositiveFloat = Annotated[float, msgspec.Meta(gt=0.0)]


def spoken(names) -> str:
    """Names as a sentence lists them: "grpo", "grpo and rloo", "grpo, rloo and ppo"."""
    names = list(names)
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def strategies_where(wanted) -> list[str]:
    """The strategies whose spec (rc1/registry/strategies/) `wanted` holds for, in the registry's order. Call it at
    module level, into a constant a field's `Meta(description=…)` names: msgspec evaluates an annotation with the
    class's namespace as its globals, so a comprehension or a lambda inside one cannot see the module's names."""
    return [name for name, spec in STRATEGIES.items() if wanted(spec)]


class Section(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A section of the run config: frozen, keyword-only, and a key it does not have is refused (naming the keys it
    may have meant: rc1/config/keys.py)."""
