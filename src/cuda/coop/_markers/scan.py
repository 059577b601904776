"""Scan family markers (the Scans page of the documentation)."""
from __future__ import annotations

from typing import Any, Callable

from .base import operation
from .groups import ThreadGroup
from .temp_storage import TempStorage

_DOC = """{summary}

    Block groups take a scalar or a ThreadData (scanned in blocked order); warp and
    logical-warp groups take one scalar per lane. The result is fresh and defined in
    every member. ``algorithm`` (blocks only): ``"raking"`` (default), ``"raking_memoize"``,
    ``"warp_scans"``. ``scan_op`` is an operator string or a Python/device function.

    See Also:
        :doc:`Scans </operations/scan>` in the cuda-coop documentation.
    """


def _doc(summary: str) -> Callable[[Any], Any]:
    def wrap(fn: Any) -> Any:
        fn.__doc__ = _DOC.format(summary=summary)
        return fn

    return wrap


@operation("scan")
@_doc("General scan: ``mode`` is ``\"exclusive\"`` or ``\"inclusive\"``.")
def scan(group: ThreadGroup, value: Any, /, *, mode: str = "exclusive", scan_op: Any = None,
         initial_value: Any = None, algorithm: str | None = None, temp_storage: TempStorage | None = None) -> Any:
    ...


@operation("exclusive_sum")
@_doc("Exclusive prefix sum: position ``p`` receives the sum of positions ``< p`` (0 first).")
def exclusive_sum(group: ThreadGroup, value: Any, /, *, algorithm: str | None = None,
                  temp_storage: TempStorage | None = None) -> Any:
    ...


@operation("inclusive_sum")
@_doc("Inclusive prefix sum: position ``p`` receives the sum of positions ``<= p``.")
def inclusive_sum(group: ThreadGroup, value: Any, /, *, algorithm: str | None = None,
                  temp_storage: TempStorage | None = None) -> Any:
    ...


@operation("exclusive_scan")
@_doc("Exclusive scan with ``scan_op``; non-sum operators need ``initial_value``.")
def exclusive_scan(group: ThreadGroup, value: Any, /, *, scan_op: Any = None, initial_value: Any = None,
                   algorithm: str | None = None, temp_storage: TempStorage | None = None) -> Any:
    ...


@operation("inclusive_scan")
@_doc("Inclusive scan with ``scan_op``.")
def inclusive_scan(group: ThreadGroup, value: Any, /, *, scan_op: Any = None, algorithm: str | None = None,
                   temp_storage: TempStorage | None = None) -> Any:
    ...
