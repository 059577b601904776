"""Thread-group factories and the ThreadGroup descriptor (the Concepts page of the documentation)."""
from __future__ import annotations

from typing import Any

from .base import kernel_only, operation


class ThreadGroup:
    """A compile-time descriptor of cooperating threads (block, warp, logical warp, ...).

    Created only inside kernels by ``this_*()`` or ``group_by``. Its methods query
    ranks and counts or synchronise the group; every call is resolved at compile time.
    Levels are ``"thread"`` (alias ``"gpu_thread"``), ``"warp"``, ``"block"``, ``"cluster"``
    and ``"grid"``.

    See Also:
        :doc:`Concepts </concepts>` (groups and ranks) in the cuda-coop documentation.
    """

    __module__ = "cuda.coop"

    def __new__(cls, *args: Any, **kwargs: Any) -> "ThreadGroup":
        raise kernel_only("cuda.coop.ThreadGroup")

    def group_by(self, count: int, /, *, exhaustive: bool = True) -> "ThreadGroup":
        """Split a warp into logical warps of ``count`` lanes, or a block into groups of ``count`` warps.

        ``count`` is a compile-time positive integer. With ``exhaustive=True`` (default) it must divide
        the parent (32 lanes, or the block's warp count); with ``exhaustive=False`` the trailing lanes or
        warps belong to no group, and calls on the group must be guarded by ``is_member()``.
        """
        raise kernel_only("cuda.coop.ThreadGroup.group_by")

    def rank(self, level: str = "thread") -> int:
        """Index of the caller's ``level`` unit in the group (or of the group in ``level``)."""
        raise kernel_only("cuda.coop.ThreadGroup.rank")

    def count(self, level: str = "thread") -> int:
        """Number of ``level`` units in the group (or of groups in ``level``)."""
        raise kernel_only("cuda.coop.ThreadGroup.count")

    def rank_as(self, dtype: Any = None, level: str = "thread") -> int:
        """``rank(level)`` converted to the integer ``dtype`` (``None``: as ``rank``); narrowing truncates."""
        raise kernel_only("cuda.coop.ThreadGroup.rank_as")

    def count_as(self, dtype: Any = None, level: str = "thread") -> int:
        """``count(level)`` converted to the integer ``dtype`` (``None``: as ``count``); narrowing truncates."""
        raise kernel_only("cuda.coop.ThreadGroup.count_as")

    def is_member(self) -> int:
        """1 when the calling thread belongs to a group of this kind, else 0."""
        raise kernel_only("cuda.coop.ThreadGroup.is_member")

    def sync(self) -> None:
        """Barrier over the group (divergence-tolerant for blocks)."""
        raise kernel_only("cuda.coop.ThreadGroup.sync")

    def sync_aligned(self) -> None:
        """Aligned barrier over the group (``__syncthreads`` for blocks)."""
        raise kernel_only("cuda.coop.ThreadGroup.sync_aligned")


GROUP_METHODS = ("group_by", "rank", "count", "rank_as", "count_as", "is_member", "sync", "sync_aligned")


@operation("this_thread")
def this_thread() -> ThreadGroup:
    """The calling thread as a group (queries and qualified reduce only)."""


@operation("this_warp")
def this_warp() -> ThreadGroup:
    """The 32 consecutive threads (by linear rank) forming the caller's physical warp."""


@operation("this_block")
def this_block() -> ThreadGroup:
    """All threads of the caller's thread block."""


@operation("this_cluster")
def this_cluster() -> ThreadGroup:
    """All blocks of the caller's thread-block cluster (compute capability 9.0+)."""


@operation("this_grid")
def this_grid() -> ThreadGroup:
    """All threads of the launch (queries only)."""
