"""Planning of the block histogram (docs: operations/histogram)."""
from __future__ import annotations

from dataclasses import dataclass

from .._errors import CoopTypeError, CoopUnsupportedError, CoopValueError
from .common import check_tile_valid_items, normalize_selector, static_positive
from .sort import check_radix_tile
from .shape import CallShape

SAMPLE_DTYPES = ("uint8", "int32", "uint32", "int64", "uint64")
COUNTER_DTYPES = ("int32", "uint32", "int64", "uint64")
ALGORITHMS = ("atomic", "sort")
INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class HistogramSpec:
    """Everything the code generator needs for one histogram call."""

    block: tuple[int, int, int]
    sample_dtype: str
    items_per_thread: int
    bins: int
    bins_per_thread: int
    counter_dtype: str
    algorithm: str  # "atomic" or "sort"
    barrier: bool
    # only the samples at blocked positions below valid_items count (docs: operations/histogram, "A partial tile")
    has_valid_items: bool = False

    @property
    def threads(self) -> int:
        return self.block[0]

    @property
    def tile_items(self) -> int:
        return self.threads * self.items_per_thread


def counter_dtype_of(name: str, dtype: str | None) -> str:
    """``None`` (the default) means int32; the backend passes the dtype name it read, or a repr it could not."""
    dtype = "int32" if dtype is None else dtype
    if dtype not in COUNTER_DTYPES:
        raise CoopTypeError(f"{name} does not support counter_dtype dtype {dtype}; supported: "
                            f"{', '.join(COUNTER_DTYPES)}")
    return dtype


@dataclass(frozen=True, kw_only=True)
class HistogramOptions:
    bins: object = None
    bins_per_thread: object = 1
    counter_dtype: str | None = None  # None: int32
    algorithm: object = "atomic"


def plan_histogram(shape: CallShape, opts: HistogramOptions) -> HistogramSpec:
    """One scalar sample per thread (a qualified call) counts as a tile of one item per thread. ``valid_items`` is
    the shape's control."""
    name, launch = shape.name, shape.launch
    sample_dtype, items_per_thread = shape.dtypes[0], max(shape.items_per_thread, 1)
    bins, bins_per_thread, counter_dtype = opts.bins, opts.bins_per_thread, opts.counter_dtype
    algorithm = opts.algorithm
    if launch.block[1] != 1 or launch.block[2] != 1:
        raise CoopUnsupportedError(f"{name} requires a one-dimensional block; block shape is {launch.block}")
    if sample_dtype not in SAMPLE_DTYPES:
        raise CoopTypeError(f"{name} does not support samples dtype {sample_dtype}; supported: "
                            f"{', '.join(SAMPLE_DTYPES)}")
    if bins is None:
        raise CoopTypeError(f"{name}: missing a required argument: 'bins'")
    bins = static_positive(name, "bins", bins)
    per_thread = static_positive(name, "bins_per_thread", bins_per_thread)
    counter = counter_dtype_of(name, counter_dtype)
    algorithm = normalize_selector(name, "algorithm", algorithm, ALGORITHMS)
    threads = launch.threads
    if threads * per_thread < bins:
        raise CoopValueError(f"{name} requires block_threads * bins_per_thread >= bins "
                             f"({threads} * {per_thread} < {bins})")
    if threads * per_thread > INT32_MAX:
        raise CoopValueError(f"{name} block_threads * bins_per_thread must fit int32 "
                             f"({threads} * {per_thread} > {INT32_MAX})")
    tile = threads * items_per_thread
    valid_items = shape.control("valid_items")
    check_tile_valid_items(name, valid_items, tile)
    if algorithm == "sort":
        check_radix_tile(name, tile)  # BLOCK_HISTO_SORT ranks the samples with BlockRadixSort
    elif tile > INT32_MAX:
        raise CoopValueError(f"{name} tile of {tile} items exceeds CUB's limit of {INT32_MAX} for this algorithm")
    return HistogramSpec(launch.block, sample_dtype, items_per_thread, bins, per_thread, counter, algorithm,
                         shape.reuse_barrier, valid_items is not None)
