"""Which backend this is and which CuTe DSL it needs: checked when the backend is imported.

Imported by every module of the backend that needs its names, and importing nothing of the backend itself.
"""
from __future__ import annotations

from .._backend_context import ValueAbi

HINT = 'install "cuda-coop[cutlass-cu13]" (nvidia-cutlass-dsl 4.8 with its CUDA 13 libraries).'

try:
    import cutlass
except ImportError as exc:
    raise ImportError(
        "cuda.coop backend 'cutlass' requires nvidia-cutlass-dsl>=4.8.1,<4.9, which is not installed; " + HINT
    ) from exc

VERSION = getattr(cutlass, "__version__", "unknown")


def version_ok(version: str) -> bool:
    try:
        parts = tuple(int(p) for p in version.split(".")[:3])
    except ValueError:
        return False
    return (4, 8, 1) <= parts < (4, 9, 0)


if not version_ok(VERSION):
    raise ImportError(f"cuda.coop supports nvidia-cutlass-dsl>=4.8.1,<4.9; found {VERSION}. To fix it, {HINT}")

# CuTe values are plain LLVM scalars and register tensors: C++'s own convention, and float16/aggregates are not
# part of the common API this backend serves
ABI = ValueAbi()
NAMESPACE = "cuda.coop.cutlass"
BACKEND = "cutlass"
# Capabilities qualified extensions may need (``Extension.needs``, ``Extension.capability_notes``) that this backend
# lacks: its namespace leaves the names needing them out (naming one is R9) and does not describe what it does not
# build (docs: cutlass). float16 is not built here (SPEC 12.3), so radix sort keys are no float16 either. (A
# StatefulFunction's state crosses by pointer into a C function CuTe traces from the op: SPEC 12.9.)
LACKS = frozenset({"float16"})
DTYPES_ELSEWHERE = (("float16", "cuda.coop.numba_mlir"),)  # P1's fix for a qualified dtype this backend lacks
BUILD_TAG = "cutlass"  # in the provider cache key and the dumped source's name
