"""Explainers of the computing operations: scans, reductions, sorts, histogram, run-length decode, neighbours."""
from __future__ import annotations

import argparse
import itertools
from collections.abc import Callable, Sequence

from .._markers import records
from .._semantics import layouts
from .render import UNSPECIFIED, Cell, Picture
from .shapes import ExplainError, Shape, element, panel, sample, values

# ---------------------------------------------------------------- scans and reductions



def _slice(span: range) -> str:
    return f"x[{span.start}:{span.stop}]"


def explain_scan(op: str, shape: Shape, args: argparse.Namespace) -> Picture:
    mode = records.of(op).fixed("mode") or getattr(args, "mode", "exclusive")
    reverse = bool(getattr(args, "reverse", False))
    heads = getattr(args, "head_flags", None)
    if shape.group == "warp" and shape.items != 1:
        raise ExplainError(f"{op} on warp groups takes one scalar per lane: use --items 1")
    if heads is not None and len(heads) != shape.tile:
        raise ExplainError(f"--head-flags needs {shape.tile} flags (one per tile position, blocked order); got "
                           f"{len(heads)}")
    start = "0" if op.endswith("_sum") else "initial_value"

    def run_of(r: int, p: int) -> tuple[int, int]:
        origin = layouts.group_origin(r, shape.group_size, shape.items)
        end = origin + shape.group_size * shape.items
        return (origin, end) if heads is None else layouts.segment_bounds(p, heads, origin, end)

    def result(r: int, s: int) -> Cell:
        p = shape.position(layouts.BLOCKED, r, s)
        span = layouts.scan_inputs(p, mode, *run_of(r, p), reverse=reverse)
        return Cell(_slice(span) if len(span) else start, p)

    def before(r: int, s: int) -> Cell:
        p = shape.position(layouts.BLOCKED, r, s)
        starts = heads is not None and bool(heads[p])
        return Cell(f"|{p}" if starts else str(p), p)

    what = "sum" if op.endswith("_sum") else "scan_op combination"
    first, run = ("last", "x[p+1:end]") if reverse else ("first", "x[origin:p]")
    scope = "segment's" if heads is not None else "group's"
    inclusive = "x[p:end]" if reverse else "x[origin:p+1]"
    rule = (f"the {what} of {inclusive}" if mode == "inclusive" else
            f"{start} combined with {run} ({start} alone at the {scope} {first} position)")
    direction = ", reverse" if reverse else ""
    panels = (
        panel(f"before, blocked: {shape.rule(layouts.BLOCKED)}", shape, before),
        panel(f"after ({mode}{direction}): position p holds {rule}", shape, result),
    )
    options = (", reverse=True" if reverse else "") + (", head_flags=flags" if heads is not None else "")
    title = f"coop.{op}({shape.group_expression()}, items{options})  # {shape.describe()}"
    bounds = "the segment's first element, end: one past its last" if heads is not None else (
        "the group's first element, end: one past its last")
    notes = [f"Cells after: x[a:b] is the elements a .. b-1 combined in order (origin: {bounds})."]
    if heads is not None:
        notes.append("Cells before: |p marks a non-zero head flag, which starts a segment; the group's first "
                     "position always starts one.")
    return Picture(title, panels, shape.tile, tuple(notes))


def explain_reduce(op: str, shape: Shape, args: argparse.Namespace) -> Picture:
    if args.head_flags is not None:
        return _explain_segment_totals(op, shape, args, args.head_flags)
    if args.compact:
        raise ExplainError(f"{op} --compact needs --head-flags (a segmented reduction)")
    valid = args.valid_items
    if valid is not None and (shape.items != 1 or not 1 <= valid <= shape.group_size):
        raise ExplainError(f"{op} valid_items needs --items 1 (scalars) and 1 <= valid_items <= "
                           f"{shape.group_size}")

    def result(r: int, s: int) -> Cell:
        if not layouts.reduce_result_defined(r, shape.group_size, not args.no_broadcast, valid is not None):
            return Cell(UNSPECIFIED)
        span = layouts.reduce_inputs(r, shape.group_size, shape.items, valid)
        return Cell(_slice(span), span.start)

    panels = (
        panel(f"before, any arrangement (shown blocked): {shape.rule(layouts.BLOCKED)}", shape,
              lambda r, s: element(shape.position(layouts.BLOCKED, r, s))),
        panel("after: the scalar each member receives", shape, result, columns=1, header="result"),
    )
    options = (", broadcast=False" if args.no_broadcast else "") + (
        f", valid_items={valid}" if valid is not None else "")
    title = f"coop.{op}({shape.group_expression()}, items{options})  # {shape.describe()}"
    notes = ["Each member folds its own slots in slot order, then members combine in rank order.",
             "x[a:b]: the elements a .. b-1 combined; - is unspecified."]
    return Picture(title, panels, shape.tile, tuple(notes))


def _explain_segment_totals(op: str, shape: Shape, args: argparse.Namespace, heads: Sequence[int]) -> Picture:
    """reduce/sum with head_flags: each segment's total at its first position, or with compact=True at the front."""
    if shape.group == "warp" and shape.items != 1:
        raise ExplainError(f"{op} with head_flags on warp groups takes one scalar per lane: use --items 1")
    if shape.group == "warp" and shape.warp_size not in records.LOGICAL_WARP_WIDTHS:
        raise ExplainError(f"{op} with head_flags takes logical warps of "
                           f"{', '.join(map(str, records.LOGICAL_WARP_WIDTHS))} lanes (--warp-size)")
    if len(heads) != shape.tile:
        raise ExplainError(f"--head-flags needs {shape.tile} flags (one per tile position, blocked order); got "
                           f"{len(heads)}")
    if args.no_broadcast:
        raise ExplainError(f"{op} with head_flags has no broadcast to turn off: drop --no-broadcast")
    group_tile, compact = shape.group_size * shape.items, bool(args.compact)
    valid = group_tile if args.valid_items is None else args.valid_items
    if not 0 <= valid <= group_tile:
        raise ExplainError(f"--valid-items must be between 0 and {group_tile} (the group's tile)")
    totals: dict[int, range] = {}  # tile position -> the positions its total combines
    counts: list[int] = []
    for origin in range(0, shape.tile, group_tile):
        starts = layouts.segment_starts(heads[origin:origin + group_tile], valid)
        for j, (start, stop) in enumerate(zip(starts, [*starts[1:], valid], strict=True)):
            totals[origin + (j if compact else start)] = range(origin + start, origin + stop)
        counts.append(len(starts))

    def before(r: int, s: int) -> Cell:
        p = shape.position(layouts.BLOCKED, r, s)
        return Cell(f"|{p}" if heads[p] else str(p), p)

    def result(r: int, s: int) -> Cell:
        span = totals.get(shape.position(layouts.BLOCKED, r, s))
        return Cell(UNSPECIFIED) if span is None else Cell(_slice(span), span.start)

    where = ("position j holds the total of the j-th segment" if compact else
             "each segment's first position holds the segment's total")
    panels = [panel(f"before, blocked: {shape.rule(layouts.BLOCKED)} (|p: a non-zero head flag)", shape, before),
              panel(f"after: {where}; other positions unspecified", shape, result)]
    if compact:
        panels.append(panel("count: the number of segments, in every member of the group", shape,
                            lambda r, s: Cell(str(counts[r // shape.group_size])), columns=1, header="count"))
    options = (", compact=True" if compact else "") + (f", valid_items={valid}" if args.valid_items is not None else "")
    results = "totals, count" if compact else "totals"
    operand = "x" if shape.items == 1 else "items"
    title = (f"{results} = coop.{op}({shape.group_expression()}, {operand}, head_flags=flags{options})  # "
             f"{shape.describe()}")
    notes = ["A segment starts at the group's first position and at every non-zero head flag below valid_items, "
             "and ends before the next start.",
             "x[a:b]: the elements a .. b-1 combined in order; - is unspecified."]
    return Picture(title, tuple(panels), shape.tile, tuple(notes))


def explain_reduce_batched(op: str, shape: Shape, args: argparse.Namespace) -> Picture:
    width, batches, layout = shape.warp_size, args.batches, args.output_layout
    if width not in (1, 2, 4, 8, 16, 32):
        raise ExplainError("reduce_batched needs a warp or logical warp of 1, 2, 4, 8, 16 or 32 lanes (--warp-size)")
    if batches < 1:
        raise ExplainError("--batches must be positive")
    shape = Shape(width, batches, width, "warp")
    extent = layouts.reduce_batched_extent(batches, width)

    def after(r: int, s: int) -> Cell:
        batch = layouts.reduce_batched_batch(r, s, width, batches, layout)
        return Cell(UNSPECIFIED) if batch is None else Cell(f"b{batch}", batch)

    rule = (f"slot i of lane r holds batch r + i*{width}" if layout == "striped" else
            f"slot i of lane r holds batch r*{extent} + i")
    panels = (
        panel("before: slot b of every lane contributes to batch b", shape, lambda r, s: Cell(f"b{s}", s)),
        panel(f"after, {layout}, {extent} slot(s) per lane: {rule}", shape, after, columns=extent),
    )
    title = (f'coop.reduce_batched({shape.group_expression()}, items, output_layout="{layout}")  # {width} lanes, '
             f"{batches} batches")
    notes = ("Cells: bN is batch N (its reduction after the call); each result lives in one lane; - is unspecified.",)
    return Picture(title, panels, batches, notes)


def explain_argreduce(op: str, shape: Shape, args: argparse.Namespace) -> Picture:
    largest = op == "argmax"
    group_tile = shape.group_size * shape.items
    valid = args.valid_items
    if valid is not None and not 1 <= valid <= group_tile:
        raise ExplainError(f"--valid-items must be between 1 and {group_tile}")
    data = values(args.values, shape.tile, "values", lambda: sample(shape.tile, max(3, shape.tile // 3), 5))

    def before(r: int, s: int) -> Cell:
        p = shape.position(layouts.BLOCKED, r, s)
        return Cell(str(data[p]), p)

    def result(r: int, s: int) -> Cell:
        origin = layouts.group_origin(r, shape.group_size, shape.items)
        index = layouts.arg_extreme(data[origin:origin + group_tile], largest, valid)
        return Cell(f"{data[origin + index]} @ {index}", origin + index)

    which = "largest" if largest else "smallest"
    panels = (
        panel(f"values before, blocked: {shape.rule(layouts.BLOCKED)}".replace("holds element", "holds the value at "
                                                                               "tile position"), shape, before),
        panel(f"after: every member receives (value, index) of its group's {which} value", shape, result, columns=1,
              header="result"),
    )
    options = f", valid_items={valid}" if valid is not None else ""
    title = f"value, index = coop.{op}({shape.group_expression()}, items{options})  # {shape.describe()}"
    notes = ("Cells after: v @ i is the value v and its index i, the position of its first occurrence in the "
             "group's tile (rank * K + i, blocked); ties keep the smaller index.",)
    return Picture(title, panels, shape.tile, notes)


# ---------------------------------------------------------------- sorts, rank, top-k

def _sorted_origins(keys: Sequence[int], descending: bool, count: int | None = None) -> list[int]:
    """Input positions of the keys in output order: by key, ties in blocked input order (the stable order)."""
    positions = range(len(keys) if count is None else count)
    return sorted(positions, key=lambda p: (-keys[p] if descending else keys[p], p))


def explain_sort(op: str, shape: Shape, args: argparse.Namespace) -> Picture:
    tile, k = shape.tile, shape.items
    merge, radix_rank, topk = op.startswith("merge_sort"), op == "radix_rank", op.startswith("topk")
    if merge and shape.group_size & (shape.group_size - 1):
        raise ExplainError(f"{op} needs a power-of-two number of threads per group; got {shape.group_size}")
    high = 16 if radix_rank else max(2, tile // 2)
    keys = values(args.keys, tile, "keys", lambda: sample(tile, high, 7))
    descending = bool(getattr(args, "descending", False)) or op.startswith("topk_max")
    notes: list[str] = []
    options = ", descending=True" if descending and not topk else ""
    def key_cell(r: int, s: int) -> Cell:
        p = shape.position(layouts.BLOCKED, r, s)
        return Cell(str(keys[p]), p)

    key_rule = shape.rule(layouts.BLOCKED).replace("holds element", "holds the key at tile position")
    input_panel = panel(f"keys before, blocked: {key_rule}", shape, key_cell)
    if radix_rank:
        bits = args.radix_bits
        begin = args.begin_bit
        if not 1 <= bits <= 8:
            raise ExplainError("radix_rank ranks one digit of 1 to 8 bits: --radix-bits")
        digit = [(key >> begin) & ((1 << bits) - 1) for key in keys]
        ranks = [0] * tile
        for out, p in enumerate(_sorted_origins(digit, descending)):
            ranks[p] = out
        rank_panels = (
            panel(f"keys, blocked (digit = bits {begin}..{begin + bits - 1} of the key)", shape,
                  lambda r, s: Cell(str(keys[layouts.blocked(r, s, shape.threads, k)]),
                                     ranks[layouts.blocked(r, s, shape.threads, k)])),
            panel("after: each slot holds the rank of its own key (no data moves): smaller digits first, equal "
                  "digits in blocked order", shape,
                  lambda r, s: Cell(str(ranks[layouts.blocked(r, s, shape.threads, k)]),
                                     ranks[layouts.blocked(r, s, shape.threads, k)])),
        )
        title = f"coop.radix_rank(block, keys, radix_bits={bits}{options})  # {shape.describe()}"
        notes.append("Colours: the rank, i.e. where a sort by this digit would put the key.")
        return Picture(title, rank_panels, tile, tuple(notes))

    arrangement = layouts.sort_output_arrangement(bool(getattr(args, "blocked_to_striped", False)))
    group_tile = shape.group_size * k
    valid = getattr(args, "valid_items", None)
    valid = group_tile if valid is None else valid
    if not 0 <= valid <= group_tile:
        raise ExplainError(f"--valid-items must be between 0 and {group_tile}")
    if topk and not 0 <= args.k <= group_tile:  # each group selects from its own tile
        raise ExplainError(f"--k must be between 0 and {group_tile}")
    # Output order of each group's tile, as input positions.
    output: dict[int, int | None] = {}
    for origin in range(0, tile, group_tile):
        group_keys = keys[origin:origin + group_tile]
        count = min(valid, len(group_keys))
        order = [origin + p for p in _sorted_origins(group_keys, descending, count)]
        if topk:
            order = order[:min(args.k, count)]
        for out in range(group_tile):
            output[origin + out] = order[out] if out < len(order) else None

    def after(r: int, s: int) -> Cell:
        p = shape.position(arrangement, r, s)
        source = output[p]
        return Cell(UNSPECIFIED) if source is None else Cell(str(keys[source]), source)

    if topk:
        which = "largest" if descending else "smallest"
        caption = (f"after: the first min(k, valid_items) = {len(layouts.topk_defined_positions(args.k, valid))} "
                   f"blocked positions hold the {which} keys, in unspecified order (shown sorted)")
        options = f", k={args.k}" + (f", valid_items={valid}" if valid != group_tile else "")
    else:
        caption = (f"after, {arrangement}: {shape.rule(arrangement)}".replace("holds element", "holds sorted position")
                   + (" (descending)" if descending else ""))
        if valid != group_tile:
            options += f", valid_items={valid}, oob_default=..."
        if arrangement == layouts.STRIPED:
            options += ", blocked_to_striped=True"
            notes.append("blocked_to_striped is cuda.coop.numba_mlir only.")
    panels = [input_panel, panel(caption, shape, after)]
    if op.endswith("_pairs"):
        def value_cell(r: int, s: int) -> Cell:
            source = output[shape.position(arrangement, r, s)]
            return Cell(UNSPECIFIED) if source is None else Cell(f"v{source}", source)

        panels.append(panel("values after: each value travels with its key (vP: the value that was at tile "
                            "position P)", shape, value_cell))
    if merge:
        notes.append("Merge sort is not guaranteed stable: equal keys may come out in another order.")
    elif not topk:
        notes.append("Radix sort is stable: equal keys keep their blocked input order.")
    notes.append("Colours: the input position of each key; - is unspecified.")
    operands = "keys, values" if op.endswith("_pairs") else "keys"
    title = f"coop.{op}({shape.group_expression()}, {operands}{options})  # {shape.describe()}"
    return Picture(title, tuple(panels), tile, tuple(notes))


# ---------------------------------------------------------------- histogram, run-length decode, adjacent

def explain_histogram(op: str, shape: Shape, args: argparse.Namespace) -> Picture:
    bins, per_thread, threads = args.bins, args.bins_per_thread, shape.threads
    if bins < 1 or per_thread < 1:
        raise ExplainError("--bins and --bins-per-thread must be positive")
    if threads * per_thread < bins:
        raise ExplainError(f"histogram needs threads * bins_per_thread >= bins ({threads} * {per_thread} < {bins})")
    samples = values(args.samples, shape.tile, "samples", lambda: sample(shape.tile, bins, 3))
    if any(not 0 <= v < bins for v in samples):
        raise ExplainError(f"--samples must be bin indices in range({bins})")
    counts = [samples.count(b) for b in range(bins)]

    def counter(r: int, s: int) -> Cell:
        b = layouts.histogram_bin(r, s, threads, per_thread)
        return Cell(f"b{b}={counts[b]}", b) if b < bins else Cell("0")

    panels = (
        panel("samples, any arrangement (shown blocked): each is a bin index", shape,
              lambda r, s: Cell(str(samples[layouts.blocked(r, s, threads, shape.items)]),
                                 samples[layouts.blocked(r, s, threads, shape.items)])),
        panel(f"counters after, striped: slot i of member t counts bin t + i*{threads} (bN=c: bin N seen c "
              f"times; 0: a slot past the last bin)", shape, counter, columns=per_thread),
    )
    title = (f"coop.histogram(block, samples, bins={bins}, bins_per_thread={per_thread})  # {threads} threads x "
             f"{shape.items} samples")
    notes = ('Store the counters with algorithm="striped" to write the bins in order.',)
    return Picture(title, panels, threads * per_thread, notes)


def explain_run_length_decode(op: str, shape: Shape, args: argparse.Namespace) -> Picture:
    threads, runs_per_thread, decoded, offset = shape.threads, args.runs_per_thread, args.decoded_items, args.offset
    if runs_per_thread < 1 or decoded < 1 or offset < 0:
        raise ExplainError("--runs-per-thread and --decoded-items must be positive, --offset nonnegative")
    count = threads * runs_per_thread
    lengths = values(args.run_lengths, count, "run-lengths",
                     lambda: [(2, 1, 3, 2)[r % 4] if r < count - 2 else 0 for r in range(count)])
    if any(v < 0 for v in lengths) or any(a == 0 and b > 0 for a, b in itertools.pairwise(lengths)):
        raise ExplainError("--run-lengths: positive lengths first, then zero padding (no negative lengths)")
    total = sum(lengths)
    runs = Shape(threads, runs_per_thread, shape.warp_size, "block")
    out = Shape(threads, decoded, shape.warp_size, "block")

    def run_cell(r: int, s: int) -> Cell:
        run = layouts.blocked(r, s, threads, runs_per_thread)
        return Cell(f"r{run}:{lengths[run]}", run if lengths[run] else None)

    def stream(r: int, s: int) -> int:
        return layouts.decoded_position(r, s, decoded, offset)

    def position_cell(r: int, s: int) -> Cell:
        p = stream(r, s)
        run = layouts.run_of(p, lengths)
        return Cell(str(p), run) if run is not None else Cell("0")

    def value_cell(r: int, s: int) -> Cell:
        run = layouts.run_of(stream(r, s), lengths)
        return Cell(f"r{run}", run) if run is not None else Cell("0")

    panels = (
        panel(f"runs, blocked: slot i of member t holds run t*{runs_per_thread} + i (rN:L: run N, length L)", runs,
              run_cell),
        panel(f"decoded window: slot i of member t receives stream position {offset} + t*{decoded} + i "
              f"(0: past the end of the {total}-item stream)", out, position_cell),
        panel("decoded values: the run each position comes from (rN: run_values of run N)", out, value_cell),
    )
    title = (f"coop.run_length_decode(block, run_values, run_lengths, decoded_items_per_thread={decoded}, "
             f"decoded_window_offset={offset})  # {threads} threads x {runs_per_thread} runs")
    note = "Each call decodes one window of threads * decoded_items_per_thread items; move the offset for the next."
    return Picture(title, panels, count, (note,))


def explain_adjacent(op: str, shape: Shape, args: argparse.Namespace) -> Picture:
    tile, boundary = shape.tile, args.boundary
    if op == "adjacent_difference":
        directions = [("after", args.direction)]
    else:
        directions = [(m, {"heads": "left", "tails": "right"}[m]) for m in
                      (("heads", "tails") if args.mode == "heads_and_tails" else (args.mode,))]

    def result(direction: str) -> Callable[[int, int], Cell]:
        edge = "pred" if direction == "left" else "succ"

        def cell(r: int, s: int) -> Cell:
            p = layouts.blocked(r, s, shape.threads, shape.items)
            other = layouts.neighbour(p, tile, direction)
            rhs = f"x{other}" if other is not None else (edge if boundary else None)
            if op == "adjacent_difference":
                return Cell(f"x{p}-{rhs}" if rhs else f"x{p}", p)
            return Cell(f"x{p}!={rhs}" if rhs else "1", p)

        return cell

    panels = [panel(f"before, blocked: {shape.rule(layouts.BLOCKED)}", shape,
                    lambda r, s: element(layouts.blocked(r, s, shape.threads, shape.items)))]
    for name, direction in directions:
        if op == "adjacent_difference":
            caption = (f"after ({direction}): position p holds x[p] - x[p{'-' if direction == 'left' else '+'}1]; "
                       + ("the edge uses the boundary item" if boundary else "the edge is copied"))
        else:
            caption = (f"{name}: int32 flag x[p] != x[p{'-' if direction == 'left' else '+'}1]; "
                       + ("the edge compares with the boundary item" if boundary else "the edge is flagged 1"))
        panels.append(panel(caption, shape, result(direction)))
    if op == "adjacent_difference":
        option = f'direction="{args.direction}"' + (
            (", tile_predecessor_item=pred" if args.direction == "left" else ", tile_successor_item=succ")
            if boundary else "")
    else:
        option = f'mode="{args.mode}"' + (", tile_predecessor_item=pred, tile_successor_item=succ" if boundary
                                          else "")
    title = f"coop.{op}(block, items, {option})  # {shape.describe()}"
    return Picture(title, tuple(panels), tile, ("Neighbours are taken in blocked order, across member boundaries.",))
