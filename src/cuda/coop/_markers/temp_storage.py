"""TempStorage: an explicit shared-memory scratch descriptor (SPEC 6)."""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from .base import OP_ATTR, kernel_only


class TempStorage:
    """``TempStorage(size_in_bytes=None, *, alignment=None, auto_sync=False, sharing="shared")``.

    Shared-memory scratch for block operations. ``sharing="shared"`` overlaps every
    use in one region; ``"exclusive"`` gives each call site its own slice.
    ``auto_sync=True`` inserts a barrier after every use. Construct it in the kernel.
    """

    __module__ = "cuda.coop"
    size_in_bytes: int | None
    alignment: int | None
    auto_sync: bool
    sharing: str

    def __new__(
        cls,
        size_in_bytes: int | None = None,
        *,
        alignment: int | None = None,
        auto_sync: bool = False,
        sharing: str = "shared",
    ) -> "TempStorage":
        raise kernel_only("cuda.coop.TempStorage")


setattr(TempStorage, OP_ATTR, "TempStorage")


@runtime_checkable
class TempStorageLike(Protocol):
    size_in_bytes: int | None
    alignment: int | None
    auto_sync: bool
    sharing: str
