"""The template pack (`configs/templates/pack_v2/`): roles, styles, per-task user turns, clarification
turns and tool steps, read into typed structs and validated as a whole.

A pack is a folder of five YAML files (see the pack's own comments). Every problem found is reported
together, each naming the file and the key; a pack too small for the preflight minimums (6 templates
per task, 4 roles, 3 styles) is refused here, before any pool is built from it.
"""

from __future__ import annotations

import hashlib
import string
from pathlib import Path

import msgspec
import yaml

from rc1.core.errors import BadInput

MIN_TEMPLATES_PER_TASK = 6
MIN_ROLES = 4
MIN_STYLES = 3
PACK_FILES = ("roles.yaml", "styles.yaml", "tasks.yaml", "clarify.yaml", "tools.yaml")
TOOLS = ("wiki", "calc")
_CONTEXT_TASKS = ("hotpotqa", "strategyqa")


class ToolSpec(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    call: str
    announce: str


class ClarifySpec(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    withheld_context: list[str]
    withheld_number: list[str]
    vague: list[str]


class TemplatePack(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    sha256: str
    roles: dict[str, str]
    styles: dict[str, str]
    tasks: dict[str, dict[str, str]]
    clarify: ClarifySpec
    tools: dict[str, ToolSpec]


def pack_sha256(folder: Path) -> str:
    """One digest over the pack's files (names and bytes, in a fixed order)."""
    digest = hashlib.sha256()
    for name in PACK_FILES:
        path = Path(folder) / name
        digest.update(name.encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"<missing>")
        digest.update(b"\0")
    return digest.hexdigest()


def load_pack(folder: Path) -> TemplatePack:
    folder = Path(folder)
    if not folder.is_dir():
        raise BadInput(f"{folder}: template pack folder not found (data.templates)")
    raw = {name: _read(folder / name) for name in PACK_FILES}
    try:
        roles = msgspec.convert(raw["roles.yaml"], dict[str, str])
        styles = msgspec.convert(raw["styles.yaml"], dict[str, str])
        tasks = msgspec.convert(raw["tasks.yaml"], dict[str, dict[str, str]])
    except msgspec.ValidationError as e:
        raise BadInput(f"{folder}: {e}") from None
    clarify = _convert(raw["clarify.yaml"], ClarifySpec, folder / "clarify.yaml")
    tools = _convert(raw["tools.yaml"], dict[str, ToolSpec], folder / "tools.yaml")
    problems = _problems(folder, roles, styles, tasks, clarify, tools)
    if problems:
        raise BadInput("\n".join(problems))
    return TemplatePack(
        path=str(folder),
        sha256=pack_sha256(folder),
        roles=roles,
        styles=styles,
        tasks=tasks,
        clarify=clarify,
        tools=tools,
    )


def _problems(folder, roles, styles, tasks, clarify, tools) -> list[str]:
    problems = []
    if len(roles) < MIN_ROLES:
        problems.append(f"{folder / 'roles.yaml'}: {len(roles)} roles; a pack needs at least {MIN_ROLES}")
    if len(styles) < MIN_STYLES:
        problems.append(f"{folder / 'styles.yaml'}: {len(styles)} styles; a pack needs at least {MIN_STYLES}")
    for task in ("gsm8k", *_CONTEXT_TASKS):
        templates = tasks.get(task, {})
        if len(templates) < MIN_TEMPLATES_PER_TASK:
            problems.append(
                f"{folder / 'tasks.yaml'}: {task}: {len(templates)} templates; at least {MIN_TEMPLATES_PER_TASK} needed"
            )
        needed = {"question", "context"} if task in _CONTEXT_TASKS else {"question"}
        for name, template in templates.items():
            fields = _fields(template)
            if fields != needed:
                problems.append(
                    f"{folder / 'tasks.yaml'}: {task}.{name}: uses fields {sorted(fields)}; expected exactly "
                    f"{sorted(needed)}"
                )
    for key, templates in (
        ("withheld_context", clarify.withheld_context),
        ("withheld_number", clarify.withheld_number),
    ):
        if not templates:
            problems.append(f"{folder / 'clarify.yaml'}: {key}: give at least one template")
        for k, template in enumerate(templates):
            if _fields(template) != {"question"}:
                problems.append(f"{folder / 'clarify.yaml'}: {key}.{k}: must use exactly the field {{question}}")
    if not clarify.vague:
        problems.append(f"{folder / 'clarify.yaml'}: vague: give at least one vague quantity")
    for name in TOOLS:
        if name not in tools:
            problems.append(f"{folder / 'tools.yaml'}: {name}: missing tool step")
    for name in tools:
        if name not in TOOLS:
            problems.append(f"{folder / 'tools.yaml'}: {name}: unknown tool; known tools are {', '.join(TOOLS)}")
    return problems


def _fields(template: str) -> set[str]:
    try:
        return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}
    except ValueError:
        return {"<malformed braces>"}


def _read(path: Path):
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"{path}: missing from the template pack") from None
    except yaml.YAMLError as e:
        raise BadInput(f"{path}: malformed YAML: {e}") from None


def _convert(raw, kind, path: Path):
    try:
        return msgspec.convert(raw, kind)
    except msgspec.ValidationError as e:
        raise BadInput(f"{path}: {e}") from None
