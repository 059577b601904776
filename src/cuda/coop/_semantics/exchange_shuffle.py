"""Planning of exchange and shuffle, qualified extensions included (docs: operations/exchange_shuffle)."""
from __future__ import annotations

from dataclasses import dataclass

from .._backend_context import qualified_namespace
from .._errors import CoopTypeError, CoopUnsupportedError, CoopValueError
from .aggregates import is_aggregate
from .common import (
    ALL_NUMERIC_DTYPES,
    BLOCK,
    INTEGER_DTYPES,
    NUMERIC_DTYPES,
    GroupSpec,
    Runtime,
    Static,
    check_runtime_int,
    static_bool,
    is_selector_string,
    normalize_selector,
)
from .groups import reject_warp_descriptor, require_complete_warps
from .shape import CallShape
from .temp_storage import Descriptor

EXCHANGE_MODES = ("striped_to_blocked", "blocked_to_striped")
WARP_STRIPED_MODES = ("warp_striped_to_blocked", "blocked_to_warp_striped")
SCATTER_MODES = ("scatter_to_blocked", "scatter_to_striped", "scatter_to_striped_guarded",
                 "scatter_to_striped_flagged")
QUALIFIED_EXCHANGE_MODES = WARP_STRIPED_MODES + SCATTER_MODES
# Scatter modes whose CUB method has no warp-time-sliced variant (O15; docs: operations/exchange_shuffle,
# "Qualified exchange modes").
UNSLICED_MODES = ("scatter_to_striped_guarded", "scatter_to_striped_flagged")
SHUFFLE_MODES = ("up", "down")  # payload shuffles (both namespaces)
SCALAR_SHUFFLE_MODES = ("offset", "rotate")  # scalar shuffles (qualified only)
RANK_DTYPES = tuple(name for name in INTEGER_DTYPES if not name.startswith("u"))
FLAG_DTYPES = INTEGER_DTYPES


@dataclass(frozen=True)
class Operand:
    """An extra payload operand of an exchange (``ranks``, ``valid_flags``): its dtype and extent."""

    dtype: str | None
    items_per_thread: int


@dataclass(frozen=True)
class ExchangeSpec:
    op: str  # "exchange" or "shuffle"
    group: GroupSpec
    block: tuple[int, int, int]
    dtype: str
    items_per_thread: int  # 0 for a scalar shuffle
    mode: str
    barrier: bool
    warp_time_slicing: bool = False
    ranks_dtype: str | None = None
    flags_dtype: str | None = None
    distance: int | None = 1  # scalar shuffles: the static distance, None when it is a runtime value

    @property
    def threads(self) -> int:
        x, y, z = self.block
        return x * y * z


def canonical_mode(value: object) -> object:
    return value.strip().lower().replace("-", "_") if is_selector_string(value) else value


def _check_common(name: str, dtype: str, descriptor: Descriptor | None, group: GroupSpec) -> None:
    if dtype not in ALL_NUMERIC_DTYPES and not is_aggregate(dtype):
        raise CoopTypeError(f"{name} does not support value dtype {dtype}; supported: {', '.join(NUMERIC_DTYPES)}")
    reject_warp_descriptor(name, group, descriptor)


def _operand(name: str, param: str, operand: Operand, allowed: tuple[str, ...], items_per_thread: int) -> str:
    """P2 (dtype) and P7 (extent) of a ``ranks`` / ``valid_flags`` payload."""
    if operand.dtype not in allowed:
        raise CoopTypeError(f"{name} does not support {param} dtype {operand.dtype}; supported: {', '.join(allowed)}")
    if operand.items_per_thread != items_per_thread:
        raise CoopValueError(f"{name} value and {param} must have the same items_per_thread ({items_per_thread} != "
                             f"{operand.items_per_thread})")
    return operand.dtype


@dataclass(frozen=True, kw_only=True)
class ExchangeOptions:
    """``ranks``/``valid_flags``/``warp_time_slicing`` only reach a qualified call (a common call naming them is
    rejected by the call's signature, C3)."""

    mode: object = "striped_to_blocked"
    ranks: Operand | None = None
    valid_flags: Operand | None = None
    warp_time_slicing: object = None


@dataclass(frozen=True, kw_only=True)
class ShuffleOptions:
    """``distance``: a payload shuffle's static distance (a scalar shuffle's is the shape's ``distance``
    control)."""

    mode: object = "down"
    distance: object = 1


def plan_exchange(shape: CallShape, opts: ExchangeOptions) -> ExchangeSpec:
    """Validate an exchange."""
    name, group, launch, descriptor = shape.name, shape.group, shape.launch, shape.descriptor
    dtype, items_per_thread, qualified, mode = shape.dtypes[0], shape.items_per_thread, shape.qualified, opts.mode
    ranks, valid_flags, warp_time_slicing = opts.ranks, opts.valid_flags, opts.warp_time_slicing
    require_complete_warps(name, group, launch)
    allowed = EXCHANGE_MODES + (QUALIFIED_EXCHANGE_MODES if qualified else ())
    if not qualified and canonical_mode(mode) in QUALIFIED_EXCHANGE_MODES:
        raise CoopValueError(f"{name} mode {mode!r} requires {qualified_namespace()}; the common API accepts: "
                             f"{', '.join(EXCHANGE_MODES)}")
    mode = normalize_selector(name, "mode", mode, allowed)
    if group.kind != BLOCK and mode not in EXCHANGE_MODES:
        raise CoopUnsupportedError(f"{name} does not support group kind '{group.kind}' with mode {mode!r}; supported "
                                   "group kinds: block")
    slicing = static_bool(name, "warp_time_slicing", warp_time_slicing)
    if slicing and group.kind != BLOCK:
        raise CoopValueError(f"{name} warp_time_slicing is supported only for block groups")
    if mode in WARP_STRIPED_MODES and launch.threads % 32:
        raise CoopValueError(f"{name} mode {mode!r} requires a block made of complete warps; block has "
                             f"{launch.threads} threads")
    if mode in SCATTER_MODES and ranks is None:
        raise CoopValueError(f"{name} mode={mode!r} requires ranks")
    if mode == "scatter_to_striped_flagged" and valid_flags is None:
        raise CoopValueError(f"{name} mode={mode!r} requires valid_flags")
    if slicing and mode in UNSLICED_MODES:
        raise CoopValueError(f"{name} mode={mode!r} does not support warp_time_slicing")
    if ranks is not None and mode not in SCATTER_MODES:
        raise CoopValueError(f"{name} ranks requires a scatter mode ({', '.join(SCATTER_MODES)}); got mode={mode!r}")
    if valid_flags is not None and mode != "scatter_to_striped_flagged":
        raise CoopValueError(f"{name} valid_flags requires mode='scatter_to_striped_flagged'; got mode={mode!r}")
    ranks_dtype = _operand(name, "ranks", ranks, RANK_DTYPES, items_per_thread) if ranks is not None else None
    flags_dtype = (_operand(name, "valid_flags", valid_flags, FLAG_DTYPES, items_per_thread)
                   if valid_flags is not None else None)
    _check_common(name, dtype, descriptor, group)
    return ExchangeSpec("exchange", group, launch.block, dtype, items_per_thread, mode, shape.reuse_barrier, slicing,
                        ranks_dtype, flags_dtype)


def shuffle_mode(name: str, mode: object, qualified: bool) -> str:
    """The canonical shuffle mode: C1/C2, and C3 for a scalar mode in a common call."""
    if not qualified and canonical_mode(mode) in SCALAR_SHUFFLE_MODES:
        raise CoopValueError(f"{name} mode {mode!r} requires {qualified_namespace()}; the common API accepts: "
                             f"{', '.join(SHUFFLE_MODES)}")
    return normalize_selector(name, "mode", mode, SHUFFLE_MODES + (SCALAR_SHUFFLE_MODES if qualified else ()))


def plan_shuffle(shape: CallShape, opts: ShuffleOptions) -> ExchangeSpec:
    """A payload shuffle (``up``/``down``, ``distance`` exactly 1; ``items_per_thread`` > 0)."""
    name, group, launch, descriptor = shape.name, shape.group, shape.launch, shape.descriptor
    dtype, items_per_thread, qualified = shape.dtypes[0], shape.items_per_thread, shape.qualified
    distance = opts.distance
    mode = shuffle_mode(name, opts.mode, qualified)
    if mode in SCALAR_SHUFFLE_MODES:
        raise CoopTypeError(f"{name} value must be a scalar for mode {mode!r}; got a ThreadData payload")
    if isinstance(distance, bool) or distance != 1:
        if not qualified:
            raise CoopValueError("cuda.coop.shuffle distance must be exactly 1 in the common API; use "
                                 f"{qualified_namespace()} for scalar offset and rotate shuffles")
        raise CoopValueError(f"{name} mode {mode!r} moves a ThreadData payload by exactly one position, so distance "
                             f"must be 1; got {distance if isinstance(distance, str) else repr(distance)} "
                             "(scalar values shuffle any distance with mode='offset' or "
                             "mode='rotate')")
    _check_common(name, dtype, descriptor, group)
    return ExchangeSpec("shuffle", group, launch.block, dtype, items_per_thread, mode, shape.reuse_barrier)


def plan_scalar_shuffle(shape: CallShape, opts: ShuffleOptions) -> ExchangeSpec:
    """A qualified scalar shuffle (docs: operations/exchange_shuffle, "Shuffle"): ``offset`` (any distance; unspecified
    outside the block) or ``rotate`` (``1 <= distance < T``: C7 when static, a device trap when runtime). The
    distance is the shape's ``distance`` control."""
    name, group, launch, descriptor = shape.name, shape.group, shape.launch, shape.descriptor
    dtype, distance = shape.dtypes[0], shape.control("distance")
    mode = shuffle_mode(name, opts.mode, True)
    if mode in SHUFFLE_MODES:
        raise CoopTypeError(f"{name} value must be a ThreadData payload for mode {mode!r}; got a scalar (scalar "
                            "values take mode='offset' or mode='rotate')")
    if distance is None:
        distance = Static(1)
    elif (isinstance(distance, Static) and hasattr(distance.value, "__index__")
          and not isinstance(distance.value, bool) and type(distance.value).__name__ != "bool_"):
        distance = Static(distance.value.__index__())  # a NumPy integer constant
    check_runtime_int(name, "distance", distance)
    static = None
    if isinstance(distance, Static):
        static = int(distance.value)  # type: ignore[call-overload]
        hi = launch.threads - 1
        if mode == "rotate" and not 1 <= static <= hi:
            raise CoopValueError(f"{name} static distance must be between 1 and {hi}; got {static}")
    else:
        assert isinstance(distance, Runtime)
    _check_common(name, dtype, descriptor, group)
    return ExchangeSpec("shuffle", group, launch.block, dtype, 0, mode, shape.reuse_barrier, distance=static)
