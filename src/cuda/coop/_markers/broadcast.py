"""broadcast marker (the "Broadcast" page of the documentation)."""
from __future__ import annotations

from typing import Any

from .records import BLOCK, LOGICAL_WARP, WARP, Groups, Operation, declare
from .groups import ThreadGroup
from .temp_storage import TempStorage

# every width group_by makes: those not dividing 32 come from group_by(W, exhaustive=False) (docs: operations/broadcast)
_BROADCAST_GROUPS = Groups((BLOCK, WARP, LOGICAL_WARP), tuple(range(1, 33)), words=(
    (LOGICAL_WARP, "W in 1-32; widths not dividing 32 from ``group_by(W, exhaustive=False)``"),))


@declare(Operation("broadcast", "broadcast", "every member receives one member's value", _BROADCAST_GROUPS,
                   tuple_operands=True, independent_members=True, explainer="broadcast"))
def broadcast(group: ThreadGroup, value: Any, /, *, src_rank: int = 0,
              temp_storage: TempStorage | None = None) -> Any:
    """Every member of the group receives member ``src_rank``'s value (a scalar, a ThreadData or a tuple of them).

    Args:
        group: a block (any shape), a warp, or a logical warp of 1 to 32 lanes (widths that do not
            divide 32 come from ``group_by(W, exhaustive=False)``; guard the call with
            ``group.is_member()``).
        value: a scalar or a ThreadData (all its items travel) of a numeric dtype; or a tuple of 1-8
            of them, scalars and payloads mixed, each member travelling on its own.
        src_rank: the rank of the member whose value every member receives, ``0 <= src_rank < G``,
            the same in every member; a compile-time or runtime integer (a runtime value out of range
            traps). Default 0.
        temp_storage: an explicit ``TempStorage`` (block groups only; warp groups use no scratch).

    Returns:
        A fresh value of ``value``'s shape and dtype, in every member: the bits of member
        ``src_rank``'s value, unchanged (NaN payloads and ``-0.0`` included).

    See Also:
        :doc:`Broadcast </operations/broadcast>` in the cuda-coop documentation.
    """
