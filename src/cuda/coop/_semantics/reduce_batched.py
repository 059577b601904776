"""Planning of reduce_batched (docs: operations/reduce_batched)."""
from __future__ import annotations

from dataclasses import dataclass

from .._errors import CoopTypeError
from .aggregates import is_aggregate, require_aggregate_callable
from .common import ALL_NUMERIC_DTYPES, NUMERIC_DTYPES, GroupSpec, LaunchShape, normalize_selector
from .groups import reject_warp_descriptor, require_complete_warps, require_operation_group
from .layouts import REDUCE_BATCHED_LAYOUTS as OUTPUT_LAYOUTS, reduce_batched_extent as result_extent
from .operators import OperatorSpec, resolve_operator
from .shape import CallShape


@dataclass(frozen=True)
class ReduceBatchedSpec:
    group: GroupSpec
    block: tuple[int, int, int]
    dtype: str
    batches: int  # B: the input payload's extent
    operator: OperatorSpec
    output_layout: str

    @property
    def width(self) -> int:
        return self.group.size

    @property
    def items_out(self) -> int:
        """Extent of the result payload: ceil(B / W)."""
        return result_extent(self.batches, self.group.size)


def require_warp_group(name: str, group: GroupSpec, launch: LaunchShape) -> None:
    """G3 (not a warp or logical warp), G15 (width not a power of two), G5 (a partial warp)."""
    require_operation_group("reduce_batched", name, group)
    require_complete_warps(name, group, launch)


@dataclass(frozen=True, kw_only=True)
class ReduceBatchedOptions:
    binary_op: object = None
    output_layout: object = "striped"


def plan_reduce_batched(shape: CallShape, opts: ReduceBatchedOptions) -> ReduceBatchedSpec:
    """A scalar ``value`` (no extent) or one whose dtype is unknown is O4."""
    name, group, launch, descriptor = shape.name, shape.group, shape.launch, shape.descriptor
    binary_op, output_layout = opts.binary_op, opts.output_layout
    require_warp_group(name, group, launch)
    dtype, batches = shape.dtypes[0], shape.items_per_thread
    if not batches or dtype is None:
        raise CoopTypeError(f"{name} requires a ThreadData payload")
    require_aggregate_callable(name, "binary_op", dtype, binary_op)
    if dtype not in ALL_NUMERIC_DTYPES and not is_aggregate(dtype):
        raise CoopTypeError(f"{name} does not support value dtype {dtype}; supported: {', '.join(NUMERIC_DTYPES)}")
    operator = resolve_operator(name, "binary_op", binary_op, dtype)
    layout = normalize_selector(name, "output_layout", output_layout, OUTPUT_LAYOUTS)
    reject_warp_descriptor(name, group, descriptor)
    return ReduceBatchedSpec(group, launch.block, dtype, batches, operator, layout)
