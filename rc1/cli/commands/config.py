"""`rc1 config explain [KEY]` and `rc1 config schema`: the config described from its own fields' descriptions.

Read-only: the config is loaded and validated as every command loads it, and nothing else is opened; no lock is
taken and nothing is appended (the run's log need not exist).
"""

from __future__ import annotations

import argparse

import msgspec

from rc1.cli.args import config_args, require_run
from rc1.config.kept import read_run_config
from rc1.config.schema import Config
from rc1.views.config_explain import explain_rows, render_text, select

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


HELP = "explain the config's keys, or print its JSON schema (read-only)"


def arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    explain_parser = actions.add_parser(
        "explain",
        help="every key (or KEY and what is under it): type, effective value, where it "
        "came from (file, --set, default) and what it does",
    )
    config_args(explain_parser)
    explain_parser.add_argument(
        "key", nargs="?", metavar="KEY", help="a dotted key or section, e.g. train.learning_rate or release"
    )
    explain_parser.add_argument("--json", action="store_true")
    actions.add_parser("schema", help="the config's JSON schema, every description included, on stdout")


def run(args) -> int:
    return explain(args) if args.action == "explain" else schema(args)


def explain(args) -> int:
    """The run's config (its kept one, past round 1): what `--config`/`--set` ask for that differs is shown as what
    the key would be, since explaining changes nothing."""
    loaded, differing = read_run_config(args.config, args.overrides, args.run)
    require_run(args, loaded.config.run.name, new_allowed=True)
    would_be = {key: new for key, _, new in differing}
    rows = explain_rows(loaded)
    if args.key:
        rows = select(rows, args.key)
    if args.json:
        document = {
            "config": str(loaded.path),
            "overrides": list(loaded.overrides),
            "sha256": loaded.sha256,
            "keys": rows,
            "would_be": {row.key: would_be[row.key] for row in rows if row.key in would_be},
        }
        print(msgspec.json.format(msgspec.json.encode(document)).decode())
    else:
        print(render_text(rows, loaded, would_be))
    return 0


def schema(args) -> int:
    """The JSON schema of a config file (msgspec's, with every field's description), for editors and validators."""
    document = {"$schema": JSON_SCHEMA_DIALECT, **msgspec.json.schema(Config)}
    print(msgspec.json.format(msgspec.json.encode(document)).decode())
    return 0
