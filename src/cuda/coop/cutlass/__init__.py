"""cuda.coop.cutlass: the CUTLASS CuTe DSL backend and its qualified API.

Importing this module registers the backend: every ``cuda.coop`` call executed while CuTe traces a ``@cute.kernel``
is planned by it (docs: cutlass). It exports everything in ``cuda.coop`` except ``register``; operations are
qualified variants, ``ThreadData.from_fragment`` wraps a register tensor, ``StatefulFunction`` makes a block prefix
callback with state, and ``compile_kernel`` builds a launcher without a GPU. Import it with an alias (``import
cuda.coop.cutlass as cute_coop``): a bare ``import cuda.coop.cutlass`` rebinds the name ``cuda``.
"""
import threading as _threading

from . import _about  # noqa: F401  (the version check)
from .. import (  # noqa: F401  (re-exported common names)
    CoopBuildError, CoopCompilerContextRequiredError, CoopError, CoopIndexError, CoopTypeError, CoopUnsupportedError,
    CoopValueError, CudaCoopAutoRegistrationWarning, TempStorage, TempStorageLike, ThreadDataLike,
    ThreadGroup, __version__, this_block, this_cluster, this_grid, this_thread, this_warp,
)
from .._markers import OPERATIONS as _OPERATIONS, scan as _scan
from .._markers.records import qualified_markers as _qualified_markers
from ._about import LACKS as _LACKS, NAMESPACE as _NAMESPACE
from ._values import ThreadData as ThreadData
from ._compile import CompiledKernel as CompiledKernel, compile_kernel as compile_kernel

# every operation's qualified marker (its record's extension, less what this backend lacks)
globals().update(_qualified_markers(_NAMESPACE, _LACKS))
# stateful block prefix callbacks: the very class of cuda.coop.numba_mlir (docs: cutlass, "Prefix callbacks")
StatefulFunction = _scan.StatefulFunction

_lock = _threading.Lock()
_registered = False


def _register_backend() -> None:
    """Install the trace probe, the trace-finalize hook and the compile step once per process (idempotent)."""
    global _registered
    with _lock:
        if _registered:
            return
        from .._backend_context import add_trace_probe
        from .._calls.emitter import check_emitter
        from . import _context, _dsl, _emit, _link, _patches, _route

        check_emitter(_emit.TracedEmitter)
        add_trace_probe(_context.backend_context)
        _dsl.register_trace_hook(_link.finish_trace)
        _patches.install(_link.link, _route.is_bitcode_file, (CoopError,))  # _patches.PATCHES: what and why
        _registered = True


_register_backend()

__all__ = [
    "__version__", "this_thread", "this_warp", "this_block", "this_cluster", "this_grid", "ThreadGroup",
    "ThreadData", "ThreadDataLike", "TempStorage", "TempStorageLike", *_OPERATIONS,
    "CoopError", "CoopTypeError", "CoopValueError", "CoopUnsupportedError", "CoopIndexError", "CoopBuildError",
    "CoopCompilerContextRequiredError", "CudaCoopAutoRegistrationWarning", "compile_kernel", "CompiledKernel",
    "StatefulFunction",
]


def __getattr__(name: str) -> object:
    """A name this namespace lacks: an AttributeError that offers the nearest name it has (as ``cuda.coop``'s)."""
    from .._markers.base import missing_name

    raise missing_name(_NAMESPACE, name, __all__, _OPERATIONS)
