"""cuda.coop.cutlass: the CUTLASS CuTe DSL backend and its qualified API.

Type stubs generated from the live markers by ``python -m cuda.coop._stubs --write``; do not edit by hand.
"""

from dataclasses import dataclass
from typing import Any, Callable, Literal, TypeAlias

from cuda.coop import (
    CoopBuildError as CoopBuildError,
    CoopCompilerContextRequiredError as CoopCompilerContextRequiredError,
    CoopError as CoopError,
    CoopIndexError as CoopIndexError,
    CoopTypeError as CoopTypeError,
    CoopUnsupportedError as CoopUnsupportedError,
    CoopValueError as CoopValueError,
    CudaCoopAutoRegistrationWarning as CudaCoopAutoRegistrationWarning,
    TempStorage as TempStorage,
    TempStorageLike as TempStorageLike,
    ThreadDataLike as ThreadDataLike,
    ThreadGroup as ThreadGroup,
    this_block as this_block,
    this_cluster as this_cluster,
    this_grid as this_grid,
    this_thread as this_thread,
    this_warp as this_warp,
)

__all__ = [
    "CompiledKernel",
    "CoopBuildError",
    "CoopCompilerContextRequiredError",
    "CoopError",
    "CoopIndexError",
    "CoopTypeError",
    "CoopUnsupportedError",
    "CoopValueError",
    "CudaCoopAutoRegistrationWarning",
    "StatefulFunction",
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
    "compile_kernel",
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
_HistogramAlgorithm: TypeAlias = Literal["atomic", "sort"]
_LoadStoreAlgorithm: TypeAlias = Literal[
    "direct",
    "striped",
    "vectorize",
    "transpose",
    "warp_transpose",
    "warp_transpose_timesliced",
]
_QualifiedExchangeMode: TypeAlias = Literal[
    "striped_to_blocked",
    "blocked_to_striped",
    "warp_striped_to_blocked",
    "blocked_to_warp_striped",
    "scatter_to_blocked",
    "scatter_to_striped",
    "scatter_to_striped_guarded",
    "scatter_to_striped_flagged",
]
_QualifiedShuffleMode: TypeAlias = Literal["up", "down", "offset", "rotate"]
_ReduceAlgorithm: TypeAlias = Literal["warp_reductions", "raking", "raking_commutative_only"]
_ScanAlgorithm: TypeAlias = Literal["raking", "raking_memoize", "warp_scans"]
_ScanMode: TypeAlias = Literal["exclusive", "inclusive"]


__version__: str


@dataclass
class CompiledKernel:
    """A kernel built for one launch shape: its cubin and what it uses."""

    cubin: bytes
    name: str
    cpp_source: str
    registers: int
    shared_memory_bytes: int
    local_memory_bytes: int
    dynamic_shared_memory_bytes: int = 0
    metadata: dict[str, Any] = ...

    def sass(self) -> str:
        """Disassembly (needs cuobjdump or nvdisasm from the CUDA toolkit)."""


class StatefulFunction:
    """A block prefix callback with per-thread state, for ``prefix_op=`` of qualified block scans."""

    def __init__(self, op: Any, dtype: Any, name: str | None = None) -> None: ...


class ThreadData:
    """``ThreadData(items_per_thread, dtype=None, *, alignment=None)``: a payload in a CuTe kernel, ``items_per_thread``
    items of one dtype in a register tensor (``.fragment``), as ``cuda.coop.ThreadData``.
    """

    def __new__(cls, items_per_thread: int, dtype: Any = None, *, alignment: int | None = None) -> ThreadData: ...

    @property
    def items_per_thread(self) -> int: ...

    @property
    def dtype(self) -> Any:
        """The CuTe numeric type of the items (None while not inferred)."""

    @property
    def fragment(self) -> Any:
        """The register tensor holding the items (1-D, static extent)."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Any: ...

    def __getitem__(self, index: Any) -> Any: ...

    def __setitem__(self, index: Any, value: Any) -> None: ...

    @classmethod
    def from_fragment(cls, tensor: Any) -> ThreadData:
        """Wrap a 1-D register tensor of static extent (no copy): calls read and write its items."""


def adjacent_difference(
    group: ThreadGroup,
    values: ThreadData | Any,
    /,
    *,
    direction: _AdjacentDirection = "left",
    valid_items: Any = None,
    tile_predecessor_item: Any = None,
    tile_successor_item: Any = None,
    temp_storage: TempStorage | None = None,
    difference_op: Any = None,
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
    broadcast: Any = None,
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
    broadcast: Any = None,
) -> tuple[Any, Any]:
    """The smallest value of the group's tile and the index of its first occurrence."""


def broadcast(group: ThreadGroup, value: Any, /, *, src_rank: int = 0, temp_storage: TempStorage | None = None) -> Any:
    """Every member of the group receives member ``src_rank``'s value (a scalar, a ThreadData or a tuple of them)."""


def compile_kernel(launcher: Any, *args: Any, target: str = "sm_90a") -> CompiledKernel:
    """Trace and compile ``launcher`` (a ``@cute.jit`` function launching one ``@cute.kernel``) for ``args`` on
    ``target`` without launching it, and report the kernel's cubin (registers, shared and local memory, SASS).
    """


def discontinuity(
    group: ThreadGroup,
    values: ThreadData | Any,
    /,
    *,
    mode: _DiscontinuityMode = "heads",
    tile_predecessor_item: Any = None,
    tile_successor_item: Any = None,
    temp_storage: TempStorage | None = None,
    flag_op: Any = None,
) -> ThreadData | tuple[ThreadData, ThreadData]:
    """Flag where the block's blocked tile changes value; returns fresh int32 payloads of 1/0 flags."""


def exchange(
    group: ThreadGroup,
    value: ThreadData | Any,
    /,
    *,
    mode: _QualifiedExchangeMode = "striped_to_blocked",
    temp_storage: TempStorage | None = None,
    ranks: Any = None,
    valid_flags: Any = None,
    warp_time_slicing: Any = None,
) -> ThreadData:
    """Rearrange a payload between layouts; returns a fresh payload."""


def exclusive_scan(
    group: ThreadGroup,
    value: Any,
    state: Any = None,
    /,
    *,
    scan_op: Any = None,
    initial_value: Any = None,
    algorithm: _ScanAlgorithm | None = None,
    reverse: bool = False,
    head_flags: Any = None,
    temp_storage: TempStorage | None = None,
    prefix_op: Any = None,
    valid_items: Any = None,
    aggregate_output: Any = None,
) -> Any:
    """Exclusive scan with ``scan_op``; non-sum operators need ``initial_value``."""


def exclusive_sum(
    group: ThreadGroup,
    value: Any,
    state: Any = None,
    /,
    *,
    algorithm: _ScanAlgorithm | None = None,
    reverse: bool = False,
    head_flags: Any = None,
    temp_storage: TempStorage | None = None,
    prefix_op: Any = None,
    valid_items: Any = None,
    aggregate_output: Any = None,
) -> Any:
    """Exclusive prefix sum: position ``p`` receives the sum of positions ``< p`` (0 first)."""


def histogram(
    group: ThreadGroup,
    samples: ThreadData | Any,
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
    state: Any = None,
    /,
    *,
    scan_op: Any = None,
    algorithm: _ScanAlgorithm | None = None,
    reverse: bool = False,
    head_flags: Any = None,
    temp_storage: TempStorage | None = None,
    prefix_op: Any = None,
    valid_items: Any = None,
    aggregate_output: Any = None,
) -> Any:
    """Inclusive scan with ``scan_op``."""


def inclusive_sum(
    group: ThreadGroup,
    value: Any,
    state: Any = None,
    /,
    *,
    algorithm: _ScanAlgorithm | None = None,
    reverse: bool = False,
    head_flags: Any = None,
    temp_storage: TempStorage | None = None,
    prefix_op: Any = None,
    valid_items: Any = None,
    aggregate_output: Any = None,
) -> Any:
    """Inclusive prefix sum: position ``p`` receives the sum of positions ``<= p``."""


def load(
    group: ThreadGroup,
    source: Any,
    output: ThreadData | Any,
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
    keys: ThreadData | Any,
    /,
    *,
    descending: bool = False,
    valid_items: Any = None,
    oob_default: Any = None,
    temp_storage: TempStorage | None = None,
    compare_op: Any = None,
) -> ThreadData:
    """Sort each group's tile of keys; returns a fresh payload in blocked order (not guaranteed stable)."""


def merge_sort_pairs(
    group: ThreadGroup,
    keys: ThreadData | Any,
    values: ThreadData | Any,
    /,
    *,
    descending: bool = False,
    valid_items: Any = None,
    oob_default: Any = None,
    temp_storage: TempStorage | None = None,
    compare_op: Any = None,
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
    keys: ThreadData | Any,
    /,
    *,
    begin_bit: int = 0,
    end_bit: int | None = None,
    radix_bits: int | None = None,
    descending: bool = False,
    temp_storage: TempStorage | None = None,
    exclusive_digit_prefix: Any = None,
) -> ThreadData:
    """Rank each key of the block's tile by one digit (1-8 bits) of its ordered representation."""


def radix_sort_keys(
    group: ThreadGroup,
    keys: ThreadData | Any,
    /,
    *,
    begin_bit: Any = 0,
    end_bit: Any = None,
    descending: bool = False,
    valid_items: Any = None,
    oob_default: Any = None,
    temp_storage: TempStorage | None = None,
    blocked_to_striped: Any = None,
) -> ThreadData:
    """Stable radix sort of the block's tile by bits ``[begin_bit, end_bit)`` of the ordered key representation."""


def radix_sort_pairs(
    group: ThreadGroup,
    keys: ThreadData | Any,
    values: ThreadData | Any,
    /,
    *,
    begin_bit: Any = 0,
    end_bit: Any = None,
    descending: bool = False,
    valid_items: Any = None,
    oob_default: Any = None,
    temp_storage: TempStorage | None = None,
    blocked_to_striped: Any = None,
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
    value: ThreadData | Any,
    /,
    *,
    binary_op: str | Callable[[Any, Any], Any] | None = None,
    output_layout: _BatchedLayout = "striped",
    temp_storage: TempStorage | None = None,
) -> ThreadData:
    """Reduce ``B`` independent batches across a (logical) warp; slot ``b`` of every lane feeds batch ``b``."""


def run_length_decode(
    group: ThreadGroup,
    run_values: ThreadData | Any,
    run_lengths: ThreadData | Any,
    /,
    *,
    decoded_items_per_thread: int,
    decoded_window_offset: Any = 0,
    temp_storage: TempStorage | None = None,
    total_decoded_size: Any = None,
    relative_offsets: Any = None,
    decoded_offset_dtype: Any = None,
) -> ThreadData:
    """Decode one window of a block's run-length encoded stream; returns a fresh payload of run values."""


def run_length_decode_into(
    group: ThreadGroup,
    run_values: ThreadData | Any,
    run_lengths: ThreadData | Any,
    destination: Any,
    /,
    *,
    decoded_items_per_thread: int,
    destination_offset: Any = 0,
    temp_storage: TempStorage | None = None,
    decoded_offset_dtype: Any = None,
    relative_offsets_destination: Any = None,
) -> Any:
    """Decode a block's whole run-length encoded stream into ``destination``; returns the total as ``uint32``."""


def scan(
    group: ThreadGroup,
    value: Any,
    state: Any = None,
    /,
    *,
    mode: _ScanMode = "exclusive",
    scan_op: Any = None,
    initial_value: Any = None,
    algorithm: _ScanAlgorithm | None = None,
    reverse: bool = False,
    head_flags: Any = None,
    temp_storage: TempStorage | None = None,
    prefix_op: Any = None,
    valid_items: Any = None,
    aggregate_output: Any = None,
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
    value: ThreadData | Any,
    /,
    *,
    mode: _QualifiedShuffleMode = "down",
    distance: int = 1,
    temp_storage: TempStorage | None = None,
) -> ThreadData | Any:
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


def topk_max_keys(
    group: ThreadGroup,
    keys: ThreadData | Any,
    /,
    *,
    k: Any,
    valid_items: Any = None,
    temp_storage: TempStorage | None = None,
) -> ThreadData:
    """Select the ``k`` largest keys of each group's tile (read in blocked order)."""


def topk_max_pairs(
    group: ThreadGroup,
    keys: ThreadData | Any,
    values: ThreadData | Any,
    /,
    *,
    k: Any,
    valid_items: Any = None,
    temp_storage: TempStorage | None = None,
) -> tuple[ThreadData, ThreadData]:
    """Select the ``k`` largest keys of each group's tile (read in blocked order); each value moves with its key."""


def topk_min_keys(
    group: ThreadGroup,
    keys: ThreadData | Any,
    /,
    *,
    k: Any,
    valid_items: Any = None,
    temp_storage: TempStorage | None = None,
) -> ThreadData:
    """Select the ``k`` smallest keys of each group's tile (read in blocked order)."""


def topk_min_pairs(
    group: ThreadGroup,
    keys: ThreadData | Any,
    values: ThreadData | Any,
    /,
    *,
    k: Any,
    valid_items: Any = None,
    temp_storage: TempStorage | None = None,
) -> tuple[ThreadData, ThreadData]:
    """Select the ``k`` smallest keys of each group's tile (read in blocked order); each value moves with its key."""
