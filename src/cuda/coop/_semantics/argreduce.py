"""Planning of argmax and argmin (docs: operations/argreduce; SPEC 8.16)."""
from __future__ import annotations

from dataclasses import dataclass

from .._errors import CoopTypeError, CoopValueError
from .common import (
    ALL_NUMERIC_DTYPES, BLOCK, INTEGER_DTYPES, NUMERIC_DTYPES, GroupSpec, Static,
    check_companion_extent, check_runtime_int,
)
from .groups import reject_warp_descriptor, require_complete_warps
from .shape import CallShape

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


@dataclass(frozen=True, kw_only=True)
class ArgReduceOptions:
    """``largest``: argmax (else argmin); ``indices``: the dtype and extent (0: a scalar) of the ``indices`` operand,
    or None; ``broadcast``: the qualified option (False: the result in group rank 0 only). ``valid_items`` is the
    shape's control."""

    largest: bool
    indices: tuple[str | None, int] | None = None
    broadcast: object = True


def plan_argreduce(shape: CallShape, opts: ArgReduceOptions) -> ArgReduceSpec:
    name, group, launch, descriptor = shape.name, shape.group, shape.launch, shape.descriptor
    dtype, items_per_thread, valid_items = shape.dtype, shape.items_per_thread, shape.control("valid_items")
    largest, indices, broadcast = opts.largest, opts.indices, opts.broadcast
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
    barrier = group.kind == BLOCK and shape.reuse_barrier
    return ArgReduceSpec(group, launch.block, dtype, items_per_thread, largest, index_dtype, indices is not None,
                         valid_items is not None, barrier, broadcast)
