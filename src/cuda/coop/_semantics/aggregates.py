"""User-defined aggregate dtypes (docs: qualified, "User-defined aggregates"): NumPy structured dtypes (numba records)
and a backend's struct types, with fixed-size fields.

The planning layer knows an aggregate by its dtype name, its size and its alignment; its fields matter only to the
user's own code. In C++ it is an opaque ``struct alignas(A)`` of ``S`` bytes (``_cub.abi``); user callables receive
and return it by pointer. Backends register the aggregates they meet (``register``) and name them with the string
of their own type, which describes the field layout, so equal layouts share one name in every process.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import TypeGuard

from .._errors import CoopTypeError

AGGREGATE_C_PREFIX = "cuda_coop_agg_"
_TOKEN = re.compile(r"agg(\d+)x(\d+)(?:x([1248]+))?")


@dataclass(frozen=True)
class Aggregate:
    name: str  # the backend's description of the layout (e.g. ``dtype([('a', '<i4'), ('b', '<f4')], align=True)``)
    size: int
    alignment: int
    words: tuple[int, ...] = ()  # byte widths of the C struct's members, in order; () = uniform words

    @property
    def members(self) -> tuple[int, ...]:
        """The widths of the opaque struct's unsigned members: the backend's plan (one member per field, padding
        in the widest words that fit), else the widest word dividing both size and alignment, repeated."""
        if self.words:
            return self.words
        width = uniform_word(self.size, self.alignment)
        return (width,) * (self.size // width)

    @property
    def c_type(self) -> str:
        """``cuda_coop_agg_{S}_{A}``, followed by the member widths when they are not uniform words."""
        uniform = all(w == uniform_word(self.size, self.alignment) for w in self.members)
        plan = "" if uniform else "_" + "".join(str(w) for w in self.members)
        return f"{AGGREGATE_C_PREFIX}{self.size}_{self.alignment}{plan}"

    @property
    def token(self) -> str:
        """``c_type`` as one word without underscores (``agg{S}x{A}``, then ``x`` and the member widths), to name
        the aggregate inside another C type's name (a tuple's, ``_semantics.tuples``); ``token_c_type`` reads it."""
        return "agg" + self.c_type[len(AGGREGATE_C_PREFIX):].replace("_", "x")

    @property
    def symbol_part(self) -> str:
        """A C identifier fragment unique to the layout (for callable symbols compiled at this dtype)."""
        return "agg" + hashlib.sha256(self.name.encode()).hexdigest()[:12]


def uniform_word(size: int, alignment: int) -> int:
    """The widest unsigned word (8, 4, 2 or 1 bytes) dividing both ``size`` and ``alignment``."""
    return next(w for w in (8, 4, 2, 1) if size % w == 0 and alignment % w == 0)


def member_plan(fields: list[tuple[int, int]], size: int) -> tuple[int, ...]:
    """Member widths for scalar ``fields`` given as (offset, width), in a struct of ``size`` bytes: each field is a
    member of its own width and each gap is filled with the widest naturally aligned words. Copies of the opaque
    struct then touch memory exactly as the backend's own accesses to the fields do, so values stay in registers (a
    word spanning a field and padding would read bytes the backend never wrote, and LLVM keeps such a slot in
    local memory)."""
    widths: list[int] = []
    at = 0

    def fill(end: int) -> None:
        nonlocal at
        while at < end:
            width = next(w for w in (8, 4, 2, 1) if at % w == 0 and at + w <= end)
            widths.append(width)
            at += width

    for offset, width in sorted(fields):
        if offset < at or width not in (1, 2, 4, 8) or offset % width:
            return ()  # overlapping or unaligned fields (a packed record): uniform words
        fill(offset)
        widths.append(width)
        at = offset + width
    fill(size)
    return tuple(widths)


_REGISTRY: dict[str, Aggregate] = {}


def register(name: str, size: int, alignment: int, words: tuple[int, ...] = ()) -> str:
    """Record an aggregate dtype; returns its dtype name."""
    if size <= 0 or alignment <= 0 or alignment & (alignment - 1):
        raise ValueError(f"aggregate {name}: size {size} and alignment {alignment} do not describe a C type")
    if words and sum(words) != size:
        raise ValueError(f"aggregate {name}: members {words} do not cover its {size} bytes")
    _REGISTRY.setdefault(name, Aggregate(name, size, alignment, tuple(words)))
    return name


def aggregate(dtype: str | None) -> Aggregate | None:
    return _REGISTRY.get(dtype) if dtype is not None else None


def is_aggregate(dtype: str | None) -> TypeGuard[str]:
    return dtype in _REGISTRY


def require_aggregate_callable(name: str, param: str, dtype: str, given: object) -> None:
    """An aggregate has no built-in operators or comparisons: ``param`` must be a user callable
    (docs: qualified, "User-defined aggregates")."""
    if is_aggregate(dtype) and (given is None or isinstance(given, str)):
        what = "an operator string" if isinstance(given, str) else "no " + param
        raise CoopTypeError(f"{name} on the aggregate dtype {dtype} needs {param}=<a Python or device function>; got "
                            f"{what} (aggregates have no built-in operators)")


def token_c_type(token: str) -> str | None:
    """The C type of an aggregate's ``token`` (``Aggregate.token``), or None for another word (a numeric dtype)."""
    match = _TOKEN.fullmatch(token)
    if match is None:
        return None
    return AGGREGATE_C_PREFIX + "_".join(part for part in match.groups() if part)


def symbol_part(dtype: str) -> str:
    """``dtype`` (not a tuple: ``_semantics.tuples.symbol_part``) as a fragment of a C symbol."""
    found = aggregate(dtype)
    return found.symbol_part if found is not None else dtype
