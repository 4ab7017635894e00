"""The preflight checks, one table: the rounds run it in this order (rc1/app/preflight.py), `rc1 pool validate` and
`rc1 difficulty validate` run the entries that name them, the runbook and `rc1 ls checks` read it, and the
production floors of every threshold come from it. Each entry stands beside its check (`rc1.checks.spec.Check`);
adding a check is its module with its entry, a line here, and its test."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from rc1.app import gate_set as release_power
from rc1.app import pre_run, shadow_run
from rc1.app.gate_set import Policy
from rc1.app.session import Session
from rc1.checks import (
    consistency,
    coverage,
    difficulty,
    diversity,
    duplicates,
    gate_set,
    leak,
    live_episodes,
    ngram_kl,
    overclar,
    resources,
    reward_functions,
    scorer,
    seed_pool,
    shadow,
    sources,
    tools_of_yours,
    weights,
)
from rc1.checks.result import CheckResult
from rc1.checks.spec import Check, Command, Floor, RoundInputs

CHECKS: tuple[Check, ...] = (
    sources.CHECK,
    shadow.CHECK,
    gate_set.CHECK,
    seed_pool.CHECK,
    diversity.DISTINCT2,
    ngram_kl.CHECK,
    coverage.CHECK,
    duplicates.CHECK,
    diversity.LENGTH_BOUNDS,
    leak.CHECK,
    live_episodes.CHECK,
    diversity.TASK_MIX,
    difficulty.CHECK,
    weights.CHECK,
    reward_functions.CHECK,
    tools_of_yours.CHECK,
    overclar.CHECK,
    scorer.LIVE,
    scorer.PROBE,
    scorer.CACHE,
    consistency.CHECK,
    resources.FREE_DISK,
    resources.ACCELERATOR_MEMORY,
    pre_run.BALANCED_POOL_REPRODUCES,
    scorer.SELFCHECK,
    pre_run.SHADOW_PRE_RUN,
    shadow_run.SHADOW_RUN,
    shadow_run.THINKING_FITS,
    shadow_run.COMPONENT_SPREAD,
    release_power.RELEASE_POWER,
)
PRODUCTION_FLOORS: dict[str, Floor] = {
    key: floor for check in CHECKS for key, floor in check.thresholds.items() if floor is not None
}


@dataclass(frozen=True)
class RoundContext(RoundInputs):
    """A round's inputs and the session, for the checks the app owns; the step-0 policy is built on first use
    (round 2's shadow run, thinking_fits and release power), once."""

    session: Session | None = None

    @cached_property
    def policy(self) -> Policy:
        from rc1.app.policy import load_run_policy

        model, tokenizer, device, _ = load_run_policy(self.session, self.on_disk_balanced)
        return Policy(model, tokenizer, device)

    @cached_property
    def base_shadow(self) -> shadow_run.ShadowRun:
        """Round 2's shadow run of the step-0 policy (recorded once; its `shadow_run` and `thinking_fits` read it)."""
        return shadow_run.pre_run_shadow_run(self.session, self.policy)


def run_checks(
    inputs: RoundInputs,
    *,
    round_no: int | None = None,
    command: Command | None = None,
    table: tuple[Check, ...] = CHECKS,
) -> list[CheckResult]:
    """The table's checks for a round (`round_no`) or a standalone command, in order; a check that does not apply
    (a judge's probe with no judge) records nothing."""
    chosen = [c for c in table if (round_no in c.rounds if command is None else command in c.commands)]
    results = []
    for check in chosen:
        result = check.run(inputs)
        if result is None:
            continue
        if result.name != check.name:  # the table and the events must agree on names
            raise AssertionError(f"check {check.name!r} recorded its result as {result.name!r}")
        results.append(result)
    return results
