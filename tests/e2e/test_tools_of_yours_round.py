"""Round 1 with a tool of yours, through the CLI (issue 43; rc1/checks/tools_of_yours.py): docs/bring-your-own.md's
tool and config changes, copied as a user copies them, pass it; the same tool as the docs first printed it, which
raised on a unit it did not know, fails the round by name (exit 3, before a GPU hour is spent)."""

import pytest
from conftest import events, make_workspace, rc1_here
from live_episodes import documented_tool

from rc1.core.errors import ExitCode

pytestmark = pytest.mark.e2e

MODULE, CHANGES = documented_tool()
# The docs' first version: no check of the unit, so a unit it does not know is a KeyError.
STRICT = '''
def convert(value: float, unit: str) -> str:
    """Convert a length to metres.

    Args:
        value: How many of the unit.
        unit: One of km, m, cm.
    """
    return f"{value * {'km': 1000, 'm': 1, 'cm': 0.01}[unit]:g} m"
'''


def round_1(tmp_path, source: str, module: str):
    """`rc1 advance --until R1_PASSED` on the suite's short config with the documented changes, the tool's module
    (named `module`: Python imports a name once) beside it; the result and round 1's check events by name."""
    (tool,) = CHANGES["data"]["tools_of_yours"]
    root = make_workspace(
        tmp_path,
        **{
            "data.episodes": CHANGES["data"]["episodes"],
            "data.tools_of_yours": [{**tool, "path": f"{module}:convert"}],
        },
    )
    (root / "configs" / f"{module}.py").write_text(source)
    result = rc1_here(root, "advance", "--until", "R1_PASSED")
    checks = {e["name"]: e for e in events(root) if e["type"] in ("check_passed", "check_failed") and e["round"] == 1}
    return result, checks


def test_the_documented_tool_passes_round_1(tmp_path):
    # The docs' module is my_tools; another name here, as tests/unit imports a my_tools of its own in one process.
    assert CHANGES["data"]["tools_of_yours"][0]["path"] == "my_tools:convert"
    result, checks = round_1(tmp_path, MODULE, "documented_tools")
    assert result.returncode == ExitCode.OK, result.stdout + result.stderr
    assert checks["tools_of_yours"]["type"] == "check_passed"
    assert checks["tools_of_yours"]["measured"]["probe_calls"] == 3.0


def test_a_tool_that_raises_on_what_a_policy_writes_fails_round_1_by_name(tmp_path):
    result, checks = round_1(tmp_path, STRICT, "strict_tools")
    assert result.returncode == ExitCode.GATE_CLOSED, result.stdout + result.stderr
    assert [name for name, e in checks.items() if e["type"] == "check_failed"] == ["tools_of_yours"]
    assert "tool convert (strict_tools:convert) raised KeyError: '' when called with" in result.stderr
    assert "tools_of_yours:" in result.stderr  # its runbook entry, with what to try
