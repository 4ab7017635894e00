"""Deciding together under a multi-process launch: rank 0's hooks decide (record, publish, check the monitors), the
other ranks learn the outcome from one broadcast, so every rank leaves training at the same step, on the same
verdict or failure, and none waits on a broadcast that will never come."""

from __future__ import annotations

from collections.abc import Callable

from rc1.core import distributed
from rc1.core.errors import TrainingError
from rc1.train.protocols import TrainingEnded

PUBLISHED = "published"  # rank 0's word that a checkpoint is published and its evaluation may begin


class PeerFailed(TrainingError):
    """Raised on a rank other than 0 when rank 0 failed: its share of the outcome was the failure."""


def decide_together(decide: Callable[[], object]) -> None:
    """Run the hooks (`decide`; on ranks other than 0 they record nothing) and end training on every rank together: on
    the Verdict rank 0's gave, or on a failure, which the failing rank raises and the others learn of."""
    verdict, failure = None, None
    try:
        verdict = decide()
    except PeerFailed:  # this rank already took rank 0's one broadcast (the failure): nothing more to wait for
        raise
    except BaseException as error:  # shared with the other ranks, then raised here as it was
        failure = error
    shared = distributed.share(("failed", f"{type(failure).__name__}: {failure}") if failure is not None else verdict)
    if failure is not None:
        raise failure
    if isinstance(shared, tuple):
        raise PeerFailed(f"rank {distributed.rank()}: rank 0 failed ({shared[1]}); see its error")
    if shared is not None:
        raise TrainingEnded(shared)


def wait_for_publication(step: int) -> None:
    """A rank other than 0, before it joins the evaluation of checkpoint `step`: rank 0 says it is published (or
    that it failed to publish it, which this rank raises)."""
    said = distributed.share(None)
    if said != PUBLISHED:
        detail = said[1] if isinstance(said, tuple) else repr(said)
        raise PeerFailed(
            f"rank {distributed.rank()}: rank 0 failed before evaluating step {step} ({detail}); see its error"
        )
