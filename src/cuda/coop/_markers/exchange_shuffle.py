"""exchange and shuffle markers (the "Exchange and shuffle" page of the documentation)."""
from __future__ import annotations

from .base import operation
from .groups import ThreadGroup
from .temp_storage import TempStorage
from .thread_data import ThreadData


@operation("exchange")
def exchange(group: ThreadGroup, value: ThreadData, /, *, mode: str = "striped_to_blocked",
             temp_storage: TempStorage | None = None) -> ThreadData:
    """Rearrange a payload between striped and blocked order; returns a fresh payload.

    Args:
        group: a block, warp or logical warp.
        value: the payload to rearrange (left unchanged).
        mode: ``"striped_to_blocked"`` (default) or ``"blocked_to_striped"``.
        temp_storage: an explicit ``TempStorage`` (block groups only).

    Returns:
        A fresh ThreadData of the same extent and dtype, in the target layout, defined in every member.

    See Also:
        :doc:`Exchange and shuffle </operations/exchange_shuffle>` in the cuda-coop documentation.
    """


@operation("shuffle")
def shuffle(group: ThreadGroup, value: ThreadData, /, *, mode: str = "down", distance: int = 1,
            temp_storage: TempStorage | None = None) -> ThreadData:
    """Shift the block's blocked tile by one position; returns a fresh payload.

    ``"up"``: output position ``p`` receives input ``p-1``; ``"down"``: input ``p+1``.
    Position 0 (up) and the last position (down) are unspecified. ``distance`` must be 1.

    Args:
        group: a block.
        value: the ThreadData to shift (left unchanged).
        mode: ``"down"`` (default) or ``"up"``.
        distance: the literal 1.
        temp_storage: an explicit ``TempStorage``.

    See Also:
        :doc:`Exchange and shuffle </operations/exchange_shuffle>` in the cuda-coop documentation.
    """
