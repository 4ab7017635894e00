"""rc1: a gated, resumable, auditable RL fine-tune of a reasoning LM."""

__version__ = "0.1.0"
