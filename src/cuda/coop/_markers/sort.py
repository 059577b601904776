"""Merge sort and radix sort markers (SPEC 8.8, 8.9)."""
from __future__ import annotations

from typing import Any

from .base import operation
from .groups import ThreadGroup
from .temp_storage import TempStorage
from .thread_data import ThreadData


@operation("merge_sort_keys")
def merge_sort_keys(group: ThreadGroup, keys: ThreadData, /, *, descending: bool = False, valid_items: Any = None,
                    oob_default: Any = None, temp_storage: TempStorage | None = None) -> ThreadData:
    """Sort each group's tile of keys; returns a fresh payload in blocked order (not guaranteed stable).

    Args:
        group: a block with a power-of-two thread count, a warp, or a logical warp; each group sorts its own tile.
        keys: a numeric ThreadData (left unchanged).
        descending: compile-time bool.
        valid_items: sort only the first ``valid_items`` keys of the tile (``0 <= valid_items <= G*K``); requires
            ``oob_default``, a key that orders after every valid key. Only the first ``valid_items`` output
            positions are defined.
        temp_storage: an explicit ``TempStorage`` (block groups only).
    """


@operation("merge_sort_pairs")
def merge_sort_pairs(group: ThreadGroup, keys: ThreadData, values: ThreadData, /, *, descending: bool = False,
                     valid_items: Any = None, oob_default: Any = None,
                     temp_storage: TempStorage | None = None) -> tuple[ThreadData, ThreadData]:
    """Sort keys and carry each value with its key; returns fresh ``(keys, values)`` payloads in blocked order."""


@operation("radix_sort_keys")
def radix_sort_keys(group: ThreadGroup, keys: ThreadData, /, *, begin_bit: Any = 0, end_bit: Any = None,
                    descending: bool = False, temp_storage: TempStorage | None = None) -> ThreadData:
    """Stable radix sort of the block's tile by bits ``[begin_bit, end_bit)`` of the ordered key representation.

    Args:
        group: a block.
        keys: a ThreadData of int32, uint32, int64 or uint64 (left unchanged).
        begin_bit, end_bit: compile-time or block-uniform runtime integers, ``0 <= begin_bit < end_bit <= width``
            (``end_bit=None``: the key width); bits outside the range do not break ties.
        descending: compile-time bool; orders digits from high to low and stays stable.
        temp_storage: an explicit ``TempStorage``.
    """


@operation("radix_sort_pairs")
def radix_sort_pairs(group: ThreadGroup, keys: ThreadData, values: ThreadData, /, *, begin_bit: Any = 0,
                     end_bit: Any = None, descending: bool = False,
                     temp_storage: TempStorage | None = None) -> tuple[ThreadData, ThreadData]:
    """Stable radix sort of keys carrying each value with its key; returns fresh ``(keys, values)`` payloads."""
