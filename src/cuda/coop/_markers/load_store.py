"""load and store markers (the "Load and store" page of the documentation)."""
from __future__ import annotations

from typing import Any

from .records import ALL_WARPS, Operation, declare
from .groups import ThreadGroup
from .temp_storage import TempStorage
from .thread_data import ThreadData

LOAD_ALGORITHMS = ("direct", "striped", "vectorize", "transpose", "warp_transpose", "warp_transpose_timesliced")


@declare(Operation("load", "load_store", "copy a tile from global memory into a payload", ALL_WARPS,
                   selectors=(("algorithm", "_LoadStoreAlgorithm"),), explainer="load_pattern"))
def load(
    group: ThreadGroup,
    source: Any,
    output: ThreadData,
    /,
    *,
    algorithm: str = "direct",
    valid_items: int | None = None,
    oob_default: Any = None,
    offset: int | None = None,
    temp_storage: TempStorage | None = None,
) -> None:
    """Load the group's tile ``source[offset : offset + G*K]`` into ``output``.

    Args:
        group: ``this_block()``, ``this_warp()`` or ``this_warp().group_by(W)``.
        source: a 1-D contiguous array; its dtype types an untyped ``output``.
        output: the ThreadData receiving ``K`` items per thread.
        algorithm: one of ``direct``, ``striped``, ``vectorize``, ``transpose``,
            ``warp_transpose``, ``warp_transpose_timesliced`` (the last two: blocks only).
        valid_items: number of valid elements at the start of the tile (runtime values
            outside ``[0, tile]`` trap on the device).
        oob_default: value written to slots beyond ``valid_items`` (needs ``valid_items``).
        offset: element offset of the block's tile in ``source``; warp groups add their own origin.
        temp_storage: an explicit ``TempStorage`` (block groups only).

    Example::

        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, algorithm="transpose", offset=base)

    See Also:
        :doc:`Load and store </operations/load_store>` in the cuda-coop documentation.
    """


@declare(Operation("store", "load_store", "copy a payload into global memory", ALL_WARPS,
                   selectors=(("algorithm", "_LoadStoreAlgorithm"),), explainer="store_pattern"))
def store(
    group: ThreadGroup,
    destination: Any,
    value: Any,
    /,
    *,
    algorithm: str = "direct",
    valid_items: int | None = None,
    offset: int | None = None,
    temp_storage: TempStorage | None = None,
) -> None:
    """Store ``value`` (a ThreadData, or a scalar as one item per thread) to the group's tile.

    Only positions below ``valid_items`` are written; ``value`` is left unchanged. Its
    dtype must equal ``destination``'s exactly (cast it: numba-cuda-mlir widens integer
    arithmetic).

    Args:
        group: ``this_block()``, ``this_warp()`` or ``this_warp().group_by(W)``.
        destination: a 1-D contiguous array of the value's dtype.
        value: a ThreadData (blocked order, or striped with ``algorithm="striped"``) or a scalar.
        algorithm: as for ``load``: ``direct``, ``striped``, ``vectorize``, ``transpose``,
            ``warp_transpose``, ``warp_transpose_timesliced`` (the last two: blocks only).
        valid_items: write only the first ``valid_items`` positions of the tile (runtime values
            outside ``[0, tile]`` trap on the device).
        offset: element offset of the block's tile in ``destination``; warp groups add their own origin.
        temp_storage: an explicit ``TempStorage`` (block groups only).

    See Also:
        :doc:`Load and store </operations/load_store>` in the cuda-coop documentation.
    """
