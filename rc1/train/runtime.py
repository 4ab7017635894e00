"""Process state every engine saves, restores or reports the same way: the RNGs and the memory in use."""

from __future__ import annotations

import os
import random
import sys

import numpy as np
import torch


def capture_rng() -> dict:
    """Every RNG a training step draws from: python, numpy, cpu (and cuda/mps where present), under the
    keys HF Trainer uses, so both engines' `rng.pt` read the same."""
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "cpu": torch.random.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    if torch.backends.mps.is_available():
        state["mps"] = torch.mps.get_rng_state()
    return state


def restore_rng(state: dict) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.random.set_rng_state(state["cpu"])
    if "cuda" in state:
        torch.cuda.set_rng_state_all(state["cuda"])
    if "mps" in state:
        torch.mps.set_rng_state(state["mps"])


def memory_mb(device: str) -> float:
    """Peak accelerator memory on cuda, driver memory on mps, resident memory of this process on cpu."""
    if device == "cuda":
        return torch.cuda.max_memory_allocated() / 2**20
    if device == "mps":
        return torch.mps.driver_allocated_memory() / 2**20
    try:
        with open("/proc/self/statm") as fh:
            resident_pages = int(fh.read().split()[1])
        return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except FileNotFoundError:  # not Linux: peak RSS instead
        return resident_peak_mb()


def resident_peak_mb() -> float:
    """The process's resident-set peak, as the kernel keeps it (`getrusage`: bytes on macOS, KiB elsewhere)."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


class PeakMemory:
    """The peak of what a piece of work held from its start: on CUDA the allocator's peak counter, reset when this is
    made (a step's own peak is read before an evaluation starts); elsewhere the process's resident-set peak, which
    the kernel keeps for the whole process (`getrusage`), so on a CPU it may be an earlier part's."""

    def __init__(self, device):
        self._cuda = torch.device(device).type == "cuda"
        if self._cuda:
            torch.cuda.reset_peak_memory_stats()

    def read(self) -> float:
        return torch.cuda.max_memory_allocated() / 2**20 if self._cuda else resident_peak_mb()


def free_memory(device: str) -> None:
    """Collect what a finished line of training left (cycles included) and return the CUDA allocator's cached blocks
    to the driver, so the next line (or the verdict's policy) starts from an empty accelerator."""
    import gc

    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()
