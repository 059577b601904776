"""Planning of broadcast (docs: operations/broadcast; SPEC 8.19): every member receives member ``src_rank``'s value."""
from __future__ import annotations

from dataclasses import dataclass

from .._errors import CoopTypeError, CoopValueError
from .aggregates import is_aggregate
from .common import ALL_NUMERIC_DTYPES, BLOCK, NUMERIC_DTYPES, GroupSpec, Static, check_runtime_int, is_power_of_two
from .groups import reject_warp_descriptor, require_complete_warps
from .shape import CallShape


@dataclass(frozen=True)
class BroadcastSpec:
    """One broadcast: the members of its value (one, or a tuple's), each moved on its own."""

    group: GroupSpec
    block: tuple[int, int, int]
    dtypes: tuple[str, ...]  # each member's dtype
    extents: tuple[int, ...]  # each member's extent; 0: a scalar
    tupled: bool  # the value is a tuple (the result is one too)
    barrier: bool  # a block's trailing reuse barrier

    @property
    def uses_scratch(self) -> bool:
        """Blocks move the value through one shared-memory slot; warp groups shuffle."""
        return self.group.kind == BLOCK

    @property
    def shuffle_width(self) -> int:
        """The width CUB's ShuffleIndex addresses lanes in: a power-of-two group's own (``src_rank`` is then its
        lane in the group), else the whole warp (the group's first lane plus ``src_rank``)."""
        return self.group.size if is_power_of_two(self.group.size) else 32


@dataclass(frozen=True, kw_only=True)
class BroadcastOptions:
    """Nothing beyond the shape for now: ``src_rank`` is the shape's control, the value its operands."""


def check_src_rank(name: str, group: GroupSpec, src_rank: object) -> None:
    """C6 for the control's dtype, C7 for a static value outside ``0 ... G-1`` (negative ones included: SPEC 8.26)."""
    if src_rank is None:
        return
    check_runtime_int(name, "src_rank", src_rank)  # type: ignore[arg-type]
    if isinstance(src_rank, Static) and not 0 <= src_rank.value < group.size:  # type: ignore[operator]
        raise CoopValueError(f"{name} static src_rank must be between 0 and {group.size - 1}; got {src_rank.value}")


def plan_broadcast(shape: CallShape, opts: BroadcastOptions) -> BroadcastSpec:
    name, group, launch = shape.name, shape.group, shape.launch
    require_complete_warps(name, group, launch)
    extents = shape.extents or (shape.items_per_thread,)
    for position, dtype in enumerate(shape.dtypes):
        # float16 and aggregates reach here from qualified calls only: common ones are P1 (docs: qualified)
        if dtype not in ALL_NUMERIC_DTYPES and not is_aggregate(dtype):
            param = f"value[{position}]" if shape.tupled else "value"
            raise CoopTypeError(f"{name} does not support {param} dtype {dtype}; supported: "
                                f"{', '.join(NUMERIC_DTYPES)}")
    check_src_rank(name, group, shape.control("src_rank"))
    reject_warp_descriptor(name, group, shape.descriptor)
    barrier = group.kind == BLOCK and shape.reuse_barrier
    return BroadcastSpec(group, launch.block, tuple(shape.dtypes), tuple(extents), shape.tupled, barrier)
