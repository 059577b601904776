"""Which backend this is and which numba-cuda-mlir it needs: checked when the backend is imported.

Imported by every module of the backend that needs its names or the installed version, and importing nothing of
the backend itself, so that no import of the package runs in a circle.
"""
from __future__ import annotations

from .._backend_context import BackendContext, ValueAbi

HINT = ('install "cuda-coop[numba-cuda-mlir-cu13]" (CUDA 13) or "cuda-coop[numba-cuda-mlir-cu12]" (CUDA 12).')

try:
    import numba_cuda_mlir
except ImportError as exc:
    raise ImportError(
        "cuda.coop backend 'numba-cuda-mlir' requires numba-cuda-mlir>=0.6,<0.7, which is not installed; " + HINT
    ) from exc

VERSION = getattr(numba_cuda_mlir, "__version__", "unknown")


def version_ok(version: str) -> bool:
    try:
        major, minor = (int(p) for p in version.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) == (0, 6)


if not version_ok(VERSION):
    raise ImportError(f"cuda.coop supports numba-cuda-mlir>=0.6,<0.7; found {VERSION}. To fix it, {HINT}")


# numba-cuda-mlir's half is LLVM ``half``, not C++'s ``__half`` struct; it holds a record as a pointer to its bytes and
# stores a boolean as one byte (docs: qualified, "User-defined aggregates")
ABI = ValueAbi(half_as_bits=True, aggregates_by_pointer=True, predicate_byte=True)
NAMESPACE = "cuda.coop.numba_mlir"
BACKEND = "numba-cuda-mlir"
# Capabilities qualified extensions may need (``Extension.needs``) that this backend lacks: none, every documented
# extension is built (docs: qualified, "What this release builds")
LACKS: frozenset[str] = frozenset()
# the backend context while it compiles a kernel (_entry): whom the shared layers' messages name, R11
CONTEXT = BackendContext(BACKEND, NAMESPACE, abi=ABI)
BUILD_TAG = "numba_mlir"  # in the provider cache key and the dumped source's name (cuda_coop_numba_mlir_<hash>.cu)
