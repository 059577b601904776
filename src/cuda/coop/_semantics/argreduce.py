"""Planning of argmax and argmin (docs: operations/argreduce; SPEC 8.16)."""
from __future__ import annotations

from dataclasses import dataclass

from .._errors import CoopTypeError, CoopValueError
from .common import (
    ALL_NUMERIC_DTYPES, BLOCK, INTEGER_DTYPES, NUMERIC_DTYPES, Control, GroupSpec, LaunchShape, Static,
    check_companion_extent, check_runtime_int,
)
from .groups import reject_warp_descriptor, require_complete_warps, require_operation_group
from .temp_storage import Descriptor, keeps_reuse_barrier

INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class ArgReduceSpec:
    group: GroupSpec
    block: tuple[int, int, int]
    dtype: str
    items_per_thread: int  # 0: a scalar value
    largest: bool  # argmax (else argmin)
    index_dtype: str
    has_indices: bool  # the index is the ``indices`` entry (else the tile position)
    has_valid_items: bool
    barrier: bool
    broadcast: bool = True  # the result in every member (else in group rank 0 only; qualified)

    @property
    def uses_scratch(self) -> bool:
        return self.group.kind == BLOCK  # warp groups (power-of-two widths) shuffle

    @property
    def is_float(self) -> bool:
        return self.dtype.startswith("float")

    @property
    def positions(self) -> int:
        """The group's tile size G*K."""
        return self.group.size * max(self.items_per_thread, 1)


def plan_argreduce(name: str, largest: bool, group: GroupSpec, launch: LaunchShape, dtype: str,
                   items_per_thread: int, indices: tuple[str | None, int] | None,
                   valid_items: Control, descriptor: Descriptor | None = None,
                   broadcast: object = True) -> ArgReduceSpec:
    """``indices``: the dtype and extent (0: a scalar) of the ``indices`` operand, or None; ``broadcast``: the
    qualified option (False: the result in group rank 0 only)."""
    require_operation_group(name.rsplit(".", 1)[-1], name, group)
    require_complete_warps(name, group, launch)
    # float16 as wherever floats are accepted; it reaches here from qualified calls only, common ones are P1
    # (docs: qualified, "What this release builds")
    if dtype not in ALL_NUMERIC_DTYPES:
        raise CoopTypeError(f"{name} does not support items dtype {dtype}; supported: {', '.join(NUMERIC_DTYPES)}")
    positions = group.size * max(items_per_thread, 1)
    index_dtype = "int32" if positions <= INT32_MAX else "int64"
    if indices is not None:
        index_dtype, extent = indices  # type: ignore[assignment]
        if index_dtype not in INTEGER_DTYPES:
            raise CoopTypeError(f"{name} indices must hold integers; got {index_dtype}")
        check_companion_extent(name, "items", "indices", items_per_thread, extent)
    if valid_items is not None:
        check_runtime_int(name, "valid_items", valid_items)
        if isinstance(valid_items, Static) and not 1 <= valid_items.value <= positions:  # type: ignore[operator]
            raise CoopValueError(f"{name} static valid_items must be between 1 and {positions}; got "
                                 f"{valid_items.value}")
    if not isinstance(broadcast, bool):
        raise CoopTypeError(f"{name} broadcast must be a compile-time bool")
    reject_warp_descriptor(name, group, descriptor)
    barrier = group.kind == BLOCK and keeps_reuse_barrier(descriptor)
    return ArgReduceSpec(group, launch.block, dtype, items_per_thread, largest, index_dtype, indices is not None,
                         valid_items is not None, barrier, broadcast)
