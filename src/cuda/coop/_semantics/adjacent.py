"""Planning of adjacent difference and discontinuity (docs: operations/adjacent)."""
from __future__ import annotations

from dataclasses import dataclass

from .._errors import CoopTypeError, CoopValueError
from .aggregates import is_aggregate, require_aggregate_callable
from .common import (
    Control,
    GroupSpec,
    Runtime,
    Static,
    check_payload_dtype,
    check_runtime_int,
    literal_as,
    normalize_selector,
)
from .groups import reject_warp_descriptor
from .operators import OperatorSpec, resolve_operator, resolve_predicate
from .shape import CallShape

DIRECTIONS = ("left", "right")
MODES = ("heads", "tails", "heads_and_tails")
PREDECESSOR, SUCCESSOR = "tile_predecessor_item", "tile_successor_item"
# The boundary items each direction or mode accepts (O12).
_ALLOWED = {"left": (PREDECESSOR,), "right": (SUCCESSOR,), "heads": (PREDECESSOR,), "tails": (SUCCESSOR,),
            "heads_and_tails": (PREDECESSOR, SUCCESSOR)}


@dataclass(frozen=True)
class AdjacentSpec:
    """Everything the code generator needs for one adjacent_difference or discontinuity call."""

    op: str  # "adjacent_difference" or "discontinuity"
    group: GroupSpec
    block: tuple[int, int, int]
    dtype: str
    items_per_thread: int
    kind: str  # the direction ("left"/"right") or the mode ("heads"/"tails"/"heads_and_tails")
    has_valid_items: bool
    has_predecessor: bool
    has_successor: bool
    barrier: bool
    # The qualified difference_op (a binary operator) or flag_op (a predicate); None: subtraction / inequality.
    operator: OperatorSpec | None = None

    @property
    def tile_items(self) -> int:
        return self.group.size * self.items_per_thread


def boundary_literal(name: str, param: str, control: Control, dtype: str) -> int | float | None:
    """A literal boundary item converted to the payload dtype (C9/C10; docs: operations/index,
    "Rules every operation shares"); None when absent or runtime."""
    if isinstance(control, Static) and is_aggregate(dtype):
        raise CoopTypeError(f"{name} {param} must be a value of the aggregate dtype {dtype}; got a literal")
    if isinstance(control, Static):
        return literal_as(name, param, control.value, dtype)
    if isinstance(control, Runtime) and control.dtype not in (None, dtype):
        raise CoopTypeError(f"{name} {param} must have the payload dtype {dtype}; got {control.dtype}; cast it")
    return None


def _reject_boundaries(name: str, selector: str, kind: str, boundaries: dict[str, Control]) -> None:
    """O12: a boundary item the direction or mode does not take."""
    allowed = _ALLOWED[kind]
    for param, control in boundaries.items():
        if control is not None and param not in allowed:
            raise CoopValueError(f"{name} {selector}={kind!r} accepts only {' and '.join(allowed)}")


@dataclass(frozen=True, kw_only=True)
class AdjacentDifferenceOptions:
    """``difference_op`` (qualified; docs: operations/adjacent, "Custom operators"): ``op(current, neighbour)``
    in both directions; an operator string (docs: operations/operators) or a Python/device function. ``valid_items``
    and the boundary items are the shape's controls."""

    direction: object = "left"
    difference_op: object = None


@dataclass(frozen=True, kw_only=True)
class DiscontinuityOptions:
    """``flag_op`` (qualified; docs: operations/adjacent, "Custom operators"): a predicate; heads call
    ``flag_op(previous, current)``, tails ``flag_op(current, next)``. The boundary items are the shape's controls."""

    mode: object = "heads"
    flag_op: object = None


def plan_adjacent_difference(shape: CallShape, opts: AdjacentDifferenceOptions) -> AdjacentSpec:
    name, group, launch, descriptor = shape.name, shape.group, shape.launch, shape.descriptor
    dtype, items_per_thread, qualified = shape.dtypes[0], shape.items_per_thread, shape.qualified
    valid_items, predecessor, successor = (shape.control(key) for key in ("valid_items", PREDECESSOR, SUCCESSOR))
    difference_op = opts.difference_op
    direction = normalize_selector(name, "direction", opts.direction, DIRECTIONS)
    check_payload_dtype(name, "values", dtype, qualified)
    boundaries = {PREDECESSOR: predecessor, SUCCESSOR: successor}
    _reject_boundaries(name, "direction", direction, boundaries)
    tile = group.size * items_per_thread
    if valid_items is not None:
        check_runtime_int(name, "valid_items", valid_items)
        if isinstance(valid_items, Static) and not 0 <= valid_items.value <= tile:  # type: ignore[operator]
            raise CoopValueError(f"{name} static valid_items must be between 0 and {tile}; got {valid_items.value}")
        if successor is not None:
            raise CoopValueError(f"{name} tile_successor_item cannot be combined with valid_items")
    for param, control in boundaries.items():
        boundary_literal(name, param, control, dtype)
    require_aggregate_callable(name, "difference_op", dtype, difference_op)
    operator = None if difference_op is None else resolve_operator(name, "difference_op", difference_op, dtype)
    reject_warp_descriptor(name, group, descriptor)
    return AdjacentSpec("adjacent_difference", group, launch.block, dtype, items_per_thread, direction,
                        valid_items is not None, predecessor is not None, successor is not None,
                        shape.reuse_barrier, operator)


def discontinuity_mode(name: str, mode: object) -> str:
    return normalize_selector(name, "mode", mode, MODES)


def plan_discontinuity(shape: CallShape, opts: DiscontinuityOptions) -> AdjacentSpec:
    name, group, launch, descriptor = shape.name, shape.group, shape.launch, shape.descriptor
    dtype, items_per_thread, qualified = shape.dtypes[0], shape.items_per_thread, shape.qualified
    predecessor, successor, flag_op = shape.control(PREDECESSOR), shape.control(SUCCESSOR), opts.flag_op
    mode = discontinuity_mode(name, opts.mode)
    check_payload_dtype(name, "values", dtype, qualified)
    boundaries = {PREDECESSOR: predecessor, SUCCESSOR: successor}
    _reject_boundaries(name, "mode", mode, boundaries)
    for param, control in boundaries.items():
        boundary_literal(name, param, control, dtype)
    require_aggregate_callable(name, "flag_op", dtype, flag_op)
    operator = resolve_predicate(name, "flag_op", flag_op, dtype)
    reject_warp_descriptor(name, group, descriptor)
    return AdjacentSpec("discontinuity", group, launch.block, dtype, items_per_thread, mode, False,
                        predecessor is not None, successor is not None, shape.reuse_barrier, operator)
