"""Which process of a multi-process launch (`accelerate launch`, torchrun) this is.

Only rank 0 is the run's writer: it takes the log's lock, appends every event and publishes checkpoints. The other
ranks train their share of each batch, generate their share of every evaluation (rank 0 gathers, scores and records
it) and never touch the log (DESIGN §3: "under torchrun/accelerate only rank 0 writes").
"""

from __future__ import annotations

import os

from rc1.errors import BadInput


def rank() -> int:
    return int(os.environ.get("RANK", "0"))


def world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def local_rank() -> int:
    return int(os.environ.get("LOCAL_RANK", "0"))


def placement(device: str) -> str:
    """Where this rank keeps its model: its own GPU under a multi-process launch."""
    return f"cuda:{local_rank()}" if device == "cuda" and world_size() > 1 else device


def require_supported_sharding() -> None:
    """Every rank generates its own share of an evaluation's replies, of its own lengths, so the policy's parameters
    must be whole on every rank: DDP or DeepSpeed ZeRO-1/2, not FSDP or ZeRO-3 (a sharded forward pass gathers the
    parameters from every rank, and ranks generating different numbers of tokens would wait on each other forever)."""
    if world_size() <= 1:
        return
    if os.environ.get("ACCELERATE_USE_FSDP", "").lower() in ("1", "true"):
        raise BadInput("accelerate: FSDP shards the policy across ranks, and each rank generates its share of an "
                       "evaluation alone; launch with configs/accelerate/ddp.yaml or deepspeed_zero2.yaml")
    if os.environ.get("ACCELERATE_DEEPSPEED_ZERO_STAGE") == "3":
        raise BadInput("accelerate: DeepSpeed ZeRO-3 shards the policy across ranks, and each rank generates its share "
                       "of an evaluation alone; use ZeRO-2 (configs/accelerate/deepspeed_zero2.yaml) or DDP")


def is_writer() -> bool:
    return rank() == 0


def barrier() -> None:
    """Every rank waits here for the others (a no-op in a single process)."""
    if _joined():
        import torch.distributed as dist

        dist.barrier()


def share(value):
    """Rank 0's `value`, on every rank (broadcast as a pickled object; the value itself in a single process). Every
    rank must call it at the same point: it is how the others learn what rank 0's hooks decided."""
    if not _joined():
        return value
    import torch.distributed as dist

    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def join() -> None:
    """Under a launch, join the ranks' process group now (accelerate's PartialState: the backend and device the
    trainer's own state then reuses), so rc1's collectives work from the start of a command, before any trainer."""
    if world_size() > 1:
        from accelerate import PartialState

        PartialState()


def same_log_everywhere(head: tuple[int, str], log_path) -> None:
    """Every rank read the same log (its last seq and hash): rank 0 writes, the others read it, so the workspace must
    be one every node sees (a shared filesystem). Refused on every rank (exit 2) before anything is appended."""
    heads = gather(head)
    if len(set(heads)) > 1:
        seen = "; ".join(f"rank {r} at seq {seq} ({digest[:12]})" for r, (seq, digest) in enumerate(heads))
        raise BadInput(f"{log_path}: the ranks of this launch read different logs ({seen}): rank 0 writes the log "
                       "and the others read it, so the workspace must be on a filesystem every node shares")


def gather(value) -> list:
    """Every rank's `value`, in rank order, on every rank ([value] in a single process). Every rank must call it at
    the same point (torch's all_gather_object: pickled objects, as accelerate's `gather_object` sends them)."""
    if not _joined():
        return [value]
    import torch.distributed as dist

    boxes = [None] * dist.get_world_size()
    dist.all_gather_object(boxes, value)
    return boxes


def my_share(count: int) -> range:
    """The positions 0..count-1 this rank takes when work is dealt round-robin across the ranks."""
    return range(rank(), count, world_size()) if _joined() else range(count)


def _joined() -> bool:
    """Whether this process is one of several joined in a process group (a launch whose group is up)."""
    if world_size() <= 1:
        return False
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized()


def require_single_process(command: str) -> None:
    if world_size() > 1:
        raise BadInput(f"rc1 {command}: under a multi-process launch only `rc1 train` runs (rank {rank()} of "
                       f"{world_size()}); run the rounds first in one process: rc1 advance --until R2_PASSED")
