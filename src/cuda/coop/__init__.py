"""cuda.coop: cooperative block, warp and logical-warp algorithms for Python GPU kernels.

Common, backend-independent API. Activate a compiler backend with
``coop.register("numba-cuda-mlir")`` (or import ``cuda.coop.numba_mlir``).
"""
import pkgutil as _pkgutil

__path__ = _pkgutil.extend_path(__path__, __name__)

from ._version import __version__ as __version__
from ._backends import register as register
from ._errors import (
    CoopBuildError as CoopBuildError,
    CoopCompilerContextRequiredError as CoopCompilerContextRequiredError,
    CoopError as CoopError,
    CoopIndexError as CoopIndexError,
    CoopTypeError as CoopTypeError,
    CoopUnsupportedError as CoopUnsupportedError,
    CoopValueError as CoopValueError,
    CudaCoopAutoRegistrationWarning as CudaCoopAutoRegistrationWarning,
)
from ._markers.groups import (
    ThreadGroup as ThreadGroup,
    this_block as this_block,
    this_cluster as this_cluster,
    this_grid as this_grid,
    this_thread as this_thread,
    this_warp as this_warp,
)
from ._markers.thread_data import ThreadData as ThreadData, ThreadDataLike as ThreadDataLike
from ._markers.temp_storage import TempStorage as TempStorage, TempStorageLike as TempStorageLike
from ._markers import MARKERS, OPERATIONS

globals().update(MARKERS)  # every operation's marker, from its record (the stubs list them for type checkers)

__all__ = [
    "__version__", "register",
    "this_thread", "this_warp", "this_block", "this_cluster", "this_grid", "ThreadGroup",
    "ThreadData", "ThreadDataLike", "TempStorage", "TempStorageLike",
    *OPERATIONS,
    "CoopError", "CoopTypeError", "CoopValueError", "CoopUnsupportedError", "CoopIndexError", "CoopBuildError",
    "CoopCompilerContextRequiredError", "CudaCoopAutoRegistrationWarning",
]

del MARKERS, OPERATIONS


def __getattr__(name: str) -> object:
    """A name cuda.coop lacks (``coop.exclusive_summ``, an operation of a later release): an AttributeError that
    offers the nearest name it has."""
    from ._markers import OPERATIONS
    from ._markers.base import missing_name

    raise missing_name(__name__, name, __all__, OPERATIONS)


from ._backends import auto_register as _auto_register  # noqa: E402

_auto_register()
