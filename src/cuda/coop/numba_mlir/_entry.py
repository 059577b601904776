"""What importing the backend does: check numba-cuda-mlir's version and register a planner, and nothing heavy.

Only public names of numba-cuda-mlir are used here (``numba_cuda_mlir.__version__``, ``numba_cuda_mlir.extending``),
so the import adds a few milliseconds to a program that already imported numba-cuda-mlir (issue 12: <= 0.1 s). The
planner, the CUB pipeline and numba-cuda-mlir's internals (``_compat``) load when the first kernel is compiled.
"""
from __future__ import annotations

from ._about import CONTEXT, HINT, VERSION

try:
    from numba_cuda_mlir.extending import WholeFunctionPlanner, register_planner
except ImportError as exc:  # the hook this package relies on is gone
    raise ImportError(f"numba-cuda-mlir {VERSION} does not provide {getattr(exc, 'name', None) or exc}, which "
                      f"cuda.coop requires. To fix it, {HINT}") from exc


class CoopPlannerEntry(WholeFunctionPlanner):  # type: ignore[misc]  # numba-cuda-mlir's base is untyped (Any)
    """The registered planner: loads the real one (``_planner.CoopPlanner``) on the first compile."""

    def run(self) -> bool:
        from .._backend_context import active
        from ._planner import CoopPlanner

        _refresh_once()
        # whom the shared layers' messages name, and how values cross to numba-cuda-mlir's code
        with active(CONTEXT):
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
