"""How the registry names the code that runs what it declares: "module:attr", imported by `load` only when an
engine or a judge is built, never when a config is validated (no torch, no trl, no openai client there)."""

from __future__ import annotations

import importlib


def load(reference: str):
    """The object `reference` ("package.module:attr") names. The layer that runs it calls this (an engine in
    rc1/train, the judge builder in rc1/scoring); the registry itself only holds the string."""
    module, _, attr = reference.partition(":")
    return getattr(importlib.import_module(module), attr)
