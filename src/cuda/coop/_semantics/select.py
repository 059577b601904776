"""Planning of select and partition (docs: operations/select; SPEC 8.20): a stable compaction of each group's tile.

One exclusive sum of the flags gives every position its rank (kept items first, then the rejected valid ones, then
the positions past ``valid_items`` in place); one scatter per item operand moves it there. The same ranks serve
both operations: select's positions past ``count`` are unspecified, so partition's order is one select may have.
"""
from __future__ import annotations

from dataclasses import dataclass

from .._errors import CoopTypeError
from .aggregates import is_aggregate
from .common import ALL_NUMERIC_DTYPES, NUMERIC_DTYPES, GroupSpec, check_flags, check_valid_items
from .groups import reject_warp_descriptor, require_complete_warps
from .shape import CallShape


@dataclass(frozen=True)
class SelectSpec:
    """One select or partition: its group, its item operands (one, or a tuple's members) and its flags."""

    group: GroupSpec
    block: tuple[int, int, int]
    dtypes: tuple[str, ...]  # each item operand's dtype
    items_per_thread: int  # every item operand's extent; 0: scalars (one item per member)
    tupled: bool  # the items are a tuple (the result is one too)
    flag_dtype: str  # the flags' dtype as the C++ reads them (a boolean scalar crosses as uint8)
    has_valid_items: bool
    barrier: bool  # the trailing reuse barrier of the scratch

    @property
    def k(self) -> int:
        """Items per member as the C++ holds them (a scalar is one)."""
        return max(self.items_per_thread, 1)

    @property
    def positions(self) -> int:
        """The group's tile: ``G*K`` positions."""
        return self.group.size * self.k

    @property
    def uses_scratch(self) -> bool:
        """Blocks scan the flags and exchange the items through shared memory; warp groups exchange there."""
        return True


@dataclass(frozen=True, kw_only=True)
class SelectOptions:
    """``flags``: the dtype (None: not known) and extent (0: a scalar) of the ``flags`` operand. ``valid_items`` is
    the shape's control."""

    flags: tuple[str | None, int]


def plan_select(shape: CallShape, opts: SelectOptions) -> SelectSpec:
    name, group, launch = shape.name, shape.group, shape.launch
    require_complete_warps(name, group, launch)
    for position, dtype in enumerate(shape.dtypes):
        # items are data moved: float16 and aggregates reach here from qualified calls only (docs: qualified)
        if dtype not in ALL_NUMERIC_DTYPES and not is_aggregate(dtype):
            param = f"items[{position}]" if shape.tupled else "items"
            raise CoopTypeError(f"{name} does not support {param} dtype {dtype}; supported: "
                                f"{', '.join(NUMERIC_DTYPES)}")
    flag_dtype = check_flags(name, shape.items_per_thread, opts.flags)
    valid_items = shape.control("valid_items")
    check_valid_items(name, valid_items, group.size * max(shape.items_per_thread, 1))
    reject_warp_descriptor(name, group, shape.descriptor)
    barrier = shape.reuse_barrier
    return SelectSpec(group, launch.block, tuple(shape.dtypes), shape.items_per_thread, shape.tupled, flag_dtype,
                      valid_items is not None, barrier)

