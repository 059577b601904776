"""reduce_batched marker (the "Batched warp reductions" page of the documentation)."""
from __future__ import annotations

from typing import Any, Callable

from .records import LOGICAL_WARP, LOGICAL_WARP_WIDTHS, WARP, Groups, Operation, declare
from .groups import ThreadGroup
from .temp_storage import TempStorage
from .thread_data import ThreadData


@declare(Operation("reduce_batched", "reduce_batched", "reduce several batches at once, one result per lane",
                   Groups((WARP, LOGICAL_WARP), LOGICAL_WARP_WIDTHS),
                   selectors=(("output_layout", "_BatchedLayout"),), explainer="batches"))
def reduce_batched(group: ThreadGroup, value: ThreadData, /, *,
                   binary_op: str | Callable[[Any, Any], Any] | None = None, output_layout: str = "striped",
                   temp_storage: TempStorage | None = None) -> ThreadData:
    """Reduce ``B`` independent batches across a (logical) warp; slot ``b`` of every lane feeds batch ``b``.

    Args:
        group: a warp or a logical warp of 1, 2, 4, 8, 16 or 32 lanes.
        value: a ThreadData of ``B`` slots (left unchanged).
        binary_op: ``"sum"``, ``"multiplies"``, ``"min"``, ``"max"``, ``"bit_and"``, ``"bit_or"``,
            ``"bit_xor"`` (and their aliases), or a Python/device function ``f(a, b)``; it must be associative
            and commutative. ``None`` is sum.
        output_layout: ``"striped"`` (default): lane ``r`` slot ``i`` holds batch ``r + i*W``;
            ``"blocked"``: lane ``r`` slot ``i`` holds batch ``r*ceil(B/W) + i``.
        temp_storage: must be ``None`` (warp scratch is compiler-owned; this operation needs none).

    Returns:
        A fresh ThreadData of ``ceil(B/W)`` slots of the value's dtype. Each batch result exists in exactly one
        lane; slots whose batch index is ``>= B`` are unspecified.

    See Also:
        :doc:`Batched warp reductions </operations/reduce_batched>` in the cuda-coop documentation.
    """
