"""Where each tile element lives (docs: concepts, "Layouts: blocked, striped, warp-striped") and which arrangement every
operation reads or produces.

The single source of truth for the explainers (``python -m cuda.coop explain``, their SVG pictures) and for the
tests that check them. Pure integer functions, backend-free and import-cheap.

Vocabulary, as on that docs page: ``threads`` is the group size G (T for a block), ``items`` the items per thread K,
``rank`` a member's rank t inside its group, ``slot`` the index i into its payload, ``position`` the tile index p
(``0 <= p < threads * items``). ``warp_size`` is 32 on the hardware; the explainers take smaller ones (e.g. 4) so
that a whole block fits on a screen.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .exchange_shuffle import EXCHANGE_MODES, QUALIFIED_EXCHANGE_MODES, SHUFFLE_MODES
from .load_store import ALGORITHMS as LOAD_STORE_ALGORITHMS

BLOCKED, STRIPED, WARP_STRIPED = "blocked", "striped", "warp_striped"
ARRANGEMENTS = (BLOCKED, STRIPED, WARP_STRIPED)
HARDWARE_WARP_SIZE = 32


def _check_shape(threads: int, items: int) -> None:
    if threads < 1 or items < 1:
        raise ValueError(f"threads and items must be positive; got threads={threads}, items={items}")


def _check_member(rank: int, slot: int, threads: int, items: int) -> None:
    _check_shape(threads, items)
    if not (0 <= rank < threads and 0 <= slot < items):
        raise ValueError(f"rank must be in range({threads}) and slot in range({items}); got rank={rank}, slot={slot}")


def _check_warps(threads: int, warp_size: int) -> None:
    if warp_size < 1 or threads % warp_size:
        raise ValueError(f"the warp-striped layout needs threads to be a multiple of warp_size; got threads={threads}, "
                         f"warp_size={warp_size}")


# ---------------------------------------------------------------- the three layouts
# (docs: concepts, "Layouts: blocked, striped, warp-striped")

def blocked(rank: int, slot: int, threads: int, items: int) -> int:
    """Tile position of slot ``slot`` of member ``rank`` in the blocked layout: ``rank*items + slot``."""
    _check_member(rank, slot, threads, items)
    return rank * items + slot


def striped(rank: int, slot: int, threads: int, items: int) -> int:
    """Tile position in the striped layout: ``rank + slot*threads``."""
    _check_member(rank, slot, threads, items)
    return rank + slot * threads


def warp_striped(rank: int, slot: int, threads: int, items: int, warp_size: int = HARDWARE_WARP_SIZE) -> int:
    """Tile position in the warp-striped layout: each warp owns ``warp_size*items`` consecutive positions, striped
    across its lanes: ``warp_size*items*w + l + warp_size*slot`` with ``w, l = divmod(rank, warp_size)``."""
    _check_member(rank, slot, threads, items)
    _check_warps(threads, warp_size)
    warp, lane = divmod(rank, warp_size)
    return warp_size * items * warp + lane + warp_size * slot


def position(arrangement: str, rank: int, slot: int, threads: int, items: int, *,
             warp_size: int = HARDWARE_WARP_SIZE) -> int:
    """Tile position of slot ``slot`` of member ``rank`` in ``arrangement`` (one of ARRANGEMENTS)."""
    if arrangement == BLOCKED:
        return blocked(rank, slot, threads, items)
    if arrangement == STRIPED:
        return striped(rank, slot, threads, items)
    if arrangement == WARP_STRIPED:
        return warp_striped(rank, slot, threads, items, warp_size)
    raise ValueError(f"arrangement must be one of: {', '.join(ARRANGEMENTS)}; got {arrangement!r}")


def owner(arrangement: str, tile_position: int, threads: int, items: int,
          warp_size: int = HARDWARE_WARP_SIZE) -> tuple[int, int]:
    """``(rank, slot)`` holding tile position ``tile_position`` in ``arrangement``: the inverse of ``position``."""
    _check_shape(threads, items)
    if not 0 <= tile_position < threads * items:
        raise ValueError(f"tile_position must be in range({threads * items}); got {tile_position}")
    if arrangement == BLOCKED:
        rank, slot = divmod(tile_position, items)
        return rank, slot
    if arrangement == STRIPED:
        slot, rank = divmod(tile_position, threads)
        return rank, slot
    if arrangement == WARP_STRIPED:
        _check_warps(threads, warp_size)
        warp, offset = divmod(tile_position, warp_size * items)
        slot, lane = divmod(offset, warp_size)
        return warp * warp_size + lane, slot
    raise ValueError(f"arrangement must be one of: {', '.join(ARRANGEMENTS)}; got {arrangement!r}")


def formula(arrangement: str, threads: int, items: int, warp_size: int = HARDWARE_WARP_SIZE, *,
            verb: str = "holds", member: str = "member") -> str:
    """The rule of ``arrangement`` in words with this shape's numbers, e.g. "slot i of member t holds element
    t*4 + i"; ``verb`` and ``member`` adapt it ("reads", "lane")."""
    if arrangement == BLOCKED:
        return f"slot i of {member} t {verb} element t*{items} + i"
    if arrangement == STRIPED:
        return f"slot i of {member} t {verb} element t + i*{threads}"
    if arrangement == WARP_STRIPED:
        return (f"slot i of {member} t = {warp_size}*w + l (warp w, lane l) {verb} element "
                f"{warp_size * items}*w + l + {warp_size}*i")
    raise ValueError(f"arrangement must be one of: {', '.join(ARRANGEMENTS)}; got {arrangement!r}")


# ---------------------------------------------------------------- groups inside a block

def group_origin(rank: int, group_size: int, items: int) -> int:
    """First tile position of the group that block member ``rank`` belongs to: ``(rank // G) * G * K``
    (docs: operations/load_store, "The tile").

    A warp or logical warp works on its own tile of ``G*K`` elements; the groups' tiles follow one another.
    """
    return (rank // group_size) * group_size * items


def grouped_position(arrangement: str, rank: int, slot: int, group_size: int, items: int, *,
                     warp_size: int = HARDWARE_WARP_SIZE) -> int:
    """Block-wide tile position of slot ``slot`` of block member ``rank`` when every group of ``group_size``
    members lays out its own tile in ``arrangement``."""
    return group_origin(rank, group_size, items) + position(arrangement, rank % group_size, slot, group_size, items,
                                                            warp_size=warp_size)


# ---------------------------------------------------------------- load and store (docs: operations/load_store)

@dataclass(frozen=True)
class DataMovement:
    """How a load or store algorithm moves a tile between global memory and registers."""

    memory: str  # arrangement of the global-memory accesses (which element each slot reads or writes)
    registers: str  # arrangement of the payload: what load produces, what store expects
    through_shared_memory: bool  # an exchange in scratch sits between the two


_MOVEMENTS = {
    "direct": DataMovement(BLOCKED, BLOCKED, False),
    "striped": DataMovement(STRIPED, STRIPED, False),
    "vectorize": DataMovement(BLOCKED, BLOCKED, False),  # vector accesses when dtype, K and alignment permit
    "transpose": DataMovement(STRIPED, BLOCKED, True),
    "warp_transpose": DataMovement(WARP_STRIPED, BLOCKED, True),
    "warp_transpose_timesliced": DataMovement(WARP_STRIPED, BLOCKED, True),  # warps take turns in one region
}
assert tuple(_MOVEMENTS) == LOAD_STORE_ALGORITHMS, "a load/store algorithm without its data movement"


def load_store_movement(algorithm: str) -> DataMovement:
    """The data movement of a load/store ``algorithm`` (one of ``load_store.ALGORITHMS``)."""
    try:
        return _MOVEMENTS[algorithm]
    except KeyError:
        raise ValueError(f"algorithm must be one of: {', '.join(LOAD_STORE_ALGORITHMS)}; got {algorithm!r}") from None


# ---------------------------------------------------------------- exchange (docs: operations/exchange_shuffle)

EXCHANGE_ALL_MODES = EXCHANGE_MODES + QUALIFIED_EXCHANGE_MODES
SCATTER_MODES = tuple(m for m in QUALIFIED_EXCHANGE_MODES if m.startswith("scatter_"))
_EXCHANGES = {
    "striped_to_blocked": (STRIPED, BLOCKED),
    "blocked_to_striped": (BLOCKED, STRIPED),
    "warp_striped_to_blocked": (WARP_STRIPED, BLOCKED),
    "blocked_to_warp_striped": (BLOCKED, WARP_STRIPED),
    # Scatter modes read any arrangement: each item's rank is its destination position.
    "scatter_to_blocked": (None, BLOCKED),
    "scatter_to_striped": (None, STRIPED),
    "scatter_to_striped_guarded": (None, STRIPED),
    "scatter_to_striped_flagged": (None, STRIPED),
}
assert tuple(_EXCHANGES) == EXCHANGE_ALL_MODES, "an exchange mode without its arrangements"


def exchange_arrangements(mode: str) -> tuple[str | None, str]:
    """``(input arrangement, output arrangement)`` of an exchange ``mode``; the input is None for scatter modes."""
    try:
        return _EXCHANGES[mode]
    except KeyError:
        raise ValueError(f"mode must be one of: {', '.join(EXCHANGE_ALL_MODES)}; got {mode!r}") from None


def scatter(ranks: Sequence[Sequence[int]], target: str, threads: int, items: int, *,
            guarded: bool = False, flags: Sequence[Sequence[int]] | None = None,
            warp_size: int = HARDWARE_WARP_SIZE) -> list[list[tuple[int, int] | None]]:
    """Result of a scatter exchange: ``result[rank][slot]`` is the ``(rank, slot)`` of the input item that lands
    there, or None for a hole (no item has that destination: unspecified).

    ``ranks[t][i]`` is the destination tile position of input slot i of member t, laid out in ``target``.
    ``guarded``: negative ranks write nothing. ``flags``: only items with a nonzero flag are written.
    """
    result: list[list[tuple[int, int] | None]] = [[None] * items for _ in range(threads)]
    for rank in range(threads):
        for slot in range(items):
            destination = ranks[rank][slot]
            if guarded and destination < 0:
                continue
            if flags is not None and not flags[rank][slot]:
                continue
            to_rank, to_slot = owner(target, destination, threads, items, warp_size)
            result[to_rank][to_slot] = (rank, slot)
    return result


# ---------------------------------------------------------------- shuffle (docs: operations/exchange_shuffle)

SCALAR_SHUFFLE_MODES = ("offset", "rotate")


def shuffle_source(tile_position: int, tile: int, mode: str) -> int | None:
    """Input position that output position ``tile_position`` of a payload shuffle receives, over the blocked tile
    of ``tile`` positions; None where the result is unspecified (nothing wraps)."""
    if mode == "up":
        source = tile_position - 1
    elif mode == "down":
        source = tile_position + 1
    else:
        raise ValueError(f"mode must be one of: {', '.join(SHUFFLE_MODES)}; got {mode!r}")
    return source if 0 <= source < tile else None


def scalar_shuffle_source(rank: int, threads: int, mode: str, distance: int) -> int | None:
    """Member whose scalar member ``rank`` receives from a qualified scalar shuffle; None where unspecified."""
    if mode == "offset":
        source = rank + distance
        return source if 0 <= source < threads else None
    if mode == "rotate":
        if not 1 <= distance < threads:
            raise ValueError(f"rotate needs 1 <= distance < {threads}; got {distance}")
        return (rank + distance) % threads
    raise ValueError(f"mode must be one of: {', '.join(SCALAR_SHUFFLE_MODES)}; got {mode!r}")


# ---------------------------------------------------------------- scans and reductions
# (docs: operations/reduce; operations/reduce_batched; operations/scan)

SCAN_MODES = ("inclusive", "exclusive")


def scan_inputs(tile_position: int, mode: str, origin: int = 0, end: int | None = None,
                reverse: bool = False) -> range:
    """Positions of the blocked tile combined into the scan result at ``tile_position`` (an exclusive scan starts
    from its initial value, then these). ``origin`` and ``end``: the first and one-past-last positions of the run
    scanned (the group's tile, or a segmented scan's segment, ``segment_bounds``); a ``reverse`` scan runs from
    ``end - 1`` down to ``origin`` (docs: operations/scan, "Reverse and segmented scans")."""
    if mode not in SCAN_MODES:
        raise ValueError(f"mode must be one of: {', '.join(SCAN_MODES)}; got {mode!r}")
    inclusive = mode == "inclusive"
    if reverse:
        if end is None:
            raise ValueError("a reverse scan needs the end of the run it scans")
        return range(tile_position + (not inclusive), end)
    return range(origin, tile_position + inclusive)


def segment_bounds(tile_position: int, head_flags: Sequence[int], origin: int, end: int) -> tuple[int, int]:
    """The segment of a segmented scan holding ``tile_position`` within the group's run ``[origin, end)``: from the
    last head flag at or before it (the run's first position always starts one) to the next head flag."""
    start = max((q for q in range(origin + 1, tile_position + 1) if head_flags[q]), default=origin)
    stop = min((q for q in range(tile_position + 1, end) if head_flags[q]), default=end)
    return start, stop


def segment_starts(head_flags: Sequence[int], valid_items: int) -> list[int]:
    """First positions of the segments of one group's tile for a segmented reduction (docs: operations/reduce,
    "Segmented reductions"): position 0 and every flagged position below ``valid_items``, none when it is 0. Segment
    ``j`` runs from ``starts[j]`` to just before ``starts[j + 1]`` (the last one to ``valid_items - 1``)."""
    if not 0 <= valid_items <= len(head_flags):
        raise ValueError(f"valid_items must be between 0 and {len(head_flags)}; got {valid_items}")
    return [p for p in range(valid_items) if p == 0 or head_flags[p]]


def compaction_sources(flags: Sequence[int], valid_items: int, partition: bool) -> list[int | None]:
    """For each position of one group's tile after ``select`` (``partition``): the input position whose item it
    holds, None where unspecified (docs: operations/select). The flagged positions below ``valid_items`` come first,
    in tile order; ``select`` leaves the rest unspecified, ``partition`` puts the other valid positions next, in tile
    order, and keeps every position from ``valid_items`` on in place."""
    if not 0 <= valid_items <= len(flags):
        raise ValueError(f"valid_items must be between 0 and {len(flags)}; got {valid_items}")
    kept = [p for p in range(valid_items) if flags[p]]
    if not partition:
        return [*kept, *[None] * (len(flags) - len(kept))]
    return [*kept, *(p for p in range(valid_items) if not flags[p]), *range(valid_items, len(flags))]


def arg_extreme(values: Sequence[int], largest: bool, valid_items: int | None = None) -> int:
    """The position argmax (``largest``) or argmin reports for one group's tile ``values``: the first occurrence of
    the extreme among the first ``valid_items`` positions (docs: operations/argreduce)."""
    count = len(values) if valid_items is None else valid_items
    if not 1 <= count <= len(values):
        raise ValueError(f"valid_items must be between 1 and {len(values)}; got {valid_items}")
    best = 0
    for position in range(1, count):
        if (values[position] > values[best]) if largest else (values[position] < values[best]):
            best = position
    return best


def reduce_result_defined(rank: int, group_size: int, broadcast: bool = True, partial: bool = False) -> bool:
    """Whether block member ``rank`` receives its group's reduction: rank 0 of the group always; every member when
    broadcasting, except for a partial reduction (``valid_items``), defined in rank 0 only."""
    return rank % group_size == 0 or (broadcast and not partial)


def reduce_inputs(rank: int, group_size: int, items: int, valid_items: int | None = None) -> range:
    """Tile positions combined by the reduction of ``rank``'s group: the whole group tile, or, with ``valid_items``
    (scalars, one item per member), the values of the first ``valid_items`` members."""
    origin = group_origin(rank, group_size, items)
    if valid_items is None:
        return range(origin, origin + group_size * items)
    if items != 1:
        raise ValueError("valid_items applies to scalar values only (one item per member)")
    return range(origin, origin + valid_items)


REDUCE_BATCHED_LAYOUTS = ("striped", "blocked")


def reduce_batched_extent(batches: int, width: int) -> int:
    """Slots per lane of a ``reduce_batched`` result: ``ceil(batches / width)``."""
    return -(-batches // width)


def reduce_batched_batch(lane: int, slot: int, width: int, batches: int, layout: str) -> int | None:
    """Batch whose result slot ``slot`` of lane ``lane`` holds after ``reduce_batched``
    (docs: operations/reduce_batched, "Semantics"); None for slots past the last batch (unspecified). ``layout`` is
    ``"striped"`` or ``"blocked"``."""
    extent = reduce_batched_extent(batches, width)
    if layout == "striped":
        batch = striped(lane, slot, width, extent)
    elif layout == "blocked":
        batch = blocked(lane, slot, width, extent)
    else:
        raise ValueError(f"layout must be one of: {', '.join(REDUCE_BATCHED_LAYOUTS)}; got {layout!r}")
    return batch if batch < batches else None


# ---------------------------------------------------------------- sorts, histogram, run-length decode

def sort_output_arrangement(blocked_to_striped: bool = False) -> str:
    """Sorts and top-k produce blocked output (member t slot i holds the (t*K + i)-th key in order); the qualified
    radix option ``blocked_to_striped=True`` produces striped output."""
    return STRIPED if blocked_to_striped else BLOCKED


def topk_defined_positions(k: int, valid_items: int) -> range:
    """Blocked positions that hold the selected keys after top-k (in unspecified order); the rest are unspecified."""
    return range(min(k, valid_items))


def histogram_bin(rank: int, slot: int, threads: int, bins_per_thread: int) -> int:
    """Bin whose counter slot ``slot`` of member ``rank`` holds: the counters are striped, bin ``t + i*T``."""
    return striped(rank, slot, threads, bins_per_thread)


def decoded_position(rank: int, slot: int, decoded_items: int, window_offset: int = 0) -> int:
    """Decoded-stream position that slot ``slot`` of member ``rank`` receives from a windowed run-length decode:
    member t gets ``window_offset + t*D .. window_offset + t*D + D - 1``
    (docs: operations/run_length_decode, "One window: run_length_decode")."""
    if not 0 <= slot < decoded_items:
        raise ValueError(f"slot must be in range({decoded_items}); got {slot}")
    return window_offset + rank * decoded_items + slot


def run_of(stream_position: int, run_lengths: Sequence[int]) -> int | None:
    """Run (blocked run index) that decoded position ``stream_position`` belongs to; None past the stream's end."""
    end = 0
    for run, length in enumerate(run_lengths):
        end += length
        if stream_position < end:
            return run
    return None


def neighbour(tile_position: int, tile: int, direction: str) -> int | None:
    """Blocked neighbour an adjacent difference or discontinuity compares with: ``p-1`` (``"left"``, heads) or
    ``p+1`` (``"right"``, tails); None at the tile's edge."""
    if direction == "left":
        other = tile_position - 1
    elif direction == "right":
        other = tile_position + 1
    else:
        raise ValueError(f"direction must be 'left' or 'right'; got {direction!r}")
    return other if 0 <= other < tile else None
