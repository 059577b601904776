"""cuda.coop.numba_mlir: the numba-cuda-mlir backend and its qualified API.

Importing this module registers the backend (SPEC 1.4). It exports everything in
``cuda.coop`` except ``register``; operations are qualified variants that accept
the backend's extensions, plus ``compile_kernel`` for builds without a GPU.
"""
from __future__ import annotations

import threading

from . import _compat
from .. import (  # noqa: F401  (re-exported common names)
    CoopBuildError, CoopCompilerContextRequiredError, CoopError, CoopTypeError, CoopUnsupportedError,
    CoopValueError, CudaCoopAutoRegistrationWarning, TempStorage, TempStorageLike, ThreadData, ThreadDataLike,
    ThreadGroup, __version__, this_block, this_cluster, this_grid, this_thread, this_warp,
)
from .. import _markers  # noqa: F401
from .._markers.base import qualified as _qualified
from .._markers import load_store as _load_store, pending as _pending
from ._compile import CompiledKernel as CompiledKernel, compile_kernel as compile_kernel

load = _qualified(_load_store.load)
store = _qualified(_load_store.store)
globals().update({_name: _qualified(getattr(_pending, _name)) for _name in _pending.PENDING})

_lock = threading.Lock()
_registered = False


def register_backend() -> None:
    """Install the planner once per process (idempotent; SPEC 1.4)."""
    global _registered
    with _lock:
        if _registered:
            return
        from ._planner import CoopPlanner

        _compat.extending.refresh_registries()
        _compat.register_planner(CoopPlanner)  # last: 0.6.0 cannot unregister a planner
        _registered = True


register_backend()

__all__ = [
    "__version__", "this_thread", "this_warp", "this_block", "this_cluster", "this_grid", "ThreadGroup",
    "ThreadData", "ThreadDataLike", "TempStorage", "TempStorageLike", "load", "store", *_pending.PENDING,
    "CoopError", "CoopTypeError", "CoopValueError", "CoopUnsupportedError", "CoopBuildError",
    "CoopCompilerContextRequiredError", "CudaCoopAutoRegistrationWarning", "compile_kernel", "CompiledKernel",
]
