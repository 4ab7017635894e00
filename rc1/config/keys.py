"""The config's dotted keys, read from the schema alone, and the keys a misspelt one may have meant: what a `--set`
typo, an unknown key in a file and `rc1 config explain KEY` all answer with ("did you mean train.learning_rate?")."""

from __future__ import annotations

import difflib
import re
from functools import cache

import msgspec.inspect as mi

from rc1.config.schema import Config


@cache
def schema_keys() -> tuple[str, ...]:
    """Every key and section of the schema, dotted, in the structs' order. Under a dict of sections (`data.sources`)
    and a list of them (`reward.functions`) the entry's keys appear as templates (`data.sources.<name>.path`,
    `reward.functions[].weight`); `close_keys` never offers a `<name>` one."""
    return tuple(_keys(mi.type_info(Config), ""))


def _keys(struct: mi.StructType, prefix: str):
    for field in struct.fields:
        key = prefix + field.encode_name
        yield key
        kind = field.type.type if isinstance(field.type, mi.Metadata) else field.type
        if isinstance(kind, mi.UnionType):
            structs = [t for t in kind.types if isinstance(t, mi.StructType)]
            kind = structs[0] if len(structs) == 1 else kind
        if isinstance(kind, mi.StructType):
            yield from _keys(kind, key + ".")
        elif isinstance(kind, mi.DictType) and isinstance(kind.value_type, mi.StructType):
            yield from _keys(kind.value_type, key + ".<name>.")
        elif isinstance(kind, mi.ListType) and isinstance(kind.item_type, mi.StructType):
            yield from _keys(kind.item_type, key + "[].")


def did_you_mean(key: str, keys: list[str] | tuple[str, ...] | None = None) -> str:
    """ "did you mean a or b?" for a key that is not one, or where to find them all."""
    close = close_keys(key, list(schema_keys() if keys is None else keys))
    return f"did you mean {' or '.join(close)}?" if close else "`rc1 config explain` lists every key"


def close_keys(key: str, keys: list[str], n: int = 3) -> list[str]:
    """Keys a user may have meant: first the keys beside it, its parent section's (its siblings), that the name
    abbreviates (lr -> learning_rate), begins, spells out (rank -> r) or nearly spells (difflib), each named by its
    full dotted path (`monitors.entropy_floor.min` -> monitors.entropy_floor.min_entropy); then the same name in
    another section; failing those, such a key anywhere and difflib's nearest whole keys. Under a dict or a list of
    sections (`data.tasks.mine.pth`, `data.tasks[...].pth`, `reward.functions.0.nme`) the siblings are its entries'
    keys."""
    parent, _, leaf = key.rpartition(".")
    found = _near(leaf, _siblings(parent, keys), n, spelled_out=True)
    keys = [k for k in keys if "<" not in k]
    found += [k for k in keys if k.endswith("." + leaf)]
    if not found:
        found = _near(leaf, keys, n) + difflib.get_close_matches(key, keys, n=n, cutoff=0.6)
    return list(dict.fromkeys(found))[:n]


def _siblings(parent: str, keys: list[str] | tuple[str, ...]) -> list[str]:
    """The keys directly under section `parent`, dotted under `parent` as given: for an entry of a dict or a list of
    sections, its template's keys (`data.tasks.<name>.path` under data.tasks.mine, `reward.functions[].name` under
    reward.functions.0)."""
    found = []
    for k in keys:
        above, _, name = k.rpartition(".")
        if "<" in name:
            continue
        if above == parent:
            found.append(k)
        elif ("<" in above or "[]" in above) and re.fullmatch(_entries(above), parent):
            found.append(f"{parent}.{name}")
    return found


_ANY_ENTRY = r"(?:\.[^.]+|\[\.\.\.\])"  # a dict's entry: .mine, or msgspec's [...] (data.tasks[...].pth)
_ANY_INDEX = r"(?:\.\d+|\[\d+\])"  # a list's entry: .0 (as loading.py writes msgspec's [0]), or [0]


def _entries(template: str) -> str:
    """A pattern of the sections a template names: `<name>` any one entry of a dict, `[]` any one of a list."""
    parts = re.split(r"(\.<[^>]*>|\[\])", template)
    return "".join(_ANY_ENTRY if p.startswith(".<") else _ANY_INDEX if p == "[]" else re.escape(p) for p in parts)


def _near(leaf: str, keys: list[str], n: int, spelled_out: bool = False) -> list[str]:
    """Keys whose last name `leaf` abbreviates, begins or nearly spells (or, `spelled_out`, spells out: rank -> r)."""
    names: dict[str, str] = {}
    for k in keys:
        names.setdefault(k.rpartition(".")[2], k)
    found = [
        k
        for name, k in names.items()
        if "".join(word[:1] for word in name.split("_")) == leaf
        or (len(leaf) > 1 and name.startswith(leaf))
        or (spelled_out and leaf.startswith(name))
    ]
    return found + [names[name] for name in difflib.get_close_matches(leaf, list(names), n=n, cutoff=0.6)]
