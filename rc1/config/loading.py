"""Reading a run config: the YAML file, its `--set` overrides and the cross-field rules -> a `LoadedConfig` with its
fingerprint. Every error names the file and the dotted key, and says how to fix it. Type errors come from msgspec
(the first one found); cross-field rules (rc1/config/rules.py) are collected and reported together.
"""

from __future__ import annotations

import copy
import hashlib
import re
from pathlib import Path

import msgspec
import yaml

from rc1.config.keys import did_you_mean
from rc1.config.rules import cross_field_problems
from rc1.config.schema import Config
from rc1.core.errors import BadInput
from rc1.run.monitors.rules import CONFIGURABLE
from rc1.run.monitors.sections import MonitorsConfig

# Keys added after runs were fingerprinted: left out of the fingerprint while they hold their default, so a run gated
# by an older rc1 keeps its gates (its kept config has none of them, and reads back with their defaults). A later rc1
# that changes one of these defaults changes the fingerprint of every run kept with the old one: keep them.
_LATER_KEYS = {
    # The monitor rules added after runs were kept (issue 43: a live line's tool use), each left out at its defaults;
    # listed before "monitors", which leaves out a section at its defaults whole. A kept run with a section of its own
    # (a live one's drift: null) reads back with these at their defaults and keeps its fingerprint.
    **{
        f"monitors.{rule}": CONFIGURABLE[rule].params()
        for rule in ("tool_failures", "tool_hops_drift", "over_asking", "never_asking", "sampler_mismatch")
    },  # sampler_mismatch: issue 52
    "monitors": MonitorsConfig(),
    "scorer.price_per_million_input_tokens": None,
    "scorer.price_per_million_output_tokens": None,
    "train.step_batch": "scales",
    "train.rollouts": "auto",
    "train.vllm_server_url": "http://localhost:8000",
    "reward.columns": {},
    "reward.function_timeout_s": 60.0,
    "train.top_p": 1.0,
    "train.top_k": 0,
    "train.mask_truncated_completions": False,
    "train.vllm_gpu_memory_utilization": 0.3,
    "train.deterministic": True,
    "preflight.max_cut_share": 0.10,
    "preflight.max_no_signal_share": 0.95,
    "data.episodes": "recorded",
    "data.max_tool_rounds": 6,  # equal to the schema default (rc1/config/sections/data.py)
    "data.tools_of_yours": [],  # your tools (issue 43): none in a run kept before them
    "data.wiki": "pages",
    "data.pages": "titles",  # a page per name (issue 50): none in a run kept before it
}
# The same for the keys a reward.functions[] entry gained with TRL's formats, factories, reward models and ranges. A
# run kept before them called its functions with text (rc1/config/kept.py reads its entries back so), hence `format`
# is left out at "text", which a new config gets only by asking for it.
_LATER_FUNCTION_KEYS = {
    "model": None,
    "kwargs": None,
    "format": "text",
    "scale": 1.0,
    "clip": False,
    "constant_ok": False,
}
# The same for the keys a data.tasks.<name> entry gained with the difficulty signals and its own diversity floor.
_LATER_TASK_KEYS = {
    "difficulty": "auto",
    "difficulty_column": "difficulty",
    "probe_samples": 4,
    "probe_items": 1024,
    "min_distinct2": None,
}


def _fingerprinted(config: Config) -> bytes:
    """The config's JSON as its fingerprint reads it (`_LATER_KEYS` at their defaults left out)."""
    values = msgspec.to_builtins(config)
    for dotted, default in _LATER_KEYS.items():
        *parents, leaf = dotted.split(".")
        node, struct = values, config
        for part in parents:
            node, struct = node[part], getattr(struct, part)
        if getattr(struct, leaf) == default:
            del node[leaf]
    for entry in values["reward"]["functions"]:
        for key, default in _LATER_FUNCTION_KEYS.items():
            if entry.get(key) == default:
                del entry[key]
    for entry in values["data"]["tasks"].values():
        for key, default in _LATER_TASK_KEYS.items():
            if key in entry and entry[key] == default:
                del entry[key]
    return msgspec.json.encode(values)


class LoadedConfig(msgspec.Struct, frozen=True, kw_only=True):
    """A validated config plus where it came from; `sha256` fingerprints the effective values."""

    config: Config
    path: Path
    overrides: tuple[str, ...]
    sha256: str
    # Provenance, outside the fingerprint: every dotted key the file itself gives (sections and the keys in them).
    file_keys: frozenset[str] = frozenset()
    # The files the config names whose content is part of the fingerprint (your reward functions' sources, your
    # tasks' record files): "reward.functions.<name>" / "data.tasks.<name>" -> sha256 ("missing": not found).
    files: dict[str, str] = msgspec.field(default_factory=dict)

    @property
    def set_keys(self) -> tuple[str, ...]:
        """The dotted keys the `--set` overrides name, in order."""
        return tuple(item.partition("=")[0] for item in self.overrides)

    def source_of(self, dotted: str) -> str:
        """Where the effective value of `dotted` comes from: `--set` (an override names it, a key inside it or a
        section around it), else `file`, else `default`."""
        if any(key == dotted or key.startswith(dotted + ".") or dotted.startswith(key + ".") for key in self.set_keys):
            return "--set"
        return "file" if dotted in self.file_keys else "default"

    # The run's own copies of its weights file and template pack, kept by round 1 beside its config
    # (rc1/config/kept.py): while the config still names the files they were copied from, the run reads these, so
    # editing configs/weights.json for a new run leaves this one (its resume, its audit) alone.
    kept_weights: Path | None = None
    kept_templates: Path | None = None

    @property
    def weights_path(self) -> Path:
        return self.kept_weights or self.resolve(self.config.reward.weights)

    @property
    def rubric_path(self) -> Path:
        return self.resolve(self.config.scorer.rubric)

    @property
    def templates_path(self) -> Path:
        return self.kept_templates or self.resolve(self.config.data.templates)

    def resolve(self, relative: str) -> Path:
        """A path named in the config, relative to the config file's folder."""
        return (self.path.parent / relative).resolve()


def load_config(
    path: str | Path, overrides: list[str] | tuple[str, ...] = (), *, raw: dict | None = None
) -> LoadedConfig:
    """The config file at `path` (or `raw`, the values a run kept, read as if from that file: its relative paths
    resolve from the file's folder) with the `--set` overrides applied, validated."""
    path = Path(path)
    raw = _read_yaml(path) if raw is None else copy.deepcopy(raw)
    file_keys = frozenset(_dotted_keys(raw))
    for item in overrides:
        apply_override(raw, item)
    config = _convert(raw, path, overrides)
    problems = cross_field_problems(config)
    if problems:
        raise BadInput("\n".join(f"{path}: {p}" for p in problems))
    from rc1.core.named_files import named_files

    files = named_files(config, path.resolve().parent)
    return LoadedConfig(
        config=config,
        path=path.resolve(),
        overrides=tuple(overrides),
        sha256=config_sha256(config, files),
        file_keys=file_keys,
        files=files,
    )


def config_sha256(config: Config, files: dict[str, str] | None = None) -> str:
    """The fingerprint of the effective values and, where the config names any, of the files whose content is the
    run's as much as its values are (`named_files`): editing a reward function's code, or a task's records, is
    editing the config. A config that names none fingerprints as it always did."""
    encoded = _fingerprinted(config)
    if files:
        encoded += b"\n" + msgspec.json.encode(dict(sorted(files.items())))
    return hashlib.sha256(encoded).hexdigest()


def effective_yaml(loaded: LoadedConfig) -> str:
    header = f"# effective config from {loaded.path}"
    if loaded.overrides:
        header += " with --set " + " --set ".join(loaded.overrides)
    header += f"\n# sha256 {loaded.sha256}\n"
    return header + yaml.safe_dump(msgspec.to_builtins(loaded.config), sort_keys=False)


def _read_yaml(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"{path}: config file not found") from None
    except OSError as e:
        raise BadInput(f"{path}: cannot read config: {e.strerror}") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e)
        raise BadInput(f"{path}{where}: malformed YAML: {problem}") from None
    if not isinstance(raw, dict):
        raise BadInput(f"{path}: the top level must be a mapping of sections, got {type(raw).__name__}")
    return raw


def _dotted_keys(node: dict, prefix: str = ""):
    """Every key of a nested mapping as a dotted path, sections and the keys in them."""
    for key, value in node.items():
        dotted = f"{prefix}{key}"
        yield dotted
        if isinstance(value, dict):
            yield from _dotted_keys(value, dotted + ".")


def apply_override(raw: dict, item: str) -> None:
    """One `--set dotted.key=value` written into the parsed YAML `raw`, in place (the value parsed as YAML)."""
    key, sep, text = item.partition("=")
    if not sep or not key:
        raise BadInput(f"--set {item!r}: expected dotted.key=value")
    parts = key.split(".")
    node = raw
    for depth, part in enumerate(parts[:-1]):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise BadInput(f"--set {key}: {'.'.join(parts[: depth + 1])} is not a section")
        node = child
    node[parts[-1]] = parse_scalar(text)


def parse_scalar(text: str):
    try:
        value = yaml.safe_load(text) if text else ""
    except yaml.YAMLError:
        return text
    if isinstance(value, str):
        # YAML 1.1 reads `5e-4` as a string; a user typing it on the command line means a number.
        try:
            return float(value)
        except ValueError:
            return value
    return value


_PATH_IN_MESSAGE = re.compile(r" - at `\$\.?([^`]*)`$")


def _convert(raw: dict, path: Path, overrides: list[str] | tuple[str, ...]) -> Config:
    """The validated Config; an error is blamed on the `--set` that gave the key (else on the file), and an unknown
    key names the keys it may have meant."""
    try:
        return msgspec.convert(raw, Config, strict=True)
    except msgspec.ValidationError as e:
        dotted, detail, unknown = _dotted_message(str(e))
        given = [item for item in overrides if _names(item.partition("=")[0], dotted)]
        if unknown:
            detail = f"{detail}; {did_you_mean(_unknown_key(dotted, given))}"
        if given:
            raise BadInput(f"--set {given[-1]}: {dotted}: {detail}") from None
        raise BadInput(f"{path}: {dotted}: {detail}") from None


def _unknown_key(dotted: str, given: list[str]) -> str:
    """The unknown key to find the meant one for: the override's key where msgspec stopped at a section on its path
    (`--set trian.max_steps=3` stops at `trian`: train.max_steps was meant), else the unknown key's own path, which
    for a key inside the override's value is below the override's key (`--set monitors.entropy_floor={min: 1000}`:
    `monitors.entropy_floor.min`, matched against entropy_floor's own keys)."""
    key = given[-1].partition("=")[0] if given else dotted  # the override the error blames
    return key if len(key) > len(dotted) else dotted


def _names(key: str, dotted: str) -> bool:
    """Whether an override of `key` gave the value at `dotted` (the key itself, or the section an unknown key of the
    override sits under: `--set trian.max_steps=3` gives `trian`)."""
    return key == dotted or key.startswith(dotted + ".") or dotted.startswith(key + ".")


def _dotted_message(message: str) -> tuple[str, str, bool]:
    """msgspec's "Expected `int`, got `str` - at `$.train.max_steps`" -> ("train.max_steps", "Expected …", False);
    the last is whether the key is unknown."""
    match = _PATH_IN_MESSAGE.search(message)
    dotted = ""
    detail = message
    if match:
        dotted = re.sub(r"\[(\d+)\]", r".\1", match.group(1))
        detail = message[: match.start()]
    unknown = re.match(r"Object contains unknown field `([^`]*)`", detail)
    if unknown:
        dotted = f"{dotted}.{unknown.group(1)}" if dotted else unknown.group(1)
        detail = "unknown key (check the spelling; unknown keys are refused)"
    return dotted or "<top level>", detail, unknown is not None
