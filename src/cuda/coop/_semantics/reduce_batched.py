"""Planning of reduce_batched (docs: operations/reduce_batched)."""
from __future__ import annotations

from dataclasses import dataclass

from .._errors import CoopTypeError
from .aggregates import is_aggregate, require_aggregate_callable
from .common import ALL_NUMERIC_DTYPES, NUMERIC_DTYPES, GroupSpec, LaunchShape, normalize_selector
from .groups import reject_warp_descriptor, require_complete_warps, require_operation_group
from .layouts import REDUCE_BATCHED_LAYOUTS as OUTPUT_LAYOUTS, reduce_batched_extent as result_extent
from .operators import OperatorSpec, resolve_operator
from .temp_storage import Descriptor

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


def plan_reduce_batched(name: str, group: GroupSpec, launch: LaunchShape, dtype: str | None, batches: int | None,
                        binary_op: object, output_layout: object,
                        descriptor: Descriptor | None) -> ReduceBatchedSpec:
    """``batches``/``dtype`` are None when ``value`` is not a ThreadData (O4)."""
    require_warp_group(name, group, launch)
    if batches is None or dtype is None:
        raise CoopTypeError(f"{name} requires a ThreadData payload")
    require_aggregate_callable(name, "binary_op", dtype, binary_op)
    if dtype not in ALL_NUMERIC_DTYPES and not is_aggregate(dtype):
        raise CoopTypeError(f"{name} does not support value dtype {dtype}; supported: {', '.join(NUMERIC_DTYPES)}")
    operator = resolve_operator(name, "binary_op", binary_op, dtype)
    layout = normalize_selector(name, "output_layout", output_layout, OUTPUT_LAYOUTS)
    reject_warp_descriptor(name, group, descriptor)
    return ReduceBatchedSpec(group, launch.block, dtype, batches, operator, layout)
