"""What each config key is, holds and where its value came from: the rows of `rc1 config explain`.

The descriptions are the fields' `msgspec.Meta(description=…)` in rc1/config/sections/ (a section's is its docstring),
read through `msgspec.inspect`, so the help, the JSON schema and this view come from one place. A dict of sections keyed
by a closed set of names (`data.sources`) is listed for the names the config gives and once as a template
(`data.sources.<task>.path`).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Literal

import msgspec
import msgspec.inspect as mi
import yaml

from rc1.config.keys import did_you_mean
from rc1.config.loading import LoadedConfig
from rc1.config.schema import Config
from rc1.core.catalog import DIFFICULTIES, TASKS
from rc1.core.errors import BadInput


class KeyRow(msgspec.Struct, kw_only=True):
    key: str
    kind: Literal["section", "field"]
    type: str
    value: Any  # the effective value (a section's: all of it; null where the section is absent)
    default: Any  # null when required
    required: bool
    source: Literal["file", "--set", "default"]
    description: str
    # Under a section the config leaves out (or a template of one): the value is null; the default applies once the
    # section is given.
    absent: bool = False


def explain_rows(loaded: LoadedConfig) -> list[KeyRow]:
    """One row per section and per key of the config, in the structs' order."""
    return list(_walk(mi.type_info(Config), loaded.config, "", loaded, absent=False))


def schema_rows() -> list[KeyRow]:
    """The rows of the schema alone (docs/config.md): every key with its type, default and description, no value;
    a dict of sections once, as its template."""
    return list(_walk(mi.type_info(Config), None, "", None, absent=False))


def select(rows: list[KeyRow], key: str) -> list[KeyRow]:
    """The rows of `key` and of everything under it; an unknown key is BadInput naming the closest keys."""
    chosen = [r for r in rows if r.key == key or r.key.startswith(key + ".")]
    if not chosen:  # a name under a dict of sections that the config does not give: its template
        template = _as_template(rows, key)
        chosen = [r for r in rows if r.key == template or r.key.startswith(template + ".")] if template else []
    if chosen:
        return chosen
    raise BadInput(f"{key}: not a config key; {did_you_mean(key, [r.key for r in rows])}")


def render_text(rows: list[KeyRow], loaded: LoadedConfig, would_be: dict[str, Any] | None = None) -> str:
    """Per row: `key = value`, then its type, default and source, then its description; and where the command asked
    for another value than the run keeps (`would_be`), that value."""
    would_be = would_be or {}
    blocks = []
    for row in rows:
        about = textwrap.fill(row.description, 108, initial_indent="    ", subsequent_indent="    ")
        template = "<" in row.key
        if row.kind == "section":
            state = (
                "one per name the config gives"
                if template
                else ("absent · " if row.value is None else "") + f"from {_where(row, loaded)}"
            )
            blocks.append(f"[{row.key}]  {state}\n{about}")
            continue
        default = "required" if row.required else f"default {_flow(row.default)}"
        if template:
            blocks.append(f"{row.key}\n    {row.type} · {default}\n{about}")
            continue
        value = "(section absent)" if row.absent else _flow(row.value)
        other = (
            f"\n    would be {_flow(would_be[row.key])} as asked; the run keeps its round-1 value (read-only: nothing "
            "changes)"
            if row.key in would_be
            else ""
        )
        blocks.append(f"{row.key} = {value}\n    {row.type} · {default} · from {_where(row, loaded)}{other}\n{about}")
    return "\n\n".join(blocks)


def _where(row: KeyRow, loaded: LoadedConfig) -> str:
    if row.source == "file":
        return f"file {_shown(loaded.path)}"
    if row.source == "default":
        return "default"
    return "--set " + ", ".join(
        item
        for key, item in zip(loaded.set_keys, loaded.overrides)
        if key == row.key or key.startswith(row.key + ".") or row.key.startswith(key + ".")
    )


def _walk(struct: mi.StructType, value: Any, prefix: str, loaded: LoadedConfig | None, absent: bool):
    for field in struct.fields:
        key = prefix + field.encode_name
        kind, description = _unwrap(field.type)
        current = getattr(value, field.name) if value is not None else None
        section = _section_of(kind)
        default = _default(field)
        if section is not None:
            yield KeyRow(
                key=key,
                kind="section",
                type="section" if section is kind else "section | null",
                value=msgspec.to_builtins(current),
                default=default,
                required=field.required,
                source=_section_source(loaded, key),
                description=description or _doc(section),
                absent=absent,
            )
            yield from _walk(section, current, key + ".", loaded, absent=absent or current is None)
            continue
        yield KeyRow(
            key=key,
            kind="field",
            type=_type_name(kind),
            value=msgspec.to_builtins(current),
            default=default,
            required=field.required,
            source=loaded.source_of(key) if loaded is not None else "default",
            description=description,
            absent=absent,
        )
        if isinstance(kind, mi.DictType) and isinstance(kind.value_type, mi.StructType):
            entry = kind.value_type
            for name, sub in (current or {}).items():
                yield KeyRow(
                    key=f"{key}.{name}",
                    kind="section",
                    type="section",
                    value=msgspec.to_builtins(sub),
                    default=None,
                    required=False,
                    source=_section_source(loaded, f"{key}.{name}"),
                    description=_doc(entry),
                    absent=absent,
                )
                yield from _walk(entry, sub, f"{key}.{name}.", loaded, absent=absent)
            template = f"{key}.{_placeholder(kind.key_type)}"
            yield KeyRow(
                key=template,
                kind="section",
                type="section",
                value=None,
                default=None,
                required=False,
                source="default",
                description=_doc(entry),
                absent=True,
            )
            yield from _walk(entry, None, template + ".", loaded, absent=True)
        if isinstance(kind, mi.ListType) and isinstance(kind.item_type, mi.StructType):
            entry = kind.item_type  # a list of sections (reward.functions): each entry's keys, as key[].field
            template = f"{key}[]"
            yield KeyRow(
                key=template,
                kind="section",
                type="section",
                value=None,
                default=None,
                required=False,
                source="default",
                description=_doc(entry),
                absent=True,
            )
            yield from _walk(entry, None, template + ".", loaded, absent=True)


def _unwrap(kind: mi.Type) -> tuple[mi.Type, str]:
    """The type under a field's `Meta` and the description the `Meta` gives."""
    if isinstance(kind, mi.Metadata):
        return kind.type, (kind.extra_json_schema or {}).get("description", "")
    return kind, ""


def _doc(struct: mi.StructType) -> str:
    """A section's description: its docstring on one line."""
    return " ".join((struct.cls.__doc__ or "").split())


def _section_of(kind: mi.Type) -> mi.StructType | None:
    """The section struct of a field that is one (or one or null)."""
    if isinstance(kind, mi.StructType):
        return kind
    if isinstance(kind, mi.UnionType):
        structs = [t for t in kind.types if isinstance(t, mi.StructType)]
        if len(structs) == 1 and all(isinstance(t, (mi.StructType, mi.NoneType)) for t in kind.types):
            return structs[0]
    return None


def _default(field: mi.Field) -> Any:
    if field.default is not msgspec.NODEFAULT:
        return msgspec.to_builtins(field.default)
    if field.default_factory is not msgspec.NODEFAULT:
        return msgspec.to_builtins(field.default_factory())
    return None


def _section_source(loaded: LoadedConfig | None, key: str) -> str:
    """A section comes from the file when the file has it, from --set when an override gives it (or one of its
    keys where the file has none of it), else from the defaults."""
    if loaded is None:
        return "default"
    set_here = any(key == k or key.startswith(k + ".") for k in loaded.set_keys)
    if set_here or key not in loaded.file_keys and any(k.startswith(key + ".") for k in loaded.set_keys):
        return "--set"
    return "file" if key in loaded.file_keys else "default"


def _placeholder(kind: mi.Type) -> str:
    values = set(kind.values) if isinstance(kind, mi.LiteralType) else set()
    return "<task>" if values == set(TASKS) else "<difficulty>" if values == set(DIFFICULTIES) else "<name>"


def _as_template(rows: list[KeyRow], key: str) -> str | None:
    """`data.sources.gsm8k.hub` -> `data.sources.<task>.hub` where the config gives no gsm8k source."""
    for row in rows:
        head, sep, _ = row.key.partition(".<")
        if sep and key.startswith(head + "."):
            name, _, rest = key[len(head) + 1 :].partition(".")
            placeholder = row.key[len(head) + 1 :].partition(".")[0]
            if name in _placeholder_values(placeholder):
                return f"{head}.{placeholder}" + (f".{rest}" if rest else "")
    return None


def _placeholder_values(placeholder: str) -> tuple[str, ...]:
    return {"<task>": TASKS, "<difficulty>": DIFFICULTIES}.get(placeholder, ())


def _type_name(kind: mi.Type) -> str:
    kind, _ = _unwrap(kind)
    match kind:
        case mi.IntType() | mi.FloatType():
            return ("int" if isinstance(kind, mi.IntType) else "float") + _bounds(kind)
        case mi.StrType():
            return "str" + (f" matching {kind.pattern}" if kind.pattern else "")
        case mi.BoolType():
            return "bool"
        case mi.NoneType():
            return "null"
        case mi.LiteralType():
            return "|".join(str(v) for v in kind.values)
        case mi.UnionType():
            return " | ".join(_type_name(t) for t in kind.types)
        case mi.ListType():
            return f"list[{_type_name(kind.item_type)}]"
        case mi.TupleType():
            return f"tuple[{', '.join(_type_name(t) for t in kind.item_types)}]"
        case mi.DictType():
            return f"dict[{_type_name(kind.key_type)}, {_type_name(kind.value_type)}]"
        case mi.StructType():
            return "section"
    return type(kind).__name__


def _bounds(kind: mi.IntType | mi.FloatType) -> str:
    low = f"[{kind.ge:g}" if kind.ge is not None else f"({kind.gt:g}" if kind.gt is not None else None
    high = f"{kind.le:g}]" if kind.le is not None else f"{kind.lt:g})" if kind.lt is not None else None
    if low and high:
        return f" in {low}, {high}"
    if low:
        return f" {'≥' if low[0] == '[' else '>'} {low[1:]}"
    if high:
        return f" {'≤' if high[-1] == ']' else '<'} {high[:-1]}"
    return ""


def _flow(value: Any) -> str:
    """A value as YAML would write it inline: 0.0015, builtin:tiny-qwen3, {easy: 0.25, …}, null."""
    return yaml.safe_dump([value], default_flow_style=True, width=10**6, sort_keys=False).strip()[1:-1]


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
