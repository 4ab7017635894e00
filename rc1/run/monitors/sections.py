"""The `monitors:` config section and its record in `training_started`, both built from the rules' table: one field
per configurable rule, holding its thresholds, or null to switch it off.

The config's section gives each rule its defaults. The record's fields default to null instead: a log written before a
rule existed records no section for it, and replay must not watch a line with thresholds its rc1 never used."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from rc1.run.monitors.rules import CONFIGURABLE


def _section(name: str, *, defaults: bool, strict: bool):
    fields = []
    for rule, spec in CONFIGURABLE.items():
        about = f"{spec.about}. null: off."
        kind = Annotated[spec.params | None, Meta(description=about)]
        default = msgspec.field(default_factory=spec.params) if defaults else None
        fields.append((rule, kind, default))
    return msgspec.defstruct(name, fields, kw_only=True, frozen=True, forbid_unknown_fields=strict, module=__name__)


MonitorsConfig = _section("MonitorsConfig", defaults=True, strict=True)
MonitorsConfig.__doc__ = (
    "Gates while the run trains: each rule's thresholds, window and action (warn, halt, or stop: "
    "end the line early as complete); null switches a rule off. A non-finite loss, gradient "
    "norm or weight always halts."
)

WatchedRules = _section("WatchedRules", defaults=False, strict=False)
WatchedRules.__doc__ = "The rules a line of training was watched with (training_started.monitors); null: not watched."


def watched(config) -> WatchedRules:
    """The record of a config's monitors section."""
    return WatchedRules(**{rule: getattr(config, rule) for rule in CONFIGURABLE})


def rules_of(record) -> dict[str, msgspec.Struct]:
    """The rules a record watches, by name, with their thresholds."""
    return {rule: params for rule in CONFIGURABLE if (params := getattr(record, rule)) is not None}


def reading_sampled_replies(monitors) -> list[str]:
    """The rules `monitors` (a config's `monitors:` section, or its record) watches that read nothing but the
    training's sampled replies (every SignalPath they declare is `sampled`), in the table's order: under a strategy that
    samples none (it trains on gold) they read nothing and never trip."""
    return [rule for rule in rules_of(monitors) if CONFIGURABLE[rule].sampled_only]
