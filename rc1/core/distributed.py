"""Which process of a multi-process launch (`accelerate launch`, torchrun) this is.

Only rank 0 is the run's writer: it takes the log's lock, appends every event and publishes checkpoints. The other
ranks train their share of each batch, generate their share of every evaluation (rank 0 gathers, scores and records
it) and never touch the log (DESIGN §3: "under torchrun/accelerate only rank 0 writes").
"""

from __future__ import annotations

import os
import sys

from rc1.core.errors import BadInput


def rank() -> int:
    return int(os.environ.get("RANK", "0"))


def world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def local_rank() -> int:
    return int(os.environ.get("LOCAL_RANK", "0"))


def placement(device: str) -> str:
    """Where this rank keeps its model: its own GPU under a multi-process launch."""
    return f"cuda:{local_rank()}" if device == "cuda" and world_size() > 1 else device


def launch_shards_parameters() -> bool:
    """Whether this launch asked accelerate to shard the policy's parameters (FSDP, DeepSpeed ZeRO-3)."""
    return world_size() > 1 and (_fsdp_asked() or os.environ.get("ACCELERATE_DEEPSPEED_ZERO_STAGE") == "3")


def require_supported_sharding(device: str, finetune_method: str) -> None:
    """FSDP2 and DeepSpeed ZeRO-3 shard the policy's parameters; evaluations then generate in lockstep (`sharded`).
    Refused: FSDP1, whose root module cannot generate outside its own forward pass; FSDP asked for where accelerate
    does not apply it (off a GPU it would train with DDP and say nothing); and QLoRA's 4-bit base, which rc1 places
    whole on each rank's GPU."""
    if not launch_shards_parameters():
        return
    if finetune_method == "qlora":
        raise BadInput(
            "finetune.method: qlora places its 4-bit base whole on each rank's GPU, which FSDP and ZeRO-3 "
            "would shard; launch QLoRA with configs/accelerate/ddp.yaml, or shard a full or LoRA fine-tune "
            "(--set finetune.method=full)"
        )
    if not _fsdp_asked():
        return
    if os.environ.get("FSDP_VERSION", "1") != "2":
        raise BadInput(
            "accelerate: FSDP1 (fsdp_version 1) keeps the policy's outer parameters flat outside its own "
            "forward pass, so rc1's evaluations cannot generate with it; set fsdp_version: 2 "
            "(configs/accelerate/fsdp2.yaml)"
        )
    if device != "cuda":
        raise BadInput(
            f"accelerate: FSDP was asked for, but accelerate applies FSDP on GPUs only and this launch "
            f"trains on {device}, where it would train with DDP instead; launch with "
            "configs/accelerate/ddp.yaml"
        )


def _fsdp_asked() -> bool:
    return os.environ.get("ACCELERATE_USE_FSDP", "").lower() in ("1", "true")


def sharded(model) -> bool:
    """Whether a forward pass of `model` gathers its parameters from every rank (FSDP2, DeepSpeed ZeRO-3). Then every
    rank must run as many forward passes as the others, so an evaluation generates in lockstep (transformers'
    `synced_gpus`: a rank whose replies have ended keeps stepping until every rank's have)."""
    if not _joined():
        return False
    from transformers.integrations import is_deepspeed_zero3_enabled

    if is_deepspeed_zero3_enabled():
        return True
    from torch.distributed.fsdp import FSDPModule

    return any(isinstance(module, FSDPModule) for module in model.modules())


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


RANK_WAIT_MINUTES = 60.0  # TRL's own default is 30: a judge-scored step or a large checkpoint can take longer


def join(wait_minutes: float = RANK_WAIT_MINUTES) -> None:
    """Under a launch, join the ranks' process group now (accelerate's PartialState: the backend and device the
    trainer's own state then reuses), so rc1's collectives work from the start of a command, before any trainer.
    `wait_minutes` is the group's timeout: a rank waiting longer at a collective fails the launch instead of hanging
    (the trainer's `ddp_timeout` cannot change it afterwards: the group is made once)."""
    if world_size() > 1:
        from datetime import timedelta

        from accelerate import PartialState

        PartialState(timeout=timedelta(minutes=wait_minutes))
        if rank() != 0:
            print(
                f"rank {rank()} of {world_size()}: waits up to {wait_minutes:g} min at a collective for the others "
                "(rc1 train --rank-wait)",
                file=sys.stderr,
            )


def same_log_everywhere(head: tuple[int, str], log_path) -> None:
    """Every rank read the same log (its last seq and hash): rank 0 writes, the others read it, so the workspace must
    be one every node sees (a shared filesystem). Refused on every rank (exit 2) before anything is appended."""
    heads = gather(head)
    if len(set(heads)) > 1:
        seen = "; ".join(f"rank {r} at seq {seq} ({digest[:12]})" for r, (seq, digest) in enumerate(heads))
        raise BadInput(
            f"{log_path}: the ranks of this launch read different logs ({seen}): rank 0 writes the log "
            "and the others read it, so the workspace must be on a filesystem every node shares"
        )


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
        raise BadInput(
            f"rc1 {command}: under a multi-process launch only `rc1 train` runs (rank {rank()} of "
            f"{world_size()}); run the rounds first in one process: rc1 advance --until R2_PASSED"
        )
