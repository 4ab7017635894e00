"""Round 1 with a tool of yours, through the CLI (issue 43; rc1/checks/tools_of_yours.py): a tool that raises on an
argument a policy writes fails the round by name (exit 3, before a GPU hour is spent), and the documented one, which
answers such an argument with an error the model reads, passes it."""

import pytest
from conftest import events, make_workspace, rc1_here

from rc1.core.errors import ExitCode

pytestmark = pytest.mark.e2e

TOOLS = '''
def convert(value: float, unit: str) -> str:
    """Convert a length to metres.

    Args:
        value: How many of the unit.
        unit: One of km, m, cm.
    """
    metres = {"km": 1000, "m": 1, "cm": 0.01}
    if unit not in metres:
        return f"error: unknown unit {unit!r}; units: km, m, cm"
    return f"{value * metres[unit]:g} m"


def strict_convert(value: float, unit: str) -> str:
    """Convert a length to metres.

    Args:
        value: How many of the unit.
        unit: One of km, m, cm.
    """
    return f"{value * {'km': 1000, 'm': 1, 'cm': 0.01}[unit]:g} m"
'''


@pytest.mark.parametrize("function", ["strict_convert", "convert"])
def test_round_1_calls_your_tool_with_what_a_policy_writes(tmp_path, function):
    module = f"length_tools_{function}"  # a module of its own per case: Python imports a name once
    root = make_workspace(
        tmp_path,
        **{"data.episodes": "live", "data.tools_of_yours": [{"name": "convert", "path": f"{module}:{function}"}]},
    )
    (root / "configs" / f"{module}.py").write_text(TOOLS)
    result = rc1_here(root, "advance", "--until", "R1_PASSED")
    checks = {e["name"]: e for e in events(root) if e["type"] in ("check_passed", "check_failed") and e["round"] == 1}
    if function == "convert":
        assert result.returncode == ExitCode.OK, result.stdout + result.stderr
        assert checks["tools_of_yours"]["type"] == "check_passed"
        assert checks["tools_of_yours"]["measured"]["probe_calls"] == 3.0
        return
    assert result.returncode == ExitCode.GATE_CLOSED, result.stdout + result.stderr
    assert [name for name, e in checks.items() if e["type"] == "check_failed"] == ["tools_of_yours"]
    assert f"tool convert ({module}:strict_convert) raised KeyError: '' when called with" in result.stderr
    assert "tools_of_yours:" in result.stderr  # its runbook entry, with what to try
