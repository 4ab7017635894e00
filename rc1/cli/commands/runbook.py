"""`rc1 runbook [NAME] [--markdown]`: what a failed check or a tripped monitor usually means and what to try (read
only: no config, no run)."""

from __future__ import annotations

import argparse
import difflib

from rc1.core.errors import BadInput

HELP = "what a failed check or a tripped monitor usually means and what to try"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "name", nargs="?", metavar="NAME", help="a check (e.g. difficulty) or a monitor (e.g. entropy_floor)"
    )
    parser.add_argument("--markdown", action="store_true", help="every entry as docs/monitors-and-runbook.md's tables")


def run(args) -> int:
    from rc1.app.runbook import CHECKS, RULES, markdown, text

    if args.markdown:
        print(markdown(), end="")
        return 0
    names = list(CHECKS) + list(RULES)
    if args.name is None:
        print(text(names))
        return 0
    if args.name not in names:
        close = difflib.get_close_matches(args.name, names, n=3)
        raise BadInput(
            f"{args.name}: no check or monitor of that name"
            + (f"; did you mean {' or '.join(close)}?" if close else "; `rc1 runbook` lists them all")
        )
    print(text([args.name]))
    return 0
