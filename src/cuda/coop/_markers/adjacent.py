"""Neighbour operations on a block's blocked tile: adjacent difference and discontinuity flags.

Documented on the "Adjacent difference and discontinuity" page of the cuda-coop documentation."""
from __future__ import annotations

from typing import Any

from .records import BLOCK_ONLY, Extension, Operation, declare
from .groups import ThreadGroup
from .temp_storage import TempStorage
from .thread_data import ThreadData


@declare(Operation("adjacent_difference", "adjacent", "subtract each item's neighbour", BLOCK_ONLY,
                   extends=Extension(options=("difference_op",)), selectors=(("direction", "_AdjacentDirection"),),
                   explainer="differences"))
def adjacent_difference(group: ThreadGroup, values: ThreadData, /, *, direction: str = "left", valid_items: Any = None,
                        tile_predecessor_item: Any = None, tile_successor_item: Any = None,
                        temp_storage: TempStorage | None = None) -> ThreadData:
    """Subtract each item's neighbour in the block's blocked tile; returns a fresh payload of the input dtype.

    ``"left"``: ``out[p] = x[p] - x[p-1]``; ``"right"``: ``out[p] = x[p] - x[p+1]``, computed in the payload dtype
    (integers wrap around).

    Args:
        group: a block (any shape; members in linear-rank order).
        values: a numeric ThreadData (left unchanged).
        direction: ``"left"`` (default) or ``"right"``.
        valid_items: only the first ``valid_items`` positions take part (``0 <= valid_items <= T*K``); the others are
            copied unchanged, and with ``"right"`` so is the last valid position.
        tile_predecessor_item: the item before the tile (``"left"`` only); without it position 0 is copied.
        tile_successor_item: the item after the tile (``"right"`` only, not with ``valid_items``); without it the
            last position is copied. Boundary items are block-uniform, of the payload dtype (literals are converted).
        temp_storage: an explicit ``TempStorage``.
        difference_op: qualified only (``cuda.coop.numba_mlir``, ``cuda.coop.cutlass``): replaces the subtraction;
            an operator string or a module-level Python or device function called as
            ``difference_op(current, neighbour)`` in both directions.

    See Also:
        :doc:`Adjacent difference and discontinuity </operations/adjacent>` in the cuda-coop documentation.
    """


@declare(Operation("discontinuity", "adjacent", "flag the items that differ from a neighbour", BLOCK_ONLY,
                   extends=Extension(options=("flag_op",)), selectors=(("mode", "_DiscontinuityMode"),),
                   explainer="flags"))
def discontinuity(group: ThreadGroup, values: ThreadData, /, *, mode: str = "heads", tile_predecessor_item: Any = None,
                  tile_successor_item: Any = None,
                  temp_storage: TempStorage | None = None) -> ThreadData | tuple[ThreadData, ThreadData]:
    """Flag where the block's blocked tile changes value; returns fresh int32 payloads of 1/0 flags.

    ``"heads"`` flags ``x[p] != x[p-1]``, ``"tails"`` flags ``x[p] != x[p+1]``, ``"heads_and_tails"`` returns
    ``(heads, tails)``. Without ``tile_predecessor_item`` the first head is 1; without ``tile_successor_item`` the
    last tail is 1. ``heads`` accepts only the predecessor, ``tails`` only the successor, ``heads_and_tails`` either
    or both. The whole tile takes part (there is no ``valid_items``).

    Args:
        group: a block (any shape; members in linear-rank order).
        values: a numeric ThreadData (left unchanged).
        mode: ``"heads"`` (default), ``"tails"`` or ``"heads_and_tails"``.
        tile_predecessor_item, tile_successor_item: block-uniform items before / after the tile, of the payload
            dtype (literals are converted).
        temp_storage: an explicit ``TempStorage``.
        flag_op: qualified only (``cuda.coop.numba_mlir``, ``cuda.coop.cutlass``): replaces the inequality; a
            module-level Python or device function returning a truth value, called as ``flag_op(previous, current)``
            for heads and ``flag_op(current, next)`` for tails.

    See Also:
        :doc:`Adjacent difference and discontinuity </operations/adjacent>` in the cuda-coop documentation.
    """
