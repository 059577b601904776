"""Explainers of the data-movement operations: load, store, exchange, shuffle, broadcast, select, partition."""
from __future__ import annotations

import argparse
from collections.abc import Callable

from .._markers.records import LOGICAL_WARP_WIDTHS
from .._semantics import layouts
from .._semantics.exchange_shuffle import EXCHANGE_MODES, QUALIFIED_EXCHANGE_MODES, SHUFFLE_MODES
from .._semantics.load_store import BLOCK_ONLY as BLOCK_ONLY_ALGORITHMS
from .render import Cell, Panel, Picture
from .shapes import ExplainError, Shape, element, panel, sample, teaching_note, values

# ---------------------------------------------------------------- load, store

def explain_load_store(op: str, shape: Shape, args: argparse.Namespace) -> Picture:
    algorithm = args.algorithm
    if shape.group == "warp" and algorithm in BLOCK_ONLY_ALGORITHMS:
        raise ExplainError(f"{op} algorithm {algorithm!r} works on blocks only; use --group block")
    movement = layouts.load_store_movement(algorithm)
    if movement.memory == layouts.WARP_STRIPED and shape.threads % shape.warp_size:
        raise ExplainError(f"{op} algorithm {algorithm!r} needs a block of complete warps: --threads must be a "
                           f"multiple of --warp-size {shape.warp_size}")

    def holding(arrangement: str) -> Callable[[int, int], Cell]:
        return lambda rank, slot: element(shape.position(arrangement, rank, slot))

    registers = holding(movement.registers)
    memory = holding(movement.memory)
    reg_rule, reg = shape.rule(movement.registers), movement.registers
    panels: tuple[Panel, ...]
    if op == "load":
        if movement.through_shared_memory:
            panels = (
                panel(f"reads global memory, {movement.memory}: {shape.rule(movement.memory, 'reads')}", shape,
                      memory),
                panel(f"registers after the exchange through shared memory, {reg}: {reg_rule}", shape, registers),
            )
        else:
            panels = (panel(f"registers after the load, {reg}, read straight from global memory: {reg_rule}", shape,
                            registers),)
    else:
        if movement.through_shared_memory:
            panels = (
                panel(f"registers before the store, {reg} (what algorithm={algorithm!r} expects): {reg_rule}",
                      shape, registers),
                panel(f"after the exchange through shared memory, {movement.memory}: "
                      f"{shape.rule(movement.memory, 'writes')}", shape, memory),
            )
        else:
            panels = (panel(f"registers before the store, {reg}, written straight to global memory: {reg_rule}",
                            shape, registers),)
    notes = []
    if algorithm == "vectorize":
        notes.append("vectorize reads like direct, with vector loads when the dtype, items and alignment permit.")
    if algorithm == "warp_transpose_timesliced":
        notes.append("The warps take turns through one warp-sized region of shared memory; the result is the same.")
    if op == "load":
        notes.append("Cells: the tile element (offset + cell) each slot holds.")
    else:
        notes.append("Cells: the tile element (offset + cell) each slot stands for.")
    title = (f'coop.{op}({shape.group_expression()}, {"src, items" if op == "load" else "dst, items"}, '
             f'algorithm="{algorithm}")  # {shape.describe()}')
    return Picture(title, panels, shape.tile, tuple(notes) + teaching_note(shape, movement.memory ==
                                                                           layouts.WARP_STRIPED))


# ---------------------------------------------------------------- exchange, shuffle

def explain_exchange(op: str, shape: Shape, args: argparse.Namespace) -> Picture:
    mode = args.mode
    source, target = layouts.exchange_arrangements(mode)
    if shape.group == "warp" and mode not in EXCHANGE_MODES:
        raise ExplainError(f"exchange mode {mode!r} works on blocks only; warp groups take: "
                           f"{', '.join(EXCHANGE_MODES)}")
    uses_warps = layouts.WARP_STRIPED in (source, target)
    if uses_warps and shape.threads % shape.warp_size:
        raise ExplainError(f"exchange mode {mode!r} needs a block of complete warps: --threads must be a multiple of "
                           f"--warp-size {shape.warp_size}")
    notes = ["Cells: the tile element each slot holds; colours follow the data."]
    panels: tuple[Panel, ...]
    if source is not None:
        panels = (
            panel(f"before, {source}: {shape.rule(source)}", shape,
                  lambda r, s: element(shape.position(source, r, s))),
            panel(f"after, {target}: {shape.rule(target)}", shape,
                  lambda r, s: element(shape.position(target, r, s))),
        )
    else:
        tile = shape.tile
        guarded = mode == "scatter_to_striped_guarded"
        ranks = values(args.ranks, tile, "ranks",
                       lambda: [(-1 if guarded and p % 2 else tile - 1 - p) for p in range(tile)])
        flags = None
        if mode == "scatter_to_striped_flagged":
            flags = values(args.flags, tile, "flags", lambda: [int(p % 2 == 0) for p in range(tile)])
        for rank_value in ranks:
            if not (guarded and rank_value < 0) and not 0 <= rank_value < tile:
                raise ExplainError(f"--ranks values must be tile positions in range({tile})"
                                   + (" or negative (skipped)" if guarded else "") + f"; got {rank_value}")
        k = shape.items
        def by_member(tile_values: list[int]) -> list[list[int]]:  # blocked list -> [member][slot]
            return [[tile_values[layouts.blocked(t, i, shape.threads, k)] for i in range(k)]
                    for t in range(shape.threads)]

        grid_ranks = by_member(ranks)
        grid_flags = None if flags is None else by_member(flags)
        destinations = [p for p, f in zip(ranks, flags or [1] * tile, strict=True) if f and p >= 0]
        if len(set(destinations)) != len(destinations):
            raise ExplainError("--ranks must not send two items to one position (ranks of written items are unique)")
        landed = layouts.scatter(grid_ranks, target, shape.threads, k, guarded=guarded, flags=grid_flags,
                                 warp_size=shape.warp_size)

        def rank_cell(r: int, s: int) -> Cell:
            p = layouts.blocked(r, s, shape.threads, k)
            skipped = (guarded and ranks[p] < 0) or (flags is not None and not flags[p])
            return Cell(str(ranks[p]), None if skipped else p)

        def landed_cell(r: int, s: int) -> Cell:
            origin = landed[r][s]
            return element(None if origin is None else layouts.blocked(origin[0], origin[1], shape.threads, k))

        panels = (
            panel(f"before (any arrangement; shown blocked): {shape.rule(layouts.BLOCKED)}", shape,
                  lambda r, s: element(layouts.blocked(r, s, shape.threads, k))),
            panel("ranks: the destination tile position of each item" + (
                "; an item whose valid_flag is 0 writes nothing" if flags is not None else
                "; a negative rank writes nothing" if guarded else ""), shape, rank_cell),
            panel(f"after, {target}: the item of rank q lands at tile position q; "
                  f"{shape.rule(target).replace('holds element', 'holds position')}", shape, landed_cell),
        )
        notes.append("Positions no item was sent to are unspecified (-). Scatter modes are cuda.coop.numba_mlir "
                     "only.")
    if mode in QUALIFIED_EXCHANGE_MODES and source is not None:
        notes.append("Warp-striped modes are cuda.coop.numba_mlir only.")
    title = f'coop.exchange({shape.group_expression()}, items, mode="{mode}")  # {shape.describe()}'
    return Picture(title, panels, shape.tile, tuple(notes) + teaching_note(shape, uses_warps))


def explain_shuffle(op: str, shape: Shape, args: argparse.Namespace) -> Picture:
    mode, distance = args.mode, args.distance
    if mode in SHUFFLE_MODES:
        if distance != 1:
            raise ExplainError("payload shuffles (up, down) move by exactly one position: --distance 1")
        tile = shape.tile
        panels = (
            panel(f"before, blocked: {shape.rule(layouts.BLOCKED)}", shape,
                  lambda r, s: element(layouts.blocked(r, s, shape.threads, shape.items))),
            panel(f"after {mode}: position p holds the input at p{'-' if mode == 'up' else '+'}1 "
                  "(across member boundaries; nothing wraps)", shape,
                  lambda r, s: element(layouts.shuffle_source(layouts.blocked(r, s, shape.threads, shape.items),
                                                                tile, mode))),
        )
        title = f'coop.shuffle(block, items, mode="{mode}")  # {shape.describe()}'
        notes: tuple[str, ...] = ("Cells: the input tile element each slot holds; - is unspecified.",)
    else:
        if shape.items != 1:
            raise ExplainError(f"shuffle mode {mode!r} moves one scalar per member: use --items 1")
        try:
            sources = [layouts.scalar_shuffle_source(r, shape.threads, mode, distance) for r in range(shape.threads)]
        except ValueError as exc:
            raise ExplainError(str(exc)) from None
        panels = (
            panel("before: member t holds its scalar x[t]", shape, lambda r, s: element(r), header="value"),
            panel(f"after {mode} by {distance}: member t holds "
                  + (f"x[(t + {distance}) % {shape.threads}]" if mode == "rotate" else
                     f"x[t + {distance}] (unspecified outside the block)"),
                  shape, lambda r, s: element(sources[r]), header="value"),
        )
        title = (f'numba_coop.shuffle(block, x, mode="{mode}", distance={distance})  # {shape.threads} threads, '
                 "one scalar each")
        notes = ("Cells: the member whose scalar each member holds. Scalar shuffles are cuda.coop.numba_mlir only.",)
    return Picture(title, panels, shape.tile, notes)


# ---------------------------------------------------------------- broadcast, select, partition

def _operand(shape: Shape) -> str:
    return "x" if shape.items == 1 else "items"


def explain_broadcast(op: str, shape: Shape, args: argparse.Namespace) -> Picture:
    source = args.src_rank
    if not 0 <= source < shape.group_size:
        raise ExplainError(f"--src-rank must be between 0 and {shape.group_size - 1} (the group's ranks)")

    def after(r: int, s: int) -> Cell:
        return element(shape.position(layouts.BLOCKED, r - r % shape.group_size + source, s))

    who = f"member {source}" if shape.group == "block" else f"lane {source} of its group"
    panels = (
        panel(f"before, blocked: {shape.rule(layouts.BLOCKED)}", shape,
              lambda r, s: element(shape.position(layouts.BLOCKED, r, s))),
        panel(f"after: every member receives {who}'s value (slot i holds that member's slot i)", shape, after),
    )
    title = f"coop.broadcast({shape.group_expression()}, {_operand(shape)}, src_rank={source})  # {shape.describe()}"
    notes = ("Cells: the tile element each slot holds; the bits arrive unchanged (NaN payloads and -0.0 too).",
             *teaching_note(shape, shape.group == "warp"))
    return Picture(title, panels, shape.tile, notes)


def explain_compaction(op: str, shape: Shape, args: argparse.Namespace) -> Picture:
    partition, group_tile = op == "partition", shape.group_size * shape.items
    if shape.group == "warp" and shape.warp_size not in LOGICAL_WARP_WIDTHS:
        raise ExplainError(f"{op} takes logical warps of {', '.join(map(str, LOGICAL_WARP_WIDTHS))} lanes "
                           "(--warp-size)")
    valid = group_tile if args.valid_items is None else args.valid_items
    if not 0 <= valid <= group_tile:
        raise ExplainError(f"--valid-items must be between 0 and {group_tile} (the group's tile)")
    flags = values(args.flags, shape.tile, "flags", lambda: [int(v < 2) for v in sample(shape.tile, 5, 11)])
    sources: list[int | None] = []
    counts: list[int] = []
    for origin in range(0, shape.tile, group_tile):
        tile_flags = flags[origin:origin + group_tile]
        sources += [None if p is None else origin + p for p in layouts.compaction_sources(tile_flags, valid, partition)]
        counts.append(sum(1 for flag in tile_flags[:valid] if flag))

    def before(r: int, s: int) -> Cell:
        p = shape.position(layouts.BLOCKED, r, s)
        return Cell(f"{p}*" if flags[p] else str(p), p)

    def after(r: int, s: int) -> Cell:
        return element(sources[shape.position(layouts.BLOCKED, r, s)])

    rule = ("later positions unspecified" if not partition else
            "then the other valid items in tile order; positions from valid_items on keep their own item")
    panels = (
        panel(f"before, blocked: {shape.rule(layouts.BLOCKED)} (p*: a non-zero flag)", shape, before),
        panel(f"after: positions below count hold the flagged valid items in tile order; {rule}", shape, after),
        panel("count: the number of kept items, in every member of the group", shape,
              lambda r, s: Cell(str(counts[r // shape.group_size])), columns=1, header="count"),
    )
    options = "" if args.valid_items is None else f", valid_items={valid}"
    title = (f"result, count = coop.{op}({shape.group_expression()}, {_operand(shape)}, flags{options})  # "
             f"{shape.describe()}")
    notes = ["Cells after: the tile element each position holds; - is unspecified. Each group compacts its own "
             "tile.",
             *(["Flags at positions from valid_items on are ignored."] if args.valid_items is not None else []),
             *teaching_note(shape, shape.group == "warp")]
    return Picture(title, panels, shape.tile, tuple(notes))
