"""What importing the backend does: check numba-cuda-mlir's version and register a planner, and nothing heavy.

Only public names of numba-cuda-mlir are used here (``numba_cuda_mlir.__version__``, ``numba_cuda_mlir.extending``),
so the import adds a few milliseconds to a program that already imported numba-cuda-mlir (issue 12: <= 0.1 s). The
planner, the CUB pipeline and numba-cuda-mlir's internals (``_compat``) load when the first kernel is compiled.
"""
from __future__ import annotations

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

try:
    from numba_cuda_mlir.extending import WholeFunctionPlanner, register_planner
except ImportError as exc:  # the hook this package relies on is gone
    raise ImportError(f"numba-cuda-mlir {VERSION} does not provide {getattr(exc, 'name', None) or exc}, which "
                      f"cuda.coop requires. To fix it, {HINT}") from exc


NAMESPACE = "cuda.coop.numba_mlir"
BACKEND = "numba-cuda-mlir"
BUILD_TAG = "numba_mlir"  # in the provider cache key and the dumped source's name (cuda_coop_numba_mlir_<hash>.cu)


class CoopPlannerEntry(WholeFunctionPlanner):
    """The registered planner: loads the real one (``_planner.CoopPlanner``) on the first compile."""

    def run(self) -> bool:
        from .._backend_context import BackendContext, active
        from ._planner import CoopPlanner

        _refresh_once()
        with active(BackendContext(BACKEND, NAMESPACE)):  # whom the backend-free layers' messages name
            return CoopPlanner(self.state).run()


_refreshed = False


def _refresh_once() -> None:
    """Importing the planner loads numba-cuda-mlir modules that add lowering registrations; the compiler contexts
    must see them before this kernel is lowered."""
    global _refreshed
    if not _refreshed:
        from numba_cuda_mlir import extending

        extending.refresh_registries()
        _refreshed = True


def register() -> None:
    """Register the planner (not idempotent by itself: the package module guards it)."""
    register_planner(CoopPlannerEntry)  # last: 0.6.0 cannot unregister a planner
