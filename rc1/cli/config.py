"""`rc1 config explain [KEY]` and `rc1 config schema`: the config described from its own fields' descriptions.

Read-only: the config is loaded and validated as every command loads it, and nothing else is opened; no lock is
taken and nothing is appended (the run's log need not exist).
"""

from __future__ import annotations

import msgspec

from rc1.cli._run_config import config_of
from rc1.config.schema import Config
from rc1.views.config_explain import explain_rows, render_text, select

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def run(args) -> int:
    return explain(args) if args.action == "explain" else schema(args)


def explain(args) -> int:
    loaded = config_of(args)
    rows = explain_rows(loaded)
    if args.key:
        rows = select(rows, args.key)
    if args.json:
        document = {
            "config": str(loaded.path),
            "overrides": list(loaded.overrides),
            "sha256": loaded.sha256,
            "keys": rows,
        }
        print(msgspec.json.format(msgspec.json.encode(document)).decode())
    else:
        print(render_text(rows, loaded))
    return 0


def schema(args) -> int:
    """The JSON schema of a config file (msgspec's, with every field's description), for editors and validators."""
    document = {"$schema": JSON_SCHEMA_DIALECT, **msgspec.json.schema(Config)}
    print(msgspec.json.format(msgspec.json.encode(document)).decode())
    return 0
