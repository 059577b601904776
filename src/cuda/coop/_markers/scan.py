"""Scan family markers (the Scans page of the documentation)."""
from __future__ import annotations

import inspect
from typing import Any, Callable

from .._errors import CoopTypeError
from .records import ALL_WARPS, BLOCK, LOGICAL_WARP, WARP, Extension, Groups, Operation, declare
from .groups import ThreadGroup
from .temp_storage import TempStorage

# Qualified: warp valid_items, aggregate_output, a block prefix callback, and a StatefulFunction prefix_op with its
# one-item state operand where the backend builds one (docs: operations/scan)
_SCAN_EXTENSION = Extension(
    options=("prefix_op", "valid_items", "aggregate_output"), operands=("state",),
    needs=(("state", "state_by_pointer"),),
    notes=(("state", "    ``prefix_op`` may also be a ``StatefulFunction``, whose one-item state payload is the third\n"
                     "    positional operand."),))


_SCAN_GROUPS = Groups(ALL_WARPS.kinds, ALL_WARPS.widths, words=(
    (BLOCK, "yes (scalar or payload)"), (WARP, "yes (scalar)"), (LOGICAL_WARP, "W in 1, 2, 4, 8, 16, 32 (scalar)")))


def _scan(name: str, summary: str, mode: str | None = None, operator: str | None = None) -> Operation:
    """A scan form's record: ``mode`` and ``operator``, where given, are fixed by the form."""
    form = tuple((key, value) for key, value in (("mode", mode), ("operator", operator)) if value is not None)
    selectors = (("mode", "_ScanMode"),) if mode is None else ()
    return Operation(name, "scan", summary, _SCAN_GROUPS, extends=_SCAN_EXTENSION, tuple_operands=True, form=form,
                     selectors=(*selectors, ("algorithm", "_ScanAlgorithm")), explainer="prefixes")


_DOC = """{summary}

    Block groups take a scalar or a ThreadData (scanned in blocked order); warp and
    logical-warp groups take one scalar per lane. The result is fresh and defined in
    every member. ``algorithm`` (blocks only): ``"raking"`` (default), ``"raking_memoize"``,
    ``"warp_scans"``.{operator} ``reverse=True`` (compile-time bool) scans from the tile's
    last position to its first: position ``p`` combines positions ``p`` .. ``P-1`` as
    ``x[p] op (x[p+1] op ...)``, and an exclusive scan gives ``initial_value`` (sums: 0) at
    the last position. ``head_flags`` (an integer payload of the value's extent; for scalar
    scans an integer or boolean scalar, such as a comparison) makes the scan segmented: a
    non-zero flag starts a segment at its tile position (position 0 always starts one), each
    segment is scanned on its own, forward or reverse, and exclusive forms give
    ``initial_value`` (sums: 0) where a segment's scan begins.{tuples}
    The qualified variants (a backend's namespace) also accept ``valid_items=`` (warp
    groups), ``aggregate_output=`` and ``prefix_op=`` (blocks: a function of the block
    aggregate that returns the prefix seeding the scan, so that a block scans tile after
    tile; with ``head_flags`` it also receives ``has_head`` and position 0 continues the
    previous tile's segment unless flagged; with ``reverse=True`` the prefix goes on the
    right of every position).

    See Also:
        :doc:`Scans </operations/scan>` in the cuda-coop documentation.
    """


def _doc(summary: str) -> Callable[[Any], Any]:
    def wrap(fn: Any) -> Any:
        takes_operator = "scan_op" in inspect.signature(fn).parameters  # the sums have a fixed operator
        operator = " ``scan_op`` is an operator string or a Python/device function." if takes_operator else ""
        tuples = ("\n    ``value`` may also be a tuple of 1-8 payloads (or scalars) with ``scan_op=f``, a function\n"
                  "    of two tuples returning a tuple; the result is then a tuple.") if takes_operator else ""
        fn.__doc__ = _DOC.format(summary=summary, operator=operator, tuples=tuples)
        return fn

    return wrap


@declare(_scan("scan", "scan a tile with an operator"))
@_doc("General scan: ``mode`` is ``\"exclusive\"`` or ``\"inclusive\"``.")
def scan(group: ThreadGroup, value: Any, /, *, mode: str = "exclusive", scan_op: Any = None,
         initial_value: Any = None, algorithm: str | None = None, reverse: bool = False, head_flags: Any = None,
         temp_storage: TempStorage | None = None) -> Any:
    ...


@declare(_scan("exclusive_sum", "exclusive prefix sums", "exclusive", "sum"))
@_doc("Exclusive prefix sum: position ``p`` receives the sum of positions ``< p`` (0 first).")
def exclusive_sum(group: ThreadGroup, value: Any, /, *, algorithm: str | None = None,
                  reverse: bool = False, head_flags: Any = None, temp_storage: TempStorage | None = None) -> Any:
    ...


@declare(_scan("inclusive_sum", "inclusive prefix sums", "inclusive", "sum"))
@_doc("Inclusive prefix sum: position ``p`` receives the sum of positions ``<= p``.")
def inclusive_sum(group: ThreadGroup, value: Any, /, *, algorithm: str | None = None,
                  reverse: bool = False, head_flags: Any = None, temp_storage: TempStorage | None = None) -> Any:
    ...


@declare(_scan("exclusive_scan", "exclusive scan with an operator", "exclusive"))
@_doc("Exclusive scan with ``scan_op``; non-sum operators need ``initial_value``.")
def exclusive_scan(group: ThreadGroup, value: Any, /, *, scan_op: Any = None, initial_value: Any = None,
                   algorithm: str | None = None, reverse: bool = False, head_flags: Any = None,
                   temp_storage: TempStorage | None = None) -> Any:
    ...


@declare(_scan("inclusive_scan", "inclusive scan with an operator", "inclusive"))
@_doc("Inclusive scan with ``scan_op``.")
def inclusive_scan(group: ThreadGroup, value: Any, /, *, scan_op: Any = None, algorithm: str | None = None,
                   reverse: bool = False, head_flags: Any = None, temp_storage: TempStorage | None = None) -> Any:
    ...


class StatefulFunction:
    """A block prefix callback with per-thread state, for ``prefix_op=`` of qualified block scans.

    ``op(state, block_aggregate) -> prefix`` receives the caller's one-item state payload (index
    it as ``state[0]``) and the block aggregate of the current scan, may update the state and
    returns the prefix that seeds the scan. ``op`` is a module-level function or a class whose
    unbound ``__call__(state, block_aggregate)`` is used. ``dtype`` is the state's NumPy scalar
    type (or the backend's own: a Numba type, a CuTe numeric type such as ``cutlass.Int32``);
    ``name`` labels the callback in messages. Pass the state payload after the value::

        running = numba_coop.StatefulFunction(add_running_total, numpy.int32)
        state = coop.ThreadData(1, dtype=numpy.int32)
        state[0] = 0
        out = numba_coop.exclusive_sum(block, items, state, prefix_op=running)

    With ``head_flags`` the op is ``op(state, aggregate, has_head)``: ``has_head`` (int32) is 1
    when the tile has a flagged position, and the aggregate is the running value of the tile's
    last segment (carry ``aggregate if has_head else prefix + aggregate``).

    CUB calls ``op`` in the first warp of the block; only thread 0's state is authoritative
    afterwards. ``cuda.coop.numba_mlir`` and ``cuda.coop.cutlass`` export this same class; in
    ``cuda.coop.cutlass`` the state is a ``ThreadData(1, dtype)`` or a one-element register tensor,
    and ``op`` is a Python function CuTe traces, its ``state`` a one-item register tensor.

    See Also:
        :doc:`Scans </operations/scan>` in the cuda-coop documentation.
    """

    __coop_stateful__ = True

    def __init__(self, op: Any, dtype: Any, name: str | None = None) -> None:
        function = inspect.getattr_static(op, "__call__", None) if isinstance(op, type) else op
        function = getattr(function, "py_func", function)  # a cuda.jit(device=True) dispatcher
        if not callable(function) or not hasattr(function, "__code__"):
            raise CoopTypeError(f"StatefulFunction op must be a Python/device function or a class defining "
                            f"__call__(state, block_aggregate); got {op!r}")
        if name is not None and not isinstance(name, str):
            raise CoopTypeError(f"StatefulFunction name must be a string or None; got {name!r}")
        self.op = op
        self.function = function
        self.dtype = dtype
        self.name = name if name is not None else getattr(op, "__qualname__", None) or repr(op)

    def __repr__(self) -> str:
        return f"StatefulFunction({self.name}, {self.dtype!r})"
