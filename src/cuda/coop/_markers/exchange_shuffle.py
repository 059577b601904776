"""exchange and shuffle markers (the "Exchange and shuffle" page of the documentation)."""
from __future__ import annotations

from .records import ALL_WARPS, BLOCK_ONLY, Extension, Operation, declare
from .groups import ThreadGroup
from .temp_storage import TempStorage
from .thread_data import ThreadData


@declare(Operation("exchange", "exchange_shuffle", "rearrange a payload between layouts", ALL_WARPS,
                   extends=Extension(options=("ranks", "valid_flags", "warp_time_slicing")),
                   selectors=(("mode", "_ExchangeMode"),), explainer="layout_change"))
def exchange(group: ThreadGroup, value: ThreadData, /, *, mode: str = "striped_to_blocked",
             temp_storage: TempStorage | None = None) -> ThreadData:
    """Rearrange a payload between layouts; returns a fresh payload.

    Args:
        group: a block, warp or logical warp.
        value: the payload to rearrange (left unchanged).
        mode: ``"striped_to_blocked"`` (default) or ``"blocked_to_striped"``. Through a
            backend's namespace (blocks only) also ``"warp_striped_to_blocked"`` and
            ``"blocked_to_warp_striped"`` (the block must be made of complete warps), and the scatter modes
            ``"scatter_to_blocked"``, ``"scatter_to_striped"``, ``"scatter_to_striped_guarded"`` (negative ranks
            write nothing) and ``"scatter_to_striped_flagged"`` (only items whose ``valid_flags`` entry is nonzero
            are written).
        temp_storage: an explicit ``TempStorage`` (block groups only).
        ranks: qualified only (a backend's namespace), scatter modes: a signed-integer payload of
            the value's extent; ``ranks[i]`` is the tile position item ``i`` moves to. Ranks of written items must
            be in range and unique; positions no item moves to are unspecified.
        valid_flags: qualified only, ``"scatter_to_striped_flagged"``: an integer payload of the value's extent.
        warp_time_slicing: qualified only, block groups; a compile-time bool (default False): the warps take
            turns in a scratch region sized for one warp (CUB's ``WARP_TIME_SLICING``); less shared memory, more
            barriers. Not allowed with the guarded and flagged scatter modes.

    Returns:
        A fresh ThreadData of the same extent and dtype, in the target layout, defined in every member (scatter
        modes: in the positions some item was sent to).

    See Also:
        :doc:`Exchange and shuffle </operations/exchange_shuffle>` and :doc:`The qualified namespace </qualified>`
        in the cuda-coop documentation.
    """


@declare(Operation("shuffle", "exchange_shuffle", "move items one position up or down the tile", BLOCK_ONLY,
                   extends=Extension(scalar_form=True, returns="ThreadData | Any"),
                   selectors=(("mode", "_ShuffleMode"),), explainer="neighbour_moves"))
def shuffle(group: ThreadGroup, value: ThreadData, /, *, mode: str = "down", distance: int = 1,
            temp_storage: TempStorage | None = None) -> ThreadData:  # a scalar for offset/rotate (qualified)
    """Shift the block's blocked tile by one position, or (qualified) move one scalar per thread.

    ``"up"``: output position ``p`` receives input ``p-1``; ``"down"``: input ``p+1``.
    Position 0 (up) and the last position (down) are unspecified. ``distance`` must be 1.

    Through a backend's namespace a scalar ``value`` takes ``mode="offset"`` or ``mode="rotate"`` and the call
    returns a scalar: with ``"offset"`` member ``t`` receives the value of member ``t + distance`` (negative
    distances look backwards); where ``t + distance`` lies outside the block the result is unspecified (this
    release returns the member's own value there, but do not rely on it). With ``"rotate"`` member ``t`` receives
    the value of member ``(t + distance) % T`` and ``distance`` must satisfy ``1 <= distance < T``: a literal
    outside that range is a compile-time error, a runtime one traps on the device. For scalar shuffles
    ``distance`` may be a runtime integer that differs between threads.

    Args:
        group: a block.
        value: the ThreadData to shift (left unchanged); a scalar for ``"offset"``/``"rotate"`` (qualified).
        mode: ``"down"`` (default) or ``"up"``; qualified scalar shuffles: ``"offset"`` or ``"rotate"``.
        distance: the literal 1 for ``"up"``/``"down"``; any integer (``"offset"``) or ``1 <= distance < T``
            (``"rotate"``), literal or runtime, for scalar shuffles.
        temp_storage: an explicit ``TempStorage``.

    Returns:
        A fresh ThreadData (``"up"``/``"down"``) or a scalar of the value's dtype (``"offset"``/``"rotate"``).

    See Also:
        :doc:`Exchange and shuffle </operations/exchange_shuffle>` in the cuda-coop documentation.
    """
