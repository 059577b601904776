"""Planning of merge sort and radix sort, qualified radix extensions included, and of top-k selection (docs:
operations/merge_sort; operations/radix_sort; operations/topk)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .._backend_context import qualified_namespace
from .._errors import CoopTypeError, CoopUnsupportedError, CoopValueError
from .aggregates import is_aggregate, require_aggregate_callable
from .common import (
    ALL_NUMERIC_DTYPES,
    BLOCK, NUMERIC_DTYPES, Control, GroupSpec, Runtime, Static, check_runtime_int, check_tile_valid_items,
    is_power_of_two, itemsize, literal_as,
)
from .groups import reject_warp_descriptor, require_complete_warps
from .operators import OperatorSpec, resolve_predicate
from .shape import CallShape

RADIX_KEY_DTYPES = ("int32", "uint32", "int64", "uint64")
QUALIFIED_RADIX_KEY_DTYPES = RADIX_KEY_DTYPES + ("float16", "float32", "float64")


@dataclass(frozen=True)
class SortSpec:
    """Everything the code generator needs for one sort call."""

    op: str  # "merge_sort", "radix_sort", or "topk" (a warp group's selection: WarpTopK of our warp_topk.cuh)
    group: GroupSpec
    block: tuple[int, int, int]
    key_dtype: str
    value_dtype: str | None  # None: keys only
    items_per_thread: int
    descending: bool
    # partial tiles: merge sort (valid_items with oob_default), radix sort and top-k (keys past valid_items padded)
    has_valid_items: bool
    begin_bit: int | None  # radix sort: a static bound, or None when it arrives at run time
    end_bit: int | None
    blocked_to_striped: bool  # qualified radix option: striped output
    barrier: bool
    topk: bool = False  # top-k selection through a radix sort: keys past valid_items are padded to sort last
    compare: OperatorSpec | None = None  # merge sort: the qualified compare_op predicate (None: less/greater)
    has_oob_default: bool = False  # radix sort: oob_default fills the output positions past valid_items

    @property
    def tile_items(self) -> int:
        return self.group.size * self.items_per_thread

    @property
    def key_bits(self) -> int:
        return itemsize(self.key_dtype) * 8

    @property
    def padding_bits(self) -> int:
        return ordered_extreme_bits(self.key_dtype, self.descending)

    @property
    def bitonic(self) -> bool:
        """A warp group's top-k of one key per lane sorts by CUB's shuffle network (no scratch): its striped order is
        then the blocked order (docs: operations/topk, "Warps and logical warps")."""
        return self.op == "topk" and self.items_per_thread == 1

    @property
    def uses_scratch(self) -> bool:
        return not self.bitonic


def _check_values(name: str, items_per_thread: int, values: tuple[str, int] | None) -> str | None:
    """``values`` is (dtype, items_per_thread) of a pairs call's value payload; returns its dtype."""
    if values is None:
        return None
    dtype, extent = values
    if dtype not in ALL_NUMERIC_DTYPES and not is_aggregate(dtype):
        raise CoopTypeError(f"{name} does not support values dtype {dtype}; supported: {', '.join(NUMERIC_DTYPES)}")
    if extent != items_per_thread:
        raise CoopValueError(f"{name} keys and values must have the same items_per_thread "
                             f"({items_per_thread} != {extent})")
    return dtype


def _check_oob_default(name: str, oob_default: Control, key_dtype: str) -> None:
    """A typed scalar control of the keys' dtype (docs: operations/index, "Rules every operation shares"): a literal
    representable as it (C10), a runtime value of exactly that dtype (C9)."""
    if isinstance(oob_default, Static):
        literal_as(name, "oob_default", oob_default.value, key_dtype)
    elif isinstance(oob_default, Runtime) and oob_default.dtype not in (None, key_dtype):
        raise CoopTypeError(
            f"{name} oob_default must have the payload dtype {key_dtype}; got {oob_default.dtype}; cast it")


def _descending(name: str, descending: object) -> bool:
    if not isinstance(descending, bool):
        raise CoopTypeError(f"{name} descending must be a compile-time bool")
    return descending


@dataclass(frozen=True, kw_only=True)
class MergeSortOptions:
    """``values``: (dtype, items_per_thread) of a pairs call's value payload; ``compare_op``: the qualified
    predicate. ``valid_items`` and ``oob_default`` are the shape's controls."""

    values: tuple[str, int] | None = None
    descending: object = False
    compare_op: object = None


def plan_merge_sort(shape: CallShape, opts: MergeSortOptions) -> SortSpec:
    """The keys are the shape's operand."""
    name, group, launch, descriptor = shape.name, shape.group, shape.launch, shape.descriptor
    key_dtype, items_per_thread = shape.dtypes[0], shape.items_per_thread
    values, descending, compare_op = opts.values, opts.descending, opts.compare_op
    valid_items, oob_default = shape.control("valid_items"), shape.control("oob_default")
    require_complete_warps(name, group, launch)
    if group.kind == BLOCK and not is_power_of_two(launch.threads):
        raise CoopUnsupportedError(f"{name} requires a power-of-two thread count; block shape is {launch.block}")
    # aggregate keys need a compare_op (docs: qualified, "User-defined aggregates")
    require_aggregate_callable(name, "compare_op", key_dtype, compare_op)
    if key_dtype not in ALL_NUMERIC_DTYPES and not is_aggregate(key_dtype):
        raise CoopTypeError(f"{name} does not support keys dtype {key_dtype}; supported: {', '.join(NUMERIC_DTYPES)}")
    value_dtype = _check_values(name, items_per_thread, values)
    descending = _descending(name, descending)
    if compare_op is not None and descending:
        raise CoopValueError(f"{name} compare_op cannot be combined with descending=True")
    compare = resolve_predicate(name, "compare_op", compare_op, key_dtype)
    if (valid_items is None) != (oob_default is None):
        raise CoopValueError("valid_items and oob_default must be provided together")
    check_tile_valid_items(name, valid_items, group.size * items_per_thread)
    _check_oob_default(name, oob_default, key_dtype)
    reject_warp_descriptor(name, group, descriptor)
    return SortSpec("merge_sort", group, launch.block, key_dtype, value_dtype, items_per_thread, descending,
                    valid_items is not None, None, None, False, shape.reuse_barrier, compare=compare)


def _static_bit(name: str, param: str, control: Control, lo: int, hi: int) -> int | None:
    """A static bit bound checked against [lo, hi] (C7); None for a runtime bound (checked on the device)."""
    check_runtime_int(name, param, control)
    if isinstance(control, Static):
        value = control.value
        if not lo <= value <= hi:  # type: ignore[operator]
            raise CoopValueError(f"{name} static {param} must be between {lo} and {hi}; got {value}")
        return value  # type: ignore[return-value]
    return None


# BlockRadixRank (under radix sort, radix rank and top-k) counts digits in 16-bit counters.
RADIX_TILE_LIMIT = 65535


def check_radix_tile(name: str, tile: int) -> None:
    """P17: CUB's radix ranking cannot count a larger tile (its static_assert, said before NVRTC runs)."""
    if tile > RADIX_TILE_LIMIT:
        raise CoopValueError(f"{name} tile of {tile} items exceeds CUB's limit of {RADIX_TILE_LIMIT} "
                             "for this algorithm")


@dataclass(frozen=True, kw_only=True)
class RadixSortOptions:
    """``values`` as ``MergeSortOptions``'; ``blocked_to_striped``: the qualified option. ``begin_bit``,
    ``end_bit``, ``valid_items`` and ``oob_default`` are the shape's controls."""

    values: tuple[str, int] | None = None
    descending: object = False
    blocked_to_striped: object = False


def plan_radix_sort(shape: CallShape, opts: RadixSortOptions) -> SortSpec:
    """The keys are the shape's operand (one scalar key per thread: extent 1)."""
    name, group, launch, qualified = shape.name, shape.group, shape.launch, shape.qualified
    key_dtype, items_per_thread = shape.dtypes[0], max(shape.items_per_thread, 1)
    values, descending, blocked_to_striped = opts.values, opts.descending, opts.blocked_to_striped
    begin_bit, end_bit = shape.control("begin_bit"), shape.control("end_bit")
    valid_items, oob_default = shape.control("valid_items"), shape.control("oob_default")
    allowed = QUALIFIED_RADIX_KEY_DTYPES if qualified else RADIX_KEY_DTYPES
    if key_dtype not in allowed:
        if key_dtype in QUALIFIED_RADIX_KEY_DTYPES:
            raise CoopTypeError(f"{name} supports keys dtypes {', '.join(RADIX_KEY_DTYPES)} through the common API; "
                                f"use {qualified_namespace()} for {key_dtype}")
        raise CoopTypeError(f"{name} does not support keys dtype {key_dtype}; supported: {', '.join(allowed)}")
    value_dtype = _check_values(name, items_per_thread, values)
    descending = _descending(name, descending)
    if blocked_to_striped is None:
        blocked_to_striped = False
    if not isinstance(blocked_to_striped, bool):
        raise CoopTypeError(f"{name} blocked_to_striped must be a compile-time bool")
    width = itemsize(key_dtype) * 8
    begin = 0 if begin_bit is None else _static_bit(name, "begin_bit", begin_bit, 0, width - 1)
    end = width if end_bit is None else _static_bit(name, "end_bit", end_bit, 1 if begin is None else begin + 1, width)
    tile = launch.threads * items_per_thread
    check_radix_tile(name, tile)
    # a partial tile (docs: operations/radix_sort, "A partial tile"): oob_default only fills the tail
    if oob_default is not None and valid_items is None:
        raise CoopValueError(f"{name} oob_default requires valid_items")
    check_tile_valid_items(name, valid_items, tile)
    _check_oob_default(name, oob_default, key_dtype)
    return SortSpec("radix_sort", group, launch.block, key_dtype, value_dtype, items_per_thread, descending,
                    valid_items is not None, begin, end, blocked_to_striped, shape.reuse_barrier,
                    has_oob_default=oob_default is not None)


# ---------------------------------------------------------------------------- radix rank (docs: operations/radix_sort)


@dataclass(frozen=True)
class RankSpec:
    group: GroupSpec
    block: tuple[int, int, int]
    key_dtype: str
    items_per_thread: int
    begin_bit: int
    radix_bits: int
    descending: bool
    barrier: bool
    # the qualified exclusive_digit_prefix payload is written (docs: operations/radix_sort, "Radix rank")
    digit_prefix: bool = False

    @property
    def key_bits(self) -> int:
        return itemsize(self.key_dtype) * 8

    @property
    def prefix_extent(self) -> int:
        return digit_prefix_extent(self.radix_bits, self.group.size)


def digit_prefix_extent(radix_bits: int, threads: int) -> int:
    """Each member holds ceil(2**bits / T) digit prefixes (docs: operations/radix_sort, "Radix rank")."""
    return -(-(1 << radix_bits) // threads)


def _optional_static_int(name: str, param: str, value: object) -> int | None:
    """``value`` when it is None or a compile-time integer (not a bool)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise CoopTypeError(f"{name} {param} must be a compile-time integer")
    return value


@dataclass(frozen=True, kw_only=True)
class RadixRankOptions:
    """The static bit bounds; ``exclusive_digit_prefix``: (dtype, items_per_thread) of the qualified writable
    payload, when given."""

    begin_bit: object = None
    end_bit: object = None
    radix_bits: object = None
    descending: object = False
    exclusive_digit_prefix: tuple[str | None, int] | None = None


def plan_radix_rank(shape: CallShape, opts: RadixRankOptions) -> RankSpec:
    """The keys are the shape's operand (one scalar key per thread: extent 1)."""
    name, group, launch = shape.name, shape.group, shape.launch
    key_dtype, items_per_thread = shape.dtypes[0], max(shape.items_per_thread, 1)
    begin_bit, end_bit, radix_bits = opts.begin_bit, opts.end_bit, opts.radix_bits
    descending, exclusive_digit_prefix = opts.descending, opts.exclusive_digit_prefix
    if key_dtype not in RADIX_KEY_DTYPES:
        raise CoopTypeError(f"{name} does not support keys dtype {key_dtype}; supported: {', '.join(RADIX_KEY_DTYPES)}")
    begin_bit = _optional_static_int(name, "begin_bit", begin_bit)
    end_bit = _optional_static_int(name, "end_bit", end_bit)
    radix_bits = _optional_static_int(name, "radix_bits", radix_bits)
    descending = _descending(name, descending)
    width = itemsize(key_dtype) * 8
    begin = 0 if begin_bit is None else begin_bit
    if not 0 <= begin <= width - 1:
        raise CoopValueError(f"{name} static begin_bit must be between 0 and {width - 1}; got {begin}")
    if radix_bits is not None and radix_bits <= 0:
        raise CoopValueError("radix_bits must be positive")
    end = end_bit if end_bit is not None else begin + (4 if radix_bits is None else radix_bits)
    if radix_bits is not None and end_bit is not None and radix_bits != end_bit - begin:
        raise CoopValueError("radix_bits must match end_bit - begin_bit")
    if not begin + 1 <= end <= width:
        raise CoopValueError(f"{name} static end_bit must be between {begin + 1} and {width}; got {end}")
    if end - begin > 8:
        raise CoopValueError("radix_rank bit width must be <= 8")
    check_radix_tile(name, launch.threads * items_per_thread)
    if exclusive_digit_prefix is not None:
        dtype, extent = exclusive_digit_prefix
        if dtype not in (None, "int32"):
            raise CoopTypeError(f"{name} does not support exclusive_digit_prefix dtype {dtype}; supported: int32")
        expected = digit_prefix_extent(end - begin, group.size)
        if extent != expected:
            raise CoopValueError(f"{name} exclusive_digit_prefix must have ceil(2**{end - begin} / {group.size}) = "
                                 f"{expected} items per thread; got {extent}")
    return RankSpec(group, launch.block, key_dtype, items_per_thread, begin, end - begin, descending,
                    shape.reuse_barrier, exclusive_digit_prefix is not None)


# ---------------------------------------------------------------------------- top-k (docs: operations/topk)


def ordered_extreme_bits(dtype: str, last_when_descending: bool) -> int:
    """The bit pattern of the key whose ordered representation (docs: operations/radix_sort, "Radix sort") sorts after
    every other key: all ones (ascending) or all zeros (descending) in that representation, mapped back to the key's
    bits."""
    width = itemsize(dtype) * 8
    ones, sign = (1 << width) - 1, 1 << (width - 1)
    ordered = 0 if last_when_descending else ones
    if dtype.startswith("uint"):
        return ordered
    if dtype.startswith("int"):
        return ordered ^ sign
    return ordered ^ sign if ordered & sign else ~ordered & ones  # floats: inverse of the sign/all-bits flip


@dataclass(frozen=True, kw_only=True)
class TopKOptions:
    """``largest``: topk_max (else topk_min); ``values`` as ``MergeSortOptions``'. ``k`` and ``valid_items`` are
    the shape's controls."""

    largest: bool
    values: tuple[str, int] | None = None


def plan_topk(shape: CallShape, opts: TopKOptions) -> SortSpec:
    """The keys are the shape's operand. A 1-D block selects through a stable radix sort of its tile; a warp or a
    logical warp (any block of complete warps, G5) sorts its own tile of ``G*K`` keys by their ordered
    representation (docs: operations/topk, "Warps and logical warps"), in compiler-owned scratch (S2)."""
    name, group, launch = shape.name, shape.group, shape.launch
    key_dtype, items_per_thread, values, largest = shape.dtypes[0], shape.items_per_thread, opts.values, opts.largest
    k, valid_items = shape.control("k"), shape.control("valid_items")
    if group.kind == BLOCK and (launch.block[1] != 1 or launch.block[2] != 1):
        raise CoopUnsupportedError(f"{name} requires a one-dimensional block; block shape is {launch.block}")
    require_complete_warps(name, group, launch)
    if key_dtype not in ALL_NUMERIC_DTYPES:
        raise CoopTypeError(f"{name} does not support keys dtype {key_dtype}; supported: {', '.join(NUMERIC_DTYPES)}")
    value_dtype = _check_values(name, items_per_thread, values)
    tile = group.size * items_per_thread
    if k is None:
        raise CoopTypeError(f"{name}: missing a required argument: 'k'")
    for param, control in (("k", k), ("valid_items", valid_items)):
        if control is None:
            continue
        check_runtime_int(name, param, control)
        if isinstance(control, Static) and not 0 <= control.value <= tile:  # type: ignore[operator]
            raise CoopValueError(f"{name} static {param} must be between 0 and {tile}; got {control.value}")
    reject_warp_descriptor(name, group, shape.descriptor)
    if group.kind != BLOCK:
        spec = SortSpec("topk", group, launch.block, key_dtype, value_dtype, items_per_thread, largest,
                        valid_items is not None, None, None, False, shape.reuse_barrier, topk=True)
        return spec if spec.uses_scratch else dataclasses.replace(spec, barrier=False)  # no scratch to protect
    width = itemsize(key_dtype) * 8
    check_radix_tile(name, launch.threads * items_per_thread)
    return SortSpec("radix_sort", group, launch.block, key_dtype, value_dtype, items_per_thread, largest,
                    valid_items is not None, 0, width, False, shape.reuse_barrier, topk=True)
