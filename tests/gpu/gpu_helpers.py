"""Helpers shared by the GPU test modules (not a test module itself)."""
from __future__ import annotations

import numpy as np


def poisoned(n, dtype):
    """An output buffer filled with the 0x5A byte pattern, so that a slot the kernel never writes shows."""
    return np.frombuffer(np.full(n * np.dtype(dtype).itemsize, 0x5A, np.uint8).tobytes(), dtype=dtype).copy()
