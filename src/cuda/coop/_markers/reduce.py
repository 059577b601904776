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
           temp_storage: TempStorage | None = None) -> Any:
    """Combine every member's value (scalar or ThreadData) with ``binary_op``.

    Args:
        group: a block, warp or logical warp.
        value: a scalar or a ThreadData (each thread folds its slots first); or a tuple of 1-8 of them
            (payloads of one extent, or scalars) with ``binary_op=f``, a function of two tuples returning
            a tuple: the result is then a tuple of scalars.
        binary_op: ``"sum"``, ``"multiplies"``, ``"min"``, ``"max"``, ``"bit_and"``, ``"bit_or"``,
            ``"bit_xor"`` (and their aliases), or a Python/device function ``f(a, b)``. ``None`` is sum.
        broadcast: ``True``: the result is defined in every member; ``False``: in rank 0 only.
        valid_items: reduce only members with rank below it (scalar values; result at rank 0 only).
        algorithm: blocks only: ``"warp_reductions"`` (default), ``"raking"``, ``"raking_commutative_only"``.
        temp_storage: an explicit ``TempStorage`` (block groups only).

    Returns:
        A scalar of the value's dtype.

    See Also:
        :doc:`Reduce and sum </operations/reduce>` in the cuda-coop documentation.
    """


@declare(Operation("sum", "reduce", "add up a tile", _REDUCE_GROUPS, tuple_operands=True, form=(("operator", "sum"),),
                   selectors=(("algorithm", "_ReduceAlgorithm"),), explainer="aggregate"))
def sum(group: ThreadGroup, value: Any, /, *, broadcast: bool = True, valid_items: int | None = None,
        algorithm: str | None = None, temp_storage: TempStorage | None = None) -> Any:
    """``reduce(group, value, binary_op="sum", ...)``: the sum of every member's value (scalar or ThreadData).

    See Also:
        :doc:`Reduce and sum </operations/reduce>` in the cuda-coop documentation.
    """
