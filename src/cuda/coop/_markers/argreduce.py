"""argmax and argmin markers (the "Argmax and argmin" page of the documentation)."""
from __future__ import annotations

from typing import Any, Callable

from .records import ALL_WARPS, BLOCK, Extension, Groups, Operation, declare
from .groups import ThreadGroup
from .temp_storage import TempStorage

_ARG_GROUPS = Groups(ALL_WARPS.kinds, ALL_WARPS.widths, words=((BLOCK, "yes (scalar or payload)"),))
# qualified broadcast=False: the result in group rank 0 only, as reduce's (docs: operations/argreduce)
_ARG_EXTENSION = Extension(options=("broadcast",), note="""
    Qualified addition (``{name}``): ``broadcast=False`` (compile-time bool) defines the result in
    group rank 0 only (lane 0 of each warp group) and saves the broadcast: a shared-memory slot and a
    barrier on blocks, a shuffle on warps.
    """)

_DOC = """The {extreme} value of the group's tile and the index of its first occurrence.

    Args:
        group: a block, warp or logical warp.
        items: a ThreadData or a scalar of any of the ten numeric dtypes.
        valid_items: only tile positions below it take part (``1 <= valid_items <= G*K``; a runtime
            value out of range traps).
        indices: an integer ThreadData (or scalar) of the items' shape whose entries are reported as
            the index, e.g. global positions; by default the index is the item's position in the
            group's tile in blocked order (``rank * K + i``; a scalar's is the member's rank).
        temp_storage: an explicit ``TempStorage`` (block groups only).

    Returns:
        ``(value, index)`` in every member: the {extreme} value and the index of its first occurrence
        (ties keep the smaller position; for floats a NaN is the extreme, as in ``numpy.{numpy}``, and
        ``-0.0 == 0.0``). ``index`` is int32 (int64 when the tile has more than ``2**31 - 1``
        positions), or the dtype of ``indices``.

    See Also:
        :doc:`Argmax and argmin </operations/argreduce>` in the cuda-coop documentation.
    """


def _doc(extreme: str, numpy: str) -> Callable[[Any], Any]:
    def wrap(fn: Any) -> Any:
        fn.__doc__ = _DOC.format(extreme=extreme, numpy=numpy)
        return fn

    return wrap


@declare(Operation("argmax", "argreduce", "the largest value and its first index", _ARG_GROUPS,
                   extends=_ARG_EXTENSION, explainer="extreme"))
@_doc("largest", "argmax")
def argmax(group: ThreadGroup, items: Any, /, *, valid_items: Any = None, indices: Any = None,
           temp_storage: TempStorage | None = None) -> tuple[Any, Any]:
    ...


@declare(Operation("argmin", "argreduce", "the smallest value and its first index", _ARG_GROUPS,
                   extends=_ARG_EXTENSION, explainer="extreme"))
@_doc("smallest", "argmin")
def argmin(group: ThreadGroup, items: Any, /, *, valid_items: Any = None, indices: Any = None,
           temp_storage: TempStorage | None = None) -> tuple[Any, Any]:
    ...
