"""Planning of exchange and shuffle (SPEC 8.3, 8.4)."""
from __future__ import annotations

from dataclasses import dataclass

from .._errors import CoopTypeError, CoopValueError
from .common import NUMERIC_DTYPES, GroupSpec, LaunchShape, normalize_selector
from .groups import require_complete_warps, reject_warp_descriptor, require_operation_group
from .temp_storage import Descriptor

EXCHANGE_MODES = ("striped_to_blocked", "blocked_to_striped")
QUALIFIED_EXCHANGE_MODES = ("warp_striped_to_blocked", "blocked_to_warp_striped", "scatter_to_blocked",
                            "scatter_to_striped", "scatter_to_striped_guarded", "scatter_to_striped_flagged")
SHUFFLE_MODES = ("up", "down")


@dataclass(frozen=True)
class ExchangeSpec:
    op: str  # "exchange" or "shuffle"
    group: GroupSpec
    block: tuple[int, int, int]
    dtype: str
    items_per_thread: int
    mode: str
    barrier: bool


def _check_common(name: str, dtype: str, descriptor: Descriptor | None, group: GroupSpec) -> None:
    if dtype not in NUMERIC_DTYPES:
        raise CoopTypeError(f"{name} does not support value dtype {dtype}; supported: {', '.join(NUMERIC_DTYPES)}")
    reject_warp_descriptor(name, group, descriptor)


def plan_exchange(name: str, group: GroupSpec, launch: LaunchShape, dtype: str, items_per_thread: int, mode: object,
                  descriptor: Descriptor | None, qualified: bool) -> ExchangeSpec:
    require_operation_group("exchange", name, group)
    require_complete_warps(name, group, launch)
    allowed = EXCHANGE_MODES + (QUALIFIED_EXCHANGE_MODES if qualified else ())
    if isinstance(mode, str) and not qualified:
        canonical = mode.strip().lower().replace("-", "_")
        if canonical in QUALIFIED_EXCHANGE_MODES:
            raise CoopValueError(f"{name} mode {mode!r} requires cuda.coop.numba_mlir; the common API accepts: "
                                 f"{', '.join(EXCHANGE_MODES)}")
    mode = normalize_selector(name, "mode", mode, allowed)
    if mode not in EXCHANGE_MODES:
        from .._errors import CoopUnsupportedError

        raise CoopUnsupportedError(f"{name} mode {mode!r} is not implemented by the numba-cuda-mlir backend yet")
    _check_common(name, dtype, descriptor, group)
    return ExchangeSpec("exchange", group, launch.block, dtype, items_per_thread, mode,
                        descriptor is None or descriptor.auto_sync)


def plan_shuffle(name: str, group: GroupSpec, launch: LaunchShape, dtype: str, items_per_thread: int, mode: object,
                 distance: object, descriptor: Descriptor | None) -> ExchangeSpec:
    require_operation_group("shuffle", name, group)
    mode = normalize_selector(name, "mode", mode, SHUFFLE_MODES)
    if isinstance(distance, bool) or distance != 1:
        raise CoopValueError("cuda.coop.shuffle distance must be exactly 1 in the common API; use cuda.coop.numba_mlir "
                             "for scalar offset and rotate shuffles")
    _check_common(name, dtype, descriptor, group)
    return ExchangeSpec("shuffle", group, launch.block, dtype, items_per_thread, mode,
                        descriptor is None or descriptor.auto_sync)
