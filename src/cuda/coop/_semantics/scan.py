"""Planning of the scan family (SPEC 8.7)."""
from __future__ import annotations

from dataclasses import dataclass

from .._errors import CoopTypeError, CoopUnsupportedError, CoopValueError
from .common import (
    BLOCK, NUMERIC_DTYPES, Control, GroupSpec, LaunchShape, Runtime, Static, literal_as,
    normalize_selector,
)
from .groups import require_complete_warps, reject_warp_descriptor, require_operation_group
from .operators import OperatorSpec, resolve_operator
from .temp_storage import Descriptor

ALGORITHMS = ("raking", "raking_memoize", "warp_scans")
MODES = ("exclusive", "inclusive")
# The named forms: (mode, operator) fixed by the function; None means "from the arguments".
FORMS: dict[str, tuple[str | None, str | None]] = {
    "scan": (None, None), "exclusive_sum": ("exclusive", "sum"), "inclusive_sum": ("inclusive", "sum"),
    "exclusive_scan": ("exclusive", None), "inclusive_scan": ("inclusive", None),
}


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
    prefix: OperatorSpec | None = None  # qualified block prefix callback f(block_aggregate) -> prefix

    @property
    def uses_scratch(self) -> bool:
        return self.group.kind == BLOCK  # power-of-two warp scans shuffle


def plan_scan(name: str, form: str, group: GroupSpec, launch: LaunchShape, dtype: str, items_per_thread: int,
              mode: object, scan_op: object, initial_value: Control, algorithm: object,
              descriptor: Descriptor | None, prefix_op: object = None) -> tuple[ScanSpec, object]:
    """The spec and the initial value converted to the dtype (a literal) or None."""
    require_operation_group("scan", name, group)
    require_complete_warps(name, group, launch)
    if dtype not in NUMERIC_DTYPES:
        raise CoopTypeError(f"{name} does not support value dtype {dtype}; supported: {', '.join(NUMERIC_DTYPES)}")
    if group.is_warp_scope and items_per_thread:
        raise CoopTypeError(f"{name} on warp groups accepts one scalar per lane")
    fixed_mode, fixed_op = FORMS[form]
    mode = fixed_mode or normalize_selector(name, "mode", mode, MODES)
    operator = resolve_operator(name, "scan_op", fixed_op if fixed_op else scan_op, dtype)
    if initial_value is not None and mode == "inclusive":
        raise CoopValueError(f"{name} initial_value is not supported for inclusive scans")
    prefix = None
    if prefix_op is not None:
        if group.kind != BLOCK:
            raise CoopValueError(f"{name} prefix_op is supported only for block groups")
        if initial_value is not None:
            raise CoopValueError(f"{name} prefix_op cannot be combined with initial_value")
        prefix = resolve_operator(name, "prefix_op", prefix_op, dtype)
        if prefix.builtin:
            raise CoopTypeError(f"{name} prefix_op must be a Python/device function f(block_aggregate) -> prefix; "
                                f"got {prefix_op!r}")
    if initial_value is None and prefix is None and mode == "exclusive" and not operator.is_sum:
        raise CoopValueError(f"{name} non-sum exclusive scans require initial_value")
    literal = None
    if isinstance(initial_value, Static):
        literal = literal_as(name, "initial_value", initial_value.value, dtype)
    elif isinstance(initial_value, Runtime) and initial_value.dtype not in (None, dtype):
        raise CoopTypeError(
            f"{name} initial_value must have the payload dtype {dtype}; got {initial_value.dtype}; cast it")
    if algorithm is not None and group.kind != BLOCK:
        raise CoopValueError(f"{name} algorithm is supported only for block groups")
    chosen = normalize_selector(name, "algorithm", "raking" if algorithm is None else algorithm, ALGORITHMS)
    if chosen == "warp_scans" and launch.threads % 32:
        raise CoopUnsupportedError(
            f"{name} requires a block made of complete warps for algorithm 'warp_scans'; block shape is {launch.block}")
    reject_warp_descriptor(name, group, descriptor)
    barrier = group.kind == BLOCK and (descriptor is None or descriptor.auto_sync)
    spec = ScanSpec(group, launch.block, dtype, items_per_thread, mode, operator, initial_value is not None, chosen,
                    barrier, prefix)
    return spec, literal
