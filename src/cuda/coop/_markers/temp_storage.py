"""TempStorage: an explicit shared-memory scratch descriptor (the Concepts page of the documentation)."""
from __future__ import annotations

from typing import Any, Protocol, cast, runtime_checkable

from .base import OP_ATTR, dispatch, documented_constructor


class TempStorage:
    """``TempStorage(size_in_bytes=None, *, alignment=None, auto_sync=False, sharing="shared")``.

    Shared-memory scratch for block operations. ``sharing="shared"`` overlaps every
    use in one region; ``"exclusive"`` gives each call site its own slice.
    ``auto_sync=True`` inserts a barrier after every use. Construct it in the kernel.

    Args:
        size_in_bytes: ``None`` (sized from every use) or a compile-time capacity that
            must cover every use.
        alignment: a minimum alignment (a power of two), raised to what the uses need.
        auto_sync: ``True``: a barrier after every call using the descriptor; ``False``:
            none, the kernel synchronises between uses of overlapping scratch.
        sharing: ``"shared"`` (default) or ``"exclusive"``.

    See Also:
        :doc:`Concepts </concepts>` (scratch memory and barriers) in the cuda-coop documentation.
    """

    __module__ = "cuda.coop"
    size_in_bytes: int | None
    alignment: int | None
    auto_sync: bool
    sharing: str

    def __new__(cls, *args: Any, **kwargs: Any) -> "TempStorage":
        # the backend binds the arguments to the documented signature below (C5 for a mistake, as in any call)
        return cast("TempStorage", dispatch("TempStorage", cls.__module__, args, kwargs))


def _documented_new(size_in_bytes: int | None = None, *, alignment: int | None = None,
                    auto_sync: bool = False, sharing: str = "shared") -> TempStorage:
    """The signature of ``TempStorage(...)``."""


documented_constructor(TempStorage, _documented_new)
setattr(TempStorage, OP_ATTR, "TempStorage")


@runtime_checkable
class TempStorageLike(Protocol):
    """Annotation protocol for helpers taking scratch descriptors."""

    size_in_bytes: int | None
    alignment: int | None
    auto_sync: bool
    sharing: str
