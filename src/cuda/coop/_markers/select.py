"""select and partition markers (the "Select and partition" page of the documentation)."""
from __future__ import annotations

from typing import Any, Callable

from .records import ALL_WARPS, BLOCK, Groups, Operation, declare
from .groups import ThreadGroup
from .temp_storage import TempStorage

_SELECT_GROUPS = Groups(ALL_WARPS.kinds, ALL_WARPS.widths, words=((BLOCK, "yes (scalar or payload)"),))

_DOC = """{summary}

    Args:
        group: a block (any shape), a warp, or a logical warp of 1, 2, 4, 8, 16 or 32 lanes. Each
            group compacts its own tile of ``G*K`` blocked positions.
        items: a ThreadData, a scalar (one item per member), or a tuple of 1-8 of them of one shape
            (dtypes may differ: keys and values), all moved by the same permutation.
        flags: of the items' shape: an integer ThreadData, or for scalar items an integer or boolean
            scalar (a comparison). A non-zero flag keeps its item.
        valid_items: only positions below it take part (``0 <= valid_items <= G*K``, the same in every
            member; a runtime value out of range traps). Items at later positions may hold anything.
        temp_storage: an explicit ``TempStorage`` (block groups only).

    Returns:
        ``(result, count)`` in every member, ``((a, b, ...), count)`` for a tuple: fresh items in
        blocked order and the int32 number of kept valid items, the same in every member. {result}

    See Also:
        :doc:`Select and partition </operations/select>` in the cuda-coop documentation.
    """


def _doc(summary: str, result: str) -> Callable[[Any], Any]:
    def wrap(fn: Any) -> Any:
        fn.__doc__ = _DOC.format(summary=summary, result=result)
        return fn

    return wrap


@declare(Operation("select", "select", "keep the flagged items, in order", _SELECT_GROUPS, tuple_operands=True,
                   moved_members=True, tuple_operand="items", explainer="compaction"))
@_doc("The flagged items of the group's tile, moved to its front in their order (stream compaction).",
      "Positions below ``count`` hold the kept items in tile order; the others are unspecified.")
def select(group: ThreadGroup, items: Any, flags: Any, /, *, valid_items: Any = None,
           temp_storage: TempStorage | None = None) -> tuple[Any, Any]:
    ...


@declare(Operation("partition", "select", "kept items first, then the others, both in order", _SELECT_GROUPS,
                   tuple_operands=True, moved_members=True, tuple_operand="items", explainer="compaction"))
@_doc("The flagged items of the group's tile first, then the other valid items, each in their order.",
      "Positions below ``count`` hold the kept items in tile order, positions from ``count`` to "
      "``valid_items`` the rejected ones in tile order, and later positions their own input items.")
def partition(group: ThreadGroup, items: Any, flags: Any, /, *, valid_items: Any = None,
              temp_storage: TempStorage | None = None) -> tuple[Any, Any]:
    ...
