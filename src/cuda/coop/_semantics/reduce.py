"""Planning of reduce and sum (docs: operations/reduce)."""
from __future__ import annotations

from dataclasses import dataclass

from .._backend_context import COMMON_NAMESPACE, qualified_namespace
from .._errors import CoopTypeError, CoopUnsupportedError, CoopValueError
from .aggregates import is_aggregate, require_aggregate_callable
from .common import (
    ALL_NUMERIC_DTYPES,
    BLOCK, CLUSTER, GRID, LOGICAL_WARP, NUMERIC_DTYPES, THREAD, WARP, WARPS_IN_BLOCK, GroupSpec, LaunchShape,
    Static, check_flags, check_runtime_int, check_valid_items, is_power_of_two, normalize_selector,
)
from .groups import LOGICAL_WARP_WIDTHS, reject_warp_descriptor, require_complete_warps
from .operators import OperatorSpec, resolve_operator
from .shape import CallShape
from .tuples import is_tuple

ALGORITHMS = ("warp_reductions", "raking", "raking_commutative_only")
# Groups only the qualified reduce/sum take (docs: operations/reduce, "More groups in the qualified namespace").
QUALIFIED_KINDS = (THREAD, WARPS_IN_BLOCK, CLUSTER)


@dataclass(frozen=True)
class ReduceSpec:
    group: GroupSpec
    block: tuple[int, int, int]
    dtype: str
    items_per_thread: int  # 0: a scalar value
    operator: OperatorSpec
    broadcast: bool
    has_valid_items: bool
    algorithm: str
    barrier: bool

    @property
    def uses_scratch(self) -> bool:
        # Power-of-two warp reductions shuffle; blocks and other widths go through shared memory. A thread folds
        # its own slots; groups of several warps exchange warp partials, clusters block partials, in shared memory.
        if self.group.kind == THREAD:
            return False
        if self.group.kind == WARPS_IN_BLOCK:
            return self.group.size > 32
        return self.group.kind in (BLOCK, CLUSTER) or not is_power_of_two(self.group.size)


def require_reduce_group(name: str, group: GroupSpec, launch: LaunchShape) -> None:
    if group.kind == GRID:
        raise CoopUnsupportedError(
            f"{name} does not support grid groups because grid reduction requires hidden per-launch workspace")
    namespace, operation = name.rsplit(".", 1)
    qualified = namespace != COMMON_NAMESPACE
    if group.kind in QUALIFIED_KINDS and qualified:
        return
    if group.kind not in (BLOCK, WARP, LOGICAL_WARP):
        also = "" if qualified else (f"; {qualified_namespace()}.{operation} also supports thread, "
                                     "warps_within_block, cluster")
        raise CoopUnsupportedError(
            f"{name} does not support group kind '{group.kind}'; supported group kinds: block, warp, "
            f"threads_within_warp{also}")
    if group.kind == LOGICAL_WARP and group.size not in LOGICAL_WARP_WIDTHS and not (
            17 <= group.size <= 31 and not group.exhaustive):
        raise CoopUnsupportedError(
            f"{name} supports logical-warp widths 1, 2, 4, 8, 16, 32, or 17-31 from group_by(W, exhaustive=False); "
            f"got {group.size}")
    require_complete_warps(name, group, launch)


@dataclass(frozen=True, kw_only=True)
class ReduceOptions:
    """A reduce call's options beyond its shape (docs: operations/reduce); ``valid_items`` is the shape's control.
    ``flags``: the dtype and extent (0: a scalar) of ``head_flags`` (a segmented reduction, SPEC 8.21), or None;
    ``compact``: return the totals compacted, with their count."""

    binary_op: object = None
    broadcast: object = True
    algorithm: object = None
    flags: tuple[str | None, int] | None = None
    compact: object = False


@dataclass(frozen=True)
class SegmentedReduceSpec:
    """A segmented reduction (docs: operations/reduce, "Segmented reductions"; SPEC 8.21): the reverse segmented
    inclusive scan of the value with every position from ``valid_items`` on a segment of its own, so that each
    segment's first position holds its total; with ``compact``, the totals then compacted by select's ranks."""

    group: GroupSpec
    block: tuple[int, int, int]
    dtype: str
    items_per_thread: int  # 0: a scalar value
    operator: OperatorSpec
    flag_dtype: str  # as the C++ reads the head flags (a boolean scalar crosses as uint8)
    has_valid_items: bool
    compact: bool
    barrier: bool

    @property
    def k(self) -> int:
        return max(self.items_per_thread, 1)

    @property
    def positions(self) -> int:
        """The group's tile: ``G*K`` positions."""
        return self.group.size * self.k

    @property
    def uses_scratch(self) -> bool:
        """Blocks scan (and compact) through shared memory; warp groups scan by shuffles and compact through their
        own slice."""
        return self.group.kind == BLOCK or self.compact


def plan_reduce(shape: CallShape, opts: ReduceOptions) -> ReduceSpec:
    name, group, launch, descriptor = shape.name, shape.group, shape.launch, shape.descriptor
    dtype, items_per_thread, valid_items = shape.dtype, shape.items_per_thread, shape.control("valid_items")
    binary_op, broadcast, algorithm = opts.binary_op, opts.broadcast, opts.algorithm
    require_reduce_group(name, group, launch)
    if not isinstance(opts.compact, bool):
        raise CoopTypeError(f"{name} compact must be a compile-time bool")
    if opts.compact:
        raise CoopValueError(f"{name} compact requires head_flags")
    require_aggregate_callable(name, "binary_op", dtype, binary_op)
    if dtype not in ALL_NUMERIC_DTYPES and not is_aggregate(dtype) and not is_tuple(dtype):
        raise CoopTypeError(f"{name} does not support value dtype {dtype}; supported: {', '.join(NUMERIC_DTYPES)}")
    operator = resolve_operator(name, "binary_op", binary_op, dtype)
    if not isinstance(broadcast, bool):
        raise CoopTypeError(f"{name} broadcast must be a compile-time bool")
    if valid_items is not None and group.kind in QUALIFIED_KINDS:
        raise CoopValueError(f"{name} valid_items is supported only for block and warp groups; got a {group.kind} "
                             "group")
    if descriptor is not None and group.kind in QUALIFIED_KINDS:
        raise CoopValueError(
            f"{name} does not accept temp_storage for {group.kind} groups; their scratch is always compiler-owned")
    if valid_items is not None:
        if items_per_thread:
            raise CoopTypeError(f"{name} valid_items supports scalar values only")
        check_runtime_int(name, "valid_items", valid_items)
        if isinstance(valid_items, Static) and not 1 <= valid_items.value <= group.size:  # type: ignore[operator]
            raise CoopValueError(
                f"{name} static valid_items must be between 1 and {group.size}; got {valid_items.value}")
    if algorithm is not None and group.kind != BLOCK:
        raise CoopValueError(f"{name} algorithm is supported only for block groups")
    chosen = normalize_selector(name, "algorithm", "warp_reductions" if algorithm is None else algorithm, ALGORITHMS)
    if chosen == "raking_commutative_only" and not operator.builtin:
        raise CoopValueError(f"{name} algorithm 'raking_commutative_only' requires a built-in commutative operator")
    reject_warp_descriptor(name, group, descriptor)
    spec = ReduceSpec(group, launch.block, dtype, items_per_thread, operator, broadcast, valid_items is not None,
                      chosen, False)
    barrier = spec.uses_scratch and shape.reuse_barrier
    return ReduceSpec(group, launch.block, dtype, items_per_thread, operator, broadcast, valid_items is not None,
                      chosen, barrier)


SEGMENTED_KINDS = (BLOCK, WARP, LOGICAL_WARP)


def plan_segmented_reduce(shape: CallShape, opts: ReduceOptions) -> SegmentedReduceSpec:
    """A reduction with ``head_flags`` (SPEC 8.21): the groups and operands of the segmented scans (blocks: a scalar
    or a payload; warp groups of power-of-two widths: one scalar per lane), ``valid_items`` from 0 to the tile, no
    ``broadcast=False`` and no ``algorithm`` (O16)."""
    name, group, launch, descriptor = shape.name, shape.group, shape.launch, shape.descriptor
    dtype, items_per_thread, valid_items = shape.dtype, shape.items_per_thread, shape.control("valid_items")
    require_reduce_group(name, group, launch)  # grid (G4), other kinds and widths as without head_flags first
    if group.kind not in SEGMENTED_KINDS:
        raise CoopUnsupportedError(f"{name} does not support group kind '{group.kind}'; supported group kinds: "
                                   f"{', '.join(SEGMENTED_KINDS)} (with head_flags)")
    if group.kind == LOGICAL_WARP and group.size not in LOGICAL_WARP_WIDTHS:
        raise CoopUnsupportedError(f"{name} supports logical-warp widths {', '.join(map(str, LOGICAL_WARP_WIDTHS))}; "
                                   f"got {group.size} (with head_flags)")
    require_aggregate_callable(name, "binary_op", dtype, opts.binary_op)
    if dtype not in ALL_NUMERIC_DTYPES and not is_aggregate(dtype) and not is_tuple(dtype):
        raise CoopTypeError(f"{name} does not support value dtype {dtype}; supported: {', '.join(NUMERIC_DTYPES)}")
    assert opts.flags is not None
    flag_dtype = check_flags(name, items_per_thread, opts.flags, param="head_flags", operand="value")
    operator = resolve_operator(name, "binary_op", opts.binary_op, dtype)
    if not isinstance(opts.compact, bool):
        raise CoopTypeError(f"{name} compact must be a compile-time bool")
    if group.is_warp_scope and items_per_thread:
        raise CoopTypeError(f"{name} on warp groups accepts one scalar per lane")
    for param, given in (("broadcast", opts.broadcast is not True), ("algorithm", opts.algorithm is not None)):
        if given:
            raise CoopValueError(f"{name} head_flags cannot be combined with {param}; segmented reductions return "
                                 "one total per segment")
    check_valid_items(name, valid_items, group.size * max(items_per_thread, 1))
    reject_warp_descriptor(name, group, descriptor)
    barrier = (group.kind == BLOCK or opts.compact) and shape.reuse_barrier
    return SegmentedReduceSpec(group, launch.block, dtype, items_per_thread, operator, flag_dtype,
                               valid_items is not None, opts.compact, barrier)
