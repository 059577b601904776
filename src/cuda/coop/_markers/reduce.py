"""reduce and sum markers (the "Reduce and sum" page of the documentation)."""
from __future__ import annotations

from typing import Any, Callable

from .records import BLOCK, LOGICAL_WARP, WARP, Groups, Operation, declare
from .groups import ThreadGroup
from .temp_storage import TempStorage


# reduce and sum check their own rule (docs: operations/reduce): qualified kinds and partial logical warps
_REDUCE_GROUPS = Groups((BLOCK, WARP, LOGICAL_WARP), own_rule=True, words=(
    (LOGICAL_WARP, "W in 1, 2, 4, 8, 16, 32, or 17-31 from ``group_by(W, exhaustive=False)``"),))


@declare(Operation("reduce", "reduce", "combine a tile into one value", _REDUCE_GROUPS, tuple_operands=True,
                   selectors=(("algorithm", "_ReduceAlgorithm"),), explainer="aggregate"))
def reduce(group: ThreadGroup, value: Any, /, *, binary_op: str | Callable[[Any, Any], Any] | None = None,
           broadcast: bool = True, valid_items: int | None = None, algorithm: str | None = None,
           head_flags: Any = None, compact: bool = False, temp_storage: TempStorage | None = None) -> Any:
    """Combine every member's value (scalar or ThreadData) with ``binary_op``; with ``head_flags``, each segment's.

    Args:
        group: a block, warp or logical warp.
        value: a scalar or a ThreadData (each thread folds its slots first); or a tuple of 1-8 of them
            (payloads of one extent, or scalars) with ``binary_op=f``, a function of two tuples returning
            a tuple: the result is then a tuple of scalars.
        binary_op: ``"sum"``, ``"multiplies"``, ``"min"``, ``"max"``, ``"bit_and"``, ``"bit_or"``,
            ``"bit_xor"`` (and their aliases), or a Python/device function ``f(a, b)``. ``None`` is sum.
        broadcast: ``True``: the result is defined in every member; ``False``: in rank 0 only.
        valid_items: reduce only members with rank below it (scalar values; result at rank 0 only). With
            ``head_flags``: only tile positions below it, ``0 <= valid_items <= G*K``.
        algorithm: blocks only: ``"warp_reductions"`` (default), ``"raking"``, ``"raking_commutative_only"``.
        head_flags: a segmented reduction: an integer ThreadData of the value's extent (for a scalar value
            an integer or boolean scalar); a non-zero flag starts a segment at its tile position (position
            0 always starts one). Blocks: scalars or payloads; warp groups of 1-32 lanes (powers of two):
            one scalar per lane. Not with ``broadcast=False`` or ``algorithm``.
        compact: with ``head_flags``, return ``(totals, count)``: the segments' totals in their order at
            the front of ``totals``, and their number (int32, in every member).
        temp_storage: an explicit ``TempStorage`` (block groups only).

    Returns:
        A scalar of the value's dtype. With ``head_flags``: a fresh value of the value's shape whose
        position ``s`` holds the total of the segment starting at ``s`` (other positions unspecified),
        or with ``compact=True`` ``(totals, count)``.

    See Also:
        :doc:`Reduce and sum </operations/reduce>` in the cuda-coop documentation.
    """


@declare(Operation("sum", "reduce", "add up a tile", _REDUCE_GROUPS, tuple_operands=True, form=(("operator", "sum"),),
                   selectors=(("algorithm", "_ReduceAlgorithm"),), explainer="aggregate"))
def sum(group: ThreadGroup, value: Any, /, *, broadcast: bool = True, valid_items: int | None = None,
        algorithm: str | None = None, head_flags: Any = None, compact: bool = False,
        temp_storage: TempStorage | None = None) -> Any:
    """``reduce(group, value, binary_op="sum", ...)``: the sum of every member's value (scalar or ThreadData).

    With ``head_flags``, each segment's sum at its first position (``compact=True``: the sums at the front,
    and their count), as ``reduce`` says.

    See Also:
        :doc:`Reduce and sum </operations/reduce>` in the cuda-coop documentation.
    """
