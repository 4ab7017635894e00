"""`rc1 ls checks|strategies|monitors|trackers [--json]`: the tables the extension points are (read only: no config,
no run). Each row comes from the table the code itself runs on, so the listing cannot drift from what rc1 does."""

from __future__ import annotations

import msgspec


class Row(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    about: str  # one line: what it is or checks
    details: dict[str, str] = {}  # what else its table says: engines, configurable, extra, where it is


def checks() -> list[Row]:
    from rc1.app.runbook import CHECKS

    return [
        Row(name=name, about=entry.means, details={"runbook": f"rc1 runbook {name}"}) for name, entry in CHECKS.items()
    ]


def strategies() -> list[Row]:
    from rc1.registry.strategies import STRATEGIES

    rows = []
    for name, spec in STRATEGIES.items():
        engines = {"trl": spec.trl, "torch": spec.torch}
        details = {engine: recipe.about for engine, recipe in engines.items() if recipe is not None}
        details.update({engine: f"not run: {why}" for engine, why in (spec.not_on or {}).items()})
        details["trains on"] = (
            "sampled replies, scored by rc1's reward" if spec.trains_on == "samples" else "gold replies"
        )
        if spec.target_kl:
            details["train.target_kl"] = spec.target_kl.replace("_", " ")
        about = ", ".join(engine for engine, recipe in engines.items() if recipe is not None)
        rows.append(Row(name=name, about=f"engines: {about}", details=details))
    return rows


def monitors() -> list[Row]:
    from rc1.run.monitors.rules import MONITORS

    return [
        Row(
            name=name,
            about=spec.about,
            details={
                "config": f"monitors.{name}" if spec.params is not None else "always on (cannot be switched off)",
                **({"reads after": ", ".join(spec.checked)} if spec.checked else {}),
                **({"signal": spec.signal} if spec.signal else {}),
            },
        )
        for name, spec in MONITORS.items()
    ]


def trackers() -> list[Row]:
    from rc1.views.trackers import BACKENDS

    return [
        Row(
            name=name,
            about=_first_clause(backend.__doc__ or ""),
            details={"install": f"pip install -e '.[{name}]'", "config": f"tracking.report_to: [{name}]"},
        )
        for name, backend in BACKENDS.items()
    ]


def _first_clause(doc: str) -> str:
    """A docstring's opening, up to its first colon or full stop."""
    text = " ".join(doc.split())
    cuts = [i for i in (text.find(": "), text.find(". ")) if i > 0]
    return text[: min(cuts)] if cuts else text


TABLES = {"checks": checks, "strategies": strategies, "monitors": monitors, "trackers": trackers}


def run(args) -> int:
    rows = TABLES[args.table]()
    if args.json:
        print(msgspec.json.encode(rows).decode())
        return 0
    width = max(len(row.name) for row in rows)
    for row in rows:
        print(f"{row.name:<{width}}  {row.about}")
        for key, value in row.details.items():
            print(f"{'':<{width}}    {key}: {value}")
    return 0
