"""The reward weights file: a JSON object mapping each scorer component to its weight.

Valid means: present, parseable, a JSON object over exactly the run scorer's components (the rule
components, plus `judge` when a judge is configured), every weight a finite non-negative number, none above
0.5 (no single component may dominate the reward), summing to 1 within 1e-6. `load_weights` gives the
weights scoring uses or raises `BadInput`; the `weights` check (rc1/checks/weights.py) reports the same
problems as a failed check.

A live episode's components (`LIVE_COMPONENTS`: `tool_success`) are the exception: where the scorer gives one
(data.episodes: live), the file may leave it out, and it then weighs 0 (read as 0.0). So the weights file a run had
before live episodes serves a live run unchanged, and a recorded run's weights are what they were (its scorer gives
none).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from rc1.core.catalog import LIVE_COMPONENTS
from rc1.core.errors import BadInput

MAX_WEIGHT = 0.5
SUM_TOLERANCE = 1e-6


def load_weights(path: Path, components: tuple[str, ...]) -> dict[str, float]:
    weights, problems = read_weights(Path(path), components)
    if problems:
        raise BadInput(f"{path}: " + "; ".join(problems))
    return weights


def read_weights(path: Path, components: tuple[str, ...]) -> tuple[dict[str, float], list[str]]:
    """The weights as read and every problem found, each a phrase that says what to fix."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, ["weights file not found"]
    except (OSError, UnicodeDecodeError) as e:
        return {}, [f"cannot read weights file: {e}"]
    except json.JSONDecodeError as e:
        return {}, [f"not valid JSON at line {e.lineno} column {e.colno}: {e.msg}"]
    if not isinstance(raw, dict):
        return {}, [f"expected a JSON object of component -> weight, got {type(raw).__name__}"]
    problems = []
    weights: dict[str, float] = {}  # every finite number read, valid or not: the check reports them
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            problems.append(f"{key}: weight must be a finite number, got {value!r}")
            continue
        weights[key] = float(value)
        if key not in components:
            problems.append(
                f"unknown component {key!r}; this scorer's components are {', '.join(components)}"
                + (" (`judge` needs scorer.provider)" if key == "judge" else "")
                + (f" ({key} is a live episode's: data.episodes live)" if key in LIVE_COMPONENTS else "")
            )
        elif value < 0:
            problems.append(f"{key}: weight {value:g} is negative")
        elif value > MAX_WEIGHT:
            problems.append(
                f"{key}: weight {value:g} is above {MAX_WEIGHT:g}; no component may carry more than half the reward"
            )
    weights |= {c: 0.0 for c in components if c in LIVE_COMPONENTS and c not in raw}  # left out: weight 0
    missing = [c for c in components if c not in raw and c not in LIVE_COMPONENTS]
    if missing:
        problems.append(
            f"missing component(s) {', '.join(missing)}; give every component a weight (0 switches one off)"
        )
    total = math.fsum(weights.values())
    if abs(total - 1.0) > SUM_TOLERANCE:
        problems.append(f"weights sum to {total:.6g}, not 1 (within {SUM_TOLERANCE:g})")
    return weights, problems
