"""A run remembers its own config: fixed by its first command, used by every later command on the run.

The run's first event (`run_started`, `keeps: true`) keeps the effective config (file + `--set` overrides) in
`data/<run>/config.json` (rc1/app/session.py); round1_passed fingerprints it (`Fingerprints.config` is its sha256).
From then on a command that names only the run (`--run NAME`, `--set run.name=NAME`, or the default config's run)
uses the kept config, whatever the config file on disk says now, before round 1 has passed as after: a failed round
is fixed and run again on the run's own config, and a forgotten `--set` never sends a run back to INIT. A command
that asks for a different config (`--config F`, or a `--set` of another key, giving other values) is refused (exit
3, nothing appended), naming each differing key with both values and the ways on: a run of its own for that config
first, the run's own config, or `--accept-changed-inputs`, which changes the run's config on purpose (the command's
`run_started` keeps the new one, and a stage that finds a gate on the old one appends gate_invalidated as before).
A run an older rc1 started kept its config at round 1's pass, in force while that gate was.
"""

from __future__ import annotations

import copy
import hashlib
import shutil
import sys
import tempfile
from pathlib import Path

import msgspec

from rc1.config.loading import LoadedConfig, load_config
from rc1.core.errors import BadInput, GateClosed
from rc1.core.fsutil import atomic_write_bytes
from rc1.core.workspace import Workspace
from rc1.eventlog.snapshot import replay_log

DEFAULT_CONFIG = "configs/local.yaml"


class KeptConfig(msgspec.Struct, frozen=True, kw_only=True):
    config_path: str  # the file it was loaded from (its folder resolves the config's relative paths)
    overrides: list[str]
    sha256: str  # of `config`, as LoadedConfig fingerprints it (what round1_passed recorded)
    config: dict
    # sha256 of `config` as stored (its JSON): a hand edit shows here, while an rc1 whose Config gained a field
    # (its default now part of the fingerprint) is not mistaken for one.
    values_sha256: str = ""
    files: dict[str, str] = msgspec.field(default_factory=dict)  # LoadedConfig.files at round 1: what it fingerprinted


def kept_config_path(ws: Workspace) -> Path:
    return ws.data_dir / "config.json"


def kept_weights_path(ws: Workspace) -> Path:
    return ws.data_dir / "weights.json"


def kept_templates_path(ws: Workspace) -> Path:
    return ws.data_dir / "templates"


def keep_inputs(ws: Workspace, loaded: LoadedConfig) -> LoadedConfig:
    """Round 1: copies of the weights file and the template pack the config names, beside the config the run
    keeps, and the config reading them from then on (the round's checks, its fingerprints and every later command
    on the run). Each copy is written whole, then renamed into place; an input that is missing is not copied (the
    round's checks say so)."""
    weights = loaded.resolve(loaded.config.reward.weights)
    if weights.is_file():
        atomic_write_bytes(kept_weights_path(ws), weights.read_bytes())
    else:  # an older round's copy must not stand in for a file that is gone: the round's checks say it is missing
        kept_weights_path(ws).unlink(missing_ok=True)
    pack = loaded.resolve(loaded.config.data.templates)
    if pack.is_dir():
        files = {path.name: path.read_bytes() for path in sorted(pack.iterdir()) if path.is_file()}
        _replace_folder(kept_templates_path(ws), files)
    elif kept_templates_path(ws).is_dir():
        shutil.rmtree(kept_templates_path(ws))
    return _with_kept_inputs(ws, loaded, loaded.config.reward.weights, loaded.config.data.templates)


def _replace_folder(folder: Path, files: dict[str, bytes]) -> None:
    """`folder` holding exactly `files`: written beside it, then swapped in (a reader sees the old or the new)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    for name, data in files.items():
        (staged / name).write_bytes(data)
    if folder.exists():
        old = folder.with_name(f"{staged.name}.old")
        folder.rename(old)
        staged.rename(folder)
        shutil.rmtree(old)
    else:
        staged.rename(folder)


def _with_kept_inputs(ws: Workspace, loaded: LoadedConfig, weights: str, templates: str) -> LoadedConfig:
    """`loaded` reading the run's kept copies where they exist and the config still names what they were copied
    from (`weights`, `templates`: the names as the kept config gives them)."""
    kept_weights, kept_templates = kept_weights_path(ws), kept_templates_path(ws)
    same_weights = kept_weights.is_file() and loaded.config.reward.weights == weights
    same_templates = kept_templates.is_dir() and loaded.config.data.templates == templates
    return msgspec.structs.replace(
        loaded,
        kept_weights=kept_weights if same_weights else None,
        kept_templates=kept_templates if same_templates else None,
    )


def keep_config(ws: Workspace, loaded: LoadedConfig) -> Path:
    """Round 1: keep the run's effective config beside its data (written whole, then renamed)."""
    where = loaded.path.relative_to(ws.root) if loaded.path.is_relative_to(ws.root) else loaded.path
    values = msgspec.to_builtins(loaded.config)
    kept = KeptConfig(
        config_path=str(where),
        overrides=list(loaded.overrides),
        sha256=loaded.sha256,
        config=values,
        values_sha256=_values_sha256(values),
        files=dict(loaded.files),
    )
    path = kept_config_path(ws)
    atomic_write_bytes(path, msgspec.json.format(msgspec.json.encode(kept)))
    return path


def load_run_config(
    config: str | None, overrides: list[str], run: str | None = None, accept_changed: bool = False
) -> LoadedConfig:
    """The config a command on a run uses: its kept config while its round-1 gate is in force, else the one
    asked for (`config`, default configs/local.yaml, with `overrides`)."""
    asked, own, wanted, ws = _asked_and_kept(config, overrides, run, accept_changed)
    if own is None or wanted is None:
        return own or asked
    if wanted.sha256 == own.sha256 or accept_changed:
        return wanted
    listed = "\n".join(f"  {key}: {old} (kept) -> {new}" for key, old, new in differences(own, wanted))
    other = _other_run_name(config, ws)
    raise GateClosed(
        f"{kept_config_path(ws)}: run {ws.run} keeps the config it was started with; this command asks for\n"
        f"{listed}\nnothing was appended. To train this config as a run of its own: add --run {other} (or set "
        f"run.name: {other} in {config or DEFAULT_CONFIG}). To go on with run {ws.run}'s own config: name only the "
        f"run (--run {ws.run}). To change run {ws.run}'s config: add --accept-changed-inputs (its gates are "
        "invalidated and both rounds run again)"
    )


def _other_run_name(config: str | None, ws: Workspace) -> str:
    """A name for a run of its own: the config file's name, unless that is the run's already or a run of the
    workspace; then that name with a number."""
    stem = Path(config).stem if config else ws.run
    taken = {*ws.runs(), ws.run}
    name, n = stem, 2
    while name in taken:
        name, n = f"{stem}-{n}", n + 1
    return name


def read_run_config(
    config: str | None, overrides: list[str], run: str | None = None
) -> tuple[LoadedConfig, list[tuple[str, object, object]]]:
    """For a command that only reads (status, config explain, rollouts, score, …): the config the run uses, as
    `load_run_config` finds it, and what the config asked for would change, (key, the run's value, the value it
    would be): shown, never refused, since reading a run changes nothing. A run without a kept config in force
    answers with the config asked for."""
    asked, own, wanted, _ = _asked_and_kept(config, overrides, run, accept_changed=False)
    if own is None:
        return asked, []
    return own, ([] if wanted is None else differences(own, wanted))


def _asked_and_kept(
    config: str | None, overrides: list[str], run: str | None, accept_changed: bool
) -> tuple[LoadedConfig, LoadedConfig | None, LoadedConfig | None, Workspace]:
    """(the config asked for, the run's kept config or None, what the command asks of the run or None where it
    names only the run, the workspace). A kept config edited by hand is refused unless `accept_changed`, and then
    the run's is taken to be the one asked for."""
    overrides = [*overrides, f"run.name={run}"] if run else list(overrides)
    asked = load_config(config or DEFAULT_CONFIG, overrides)
    ws = Workspace.here(asked.config.run.name)
    kept = _kept_in_force(ws)
    if kept is None:
        return asked, None, None, ws
    own = _load_kept(ws, kept)
    if _values_sha256(kept.config) != kept.values_sha256:  # edited by hand after round 1 passed on it
        if accept_changed:
            return asked, None, None, ws
        raise GateClosed(
            f"{kept_config_path(ws)}: the config run {ws.run} kept at round 1 was changed since (sha256 "
            f"{kept.sha256[:12]} -> {own.sha256[:12]}); nothing was appended. Put it back, or add "
            "--accept-changed-inputs to invalidate the gates and run both rounds on the config asked for"
        )
    explicit = config is not None or any(not item.startswith("run.name=") for item in overrides)
    if explicit:
        # The config asked for reads the run's own weights and templates too, where it names the files they were
        # copied from (`make resume` names --config: the run is still the run).
        named = _with_kept_inputs(ws, asked, kept.config["reward"]["weights"], kept.config["data"]["templates"])
        return asked, own, named if config is not None else _load_kept(ws, kept, overrides), ws
    # Named by its run alone: the note is for one who edited the run's own file and expects the run to follow it;
    # another file (the default, for a run started from configs/mine.yaml) says nothing about the run.
    own_file = _same_file(asked.path, ws.root / kept.config_path)
    if asked.sha256 != own.sha256 and own_file:
        keys = ", ".join(key for key, _, _ in differences(own, asked)[:5])
        print(
            f"note: run {ws.run} uses the config it was started with ({kept_config_path(ws).relative_to(ws.root)}); "
            f"{asked.path.name} differs now ({keys}). To change the run's config: --config "
            f"{config or DEFAULT_CONFIG} "
            "--accept-changed-inputs",
            file=sys.stderr,
        )
    return asked, own, None, ws


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def changed_files(ws: Workspace, loaded: LoadedConfig) -> list[str]:
    """The files the config names (reward functions' sources, your tasks' records) whose content differs from what
    round 1 fingerprinted, by the key that names them; [] where no config was kept."""
    try:
        kept = msgspec.json.decode(kept_config_path(ws).read_bytes(), type=KeptConfig)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return []
    return [
        key for key in sorted(kept.files.keys() | loaded.files.keys()) if kept.files.get(key) != loaded.files.get(key)
    ]


def _values_sha256(values: dict) -> str:
    return hashlib.sha256(msgspec.json.encode(values)).hexdigest()


def _load_kept(ws: Workspace, kept: KeptConfig, overrides: list[str] = ()) -> LoadedConfig:
    """The kept values (the overrides they were made with already in them), read as if from their file, with
    this command's `overrides` on top."""
    raw = kept.config
    if any("format" not in entry for entry in raw.get("reward", {}).get("functions", [])):
        # Kept before reward functions had formats: they were called with text, and go on so.
        raw = copy.deepcopy(raw)
        for entry in raw["reward"]["functions"]:
            entry.setdefault("format", "text")
    loaded = load_config(ws.root / kept.config_path, overrides, raw=raw)
    loaded = msgspec.structs.replace(loaded, overrides=(*kept.overrides, *overrides))
    return _with_kept_inputs(ws, loaded, kept.config["reward"]["weights"], kept.config["data"]["templates"])


def _kept_in_force(ws: Workspace) -> KeptConfig | None:
    """The config the run keeps: the one its last `run_started` with `keeps` fixed; for a run an older rc1 started,
    the one round 1 kept while its gate is in force. None where there is none (no run yet, or the file was removed:
    the command's config becomes the run's)."""
    path = kept_config_path(ws)
    if not path.exists() or not ws.log_path.exists():
        return None
    projection = replay_log(ws)[0].projection
    try:
        kept = msgspec.json.decode(path.read_bytes(), type=KeptConfig)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise BadInput(
            f"{path}: the run's kept config is unreadable ({e}); it is the config the run was started with"
        ) from None
    if projection.kept_config is not None:
        return kept if kept.sha256 == projection.kept_config else None
    gate = projection.gates["round1"]
    if not gate.passed or gate.fingerprints is None or kept.sha256 != gate.fingerprints.config:
        return None  # an older rc1's run: kept by a round 1 whose gate is no longer the one in force
    return kept


def differences(a: LoadedConfig, b: LoadedConfig) -> list[tuple[str, object, object]]:
    """(dotted key, value in a, value in b) for every leaf that differs."""
    left, right = dict(_leaves(msgspec.to_builtins(a.config))), dict(_leaves(msgspec.to_builtins(b.config)))
    return [
        (key, left.get(key), right.get(key))
        for key in sorted(left.keys() | right.keys())
        if left.get(key) != right.get(key)
    ]


def _leaves(node, prefix: str = ""):
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from _leaves(value, f"{prefix}{key}.")
    else:
        yield prefix.rstrip("."), node
