"""Sorting and selection markers: merge sort, radix sort, radix rank, top-k (the "Merge sort", "Radix sort and
radix rank" and "Top-k selection" pages of the documentation)."""
from __future__ import annotations

from typing import Any, Callable, TypeVar

from .records import ALL_WARPS, BLOCK, BLOCK_ONLY, Extension, Groups, Operation, declare
from .groups import ThreadGroup
from .temp_storage import TempStorage
from .thread_data import ThreadData

F = TypeVar("F", bound=Callable[..., Any])

# qualified compare_op (docs: operations/merge_sort, "Custom comparison")
_MERGE_EXTENSION = Extension(options=("compare_op",))
# scalar keys and values (docs: qualified, "Payload forms"), floating keys and blocked_to_striped
# (docs: qualified, "Floating-point radix keys and striped output")
_MERGE_GROUPS = Groups(ALL_WARPS.kinds, ALL_WARPS.widths, words=((BLOCK, "``T`` a power of two"),))
# float16 keys only where the backend builds float16 (docs: operations/radix_sort)
_RADIX_EXTENSION = Extension(
    options=("blocked_to_striped",), scalar_form=True,
    note="""
    Qualified additions (``{name}``): keys may also be float32 or float64
    (ordered by their bits: negatives inverted, so ``-0.0 == +0.0``); ``blocked_to_striped=True``
    returns the sorted tile in striped order (compile-time bool).
    """,
    capability_notes=(("float16", "    Keys may also be float16, ordered the same way."),))
# a 1-D block, or a warp or logical warp in any block of complete warps (docs: operations/topk)
_TOPK_GROUPS = Groups(ALL_WARPS.kinds, ALL_WARPS.widths, words=((BLOCK, "1-D"),))



@declare(Operation("merge_sort_keys", "sort", "sort a tile by comparison", _MERGE_GROUPS, extends=_MERGE_EXTENSION,
                   explainer="merge_order"))
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
        compare_op: qualified only (``cuda.coop.numba_mlir``, ``cuda.coop.cutlass``): a module-level Python or
            device function ``f(a, b)`` returning true when key ``a`` orders before key ``b`` (a strict weak
            ordering); the sort is then stable. Not with ``descending=True``.

    See Also:
        :doc:`Merge sort </operations/merge_sort>` in the cuda-coop documentation.
    """


@declare(Operation("merge_sort_pairs", "sort", "sort a tile by comparison", _MERGE_GROUPS, extends=_MERGE_EXTENSION,
                   explainer="merge_order"))
def merge_sort_pairs(group: ThreadGroup, keys: ThreadData, values: ThreadData, /, *, descending: bool = False,
                     valid_items: Any = None, oob_default: Any = None,
                     temp_storage: TempStorage | None = None) -> tuple[ThreadData, ThreadData]:
    """Sort keys and carry each value with its key; returns fresh ``(keys, values)`` payloads in blocked order.

    Options as for ``merge_sort_keys``; ``values`` is a ThreadData of any numeric dtype with the keys' extent.

    See Also:
        :doc:`Merge sort </operations/merge_sort>` in the cuda-coop documentation.
    """


@declare(Operation("radix_sort_keys", "sort", "sort a tile by its keys' bits", BLOCK_ONLY, extends=_RADIX_EXTENSION,
                   explainer="radix_order"))
def radix_sort_keys(group: ThreadGroup, keys: ThreadData, /, *, begin_bit: Any = 0, end_bit: Any = None,
                    descending: bool = False, valid_items: Any = None, oob_default: Any = None,
                    temp_storage: TempStorage | None = None) -> ThreadData:
    """Stable radix sort of the block's tile by bits ``[begin_bit, end_bit)`` of the ordered key representation.

    Args:
        group: a block.
        keys: a ThreadData of int32, uint32, int64 or uint64 (left unchanged).
        begin_bit, end_bit: compile-time or block-uniform runtime integers, ``0 <= begin_bit < end_bit <= width``
            (``end_bit=None``: the key width); bits outside the range do not break ties.
        descending: compile-time bool; orders digits from high to low and stays stable.
        valid_items: sort only the keys at blocked positions ``t*K + i < valid_items`` (compile-time or
            block-uniform runtime, ``0 <= valid_items <= T*K``; default: the whole tile). The others take no part
            in the ordering and may hold anything, uninitialised values included; after a striped load,
            ``exchange`` first.
        oob_default: with ``valid_items`` only: the key written to the output positions ``>= valid_items``
            (unspecified keys there without it); any key of the keys' dtype, taking no part in the ordering.
        temp_storage: an explicit ``TempStorage``.

    Returns:
        A fresh ThreadData of sorted keys in blocked order, defined in every member: the ``valid_items`` valid keys
        sorted first, then ``oob_default``.

    See Also:
        :doc:`Radix sort and radix rank </operations/radix_sort>` in the cuda-coop documentation.
    """


@declare(Operation("radix_sort_pairs", "sort", "sort a tile by its keys' bits", BLOCK_ONLY, extends=_RADIX_EXTENSION,
                   explainer="radix_order"))
def radix_sort_pairs(group: ThreadGroup, keys: ThreadData, values: ThreadData, /, *, begin_bit: Any = 0,
                     end_bit: Any = None, descending: bool = False, valid_items: Any = None, oob_default: Any = None,
                     temp_storage: TempStorage | None = None) -> tuple[ThreadData, ThreadData]:
    """Stable radix sort of keys carrying each value with its key; returns fresh ``(keys, values)`` payloads.

    Options as for ``radix_sort_keys``; ``values`` is a ThreadData of any numeric dtype with the keys' extent.
    With ``valid_items``, the output positions ``>= valid_items`` hold the values of the input positions
    ``>= valid_items`` in their blocked input order.

    See Also:
        :doc:`Radix sort and radix rank </operations/radix_sort>` in the cuda-coop documentation.
    """


@declare(Operation("radix_rank", "sort", "the rank of each key in the sorted tile", BLOCK_ONLY,
                   extends=Extension(options=("exclusive_digit_prefix",), scalar_form=True), explainer="digit_ranks"))
def radix_rank(group: ThreadGroup, keys: ThreadData, /, *, begin_bit: int = 0, end_bit: int | None = None,
               radix_bits: int | None = None, descending: bool = False,
               temp_storage: TempStorage | None = None) -> ThreadData:
    """Rank each key of the block's tile by one digit (1-8 bits) of its ordered representation.

    Returns a fresh int32 payload: slot ``i`` of member ``t`` holds the rank of the key in that slot, a
    permutation of ``0 .. T*K-1`` (ascending: keys with a smaller digit, plus equal digits at earlier blocked
    positions; ``descending`` counts larger digits). Keys: int32, uint32, int64, uint64. The bounds are
    compile-time: ``end_bit`` defaults to ``begin_bit + radix_bits`` (or ``begin_bit + 4``).

    Qualified only (a backend's namespace): ``exclusive_digit_prefix=buf``, a writable int32 ThreadData of
    ``ceil(2**bits / T)`` items; slot ``i`` of member ``t`` receives the number of keys whose digit precedes digit
    ``t*extent + i`` in the ranking order (slots for digits ``>= 2**bits`` are unspecified).

    See Also:
        :doc:`Radix sort and radix rank </operations/radix_sort>` in the cuda-coop documentation.
    """


def _topk_doc(which: str, pairs: str = "") -> Callable[[F], F]:
    def wrap(fn: F) -> F:
        fn.__doc__ = f"""Select the ``k`` {which} keys of each group's tile (read in blocked order){pairs}.

    The group is a 1-D block, a warp or a logical warp (W in 1, 2, 4, 8, 16, 32; any block of complete warps);
    each warp group selects from its own tile of ``G*K`` keys. ``k`` (required) and ``valid_items`` (default:
    the whole tile) are compile-time or group-uniform runtime integers in ``0 .. G*K``. The first
    ``min(k, valid_items)`` blocked positions of the fresh result hold the selected keys in unspecified order;
    the remaining positions are unspecified. ``temp_storage``: blocks only.

    See Also:
        :doc:`Top-k selection </operations/topk>` in the cuda-coop documentation.
    """
        return fn

    return wrap


@declare(Operation("topk_min_keys", "sort", "select the k smallest keys", _TOPK_GROUPS, explainer="selection"))
@_topk_doc("smallest")
def topk_min_keys(group: ThreadGroup, keys: ThreadData, /, *, k: Any, valid_items: Any = None,
                  temp_storage: TempStorage | None = None) -> ThreadData:
    ...


@declare(Operation("topk_max_keys", "sort", "select the k largest keys", _TOPK_GROUPS, explainer="selection"))
@_topk_doc("largest")
def topk_max_keys(group: ThreadGroup, keys: ThreadData, /, *, k: Any, valid_items: Any = None,
                  temp_storage: TempStorage | None = None) -> ThreadData:
    ...


@declare(Operation("topk_min_pairs", "sort", "select the k smallest keys with their values", _TOPK_GROUPS,
                   explainer="selection"))
@_topk_doc("smallest", "; each value moves with its key")
def topk_min_pairs(group: ThreadGroup, keys: ThreadData, values: ThreadData, /, *, k: Any, valid_items: Any = None,
                   temp_storage: TempStorage | None = None) -> tuple[ThreadData, ThreadData]:
    ...


@declare(Operation("topk_max_pairs", "sort", "select the k largest keys with their values", _TOPK_GROUPS,
                   explainer="selection"))
@_topk_doc("largest", "; each value moves with its key")
def topk_max_pairs(group: ThreadGroup, keys: ThreadData, values: ThreadData, /, *, k: Any, valid_items: Any = None,
                   temp_storage: TempStorage | None = None) -> tuple[ThreadData, ThreadData]:
    ...
