"""ThreadData: a fixed-size per-thread payload (the Concepts page of the documentation)."""
from __future__ import annotations

from typing import Any, Protocol, cast, runtime_checkable

from .base import OP_ATTR, dispatch, documented_constructor, kernel_only


class ThreadData:
    """``ThreadData(items_per_thread, dtype=None, *, alignment=None)``: per-thread items.

    ``items_per_thread`` is a compile-time positive integer (literal, constant or
    integer kernel argument). The dtype comes from ``dtype`` or is inferred from the
    kernel (a ``load`` source, a ``store`` destination, typed indexed assignments).
    The payload is not initialised.

    Args:
        items_per_thread: the compile-time extent ``K``, at most 4096 (P17: larger tiles
            belong in shared memory or a loop over tiles); ``len(items)`` and
            ``items.items_per_thread`` return it, also as compile-time values.
        dtype: a NumPy or numba-cuda-mlir scalar type; Python ``int`` means int32 and
            ``float`` float32. ``None``: inferred.
        alignment: a minimum alignment in bytes for the payload's storage (a power of two).

    See Also:
        :doc:`Concepts </concepts>` (ThreadData payloads) in the cuda-coop documentation.
    """

    __module__ = "cuda.coop"
    items_per_thread: int
    dtype: Any

    def __new__(cls, *args: Any, **kwargs: Any) -> "ThreadData":
        # what the tracing backend returns stands for a ThreadData in the kernel; the backend binds the arguments to
        # the documented signature below, so that a mistake in them is reported as in any call (C5)
        return cast("ThreadData", dispatch("ThreadData", cls.__module__, args, kwargs))

    def __len__(self) -> int:
        raise kernel_only("cuda.coop.ThreadData.__len__")

    def __getitem__(self, index: int) -> Any:
        raise kernel_only("cuda.coop.ThreadData.__getitem__")

    def __setitem__(self, index: int, value: Any) -> None:
        raise kernel_only("cuda.coop.ThreadData.__setitem__")


setattr(ThreadData, OP_ATTR, "ThreadData")


@runtime_checkable
class ThreadDataLike(Protocol):
    """Annotation protocol for helpers taking payloads (satisfying it does not make an object a kernel value)."""

    items_per_thread: int
    dtype: Any

    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> Any: ...
    def __setitem__(self, index: int, value: Any) -> None: ...


def _documented_new(items_per_thread: int, dtype: Any = None, *, alignment: int | None = None) -> ThreadData:
    """The signature of ``ThreadData(...)``."""


documented_constructor(ThreadData, _documented_new)

