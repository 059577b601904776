"""Planning of the scan family (docs: operations/scan)."""
from __future__ import annotations

import inspect
from dataclasses import dataclass, replace
from typing import Any

from .._markers import records
from .._errors import CoopTypeError, CoopUnsupportedError, CoopValueError
from .common import (
    ALL_NUMERIC_DTYPES,
    BLOCK, NUMERIC_DTYPES, GroupSpec, Runtime, Static, check_runtime_int, literal_as,
    check_companion_extent, normalize_selector, static_bool,
)
from .groups import reject_warp_descriptor, require_complete_warps
from .operators import OperatorSpec, callable_symbol, resolve_operator
from .aggregates import is_aggregate, require_aggregate_callable, symbol_part
from .common import INTEGER_DTYPES, passes_by_pointer
from .tuples import is_tuple
from .shape import CallShape

ALGORITHMS = ("raking", "raking_memoize", "warp_scans")
MODES = ("exclusive", "inclusive")


def fixed_form(form: str) -> tuple[str | None, str | None]:
    """The (mode, operator) that the scan form ``form`` fixes (its record's ``form``); None: from the arguments."""
    declared = records.of(form)
    return declared.fixed("mode"), declared.fixed("operator")


@dataclass(frozen=True)
class ScanSpec:
    group: GroupSpec
    block: tuple[int, int, int]
    dtype: str
    items_per_thread: int  # 0: a scalar value
    mode: str
    operator: OperatorSpec
    has_initial_value: bool
    algorithm: str
    barrier: bool
    # qualified block prefix callback f(block_aggregate) -> prefix; with head flags f(aggregate, has_head), where
    # the aggregate is the carry of the tile's last segment (SPEC 8.24)
    prefix: OperatorSpec | None = None
    state_dtype: str | None = None  # a StatefulFunction prefix: op(state*, block_aggregate[, has_head]) -> prefix
    has_valid_items: bool = False  # qualified warp valid_items (a runtime i64 parameter, range-checked)
    aggregate: bool = False  # qualified aggregate_output (a pointer to one item)
    reverse: bool = False  # from the tile's last position to its first (SPEC 8.17)
    flag_dtype: str | None = None  # segmented by head flags of this dtype (SPEC 8.17)

    @property
    def uses_scratch(self) -> bool:
        return self.group.kind == BLOCK  # power-of-two warp scans shuffle


def is_stateful(prefix_op: object) -> bool:
    """A ``StatefulFunction`` (duck-typed: this layer does not import the markers)."""
    return getattr(type(prefix_op), "__coop_stateful__", False) is True


def stateful_symbol(prefix_op: object, dtype: str, state_dtype: str) -> OperatorSpec:
    """The user callable of a StatefulFunction, with a symbol distinct from any binary use of the function."""
    function = prefix_op.function  # type: ignore[attr-defined]
    return OperatorSpec(f"{callable_symbol(function, dtype)}_state_{symbol_part(state_dtype)}", False, function,
                        passes_by_pointer(dtype))


def reject_tuple_prefix(name: str, prefix_op: object, count: int) -> None:
    """O19: a prefix callback seeds one operand's scan (docs: operations/scan, "Several operands at once")."""
    if prefix_op is not None:
        raise CoopValueError(f"{name} prefix_op supports a single operand; got a tuple of {count}")


def check_prefix_arity(name: str, prefix_op: object, segmented: bool) -> None:
    """O18: a prefix callback takes (aggregate) or a StatefulFunction's op (state, aggregate), and with head_flags
    one more argument, has_head (docs: operations/scan, "Running segmented scans")."""
    stateful = is_stateful(prefix_op)
    function: Any = prefix_op.function if stateful else getattr(prefix_op, "py_func", prefix_op)  # type: ignore[attr-defined]
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return  # nothing to count: the compiler says what is wrong
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return
    positional = [p for p in parameters if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                       inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is inspect.Parameter.empty]
    names = (["state"] if stateful else []) + ["aggregate"] + (["has_head"] if segmented else [])
    if len(required) <= len(names) <= len(positional):
        return
    label = prefix_op.name if stateful else getattr(function, "__qualname__", repr(function))  # type: ignore[attr-defined]
    words = f"{len(names)} argument{'s' if len(names) > 1 else ''} ({', '.join(names)})"
    raise CoopTypeError(f"{name} prefix_op {label} must take {words} {'with' if segmented else 'without'} head_flags; "
                        f"it takes {len(positional)}")


def _plan_prefix(shape: CallShape, opts: ScanOptions, reverse: bool) -> OperatorSpec | None:
    """The block prefix callback of a qualified scan (docs: operations/scan, "Running scans across tiles" and
    "Running segmented scans"): its rows O14, O17 and O18, and its symbol, which names the form it is compiled
    for (with head_flags it also takes has_head)."""
    name, group, dtype = shape.name, shape.group, shape.dtype
    prefix_op, state_dtype, segmented = opts.prefix_op, opts.state_dtype, opts.flags is not None
    stateful = is_stateful(prefix_op)
    if opts.has_state and not stateful:
        raise CoopValueError(f"{name} state requires prefix_op=StatefulFunction(...)")
    if prefix_op is None:
        return None
    if group.kind != BLOCK:
        raise CoopValueError(f"{name} prefix_op is supported only for block groups")
    if shape.control("initial_value") is not None and not segmented:
        raise CoopValueError(f"{name} prefix_op cannot be combined with initial_value without head_flags")
    if opts.aggregate:
        raise CoopValueError(f"{name} prefix_op cannot be combined with aggregate_output")
    if reverse and segmented:  # the tile's last segment may go on in the next tile, whose flags this call lacks
        raise CoopValueError(f"{name} prefix_op with head_flags supports forward scans only; got reverse=True")
    if stateful:
        if not opts.has_state:
            raise CoopValueError(f"{name} prefix_op StatefulFunction requires a state operand after value "
                                 f"({name.rsplit('.', 1)[-1]}(group, value, state, prefix_op=...))")
        if state_dtype not in ALL_NUMERIC_DTYPES and not is_aggregate(state_dtype):
            raise CoopTypeError(f"{name} does not support prefix_op state dtype {state_dtype}; supported: "
                                f"{', '.join(NUMERIC_DTYPES)}")
        prefix = stateful_symbol(prefix_op, dtype, state_dtype)
    else:
        prefix = resolve_operator(name, "prefix_op", prefix_op, dtype)
        if prefix.builtin:
            raise CoopTypeError(f"{name} prefix_op must be a Python/device function f(block_aggregate) -> prefix; "
                                f"got {prefix_op!r}")
    check_prefix_arity(name, prefix_op, segmented)
    return replace(prefix, name=prefix.name + "_head") if segmented else prefix


@dataclass(frozen=True, kw_only=True)
class ScanOptions:
    """A scan call's options beyond its shape (docs: operations/scan).

    Qualified extensions: ``valid_items`` (warp groups; the shape's control), ``aggregate`` (an aggregate_output
    payload was given), ``prefix_op`` (a stateless function or a StatefulFunction whose state dtype is
    ``state_dtype``; ``has_state``: a state operand was passed). ``reverse`` (SPEC 8.17): the scan runs from the
    tile's last position to its first, as the operator's right-to-left fold; ``flags``: the dtype and extent (0: a
    scalar) of the ``head_flags`` operand of a segmented scan. A prefix_op with head_flags runs a segmented scan
    across tiles (SPEC 8.24); with reverse, a suffix scan across tiles."""

    mode: object = "exclusive"
    scan_op: object = None
    algorithm: object = None
    prefix_op: object = None
    aggregate: bool = False
    state_dtype: str | None = None
    has_state: bool = False
    reverse: object = False
    flags: tuple[str | None, int] | None = None


def plan_scan(shape: CallShape, opts: ScanOptions) -> tuple[ScanSpec, object]:
    """The spec and the initial value (the shape's control ``initial_value``) converted to the dtype (a literal) or
    None."""
    name, form, group, launch, descriptor = shape.name, shape.op, shape.group, shape.launch, shape.descriptor
    dtype, items_per_thread = shape.dtype, shape.items_per_thread
    initial_value, valid_items = shape.control("initial_value"), shape.control("valid_items")
    mode, scan_op, algorithm, prefix_op = opts.mode, opts.scan_op, opts.algorithm, opts.prefix_op
    aggregate, state_dtype, reverse, flags = opts.aggregate, opts.state_dtype, opts.reverse, opts.flags
    require_complete_warps(name, group, launch)
    if dtype not in ALL_NUMERIC_DTYPES and not is_aggregate(dtype) and not is_tuple(dtype):
        raise CoopTypeError(f"{name} does not support value dtype {dtype}; supported: {', '.join(NUMERIC_DTYPES)}")
    if is_aggregate(dtype):
        require_aggregate_callable(name, "scan_op", dtype, fixed_form(form)[1] or scan_op)
        if isinstance(initial_value, Static):
            raise CoopTypeError(f"{name} initial_value must be a value of the aggregate dtype {dtype}; got a literal")
    if group.is_warp_scope and items_per_thread:
        raise CoopTypeError(f"{name} on warp groups accepts one scalar per lane")
    fixed_mode, fixed_op = fixed_form(form)
    mode = fixed_mode or normalize_selector(name, "mode", mode, MODES)
    operator = resolve_operator(name, "scan_op", fixed_op if fixed_op else scan_op, dtype)
    if initial_value is not None and mode == "inclusive":
        raise CoopValueError(f"{name} initial_value is not supported for inclusive scans")
    reverse = static_bool(name, "reverse", reverse)
    segmented = flags is not None
    prefix = _plan_prefix(shape, opts, reverse)
    if reverse and valid_items is not None:
        raise CoopValueError(f"{name} valid_items cannot be combined with reverse=True")
    flag_dtype = None
    if flags is not None:
        # an integer payload, or for a scalar scan an integer or boolean scalar such as a comparison (docs:
        # operations/scan, "Reverse and segmented scans")
        flag_dtype, flag_extent = flags
        boolean = flag_dtype in ("bool", "boolean")
        if flag_extent and flag_dtype not in INTEGER_DTYPES:
            raise CoopTypeError(f"{name} does not support head_flags dtype {flag_dtype}; supported: "
                                f"{', '.join(INTEGER_DTYPES)}")
        if not flag_extent and flag_dtype not in INTEGER_DTYPES and not boolean:
            raise CoopTypeError(f"{name} head_flags must be an integer or boolean scalar; got {flag_dtype}")
        check_companion_extent(name, "value", "head_flags", items_per_thread, flag_extent)
        if boolean:
            flag_dtype = "uint8"  # a truth value crosses as one byte, 0 or 1: each backend converts its boolean
        if valid_items is not None:
            raise CoopValueError(f"{name} valid_items cannot be combined with head_flags")
    # a prefix replaces initial_value where no segment can start inside the tile (CUB's callback overloads)
    if initial_value is None and (prefix is None or segmented) and mode == "exclusive" and not operator.is_sum:
        raise CoopValueError(f"{name} non-sum exclusive scans require initial_value")
    literal = None
    if is_tuple(dtype):  # each member of a tuple initial_value is converted by the call layer (_calls.tuples)
        pass
    elif isinstance(initial_value, Static):
        literal = literal_as(name, "initial_value", initial_value.value, dtype)
    elif isinstance(initial_value, Runtime) and initial_value.dtype not in (None, dtype):
        raise CoopTypeError(
            f"{name} initial_value must have the payload dtype {dtype}; got {initial_value.dtype}; cast it")
    if valid_items is not None:
        if group.kind == BLOCK:
            raise CoopValueError(f"{name} valid_items is supported only for warp and logical-warp groups")
        check_runtime_int(name, "valid_items", valid_items)
        if isinstance(valid_items, Static) and not 1 <= valid_items.value <= group.size:  # type: ignore[operator]
            raise CoopValueError(
                f"{name} static valid_items must be between 1 and {group.size}; got {valid_items.value}")
    if algorithm is not None and group.kind != BLOCK:
        raise CoopValueError(f"{name} algorithm is supported only for block groups")
    chosen = normalize_selector(name, "algorithm", "raking" if algorithm is None else algorithm, ALGORITHMS)
    if chosen == "warp_scans" and launch.threads % 32:
        raise CoopUnsupportedError(
            f"{name} requires a block made of complete warps for algorithm 'warp_scans'; block shape is {launch.block}")
    reject_warp_descriptor(name, group, descriptor)
    barrier = group.kind == BLOCK and shape.reuse_barrier
    spec = ScanSpec(group, launch.block, dtype, items_per_thread, mode, operator, initial_value is not None, chosen,
                    barrier, prefix, state_dtype if is_stateful(prefix_op) else None, valid_items is not None,
                    aggregate, reverse, flag_dtype)
    return spec, literal
