"""``numba_coop.shared``: application shared arrays placed inside the cooperative backing
(docs: qualified, "Payload forms").

``numba_coop.local`` is numba-cuda-mlir's own ``cuda.local`` (see the package module); ``shared.array`` is a marker
the planner replaces with a view of its slice of the backing, so that it coexists with dynamic backing where a
``cuda.shared.array`` could not."""
from __future__ import annotations

import types
from typing import Any

from .._markers.base import kernel_only


def array(shape: Any, dtype: Any, *, alignment: int = 8) -> Any:
    """A static-shape shared array of the block, placed inside cuda.coop's shared-memory backing.

    It coexists with dynamic backing (scratch above 48 KiB), where a ``cuda.shared.array`` is rejected. Its contents
    are application data: synchronise accesses as with ``cuda.shared.array``. The rows ``arr[r]`` of a 2-D array
    are per-thread payloads of ``cuda.coop.numba_mlir`` calls (each thread must pass a row no other thread uses
    during the call).

    Args:
        shape: a compile-time positive integer or tuple of them.
        dtype: a NumPy or Numba scalar type.
        alignment: a compile-time power of two (default 8).

    See Also:
        :doc:`The qualified namespace </qualified>` in the cuda-coop documentation.
    """
    raise kernel_only("cuda.coop.numba_mlir.shared.array")  # R1


shared = types.ModuleType("cuda.coop.numba_mlir.shared", "Shared arrays placed inside the cooperative backing.")
shared.array = array  # type: ignore[attr-defined]
