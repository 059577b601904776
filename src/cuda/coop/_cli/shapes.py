"""Teaching shapes and grid helpers shared by the explainers."""
from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .._semantics import layouts
from .render import UNSPECIFIED, Cell, Panel


class ExplainError(ValueError):
    """A shape or option the operation does not accept; reported like an argparse usage error."""


@dataclass(frozen=True)
class Shape:
    threads: int
    items: int
    warp_size: int
    group: str  # "block" or "warp" (logical warps of warp_size lanes)

    @property
    def group_size(self) -> int:
        return self.threads if self.group == "block" else self.warp_size

    @property
    def tile(self) -> int:
        return self.threads * self.items

    def member(self, rank: int) -> str:
        if self.group == "block":
            return f"member {rank}"
        warp, lane = divmod(rank, self.warp_size)
        return f"warp {warp} lane {lane}"

    def position(self, arrangement: str, rank: int, slot: int) -> int:
        """Block-wide tile position; every warp group lays out its own tile
        (docs: operations/load_store, "The tile")."""
        return layouts.grouped_position(arrangement, rank, slot, self.group_size, self.items,
                                         warp_size=self.warp_size)

    def rule(self, arrangement: str, verb: str = "holds") -> str:
        if self.group == "block":
            return layouts.formula(arrangement, self.threads, self.items, self.warp_size, verb=verb)
        inner = layouts.formula(arrangement, self.group_size, self.items, verb=verb, member="lane")
        return f"{inner}, counted from its group's first element"

    def describe(self) -> str:
        text = f"{self.threads} threads x {self.items} item{'s' if self.items != 1 else ''}"
        if self.group == "warp":
            text += (f", warp groups of {self.warp_size} lanes, each owning the {self.warp_size * self.items} "
                     f"elements from (t // {self.warp_size}) * {self.warp_size * self.items}")
        else:
            text += f": a tile of {self.tile} elements"
        return text

    def group_expression(self) -> str:
        if self.group == "block":
            return "block"
        if self.warp_size == layouts.HARDWARE_WARP_SIZE:
            return "coop.this_warp()"
        return f"coop.this_warp().group_by({self.warp_size})"


def grid(shape: Shape, cell: Callable[[int, int], Cell], columns: int | None = None,
         header: str = "slot") -> tuple[tuple[str, ...], tuple[tuple[str, tuple[Cell, ...]], ...]]:
    """Column headers and one row per member, ``cell(rank, slot)`` for each of ``columns`` (default: items)."""
    count = shape.items if columns is None else columns
    rows = tuple((shape.member(rank), tuple(cell(rank, slot) for slot in range(count)))
                 for rank in range(shape.threads))
    if count == 1 and header != "slot":
        return (header,), rows
    return tuple(f"{header} {slot}" for slot in range(count)), rows


def panel(caption: str, shape: Shape, cell: Callable[[int, int], Cell], columns: int | None = None,
          header: str = "slot") -> Panel:
    heads, rows = grid(shape, cell, columns, header)
    return Panel(caption, heads, rows)


def element(p: int | None) -> Cell:
    """A cell holding tile element ``p`` (coloured by it), or an unspecified one."""
    return Cell(UNSPECIFIED) if p is None else Cell(str(p), p)


def teaching_note(shape: Shape, uses_warps: bool) -> tuple[str, ...]:
    if uses_warps and shape.warp_size != layouts.HARDWARE_WARP_SIZE:
        return (f"Teaching warps of {shape.warp_size} lanes; hardware warps have {layouts.HARDWARE_WARP_SIZE}.",)
    return ()


def sample(count: int, high: int, seed: int) -> list[int]:
    """Example keys: fixed pseudo-random values in range(high), with repeats."""
    rng = random.Random(seed)
    return [rng.randrange(high) for _ in range(count)]


def values(given: Sequence[int] | None, count: int, what: str, default: Callable[[], list[int]]) -> list[int]:
    """The user's ``--what`` list (one value per tile position) or the default example data."""
    if given is None:
        return default()
    if len(given) != count:
        raise ExplainError(f"--{what} needs {count} values (one per tile position, blocked order); got {len(given)}")
    return list(given)
