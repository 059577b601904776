"""cuda.coop: cooperative block, warp and logical-warp algorithms for Python GPU kernels.

Type stubs generated from the live markers by ``python -m cuda.coop._stubs --write``; do not edit by hand.
"""

from typing import Any, Callable, Literal, Protocol, TypeAlias, runtime_checkable

__all__ = [
    "CoopBuildError",
    "CoopCompilerContextRequiredError",
    "CoopError",
    "CoopIndexError",
    "CoopTypeError",
    "CoopUnsupportedError",
    "CoopValueError",
    "CudaCoopAutoRegistrationWarning",
    "TempStorage",
    "TempStorageLike",
    "ThreadData",
    "ThreadDataLike",
    "ThreadGroup",
    "__version__",
    "adjacent_difference",
    "argmax",
    "argmin",
    "broadcast",
    "discontinuity",
    "exchange",
    "exclusive_scan",
    "exclusive_sum",
    "histogram",
    "inclusive_scan",
    "inclusive_sum",
    "load",
    "merge_sort_keys",
    "merge_sort_pairs",
    "partition",
    "radix_rank",
    "radix_sort_keys",
    "radix_sort_pairs",
    "reduce",
    "reduce_batched",
    "register",
    "run_length_decode",
    "run_length_decode_into",
    "scan",
    "select",
    "shuffle",
    "store",
    "sum",
    "this_block",
    "this_cluster",
    "this_grid",
    "this_thread",
    "this_warp",
    "topk_max_keys",
    "topk_max_pairs",
    "topk_min_keys",
    "topk_min_pairs",
]

_AdjacentDirection: TypeAlias = Literal["left", "right"]
_BatchedLayout: TypeAlias = Literal["striped", "blocked"]
_DiscontinuityMode: TypeAlias = Literal["heads", "tails", "heads_and_tails"]
_ExchangeMode: TypeAlias = Literal["striped_to_blocked", "blocked_to_striped"]
_HistogramAlgorithm: TypeAlias = Literal["atomic", "sort"]
_LoadStoreAlgorithm: TypeAlias = Literal[
    "direct",
    "striped",
    "vectorize",
    "transpose",
    "warp_transpose",
    "warp_transpose_timesliced",
]
_QueryLevel: TypeAlias = Literal["thread", "warp", "block", "cluster", "grid", "gpu_thread"]
_ReduceAlgorithm: TypeAlias = Literal["warp_reductions", "raking", "raking_commutative_only"]
_ScanAlgorithm: TypeAlias = Literal["raking", "raking_memoize", "warp_scans"]
_ScanMode: TypeAlias = Literal["exclusive", "inclusive"]
_Sharing: TypeAlias = Literal["shared", "exclusive"]
_ShuffleMode: TypeAlias = Literal["up", "down"]


__version__: str


class TempStorage:
    """``TempStorage(size_in_bytes=None, *, alignment=None, auto_sync=False, sharing="shared")``."""

    size_in_bytes: int | None
    alignment: int | None
    auto_sync: bool
    sharing: str

    def __new__(
        cls,
        size_in_bytes: int | None = None,
        *,
        alignment: int | None = None,
        auto_sync: bool = False,
        sharing: _Sharing = "shared",
    ) -> TempStorage: ...


@runtime_checkable
class TempStorageLike(Protocol):
    """Annotation protocol for helpers taking scratch descriptors."""

    size_in_bytes: int | None
    alignment: int | None
    auto_sync: bool
    sharing: str


class ThreadData:
    """``ThreadData(items_per_thread, dtype=None, *, alignment=None)``: per-thread items."""

    items_per_thread: int
    dtype: Any

    def __new__(cls, items_per_thread: int, dtype: Any = None, *, alignment: int | None = None) -> ThreadData: ...

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> Any: ...

    def __setitem__(self, index: int, value: Any) -> None: ...


@runtime_checkable
class ThreadDataLike(Protocol):
    """Annotation protocol for helpers taking payloads (satisfying it does not make an object a kernel value)."""

    items_per_thread: int
    dtype: Any

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> Any: ...

    def __setitem__(self, index: int, value: Any) -> None: ...


class ThreadGroup:
    """A compile-time descriptor of cooperating threads (block, warp, logical warp, ...)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> ThreadGroup: ...

    def group_by(self, count: int, /, *, exhaustive: bool = True) -> ThreadGroup:
        """Split a warp into logical warps of ``count`` lanes, or a block into groups of ``count`` warps."""

    def rank(self, level: _QueryLevel = "thread") -> int:
        """Index of the caller's ``level`` unit in the group (or of the group in ``level``)."""

    def count(self, level: _QueryLevel = "thread") -> int:
        """Number of ``level`` units in the group (or of groups in ``level``)."""

    def rank_as(self, dtype: Any = None, level: _QueryLevel = "thread") -> int:
        """``rank(level)`` converted to the integer ``dtype`` (``None``: as ``rank``); narrowing truncates."""

    def count_as(self, dtype: Any = None, level: _QueryLevel = "thread") -> int:
        """``count(level)`` converted to the integer ``dtype`` (``None``: as ``count``); narrowing truncates."""

    def is_member(self) -> int:
        """1 when the calling thread belongs to a group of this kind, else 0."""

    def sync(self) -> None:
        """Barrier over the group (divergence-tolerant for blocks)."""

    def sync_aligned(self) -> None:
        """Aligned barrier over the group (``__syncthreads`` for blocks)."""


class CoopError(Exception):
    """Base class of every error cuda.coop raises. Its message is plain text: compiler text embedded in it loses its
    terminal colour codes.
    """

    def __init__(self, *args: object) -> None: ...


class CoopBuildError(CoopError, RuntimeError):
    """Toolchain or header failure while building CUB code."""


class CoopCompilerContextRequiredError(CoopError, RuntimeError):
    """A kernel-only marker was executed as ordinary Python."""


class CoopIndexError(CoopError, IndexError):
    """A static index outside a payload."""


class CoopTypeError(CoopError, TypeError):
    """Wrong kind of value, dtype, or a value that is not compile-time."""


class CoopUnsupportedError(CoopError, NotImplementedError):
    """Unsupported group kind or variant, or an unimplemented operation."""


class CoopValueError(CoopError, ValueError):
    """Value out of range, incompatible combination or resource limit."""


class CudaCoopAutoRegistrationWarning(UserWarning):
    """Automatic backend registration failed while importing cuda.coop."""


def adjacent_difference(
    group: ThreadGroup,
    values: ThreadData,
    /,
    *,
    direction: _AdjacentDirection = "left",
    valid_items: Any = None,
    tile_predecessor_item: Any = None,
    tile_successor_item: Any = None,
    temp_storage: TempStorage | None = None,
) -> ThreadData:
    """Subtract each item's neighbour in the block's blocked tile; returns a fresh payload of the input dtype."""


def argmax(
    group: ThreadGroup,
    items: Any,
    /,
    *,
    valid_items: Any = None,
    indices: Any = None,
    temp_storage: TempStorage | None = None,
) -> tuple[Any, Any]:
    """The largest value of the group's tile and the index of its first occurrence."""


def argmin(
    group: ThreadGroup,
    items: Any,
    /,
    *,
    valid_items: Any = None,
    indices: Any = None,
    temp_storage: TempStorage | None = None,
) -> tuple[Any, Any]:
    """The smallest value of the group's tile and the index of its first occurrence."""


def broadcast(group: ThreadGroup, value: Any, /, *, src_rank: int = 0, temp_storage: TempStorage | None = None) -> Any:
    """Every member of the group receives member ``src_rank``'s value (a scalar, a ThreadData or a tuple of them)."""


def discontinuity(
    group: ThreadGroup,
    values: ThreadData,
    /,
    *,
    mode: _DiscontinuityMode = "heads",
    tile_predecessor_item: Any = None,
    tile_successor_item: Any = None,
    temp_storage: TempStorage | None = None,
) -> ThreadData | tuple[ThreadData, ThreadData]:
    """Flag where the block's blocked tile changes value; returns fresh int32 payloads of 1/0 flags."""


def exchange(
    group: ThreadGroup,
    value: ThreadData,
    /,
    *,
    mode: _ExchangeMode = "striped_to_blocked",
    temp_storage: TempStorage | None = None,
) -> ThreadData:
    """Rearrange a payload between layouts; returns a fresh payload."""


def exclusive_scan(
    group: ThreadGroup,
    value: Any,
    /,
    *,
    scan_op: Any = None,
    initial_value: Any = None,
    algorithm: _ScanAlgorithm | None = None,
    reverse: bool = False,
    head_flags: Any = None,
    temp_storage: TempStorage | None = None,
) -> Any:
    """Exclusive scan with ``scan_op``; non-sum operators need ``initial_value``."""


def exclusive_sum(
    group: ThreadGroup,
    value: Any,
    /,
    *,
    algorithm: _ScanAlgorithm | None = None,
    reverse: bool = False,
    head_flags: Any = None,
    temp_storage: TempStorage | None = None,
) -> Any:
    """Exclusive prefix sum: position ``p`` receives the sum of positions ``< p`` (0 first)."""


def histogram(
    group: ThreadGroup,
    samples: ThreadData,
    /,
    *,
    bins: int,
    bins_per_thread: int = 1,
    counter_dtype: Any = None,
    algorithm: _HistogramAlgorithm = "atomic",
    valid_items: Any = None,
    temp_storage: TempStorage | None = None,
) -> ThreadData:
    """Count the block's samples per bin; returns fresh striped counters."""


def inclusive_scan(
    group: ThreadGroup,
    value: Any,
    /,
    *,
    scan_op: Any = None,
    algorithm: _ScanAlgorithm | None = None,
    reverse: bool = False,
    head_flags: Any = None,
    temp_storage: TempStorage | None = None,
) -> Any:
    """Inclusive scan with ``scan_op``."""


def inclusive_sum(
    group: ThreadGroup,
    value: Any,
    /,
    *,
    algorithm: _ScanAlgorithm | None = None,
    reverse: bool = False,
    head_flags: Any = None,
    temp_storage: TempStorage | None = None,
) -> Any:
    """Inclusive prefix sum: position ``p`` receives the sum of positions ``<= p``."""


def load(
    group: ThreadGroup,
    source: Any,
    output: ThreadData,
    /,
    *,
    algorithm: _LoadStoreAlgorithm = "direct",
    valid_items: int | None = None,
    oob_default: Any = None,
    offset: int | None = None,
    temp_storage: TempStorage | None = None,
) -> None:
    """Load the group's tile ``source[offset : offset + G*K]`` into ``output``."""


def merge_sort_keys(
    group: ThreadGroup,
    keys: ThreadData,
    /,
    *,
    descending: bool = False,
    valid_items: Any = None,
    oob_default: Any = None,
    temp_storage: TempStorage | None = None,
) -> ThreadData:
    """Sort each group's tile of keys; returns a fresh payload in blocked order (not guaranteed stable)."""


def merge_sort_pairs(
    group: ThreadGroup,
    keys: ThreadData,
    values: ThreadData,
    /,
    *,
    descending: bool = False,
    valid_items: Any = None,
    oob_default: Any = None,
    temp_storage: TempStorage | None = None,
) -> tuple[ThreadData, ThreadData]:
    """Sort keys and carry each value with its key; returns fresh ``(keys, values)`` payloads in blocked order."""


def partition(
    group: ThreadGroup,
    items: Any,
    flags: Any,
    /,
    *,
    valid_items: Any = None,
    temp_storage: TempStorage | None = None,
) -> tuple[Any, Any]:
    """The flagged items of the group's tile first, then the other valid items, each in their order."""


def radix_rank(
    group: ThreadGroup,
    keys: ThreadData,
    /,
    *,
    begin_bit: int = 0,
    end_bit: int | None = None,
    radix_bits: int | None = None,
    descending: bool = False,
    temp_storage: TempStorage | None = None,
) -> ThreadData:
    """Rank each key of the block's tile by one digit (1-8 bits) of its ordered representation."""


def radix_sort_keys(
    group: ThreadGroup,
    keys: ThreadData,
    /,
    *,
    begin_bit: Any = 0,
    end_bit: Any = None,
    descending: bool = False,
    valid_items: Any = None,
    oob_default: Any = None,
    temp_storage: TempStorage | None = None,
) -> ThreadData:
    """Stable radix sort of the block's tile by bits ``[begin_bit, end_bit)`` of the ordered key representation."""


def radix_sort_pairs(
    group: ThreadGroup,
    keys: ThreadData,
    values: ThreadData,
    /,
    *,
    begin_bit: Any = 0,
    end_bit: Any = None,
    descending: bool = False,
    valid_items: Any = None,
    oob_default: Any = None,
    temp_storage: TempStorage | None = None,
) -> tuple[ThreadData, ThreadData]:
    """Stable radix sort of keys carrying each value with its key; returns fresh ``(keys, values)`` payloads."""


def reduce(
    group: ThreadGroup,
    value: Any,
    /,
    *,
    binary_op: str | Callable[[Any, Any], Any] | None = None,
    broadcast: bool = True,
    valid_items: int | None = None,
    algorithm: _ReduceAlgorithm | None = None,
    head_flags: Any = None,
    compact: bool = False,
    temp_storage: TempStorage | None = None,
) -> Any:
    """Combine every member's value (scalar or ThreadData) with ``binary_op``; with ``head_flags``, each segment's."""


def reduce_batched(
    group: ThreadGroup,
    value: ThreadData,
    /,
    *,
    binary_op: str | Callable[[Any, Any], Any] | None = None,
    output_layout: _BatchedLayout = "striped",
    temp_storage: TempStorage | None = None,
) -> ThreadData:
    """Reduce ``B`` independent batches across a (logical) warp; slot ``b`` of every lane feeds batch ``b``."""


def register(backend: str, /) -> None:
    """Activate a compiler backend in this process (``"numba-cuda-mlir"`` or ``"cutlass"``)."""


def run_length_decode(
    group: ThreadGroup,
    run_values: ThreadData,
    run_lengths: ThreadData,
    /,
    *,
    decoded_items_per_thread: int,
    decoded_window_offset: Any = 0,
    temp_storage: TempStorage | None = None,
) -> ThreadData:
    """Decode one window of a block's run-length encoded stream; returns a fresh payload of run values."""


def run_length_decode_into(
    group: ThreadGroup,
    run_values: ThreadData,
    run_lengths: ThreadData,
    destination: Any,
    /,
    *,
    decoded_items_per_thread: int,
    destination_offset: Any = 0,
    temp_storage: TempStorage | None = None,
) -> Any:
    """Decode a block's whole run-length encoded stream into ``destination``; returns the total as ``uint32``."""


def scan(
    group: ThreadGroup,
    value: Any,
    /,
    *,
    mode: _ScanMode = "exclusive",
    scan_op: Any = None,
    initial_value: Any = None,
    algorithm: _ScanAlgorithm | None = None,
    reverse: bool = False,
    head_flags: Any = None,
    temp_storage: TempStorage | None = None,
) -> Any:
    """General scan: ``mode`` is ``"exclusive"`` or ``"inclusive"``."""


def select(
    group: ThreadGroup,
    items: Any,
    flags: Any,
    /,
    *,
    valid_items: Any = None,
    temp_storage: TempStorage | None = None,
) -> tuple[Any, Any]:
    """The flagged items of the group's tile, moved to its front in their order (stream compaction)."""


def shuffle(
    group: ThreadGroup,
    value: ThreadData,
    /,
    *,
    mode: _ShuffleMode = "down",
    distance: int = 1,
    temp_storage: TempStorage | None = None,
) -> ThreadData:
    """Shift the block's blocked tile by one position, or (qualified) move one scalar per thread."""


def store(
    group: ThreadGroup,
    destination: Any,
    value: Any,
    /,
    *,
    algorithm: _LoadStoreAlgorithm = "direct",
    valid_items: int | None = None,
    offset: int | None = None,
    temp_storage: TempStorage | None = None,
) -> None:
    """Store ``value`` (a ThreadData, or a scalar as one item per thread) to the group's tile."""


def sum(
    group: ThreadGroup,
    value: Any,
    /,
    *,
    broadcast: bool = True,
    valid_items: int | None = None,
    algorithm: _ReduceAlgorithm | None = None,
    head_flags: Any = None,
    compact: bool = False,
    temp_storage: TempStorage | None = None,
) -> Any:
    """``reduce(group, value, binary_op="sum", ...)``: the sum of every member's value (scalar or ThreadData)."""


def this_block() -> ThreadGroup:
    """All threads of the caller's thread block."""


def this_cluster() -> ThreadGroup:
    """All blocks of the caller's thread-block cluster (compute capability 9.0+)."""


def this_grid() -> ThreadGroup:
    """All threads of the launch (queries only)."""


def this_thread() -> ThreadGroup:
    """The calling thread as a group (queries and qualified reduce only)."""


def this_warp() -> ThreadGroup:
    """The 32 consecutive threads (by linear rank) forming the caller's physical warp."""


def topk_max_keys(
    group: ThreadGroup,
    keys: ThreadData,
    /,
    *,
    k: Any,
    valid_items: Any = None,
    temp_storage: TempStorage | None = None,
) -> ThreadData:
    """Select the ``k`` largest keys of each group's tile (read in blocked order)."""


def topk_max_pairs(
    group: ThreadGroup,
    keys: ThreadData,
    values: ThreadData,
    /,
    *,
    k: Any,
    valid_items: Any = None,
    temp_storage: TempStorage | None = None,
) -> tuple[ThreadData, ThreadData]:
    """Select the ``k`` largest keys of each group's tile (read in blocked order); each value moves with its key."""


def topk_min_keys(
    group: ThreadGroup,
    keys: ThreadData,
    /,
    *,
    k: Any,
    valid_items: Any = None,
    temp_storage: TempStorage | None = None,
) -> ThreadData:
    """Select the ``k`` smallest keys of each group's tile (read in blocked order)."""


def topk_min_pairs(
    group: ThreadGroup,
    keys: ThreadData,
    values: ThreadData,
    /,
    *,
    k: Any,
    valid_items: Any = None,
    temp_storage: TempStorage | None = None,
) -> tuple[ThreadData, ThreadData]:
    """Select the ``k`` smallest keys of each group's tile (read in blocked order); each value moves with its key."""
