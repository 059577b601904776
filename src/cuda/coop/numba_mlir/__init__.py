"""cuda.coop.numba_mlir: the numba-cuda-mlir backend and its qualified API.

Importing this module registers the backend. It exports everything in
``cuda.coop`` except ``register``; operations are qualified variants that accept
the backend's extensions, plus ``compile_kernel`` for builds without a GPU.
Import it with an alias (``import cuda.coop.numba_mlir as numba_coop``): a bare
``import cuda.coop.numba_mlir`` rebinds the name ``cuda``. See the "The qualified
namespace" and "API reference: cuda.coop.numba_mlir" pages of the documentation.
"""
import threading as _threading

from . import _entry
from .. import (  # noqa: F401  (re-exported common names)
    CoopBuildError, CoopCompilerContextRequiredError, CoopError, CoopIndexError, CoopTypeError, CoopUnsupportedError,
    CoopValueError, CudaCoopAutoRegistrationWarning, TempStorage, TempStorageLike, ThreadData, ThreadDataLike,
    ThreadGroup, __version__, this_block, this_cluster, this_grid, this_thread, this_warp,
)
from .._markers import OPERATIONS as _OPERATIONS, scan as _scan
from .._markers.records import qualified_markers as _qualified_markers
from ._about import LACKS as _LACKS, NAMESPACE as _NAMESPACE
from ._compile import CompiledKernel as CompiledKernel, compile_kernel as compile_kernel

# every operation's qualified marker (its record's extension, less what this backend lacks)
globals().update(_qualified_markers(_NAMESPACE, _LACKS))
StatefulFunction = _scan.StatefulFunction  # qualified-only: stateful block prefix callbacks (docs: operations/scan)
# ``numba_coop.local.array(shape, dtype)`` is numba-cuda-mlir's per-thread array, which qualified calls take as a
# payload (1-D, fixed extent; docs: qualified, "Payload forms").
from numba_cuda_mlir.cuda import local as local  # noqa: E402
from ._memory import shared as shared  # noqa: E402  (numba_coop.shared.array: inside the cooperative backing)

_lock = _threading.Lock()
_registered = False


def _register_backend() -> None:
    """Install the planner once per process (idempotent; importing this module calls it)."""
    global _registered
    with _lock:
        if _registered:
            return
        from .._calls.emitter import check_emitter
        from . import _compat, _lowering, _patches  # noqa: F401  (_compat's typing registrations are made here)

        check_emitter(_lowering.CodegenEmitter)

        _patches.claim_planner(_entry.CoopPlannerEntry)
        _entry.register()
        # before the first launch (threads' first launches race otherwise): serialised launches, one build per block
        # shape, the disk cache for kernels without cuda.coop, launches as cheap as without a planner (_patches.PATCHES)
        _patches.install(_patches.AT_REGISTER)
        _registered = True


_register_backend()

__all__ = [
    "__version__", "this_thread", "this_warp", "this_block", "this_cluster", "this_grid", "ThreadGroup",
    "ThreadData", "ThreadDataLike", "TempStorage", "TempStorageLike", *_OPERATIONS,
    "CoopError", "CoopTypeError", "CoopValueError", "CoopUnsupportedError", "CoopIndexError", "CoopBuildError",
    "CoopCompilerContextRequiredError", "CudaCoopAutoRegistrationWarning", "compile_kernel", "CompiledKernel",
    "StatefulFunction", "local", "shared",
]


def __getattr__(name: str) -> object:
    """A name this namespace lacks: an AttributeError that offers the nearest name it has (as ``cuda.coop``'s)."""
    from .._markers.base import missing_name

    raise missing_name(_NAMESPACE, name, __all__, _OPERATIONS)
