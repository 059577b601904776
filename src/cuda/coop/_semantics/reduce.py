"""Planning of reduce and sum (docs: operations/reduce)."""
from __future__ import annotations

from dataclasses import dataclass

from .._backend_context import COMMON_NAMESPACE, qualified_namespace
from .._errors import CoopTypeError, CoopUnsupportedError, CoopValueError
from .aggregates import is_aggregate, require_aggregate_callable
from .common import (
    ALL_NUMERIC_DTYPES,
    BLOCK, CLUSTER, GRID, LOGICAL_WARP, NUMERIC_DTYPES, THREAD, WARP, WARPS_IN_BLOCK, GroupSpec, LaunchShape,
    Static, check_runtime_int, is_power_of_two, normalize_selector,
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
    """A reduce call's options beyond its shape (docs: operations/reduce); ``valid_items`` is the shape's control."""

    binary_op: object = None
    broadcast: object = True
    algorithm: object = None


def plan_reduce(shape: CallShape, opts: ReduceOptions) -> ReduceSpec:
    name, group, launch, descriptor = shape.name, shape.group, shape.launch, shape.descriptor
    dtype, items_per_thread, valid_items = shape.dtype, shape.items_per_thread, shape.control("valid_items")
    binary_op, broadcast, algorithm = opts.binary_op, opts.broadcast, opts.algorithm
    require_reduce_group(name, group, launch)
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
