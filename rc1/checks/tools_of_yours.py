"""The `tools_of_yours` check (data.tools_of_yours, live episodes): each tool of yours answers the arguments a policy
writes, with a str, within its timeout, the same twice.

A policy calls a tool with whatever it writes: an empty string, a name no record holds, 0, a negative or a huge
number. A tool that raises on such a call, hangs past its `timeout_s` or returns something other than a str fails
the batch being trained (rc1/data/user_tools.py: never an error the model reads), which on a GPU is hours in; one
whose answer changes between two calls breaks `audit --rescore` and exact resume. So each round calls every tool of
yours with the probe arguments below, each call twice, and fails on the first such call, naming the tool and its
arguments. Without tools of yours the check does not apply and records nothing, so every other run's checks are those
it had.

The probe is fixed, not drawn from the items: a tool sees only its arguments, and these are the ones a policy early
in training writes most (the model knows nothing of the tool's domain yet). Passing it does not prove a tool total:
a value outside the probe can still raise.
"""

from __future__ import annotations

from typing import Any

from rc1.checks.result import CheckResult
from rc1.checks.spec import Check
from rc1.core.runbook import Runbook
from rc1.data.user_tools import ToolOfYours, ToolOfYoursFailed, tools_of

# Per argument type, what the probe's calls pass: call j gives every argument its type's j-th value.
PROBE_VALUES: dict[type, tuple[Any, ...]] = {
    str: ("", "xyzzy", "0"),
    int: (0, -1, 10**12),
    float: (0.0, -1.5, 1e12),
    bool: (False, True, True),
}
PROBE_CALLS = len(PROBE_VALUES[str])


def probe_arguments(tool: ToolOfYours) -> list[dict[str, Any]]:
    """The probe's calls of `tool`: one per column of PROBE_VALUES (one call of no arguments for a tool that takes
    none)."""
    if not tool.parameters:
        return [{}]
    return [{name: PROBE_VALUES[kind][j] for name, kind in tool.parameters.items()} for j in range(PROBE_CALLS)]


def probe_tool(tool: ToolOfYours) -> tuple[int, str]:
    """(calls made, what is wrong or ""): each probe call twice, stopping at the first that fails."""
    made = 0
    for arguments in probe_arguments(tool):
        try:
            first = tool.run(arguments)
            second = tool.run(arguments)
        except ToolOfYoursFailed as e:
            return made + 1, (
                f"{e}: a policy writes such arguments, and a call that fails so fails the batch being trained; "
                "return the problem as text the model reads instead (e.g. 'error: …')"
            )
        made += 1
        if first != second:
            return made, (
                f"tool {tool.name} ({tool.path}) answered {first!r} then {second!r} when called twice with "
                f"{arguments!r}; it must be deterministic (audit --rescore and exact resume call it again)"
            )
    return made, ""


def tools_of_yours_check(tools: tuple[ToolOfYours, ...]) -> CheckResult:
    outcomes = [(tool, *probe_tool(tool)) for tool in tools]
    problems = [problem for _, _, problem in outcomes if problem]
    calls = sum(made for _, made, _ in outcomes)
    names = ", ".join(tool.name for tool in tools)
    return CheckResult(
        name="tools_of_yours",
        passed=not problems,
        measured={"tools": float(len(tools)), "probe_calls": float(calls), "failing": float(len(problems))},
        thresholds={"failing": 0.0},
        detail="; ".join(problems)
        or f"tools of yours ({names}): {calls} probe calls (empty and unknown strings, 0, negative and huge numbers), "
        "each answered twice alike, with a str, within its timeout",
    )


CHECK = Check(
    name="tools_of_yours",
    rounds=(1, 2),
    run=lambda r: tools_of_yours_check(tools_of(r.loaded)) if r.config.data.tools_of_yours else None,
    runbook=Runbook(
        means="one of data.tools_of_yours raised, did not return within its timeout_s, returned something other "
        "than a str, or answered differently twice, when called with arguments a policy writes (an empty or "
        "unknown string, 0, a negative or a huge number)",
        tries=(
            "make the function the detail names total: check its arguments and return the problem as text the model "
            "reads (e.g. 'error: unknown unit …') instead of raising",
            "make it deterministic: no clock, randomness or changing network answer; same arguments, same text",
            "a slow tool: raise data.tools_of_yours[i].timeout_s, or make the call cheaper",
        ),
    ),
)
