"""Compile targets: which architectures a kernel may be built for, and their shared-memory limits.

Backend-free: a target string is validated here (C15) and each architecture's per-block
opt-in shared-memory maximum (what ``cudaFuncAttributeMaxDynamicSharedMemorySize`` may be raised
to) bounds the cooperative scratch (S7).
"""
from __future__ import annotations

import re

from .._errors import CoopValueError

KIB = 1024
# Per-block opt-in shared-memory maximum by compute capability (CUDA programming guide, "Technical
# Specifications per Compute Capability"); the 1 KiB the system reserves per block is already excluded.
_OPT_IN_SHARED = {
    50: 48 * KIB, 52: 48 * KIB, 53: 48 * KIB, 60: 48 * KIB, 61: 48 * KIB, 62: 48 * KIB,
    70: 96 * KIB, 72: 96 * KIB, 75: 64 * KIB,
    80: 163 * KIB, 86: 99 * KIB, 87: 163 * KIB, 88: 99 * KIB, 89: 99 * KIB,
    90: 227 * KIB, 100: 227 * KIB, 101: 227 * KIB, 103: 227 * KIB, 110: 227 * KIB,
    120: 99 * KIB, 121: 99 * KIB,
}
KNOWN_ARCHITECTURES = tuple(sorted(_OPT_IN_SHARED))
_TARGET = re.compile(r"sm_(\d{2,3})([af]?)")


def opt_in_shared_limit(cc: int) -> int:
    """The most shared memory one block of an sm_``cc`` kernel may use (bytes)."""
    if cc in _OPT_IN_SHARED:
        return _OPT_IN_SHARED[cc]
    # An architecture newer than this table: the limit of the nearest known one below it.
    return _OPT_IN_SHARED[max((c for c in _OPT_IN_SHARED if c <= cc), default=KNOWN_ARCHITECTURES[0])]


def parse_target(target: object, supported: tuple[int, ...] = KNOWN_ARCHITECTURES) -> tuple[str, int]:
    """``"sm_90"``/``"sm_90a"`` -> (the target string, 90); anything else is C15.

    ``supported`` narrows the architectures to those the toolkit in use can build for.
    """
    listing = ", ".join(f"sm_{cc}" for cc in supported)
    match = _TARGET.fullmatch(target) if isinstance(target, str) else None
    if match is None or int(match.group(1)) not in supported:
        raise CoopValueError(
            f"target must look like 'sm_90' or 'sm_90a' with a supported architecture ({listing}); got {target!r}")
    return match.string, int(match.group(1))  # match.string: target itself, typed str
