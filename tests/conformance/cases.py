"""The shared case description of the conformance suite: common-API kernels written once, run by every backend.

A case is a plain Python function ``body(bid, *operands)`` that uses only ``coop.*`` calls, Python ints, NumPy dtypes
and indexing of ``ThreadData``; ``bid`` is the block index. Its compile-time facts (items per thread, dtype, operator,
block size) are closure constants of the factory that made it. Each backend's harness wraps the body in a generated
kernel of its own (``harness_numba``, ``harness_cutlass``). Metadata: block shape, grid, the operand list (input
arrays, output arrays, scalar ints) and a NumPy oracle giving the expected outputs from the inputs.

Conventions every case follows: inputs are random and never all zeros; outputs are poisoned before the launch (a
value per dtype that no input holds, ``tests/poison.py``) so that a slot the kernel never writes shows; comparisons
are exact, floats bit for bit (a ``-0.0`` is not a ``0.0``; float inputs are small integers, so float sums are exact in
any order); inputs are checked unchanged after the launch.
"""
from __future__ import annotations

import collections
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from cuda import coop
from poison import FLOAT_POISON_BITS, assert_same, poison_value, poisoned
from poison import full_range as _full_range_except_poison

# (block shape, items per thread) combinations: every K and every shape appears once per (variant, dtype).
COMBOS_3D = (((32, 1, 1), 1), ((8, 4, 1), 2), ((128, 1, 1), 4))
COMBOS_1D = (((32, 1, 1), 1), ((128, 1, 1), 2), ((32, 1, 1), 4))  # operations on 1-D blocks only
# broadcast: blocks of one, two and three dimensions and one whose last warp is partial; complete warps for warp groups
BCAST_BLOCK_COMBOS = (((32, 1, 1), 1), ((8, 4, 1), 2), ((4, 4, 4), 3), ((20, 3, 1), 2), ((128, 1, 1), 4))
BCAST_WARP_COMBOS = (((32, 1, 1), 1), ((4, 4, 4), 3), ((128, 1, 1), 2))
GRID = 2


@dataclass(frozen=True)
class Array:
    """A 1-D device array operand. ``role``: ``"in"`` (made by ``make(rng)``, checked unchanged) or ``"out"``
    (poisoned before the launch, compared with the oracle)."""

    name: str
    dtype: Any
    size: int
    role: str
    make: Callable[[np.random.Generator], np.ndarray] | None = None


@dataclass(frozen=True)
class Int:
    """A scalar integer kernel argument (a runtime control), int32 unless ``dtype`` says otherwise (a typed scalar
    control such as a sort's ``oob_default`` has exactly the keys' dtype)."""

    name: str
    value: int
    dtype: Any = np.int32


@dataclass(frozen=True)
class Case:
    id: str
    family: str
    body: Callable[..., None]
    block: tuple[int, int, int]
    grid: int
    operands: tuple[Array | Int, ...]
    oracle: Callable[[dict[str, Any]], dict[str, np.ndarray]]
    #: outputs whose order is unspecified in part: ``canon(name, array)`` is applied to result and expectation alike
    canon: Callable[[str, np.ndarray], np.ndarray] | None = None
    #: the reason a backend is known to fail this case: {backend: reason}; the tests mark it xfail(strict=True)
    known_failures: dict[str, str] = field(default_factory=dict)
    #: where the contract admits several results (top-k: which of equal keys, where NaNs go, in which order):
    #: ``verify(before, after, want)`` asserts that the outputs are one of them, ``want`` being the oracle's own
    #: choice; the outputs are then not compared with ``want`` slot for slot
    verify: Callable[[dict[str, Any], dict[str, np.ndarray], dict[str, np.ndarray]], None] | None = None

    def body_in(self, namespace: Any) -> Callable[..., None]:
        """The body a harness compiles, given its backend's qualified namespace: a ``@qualified`` case's body is
        made for that namespace, any other is the same everywhere."""
        return self.body(namespace) if getattr(self.body, "qualified", False) else self.body

    @property
    def threads(self) -> int:
        return int(np.prod(self.block))

    @property
    def signature(self) -> tuple[str, ...]:
        """``"tensor"`` or the integer dtype's name per operand: what a harness's generated kernel declares."""
        return tuple(np.dtype(op.dtype).name if isinstance(op, Int) else "tensor" for op in self.operands)

    def inputs(self) -> dict[str, Any]:
        """The case's operands with fresh inputs (seeded by the case id) and poisoned outputs, by name."""
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        values: dict[str, Any] = {}
        for op in self.operands:
            if isinstance(op, Int):
                values[op.name] = op.value
            elif op.role == "in":
                assert op.make is not None
                data = np.ascontiguousarray(op.make(rng), dtype=op.dtype)
                assert data.shape == (op.size,) and np.any(data != 0), op.name
                values[op.name] = data
            else:
                values[op.name] = poisoned(op.size, op.dtype)
        return values


def qualified(make: Callable[[Any], Callable[..., None]]) -> Callable[[Any], Callable[..., None]]:
    """``@qualified`` marks ``make(ns)``, which returns the body of a case that calls qualified operations (block
    prefix callbacks, SPEC 9.6 and 12.9): each harness passes its backend's namespace (``cuda.coop.numba_mlir``,
    ``cuda.coop.cutlass``), so the body is still written once."""
    make.qualified = True  # type: ignore[attr-defined]
    return make


def check(case: Case, before: dict[str, Any], after: dict[str, np.ndarray]) -> None:
    """Exact comparison of ``after`` (the arrays once the kernel ran) with the oracle, inputs unchanged; floats bit
    for bit (``poison.assert_same``: the sign of a zero counts, a poisoned NaN never matches). A case with a
    ``verify`` checks its outputs against the oracle's choice with it instead."""
    want = case.oracle(before)
    for op in case.operands:
        if isinstance(op, Int):
            continue
        got = after[op.name]
        assert got.dtype == np.dtype(op.dtype), (op.name, got.dtype)
        if op.role == "in":
            assert_same(got, before[op.name], err_msg=f"input {op.name} changed")
            continue
        if case.verify is not None:
            continue
        expected = np.asarray(want[op.name]).astype(op.dtype, copy=False)
        if case.canon is not None:
            got, expected = case.canon(op.name, got), case.canon(op.name, expected)
        assert_same(got, expected, err_msg=f"output {op.name} of {case.id}")
    if case.verify is not None:
        case.verify(before, after, want)


# ------------------------------------------------------------------------------------------- input makers


def small(dtype, lo=-100, hi=100):
    """Small random values (exact float sums, no integer overflow); unsigned dtypes from 0."""
    dtype = np.dtype(dtype)
    if dtype.kind == "u":
        lo = 0
    return lambda n: (lambda rng: rng.integers(lo, hi, n).astype(dtype))


def full_range(dtype):
    """Every value of the integer dtype but its poison."""
    return lambda n: (lambda rng: _full_range_except_poison(rng, n, dtype))


def unique_per_tile(dtype, tile):
    """Distinct keys within each tile (orders that are not stable are then determined)."""
    def make(n):
        def draw(rng):
            return np.concatenate([rng.choice(np.arange(-5 * tile, 5 * tile), tile, replace=False)
                                   for _ in range(n // tile)]).astype(dtype)
        return draw
    return make


def tiles(x, size):
    return np.asarray(x).reshape(-1, size)


def dname(dtype) -> str:
    return np.dtype(dtype).name


INT_AND_FLOAT = (np.int32, np.float32)
RADIX_KEYS = (np.int32, np.uint32, np.int64, np.uint64)
TEN_DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float32,
              np.float64)


# ------------------------------------------------------------------------------------------- load / store


def _load_store(load_alg, store_alg, double):
    def factory(T, K, dtype):
        def body(bid, src, dst):
            block = coop.this_block()
            items = coop.ThreadData(K, dtype)
            coop.load(block, src, items, offset=bid * (T * K), algorithm=load_alg)
            coop.store(block, dst, items, offset=bid * (T * K), algorithm=store_alg)

        def body_double(bid, src, dst):
            block = coop.this_block()
            items = coop.ThreadData(K, dtype)
            coop.load(block, src, items, offset=bid * (T * K), algorithm=load_alg)
            for i in range(K):
                items[i] = items[i] + items[i]
            coop.store(block, dst, items, offset=bid * (T * K), algorithm=store_alg)

        def oracle(v):
            t = tiles(v["src"], T * K)
            if load_alg == "striped" and store_alg != "striped":  # striped payload written as blocked
                t = t.reshape(-1, K, T).transpose(0, 2, 1)
            out = t.reshape(-1)
            return {"dst": out + out if double else out}
        return (body_double if double else body), oracle, {}
    return factory


def _load_store_shifted(shift):
    """A block's vectorize load and store of a tile ``shift`` items past a multiple of the tile: shift 0, each
    thread's items as the widest vector of up to 16 bytes (8 two-byte items); shift 1, misaligned for every vector,
    the item-by-item fallback (docs: operations/load_store, "Algorithms")."""
    def factory(T, K, dtype):
        n = GRID * T * K + 16

        def body(bid, src, dst, shift):
            block = coop.this_block()
            items = coop.ThreadData(K, dtype)
            coop.load(block, src, items, offset=bid * (T * K) + shift, algorithm="vectorize")
            for i in range(K):
                items[i] = items[i] + items[i]
            coop.store(block, dst, items, offset=bid * (T * K) + shift, algorithm="vectorize")

        def oracle(v):
            out = poisoned(n, dtype)
            moved = slice(v["shift"], v["shift"] + GRID * T * K)
            out[moved] = v["src"][moved] + v["src"][moved]
            return {"dst": out}

        operands = (Array("src", dtype, n, "in", small(dtype, -50, 50)(n)), Array("dst", dtype, n, "out"),
                    Int("shift", shift))
        return body, oracle, {"operands": operands}
    return factory


def _load_partial(T, K, dtype):
    """valid_items (a runtime int) and oob_default on load, valid_items on store."""
    def body(bid, src, dst, n):
        block = coop.this_block()
        items = coop.ThreadData(K, dtype)
        coop.load(block, src, items, offset=bid * (T * K), valid_items=n, oob_default=7)
        coop.store(block, dst, items, offset=bid * (2 * T * K))
        coop.store(block, dst, items, offset=bid * (2 * T * K) + T * K, valid_items=n)

    def oracle(v):
        n, out = v["n"], []
        for t in tiles(v["src"], T * K):
            first = t.copy()
            first[n:] = 7
            second = poisoned(T * K, dtype)
            second[:n] = t[:n]
            out += [first, second]
        return {"dst": np.concatenate(out)}
    return body, oracle, {}


# ------------------------------------------------------------------------------------------- exchange


def _exchange(mode):
    def factory(T, K, dtype):
        load_alg = "direct" if mode == "blocked_to_striped" else "striped"

        def body(bid, src, dst):
            block = coop.this_block()
            items = coop.ThreadData(K, dtype)
            coop.load(block, src, items, offset=bid * (T * K), algorithm=load_alg)
            moved = coop.exchange(block, items, mode=mode)
            coop.store(block, dst, moved, offset=bid * (T * K))  # direct: the payload as if it were blocked

        def oracle(v):
            t = tiles(v["src"], T * K)
            if mode == "blocked_to_striped":  # thread r slot i holds element i*T + r, written at r*K + i
                t = t.reshape(-1, K, T).transpose(0, 2, 1)
            return {"dst": t.reshape(-1)}
        return body, oracle, {}
    return factory


def _exchange_storage_attributes(T, K, dtype):
    """An exchange through an explicit TempStorage whose attributes (its constructor's arguments, SPEC 6.1) the kernel
    reads as compile-time values: added to each thread's first item, and deciding two compile-time branches."""
    size, alignment = 4 * T * K * np.dtype(dtype).itemsize, 32

    def body(bid, src, dst):
        block = coop.this_block()
        storage = coop.TempStorage(size, alignment=alignment, auto_sync=True, sharing="exclusive")
        items = coop.ThreadData(K, dtype)
        coop.load(block, src, items, offset=bid * (T * K))
        moved = coop.exchange(block, items, mode="blocked_to_striped", temp_storage=storage)
        moved[0] = moved[0] + storage.size_in_bytes // storage.alignment
        if storage.auto_sync:
            moved[K - 1] = moved[K - 1] + 3
        if storage.sharing == "exclusive":
            moved[K - 1] = moved[K - 1] + 5
        coop.store(block, dst, moved, offset=bid * (T * K))

    def oracle(v):
        t = tiles(v["src"], T * K).reshape(-1, K, T).transpose(0, 2, 1).copy()
        t[:, :, 0] += size // alignment
        t[:, :, K - 1] += 8
        return {"dst": t.reshape(-1)}
    return body, oracle, {}


def _converted_results(T, K, dtype):
    """What still converts into a payload of another dtype (SPEC 4: ``dtype`` never converts typed evidence): a
    cooperative call's scalar result and Python numbers, into float64 items."""
    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, dtype)
        coop.load(block, src, items, offset=bid * (T * K))
        total = coop.sum(block, items)
        wide = coop.ThreadData(K, np.float64)
        for i in range(K):
            wide[i] = total
        wide[K - 1] = 3
        coop.store(block, dst, wide, offset=bid * (T * K))

    def oracle(v):
        t = tiles(v["src"], T * K).astype(np.int64)
        out = np.repeat(t.sum(axis=1), T * K).reshape(-1, T, K).astype(np.float64)
        out[:, :, K - 1] = 3
        return {"dst": out.reshape(-1)}
    n = GRID * T * K
    return body, oracle, {"operands": (Array("src", dtype, n, "in", small(dtype)(n)), Array("dst", np.float64, n,
                                                                                             "out"))}


class _IndexOnly:
    """A size that says its integer only through ``__index__`` (SPEC 6.1 accepts such objects)."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


SCRATCH_BYTES = _IndexOnly(8192)  # module-level compile-time values (SPEC 7.2) of NumPy's and of the user's types
SCRATCH_ALIGNMENT = np.int32(16)
ITEM_ALIGNMENT = np.int64(16)


def _exchange_index_globals(T, K, dtype):
    """An exchange whose TempStorage size is an ``__index__`` object and whose alignments are NumPy integers, all
    module-level globals."""
    def body(bid, src, dst):
        block = coop.this_block()
        storage = coop.TempStorage(SCRATCH_BYTES, alignment=SCRATCH_ALIGNMENT)
        items = coop.ThreadData(K, dtype, alignment=ITEM_ALIGNMENT)
        coop.load(block, src, items, offset=bid * (T * K))
        coop.store(block, dst, coop.exchange(block, items, mode="blocked_to_striped", temp_storage=storage),
                   offset=bid * (T * K))

    def oracle(v):
        return {"dst": tiles(v["src"], T * K).reshape(-1, K, T).transpose(0, 2, 1).reshape(-1)}
    return body, oracle, {}


# ------------------------------------------------------------------------------------------- reduce / sum

_FOLD = {"sum": np.add, "min": np.minimum, "max": np.maximum}


def _reduce(op, warp):
    def factory(T, K, dtype):
        if op == "sum" and warp:
            def body(bid, src, out):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                r = coop.sum(coop.this_warp(), items)
                coop.store(block, out, r, offset=bid * T)
        elif op == "sum":
            def body(bid, src, out):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                r = coop.sum(block, items)
                coop.store(block, out, r, offset=bid * T)
        elif warp:
            def body(bid, src, out):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                r = coop.reduce(coop.this_warp(), items, binary_op=op)
                coop.store(block, out, r, offset=bid * T)
        else:
            def body(bid, src, out):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                r = coop.reduce(block, items, binary_op=op)
                coop.store(block, out, r, offset=bid * T)

        def oracle(v):
            g = 32 if warp else T
            per_group = tiles(v["src"], g * K)  # a group's members are consecutive ranks, its slots contiguous
            folded = _FOLD[op].reduce(per_group, axis=1, dtype=per_group.dtype)
            return {"out": np.repeat(folded, g)}
        return body, oracle, {}
    return factory


# ------------------------------------------------------------------------------------------- scans


def _scan(kind):
    def factory(T, K, dtype):
        if kind == "inclusive_sum":
            def body(bid, src, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.store(block, dst, coop.inclusive_sum(block, items), offset=bid * (T * K))
        elif kind == "exclusive_sum":
            def body(bid, src, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.store(block, dst, coop.exclusive_sum(block, items), offset=bid * (T * K))
        elif kind == "inclusive_max":
            def body(bid, src, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.store(block, dst, coop.inclusive_scan(block, items, scan_op="max"), offset=bid * (T * K))
        else:
            def body(bid, src, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.store(block, dst, coop.exclusive_scan(block, items, scan_op="max", initial_value=-1000),
                           offset=bid * (T * K))

        def oracle(v):
            t = tiles(v["src"], T * K)
            if kind.endswith("sum"):
                inc = np.cumsum(t, axis=1, dtype=t.dtype)
                init = np.zeros((t.shape[0], 1), t.dtype)
            else:
                inc = np.maximum.accumulate(t, axis=1)
                init = np.full((t.shape[0], 1), -1000, t.dtype)
            if kind.startswith("exclusive"):
                inc = np.concatenate([init, _FOLD["sum" if kind.endswith("sum") else "max"](init, inc[:, :-1])], 1)
            return {"dst": inc.reshape(-1)}
        return body, oracle, {}
    return factory


def keep_right(a, b):
    """An associative operator that is not commutative: a scan with it shows the order its operands come in."""
    return b


def _reverse_scan_oracle(t, kind, init):
    """SPEC 8.17 on each row of ``t``: position ``p`` folds positions ``p .. P-1`` right to left; exclusive forms
    give ``init`` at the last position."""
    if kind.endswith("keep_right"):  # x[p] op (x[p+1] op ...) keeps the last item
        return np.repeat(t[:, -1:], t.shape[1], axis=1)
    fold = _FOLD["sum" if kind.endswith("sum") else "max"]
    backwards = t[:, ::-1]
    inc = fold.accumulate(backwards, axis=1, dtype=t.dtype)
    if kind.startswith("exclusive"):
        seed = np.full((t.shape[0], 1), init, t.dtype)
        inc = np.concatenate([seed, fold(seed, inc[:, :-1])], 1)
    return inc[:, ::-1]


def _reverse_scan(kind, width=None):
    """Reverse scans (SPEC 8.17): blocks over payloads, warps (``width=32``) and logical warps over one scalar per
    lane (the item 0 of each member's payload, the others stored back unchanged)."""
    def factory(T, K, dtype):
        init = 0 if kind.endswith("sum") else -1000
        if width is None and kind == "inclusive_sum":
            def body(bid, src, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.store(block, dst, coop.inclusive_sum(block, items, reverse=True), offset=bid * (T * K))
        elif width is None and kind == "exclusive_sum":
            def body(bid, src, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.store(block, dst, coop.exclusive_sum(block, items, reverse=True), offset=bid * (T * K))
        elif width is None and kind == "exclusive_max":
            def body(bid, src, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                out = coop.scan(block, items, mode="exclusive", scan_op="max", initial_value=-1000, reverse=True)
                coop.store(block, dst, out, offset=bid * (T * K))
        elif width is None:  # inclusive_keep_right
            def body(bid, src, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.store(block, dst, coop.inclusive_scan(block, items, scan_op=keep_right, reverse=True),
                           offset=bid * (T * K))
        elif kind == "exclusive_sum":
            def body(bid, src, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                lanes = coop.this_warp().group_by(width)
                items[0] = coop.exclusive_sum(lanes, items[0], reverse=True)
                coop.store(block, dst, items, offset=bid * (T * K))
        elif kind == "inclusive_keep_right":
            def body(bid, src, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                items[0] = coop.inclusive_scan(coop.this_warp(), items[0], scan_op=keep_right, reverse=True)
                coop.store(block, dst, items, offset=bid * (T * K))
        else:  # a warp's exclusive max
            def body(bid, src, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                items[0] = coop.exclusive_scan(coop.this_warp(), items[0], scan_op="max", initial_value=-1000,
                                               reverse=True)
                coop.store(block, dst, items, offset=bid * (T * K))

        def oracle(v):
            t = tiles(v["src"], T * K)
            if width is None:
                return {"dst": _reverse_scan_oracle(t, kind, init).reshape(-1)}
            out = v["src"].copy()
            firsts = out[::K]  # item 0 of every member, in rank order; groups are consecutive ranks
            groups = firsts.reshape(-1, width)
            out[::K] = _reverse_scan_oracle(groups, kind, init).reshape(-1)
            return {"dst": out}
        return body, oracle, {}
    return factory


def _segmented_oracle(t, heads, kind, init, reverse):
    """SPEC 8.17 on each row: a non-zero head starts a segment (position 0 always does); each segment is scanned
    on its own, forward or reverse, exclusive forms giving ``init`` where the segment's scan begins."""
    out = np.empty_like(t)
    for row in range(t.shape[0]):
        starts = np.flatnonzero(heads[row])
        bounds = sorted(set([0, *starts.tolist()])) + [t.shape[1]]
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            seg = t[row:row + 1, lo:hi]
            if reverse:
                out[row, lo:hi] = _reverse_scan_oracle(seg, kind, init)[0]
            elif kind.endswith("keep_right"):  # x[s] op ... op x[p] keeps x[p]
                out[row, lo:hi] = seg[0]
            else:
                out[row, lo:hi] = _forward_scan_oracle(seg, kind, init)[0]
    return out


def _forward_scan_oracle(t, kind, init):
    fold = _FOLD["sum" if kind.endswith("sum") else "max"]
    inc = fold.accumulate(t, axis=1, dtype=t.dtype)
    if kind.startswith("exclusive"):
        seed = np.full((t.shape[0], 1), init, t.dtype)
        inc = np.concatenate([seed, fold(seed, inc[:, :-1])], 1)
    return inc


def _segmented_scan(kind, reverse, width=None):
    """Segmented scans (SPEC 8.17) with head flags from the ``flags`` input: blocks over payloads, warps and logical
    warps over item 0 of each member (the other items stored back unchanged)."""
    def factory(T, K, dtype):
        init = 0 if kind.endswith("sum") else -1000
        if width is None and kind == "inclusive_sum":
            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                out = coop.inclusive_sum(block, items, head_flags=heads, reverse=reverse)
                coop.store(block, dst, out, offset=bid * (T * K))
        elif width is None and kind == "exclusive_sum":
            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                out = coop.exclusive_sum(block, items, head_flags=heads, reverse=reverse)
                coop.store(block, dst, out, offset=bid * (T * K))
        elif width is None and kind == "exclusive_max":
            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                out = coop.exclusive_scan(block, items, scan_op="max", initial_value=-1000, head_flags=heads,
                                          reverse=reverse)
                coop.store(block, dst, out, offset=bid * (T * K))
        elif width is None:  # inclusive_keep_right
            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                out = coop.scan(block, items, mode="inclusive", scan_op=keep_right, head_flags=heads,
                                reverse=reverse)
                coop.store(block, dst, out, offset=bid * (T * K))
        elif kind == "exclusive_sum":
            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                lanes = coop.this_warp().group_by(width)
                items[0] = coop.exclusive_sum(lanes, items[0], head_flags=heads[0], reverse=reverse)
                coop.store(block, dst, items, offset=bid * (T * K))
        elif kind == "inclusive_sum":
            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                lanes = coop.this_warp().group_by(width)
                items[0] = coop.inclusive_sum(lanes, items[0], head_flags=heads[0], reverse=reverse)
                coop.store(block, dst, items, offset=bid * (T * K))
        elif kind == "inclusive_keep_right":
            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                items[0] = coop.inclusive_scan(coop.this_warp().group_by(width), items[0], scan_op=keep_right,
                                               head_flags=heads[0], reverse=reverse)
                coop.store(block, dst, items, offset=bid * (T * K))
        else:  # exclusive_max over warp lanes
            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                items[0] = coop.exclusive_scan(coop.this_warp().group_by(width), items[0], scan_op="max",
                                               initial_value=-1000, head_flags=heads[0], reverse=reverse)
                coop.store(block, dst, items, offset=bid * (T * K))

        def oracle(v):
            if width is None:
                t, h = tiles(v["src"], T * K), tiles(v["flags"], T * K)
                return {"dst": _segmented_oracle(t, h, kind, init, reverse).reshape(-1)}
            out = v["src"].copy()
            groups, heads = out[::K].reshape(-1, width), v["flags"][::K].reshape(-1, width)
            out[::K] = _segmented_oracle(groups, heads, kind, init, reverse).reshape(-1)
            return {"dst": out}
        return body, oracle, {}
    return factory


def _segmented_compared_flags(kind, reverse, width=None):
    """Scalar segmented scans whose ``head_flags`` is a comparison, a boolean scalar (SPEC 8.17): over item 0 of
    every member of the block (``width`` None) or of each (logical) warp, flagged where ``flags`` is non-zero (the
    other items stored back unchanged)."""
    def factory(T, K, dtype):
        init = 0 if kind.endswith("sum") else -1000
        if width is None:  # exclusive_sum over the block's members
            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                items[0] = coop.exclusive_sum(block, items[0], head_flags=heads[0] != 0, reverse=reverse)
                coop.store(block, dst, items, offset=bid * (T * K))
        elif kind == "inclusive_keep_right":
            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                items[0] = coop.inclusive_scan(coop.this_warp().group_by(width), items[0], scan_op=keep_right,
                                               head_flags=heads[0] != 0, reverse=reverse)
                coop.store(block, dst, items, offset=bid * (T * K))
        else:  # exclusive_max
            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                items[0] = coop.exclusive_scan(coop.this_warp().group_by(width), items[0], scan_op="max",
                                               initial_value=-1000, head_flags=heads[0] != 0, reverse=reverse)
                coop.store(block, dst, items, offset=bid * (T * K))

        def oracle(v):
            out = v["src"].copy()
            size = T if width is None else width
            groups, heads = out[::K].reshape(-1, size), v["flags"][::K].reshape(-1, size)
            out[::K] = _segmented_oracle(groups, heads, kind, init, reverse).reshape(-1)
            return {"dst": out}
        return body, oracle, {}
    return factory


# ------------------------------------------------------------------------------------------- running scans

# A block scans TILES tiles one after the other; its prefix callback carries the running value from each call to the
# next (SPEC 9.6, 12.9), so the tiles' results together are the scan of the block's whole sequence. The callbacks'
# branches are arithmetic (a comparison times a value), which both compilers trace: CuTe cannot branch on a
# run-time value in a plain function.
TILES = 3
RUNNING_COMBOS = (((32, 1, 1), 1), ((8, 4, 1), 2), ((20, 3, 1), 2), ((128, 1, 1), 4))
STATE0 = 7  # the state's first value: what the sequence's first segment continues


RUNNING_VARIANTS = (
    "state_exclusive_sum", "state_inclusive_max", "state_exclusive_keep_right", "state_scalar_inclusive_sum",
    "stateless_exclusive_sum", "segmented_inclusive_sum", "segmented_exclusive_sum", "segmented_exclusive_sum_initial",
    "segmented_inclusive_max", "segmented_exclusive_max", "segmented_inclusive_keep_left",
    "segmented_exclusive_keep_right", "segmented_scalar_exclusive_max", "segmented_stateless_inclusive_sum",
    "reverse_exclusive_sum", "reverse_inclusive_max", "reverse_exclusive_keep_left", "reverse_scalar_inclusive_sum",
)


def keep_left(a, b):
    """Associative, not commutative: a reverse scan with it shows its operands' order (``keep_right``'s twin)."""
    return a


def carry_sum(state, aggregate):
    prefix = state[0]
    state[0] = prefix + aggregate
    return prefix


def carry_max(state, aggregate):
    """A running max's carry, with an ``if`` on run-time values (the CuTe backend traces callbacks as ``@cute.jit``
    functions, so their control flow becomes the DSL's)."""
    prefix = state[0]
    if aggregate > prefix:
        state[0] = aggregate
    return prefix


def carry_aggregate(state, aggregate):
    """The carry of ``keep_right`` (forward: prefix op aggregate) and of ``keep_left`` (reverse: aggregate op
    prefix): the aggregate itself."""
    prefix = state[0]
    state[0] = aggregate
    return prefix


def carry_sum_heads(state, aggregate, has_head):
    """A running segmented sum's carry, verbatim from SPEC 8.24: the aggregate after a head, else the prefix plus
    it (a conditional expression on run-time values, on both backends)."""
    prefix = state[0]
    state[0] = aggregate if has_head else prefix + aggregate
    return prefix


def carry_max_heads(state, aggregate, has_head):
    prefix = state[0]
    running = aggregate if aggregate > prefix else prefix
    state[0] = aggregate if has_head != 0 else running
    return prefix


def carry_keep_left_heads(state, aggregate, has_head):
    """keep_left's carry: the open segment's first value goes on until a head starts another."""
    prefix = state[0]
    if has_head:
        state[0] = aggregate
    return prefix


def carry_aggregate_heads(state, aggregate, has_head):
    """keep_right's carry, head or not: the aggregate."""
    prefix = state[0]
    state[0] = aggregate
    return prefix


def seed_with_heads(aggregate, has_head):
    """A stateless running segmented callback: each tile's open segment starts from its carry plus has_head."""
    return aggregate + has_head


def seed_with_total(aggregate):
    """A stateless callback: each tile's scan starts from the tile's own total."""
    return aggregate


_OPS = {"sum": lambda a, b: a + b, "max": max, "keep_right": keep_right, "keep_left": keep_left}


def _running_oracle(x, heads, op, mode, init, state0, reverse=False):
    """SPEC 8.24 (and 9.6's running scans) over one block's sequence ``x`` (its tiles concatenated): the segmented
    scan where a non-zero head starts a segment, exclusive forms giving ``init`` at a flagged start, and the segment
    open at the sequence's first position continues from ``state0`` (combined on its left; ``reverse``: a suffix
    scan, ``state0`` combined on the right of every position, no heads)."""
    fold, out = _OPS[op], np.empty_like(x)
    acc = x.dtype.type(state0)
    positions = range(len(x) - 1, -1, -1) if reverse else range(len(x))
    for p in positions:
        if reverse:
            if mode == "inclusive":
                acc = out[p] = fold(x[p], acc)
            else:
                out[p], acc = acc, fold(x[p], acc)
        elif heads[p]:
            out[p] = x[p] if mode == "inclusive" else init
            acc = x[p] if mode == "inclusive" else fold(x.dtype.type(init), x[p])
        elif mode == "inclusive":
            acc = out[p] = fold(acc, x[p])
        else:
            out[p], acc = acc, fold(acc, x[p])
    return out


def _running_flags(tile, size):
    """Head flags of the running scans, tile by tile in turn: about one position in four (position 0 included or
    not), none, all, position 0 alone, none at position 0, the last position alone."""
    def make(rng):
        flags = (rng.random(size) < 0.25).astype(np.int32).reshape(-1, tile)
        for j, row in enumerate(flags):
            pattern = j % 6
            if pattern == 1:
                row[:] = 0
            elif pattern == 2:
                row[:] = 1
            elif pattern in (3, 5):
                row[:] = 0
                row[0 if pattern == 3 else -1] = 1
            elif pattern == 4:
                row[0] = 0
        return flags.reshape(-1)
    return make


def _running_blocks(v, T, K, scalar, each):
    """``each(x, heads)`` over every block's sequence (its TILES tiles; ``scalar``: item 0 of each member, the other
    items stored back unchanged), written back in place."""
    out = v["src"].copy()
    per_block = TILES * T * K
    for bid in range(GRID):
        lo = bid * per_block
        x, h = out[lo:lo + per_block], v["flags"][lo:lo + per_block]
        if scalar:
            x[::K] = each(x[::K].copy(), h[::K])
        else:
            x[:] = each(x.copy(), h)
    return {"dst": out}


def _running(kind):
    """Block scans whose prefix callback runs them across TILES tiles (qualified: SPEC 9.6, 12.9): a
    StatefulFunction carrying the running value in a one-item state payload, or a stateless callback."""
    def factory(T, K, dtype):
        tile = T * K
        if kind == "state_exclusive_sum":
            @qualified
            def make(ns):
                running = ns.StatefulFunction(carry_sum, dtype)

                def body(bid, src, flags, dst):
                    block = coop.this_block()
                    items = coop.ThreadData(K, dtype)
                    state = coop.ThreadData(1, dtype)
                    state[0] = STATE0
                    for t in range(TILES):
                        coop.load(block, src, items, offset=(bid * TILES + t) * tile)
                        out = ns.exclusive_sum(block, items, state, prefix_op=running)
                        coop.store(block, dst, out, offset=(bid * TILES + t) * tile)
                return body
            op, mode = "sum", "exclusive"
        elif kind == "state_inclusive_max":
            @qualified
            def make(ns):
                running = ns.StatefulFunction(carry_max, dtype)

                def body(bid, src, flags, dst):
                    block = coop.this_block()
                    items = coop.ThreadData(K, dtype)
                    state = coop.ThreadData(1, dtype)
                    state[0] = STATE0
                    for t in range(TILES):
                        coop.load(block, src, items, offset=(bid * TILES + t) * tile)
                        out = ns.inclusive_scan(block, items, state, scan_op="max", prefix_op=running)
                        coop.store(block, dst, out, offset=(bid * TILES + t) * tile)
                return body
            op, mode = "max", "inclusive"
        elif kind == "state_exclusive_keep_right":  # non-commutative: the prefix comes first
            @qualified
            def make(ns):
                running = ns.StatefulFunction(carry_aggregate, dtype)

                def body(bid, src, flags, dst):
                    block = coop.this_block()
                    items = coop.ThreadData(K, dtype)
                    state = coop.ThreadData(1, dtype)
                    state[0] = STATE0
                    for t in range(TILES):
                        coop.load(block, src, items, offset=(bid * TILES + t) * tile)
                        out = ns.exclusive_scan(block, items, state, scan_op=keep_right, prefix_op=running)
                        coop.store(block, dst, out, offset=(bid * TILES + t) * tile)
                return body
            op, mode = "keep_right", "exclusive"
        elif kind == "state_scalar_inclusive_sum":  # one value per thread: item 0
            @qualified
            def make(ns):
                running = ns.StatefulFunction(carry_sum, dtype)

                def body(bid, src, flags, dst):
                    block = coop.this_block()
                    items = coop.ThreadData(K, dtype)
                    state = coop.ThreadData(1, dtype)
                    state[0] = STATE0
                    for t in range(TILES):
                        coop.load(block, src, items, offset=(bid * TILES + t) * tile)
                        items[0] = ns.inclusive_sum(block, items[0], state, prefix_op=running)
                        coop.store(block, dst, items, offset=(bid * TILES + t) * tile)
                return body
            op, mode = "sum", "inclusive"
        elif kind.startswith("segmented_"):
            make, op, mode, init = _running_segmented(kind, T, K, dtype)
            return make, _running_segmented_oracle(kind, T, K, op, mode, init), {}
        elif kind.startswith("reverse_"):
            make, op, mode = _running_reverse(kind, T, K, dtype)

            def oracle(v):
                def each(x, heads):
                    return _running_oracle(x, heads, op, mode, None, STATE0, reverse=True)
                return _running_blocks(v, T, K, "scalar" in kind, each)
            return make, oracle, {}
        else:  # stateless_exclusive_sum: each tile on its own, from its own total
            @qualified
            def make(ns):
                def body(bid, src, flags, dst):
                    block = coop.this_block()
                    items = coop.ThreadData(K, dtype)
                    for t in range(TILES):
                        coop.load(block, src, items, offset=(bid * TILES + t) * tile)
                        out = ns.exclusive_sum(block, items, prefix_op=seed_with_total)
                        coop.store(block, dst, out, offset=(bid * TILES + t) * tile)
                return body

            def oracle(v):
                def each(x, heads):
                    return np.concatenate([_running_oracle(part, np.zeros(tile, bool), "sum", "exclusive", 0,
                                                           np.sum(part, dtype=part.dtype))
                                           for part in x.reshape(TILES, tile)])
                return _running_blocks(v, T, K, False, each)
            return make, oracle, {}

        def oracle(v):
            def each(x, heads):
                return _running_oracle(x, np.zeros(len(x), bool), op, mode, 0, STATE0)
            return _running_blocks(v, T, K, "scalar" in kind, each)
        return make, oracle, {}
    return factory


def _carry_aggregate(t, heads, op, mode, init):
    """The aggregate a running segmented scan's callback receives for the tile ``t`` (SPEC 8.24): the fold from the
    last flagged position, ``init`` on its left for an exclusive form with one, or of the whole tile."""
    fold = _OPS[op]
    flagged = np.flatnonzero(heads)
    lo = flagged[-1] if flagged.size else 0
    acc = t[lo]
    if flagged.size and mode == "exclusive" and init is not None:
        acc = fold(t.dtype.type(init), acc)
    for value in t[lo + 1:]:
        acc = fold(acc, value)
    return acc


def _running_segmented_oracle(kind, T, K, op, mode, init):
    """The block's tiles concatenated are the segmented scan of its sequence; a stateless callback's tiles each
    continue from their own carry plus has_head."""
    tile = (T if "scalar" in kind else T * K)

    def oracle(v):
        def each(x, heads):
            if "stateless" not in kind:
                return _running_oracle(x, heads, op, mode, 0 if init is None else init, STATE0)
            parts = []
            for part, flags in zip(x.reshape(TILES, tile), heads.reshape(TILES, tile)):
                seed = _carry_aggregate(part, flags, op, mode, init) + x.dtype.type(flags.any())
                parts.append(_running_oracle(part, flags, op, mode, 0 if init is None else init, seed))
            return np.concatenate(parts)
        return _running_blocks(v, T, K, "scalar" in kind, each)
    return oracle


def _running_segmented(kind, T, K, dtype):
    """Running segmented scans (SPEC 8.24): prefix_op with head_flags, position 0 continuing the previous tile's
    segment unless flagged. Returns (make, operator, mode, initial_value or None)."""
    tile = T * K
    if kind == "segmented_inclusive_sum":
        @qualified
        def make(ns):
            running = ns.StatefulFunction(carry_sum_heads, dtype)

            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                state = coop.ThreadData(1, dtype)
                state[0] = STATE0
                for t in range(TILES):
                    coop.load(block, src, items, offset=(bid * TILES + t) * tile)
                    coop.load(block, flags, heads, offset=(bid * TILES + t) * tile)
                    out = ns.inclusive_sum(block, items, state, prefix_op=running, head_flags=heads)
                    coop.store(block, dst, out, offset=(bid * TILES + t) * tile)
            return body
        return make, "sum", "inclusive", None
    if kind == "segmented_exclusive_sum":
        @qualified
        def make(ns):
            running = ns.StatefulFunction(carry_sum_heads, dtype)

            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                state = coop.ThreadData(1, dtype)
                state[0] = STATE0
                for t in range(TILES):
                    coop.load(block, src, items, offset=(bid * TILES + t) * tile)
                    coop.load(block, flags, heads, offset=(bid * TILES + t) * tile)
                    out = ns.exclusive_sum(block, items, state, prefix_op=running, head_flags=heads)
                    coop.store(block, dst, out, offset=(bid * TILES + t) * tile)
            return body
        return make, "sum", "exclusive", None
    if kind == "segmented_exclusive_sum_initial":
        @qualified
        def make(ns):
            running = ns.StatefulFunction(carry_sum_heads, dtype)

            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                state = coop.ThreadData(1, dtype)
                state[0] = STATE0
                for t in range(TILES):
                    coop.load(block, src, items, offset=(bid * TILES + t) * tile)
                    coop.load(block, flags, heads, offset=(bid * TILES + t) * tile)
                    out = ns.exclusive_scan(block, items, state, scan_op="sum", initial_value=5, prefix_op=running,
                                            head_flags=heads)
                    coop.store(block, dst, out, offset=(bid * TILES + t) * tile)
            return body
        return make, "sum", "exclusive", 5
    if kind == "segmented_inclusive_max":
        @qualified
        def make(ns):
            running = ns.StatefulFunction(carry_max_heads, dtype)

            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                state = coop.ThreadData(1, dtype)
                state[0] = STATE0
                for t in range(TILES):
                    coop.load(block, src, items, offset=(bid * TILES + t) * tile)
                    coop.load(block, flags, heads, offset=(bid * TILES + t) * tile)
                    out = ns.inclusive_scan(block, items, state, scan_op="max", prefix_op=running, head_flags=heads)
                    coop.store(block, dst, out, offset=(bid * TILES + t) * tile)
            return body
        return make, "max", "inclusive", None
    if kind == "segmented_exclusive_max":
        @qualified
        def make(ns):
            running = ns.StatefulFunction(carry_max_heads, dtype)

            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                state = coop.ThreadData(1, dtype)
                state[0] = STATE0
                for t in range(TILES):
                    coop.load(block, src, items, offset=(bid * TILES + t) * tile)
                    coop.load(block, flags, heads, offset=(bid * TILES + t) * tile)
                    out = ns.exclusive_scan(block, items, state, scan_op="max", initial_value=-999, prefix_op=running,
                                            head_flags=heads)
                    coop.store(block, dst, out, offset=(bid * TILES + t) * tile)
            return body
        return make, "max", "exclusive", -999
    if kind == "segmented_inclusive_keep_left":  # non-commutative: each position gets its segment's first value
        @qualified
        def make(ns):
            running = ns.StatefulFunction(carry_keep_left_heads, dtype)

            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                state = coop.ThreadData(1, dtype)
                state[0] = STATE0
                for t in range(TILES):
                    coop.load(block, src, items, offset=(bid * TILES + t) * tile)
                    coop.load(block, flags, heads, offset=(bid * TILES + t) * tile)
                    out = ns.inclusive_scan(block, items, state, scan_op=keep_left, prefix_op=running,
                                            head_flags=heads)
                    coop.store(block, dst, out, offset=(bid * TILES + t) * tile)
            return body
        return make, "keep_left", "inclusive", None
    if kind == "segmented_exclusive_keep_right":
        @qualified
        def make(ns):
            running = ns.StatefulFunction(carry_aggregate_heads, dtype)

            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                state = coop.ThreadData(1, dtype)
                state[0] = STATE0
                for t in range(TILES):
                    coop.load(block, src, items, offset=(bid * TILES + t) * tile)
                    coop.load(block, flags, heads, offset=(bid * TILES + t) * tile)
                    out = ns.exclusive_scan(block, items, state, scan_op=keep_right, initial_value=3,
                                            prefix_op=running, head_flags=heads)
                    coop.store(block, dst, out, offset=(bid * TILES + t) * tile)
            return body
        return make, "keep_right", "exclusive", 3
    if kind == "segmented_scalar_exclusive_max":  # one value and one flag per thread: item 0
        @qualified
        def make(ns):
            running = ns.StatefulFunction(carry_max_heads, dtype)

            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                state = coop.ThreadData(1, dtype)
                state[0] = STATE0
                for t in range(TILES):
                    coop.load(block, src, items, offset=(bid * TILES + t) * tile)
                    coop.load(block, flags, heads, offset=(bid * TILES + t) * tile)
                    items[0] = ns.exclusive_scan(block, items[0], state, scan_op="max", initial_value=-999,
                                                 prefix_op=running, head_flags=heads[0])
                    coop.store(block, dst, items, offset=(bid * TILES + t) * tile)
            return body
        return make, "max", "exclusive", -999
    assert kind == "segmented_stateless_inclusive_sum", kind

    @qualified
    def make(ns):
        def body(bid, src, flags, dst):
            block = coop.this_block()
            items = coop.ThreadData(K, dtype)
            heads = coop.ThreadData(K, np.int32)
            for t in range(TILES):
                coop.load(block, src, items, offset=(bid * TILES + t) * tile)
                coop.load(block, flags, heads, offset=(bid * TILES + t) * tile)
                out = ns.inclusive_sum(block, items, prefix_op=seed_with_heads, head_flags=heads)
                coop.store(block, dst, out, offset=(bid * TILES + t) * tile)
        return body
    return make, "sum", "inclusive", None


def _running_reverse(kind, T, K, dtype):
    """Reverse running scans (SPEC 8.24): the tiles from last to first, each prefix combined on the right, so the
    block's results are the suffix scan of its sequence from the state's first value. Returns (make, operator,
    mode)."""
    tile = T * K
    if kind == "reverse_exclusive_sum":
        @qualified
        def make(ns):
            running = ns.StatefulFunction(carry_sum, dtype)

            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                state = coop.ThreadData(1, dtype)
                state[0] = STATE0
                for t in range(TILES):
                    at = (bid * TILES + TILES - 1 - t) * tile
                    coop.load(block, src, items, offset=at)
                    coop.store(block, dst, ns.exclusive_sum(block, items, state, prefix_op=running, reverse=True),
                               offset=at)
            return body
        return make, "sum", "exclusive"
    if kind == "reverse_inclusive_max":
        @qualified
        def make(ns):
            running = ns.StatefulFunction(carry_max, dtype)

            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                state = coop.ThreadData(1, dtype)
                state[0] = STATE0
                for t in range(TILES):
                    at = (bid * TILES + TILES - 1 - t) * tile
                    coop.load(block, src, items, offset=at)
                    out = ns.inclusive_scan(block, items, state, scan_op="max", prefix_op=running, reverse=True)
                    coop.store(block, dst, out, offset=at)
            return body
        return make, "max", "inclusive"
    if kind == "reverse_exclusive_keep_left":  # non-commutative: the prefix comes last
        @qualified
        def make(ns):
            running = ns.StatefulFunction(carry_aggregate, dtype)

            def body(bid, src, flags, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                state = coop.ThreadData(1, dtype)
                state[0] = STATE0
                for t in range(TILES):
                    at = (bid * TILES + TILES - 1 - t) * tile
                    coop.load(block, src, items, offset=at)
                    out = ns.exclusive_scan(block, items, state, scan_op=keep_left, prefix_op=running, reverse=True)
                    coop.store(block, dst, out, offset=at)
            return body
        return make, "keep_left", "exclusive"
    assert kind == "reverse_scalar_inclusive_sum", kind

    @qualified
    def make(ns):
        running = ns.StatefulFunction(carry_sum, dtype)

        def body(bid, src, flags, dst):
            block = coop.this_block()
            items = coop.ThreadData(K, dtype)
            state = coop.ThreadData(1, dtype)
            state[0] = STATE0
            for t in range(TILES):
                at = (bid * TILES + TILES - 1 - t) * tile
                coop.load(block, src, items, offset=at)
                items[0] = ns.inclusive_sum(block, items[0], state, prefix_op=running, reverse=True)
                coop.store(block, dst, items, offset=at)
        return body
    return make, "sum", "inclusive"


# ------------------------------------------------------------------------------------------- argmax / argmin


def _arg_oracle(groups, largest, valid=None):
    """NumPy's rule per row: the first occurrence of the extreme value (a NaN first of all) among the first
    ``valid`` positions."""
    rows = groups if valid is None else groups[:, :valid]
    at = np.argmax(rows, axis=1) if largest else np.argmin(rows, axis=1)
    return rows[np.arange(rows.shape[0]), at], at


def _argreduce(largest, form, valid=None, with_indices=False):
    """argmax/argmin (SPEC 8.16): ``form`` is "block" (payload), "block_scalar", "warp" (scalar) or "lw8" (a
    logical warp of 8 over payloads); ``valid``: a static valid_items, or "runtime" (the ``n`` argument);
    ``with_indices``: the index is the entry of the ``pos`` input (int64)."""
    op = coop.argmax if largest else coop.argmin

    def factory(T, K, dtype):
        width = {"block": T, "block_scalar": T, "warp": 32, "lw8": 8}[form]
        per_member = K if form in ("block", "lw8") else 1
        tile = width * per_member
        static = None if valid in (None, "runtime") else min(valid, tile)
        if form == "block" and valid == "runtime":
            def body(bid, src, val_out, idx_out, n):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                v, i = op(block, items, valid_items=n)
                coop.store(block, val_out, v, offset=bid * T)
                coop.store(block, idx_out, i, offset=bid * T)
        elif form == "block" and static is not None:
            def body(bid, src, val_out, idx_out):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                v, i = op(block, items, valid_items=static)
                coop.store(block, val_out, v, offset=bid * T)
                coop.store(block, idx_out, i, offset=bid * T)
        elif form == "block" and with_indices:
            def body(bid, src, pos, val_out, idx_out):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                where = coop.ThreadData(K, np.int64)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, pos, where, offset=bid * (T * K))
                v, i = op(block, items, indices=where)
                coop.store(block, val_out, v, offset=bid * T)
                coop.store(block, idx_out, i, offset=bid * T)
        elif form == "block":
            def body(bid, src, val_out, idx_out):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                v, i = op(block, items)
                coop.store(block, val_out, v, offset=bid * T)
                coop.store(block, idx_out, i, offset=bid * T)
        elif form == "block_scalar":
            def body(bid, src, val_out, idx_out):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                v, i = op(block, items[0])
                coop.store(block, val_out, v, offset=bid * T)
                coop.store(block, idx_out, i, offset=bid * T)
        elif form == "warp":
            def body(bid, src, val_out, idx_out):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                v, i = op(coop.this_warp(), items[0])
                coop.store(block, val_out, v, offset=bid * T)
                coop.store(block, idx_out, i, offset=bid * T)
        else:  # lw8 with indices
            def body(bid, src, pos, val_out, idx_out):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                where = coop.ThreadData(K, np.int64)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, pos, where, offset=bid * (T * K))
                v, i = op(coop.this_warp().group_by(8), items, indices=where)
                coop.store(block, val_out, v, offset=bid * T)
                coop.store(block, idx_out, i, offset=bid * T)

        def oracle(v):
            src = v["src"] if per_member == K else v["src"][::K]  # scalar forms use item 0 of each member
            count = static if valid != "runtime" else v["n"]
            values, at = _arg_oracle(src.reshape(-1, tile), largest, count)
            if with_indices:
                at = v["pos"].reshape(-1, tile)[np.arange(at.size), at]
            return {"val_out": np.repeat(values, width), "idx_out": np.repeat(at, width)}
        return body, oracle, {"valid": valid, "indices": with_indices, "tile": (T * K) if form == "block" else 0}
    return factory


# ------------------------------------------------------------------------------------------- broadcast


class _Staged:
    """``@staged.jit`` marks a body with an ``if`` on a value known only at run time (``group.is_member()`` of a group
    from ``group_by(W, exhaustive=False)``). It is plain Python for numba-cuda-mlir; the CuTe DSL stages control flow
    only in a function whose source carries a ``.jit`` decorator, so its harness calls such a body through
    ``cute.jit`` (``harness_cutlass``)."""

    @staticmethod
    def jit(body):
        body.staged = True
        return body


staged = _Staged()


def _scans_in_branches(T, K, dtype):
    """One variable given the result of one of two scans by a run-time branch (even blocks an inclusive sum, odd
    ones an exclusive max), then stored: the CuTe backend carries a payload through the DSL's branch by its items,
    so both results stay in registers (compile tests: no local memory)."""
    @staged.jit
    def body(bid, src, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, dtype)
        coop.load(block, src, items, offset=bid * (T * K))
        out = coop.ThreadData(K, dtype)
        if bid % 2 == 0:
            out = coop.inclusive_sum(block, items)
        else:
            out = coop.exclusive_scan(block, items, scan_op="max", initial_value=-1000)
        coop.store(block, dst, out, offset=bid * (T * K))

    def oracle(v):
        t = tiles(v["src"], T * K)
        sums = np.cumsum(t, axis=1, dtype=t.dtype)
        init = np.full((t.shape[0], 1), -1000, t.dtype)
        maxima = np.concatenate([init, np.maximum(init, np.maximum.accumulate(t, axis=1)[:, :-1])], 1)
        even = (np.arange(t.shape[0]) % 2 == 0)[:, None]
        return {"dst": np.where(even, sums, maxima).reshape(-1)}
    return body, oracle, {}


def moved_bits(dtype):
    """Inputs whose bits must arrive unchanged (broadcast moves bits; SPEC 8.19): integers over their whole range;
    floats small values among -0.0, +0.0 and NaNs of assorted payloads and signs, quiet and signalling (never the
    poison's bits)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return full_range(dtype)
    bits = np.dtype(f"u{dtype.itemsize}").type
    mantissa = {4: 23, 8: 52}[dtype.itemsize]
    exponent = bits({4: 0x7F800000, 8: 0x7FF0000000000000}[dtype.itemsize])
    sign = bits(1 << (8 * dtype.itemsize - 1))
    poison = bits(FLOAT_POISON_BITS[dtype.itemsize])

    def make(n):
        def draw(rng):
            x = rng.integers(-100, 100, n).astype(dtype)
            pick = rng.random(n)
            payload = rng.integers(1, 1 << mantissa, n, dtype=np.uint64).astype(bits)  # nonzero: a NaN, not an inf
            nans = payload | exponent | np.where(rng.random(n) < 0.5, sign, bits(0))
            nans[nans == poison] ^= bits(1)
            x.view(bits)[pick < 0.1] = nans[pick < 0.1]
            x[(pick >= 0.1) & (pick < 0.15)] = -0.0
            x[(pick >= 0.15) & (pick < 0.2)] = 0.0
            return x
        return draw
    return make


def _bitwise(name, array):
    """Floats compared by their bits, NaN payloads included (``check`` otherwise takes a NaN for any NaN)."""
    array = np.asarray(array)
    return array.view(f"u{array.itemsize}") if array.dtype.kind == "f" else array


def _group_sources(T, width=None, src_rank=0):
    """The thread whose value each thread of a block of ``T`` receives from a broadcast from rank ``src_rank`` of its
    group: the block's (``width`` None), or its (logical) warp's of ``width`` lanes; groups of a width that does not
    divide 32 fill each warp from lane 0 and the lanes after the last one keep their own (SPEC 3.2, 3.3)."""
    t = np.arange(T)
    if width is None:
        return np.full(T, src_rank)
    lane, warp = t % 32, t // 32
    member = lane < 32 // width * width
    return np.where(member, warp * 32 + lane // width * width + src_rank, t)


def _moved(values, T, K, sources, slot=None):
    """Each block's tile once every thread took thread ``sources[t]``'s items (``slot``: only that item)."""
    tile = np.asarray(values).reshape(-1, T, K)
    if slot is None:
        return tile[:, sources, :].reshape(-1)
    out = tile.copy()
    out[:, :, slot] = tile[:, sources, slot]
    return out.reshape(-1)


def _bcast_operands(T, K, dtype, *, tiles=1, values=0, wide=False, runtime=None):
    """The input tile (and a float64 one with ``wide``); ``tiles`` output tiles of the dtype and ``values`` output
    values per thread (``dst``), a float64 output tile with ``wide`` (``dst2``); the runtime src_rank ``r``."""
    n = GRID * T * K
    ops = [Array("src", dtype, n, "in", moved_bits(dtype)(n))]
    if wide:
        ops.append(Array("src2", np.float64, n, "in", moved_bits(np.float64)(n)))
    ops.append(Array("dst", dtype, tiles * n + values * GRID * T, "out"))
    if wide:
        ops.append(Array("dst2", np.float64, n, "out"))
    if runtime is not None:
        ops.append(Int("r", runtime))
    return tuple(ops)


def _bcast_block(form, src, runtime=False):
    """A block broadcast (SPEC 8.19) from rank 0 (``src`` "first") or T-1 ("last"), a literal or the runtime ``r``:
    ``form`` "payload", or "scalar" (item 0, written back into item 0)."""
    def factory(T, K, dtype):
        S = 0 if src == "first" else T - 1
        if form == "payload" and runtime:
            def body(bid, values, dst, r):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, values, items, offset=bid * (T * K))
                coop.store(block, dst, coop.broadcast(block, items, src_rank=r), offset=bid * (T * K))
        elif form == "payload":
            def body(bid, values, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, values, items, offset=bid * (T * K))
                coop.store(block, dst, coop.broadcast(block, items, src_rank=S), offset=bid * (T * K))
        else:
            def body(bid, values, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, values, items, offset=bid * (T * K))
                items[0] = coop.broadcast(block, items[0], src_rank=S)
                coop.store(block, dst, items, offset=bid * (T * K))

        def oracle(v):
            return {"dst": _moved(v["src"], T, K, _group_sources(T, None, S), None if form == "payload" else 0)}
        return body, oracle, {"operands": _bcast_operands(T, K, dtype, runtime=S if runtime else None),
                              "canon": _bitwise}
    return factory


def _bcast_block_tuple(T, K, dtype):
    """A tuple mixing a float64 scalar, a payload of the dtype and a float64 payload, from rank T-1 (SPEC 8.26); the
    scalar, converted to nothing, lands in a float64 tile after the payloads (``dst2``'s slot 0 stays the payload's)."""
    S = T - 1

    def body(bid, values, values2, dst, dst2):
        block = coop.this_block()
        items = coop.ThreadData(K, dtype)
        wide = coop.ThreadData(K, np.float64)
        coop.load(block, values, items, offset=bid * (T * K))
        coop.load(block, values2, wide, offset=bid * (T * K))
        last, moved, moved_wide = coop.broadcast(block, (wide[K - 1], items, wide), src_rank=S)
        coop.store(block, dst, moved, offset=bid * (T * K))
        wide[0] = last
        for i in range(1, K):
            wide[i] = moved_wide[i]
        coop.store(block, dst2, wide, offset=bid * (T * K))

    def oracle(v):
        sources = _group_sources(T, None, S)
        wide = np.asarray(v["src2"]).reshape(-1, T, K)
        out = wide[:, sources, :].copy()
        out[:, :, 0] = wide[:, sources, K - 1]
        return {"dst": _moved(v["src"], T, K, sources), "dst2": out.reshape(-1)}
    return body, oracle, {"operands": _bcast_operands(T, K, dtype, wide=True), "canon": _bitwise}


def _bcast_block_storage(T, K, dtype):
    """Two broadcasts through one explicit TempStorage(auto_sync=True): a payload from rank 0, then the last item
    from rank T-1 into the same slot (its barrier keeps the second write from the first reads)."""
    def body(bid, values, dst):
        block = coop.this_block()
        storage = coop.TempStorage(auto_sync=True)
        items = coop.ThreadData(K, dtype)
        coop.load(block, values, items, offset=bid * (T * K))
        first = coop.broadcast(block, items, src_rank=0, temp_storage=storage)
        first[K - 1] = coop.broadcast(block, items[K - 1], src_rank=T - 1, temp_storage=storage)
        coop.store(block, dst, first, offset=bid * (T * K))

    def oracle(v):
        tile = np.asarray(v["src"]).reshape(-1, T, K)
        out = tile[:, np.zeros(T, int), :].copy()
        out[:, :, K - 1] = tile[:, T - 1:T, K - 1]
        return {"dst": out.reshape(-1)}
    return body, oracle, {"operands": _bcast_operands(T, K, dtype), "canon": _bitwise}


def _bcast_warp(form, src, runtime=False):
    """A physical warp's broadcast from lane 0 or 31, a literal or the runtime ``r``: "payload", "scalar" (item 0
    written back), or "scalars" (a tuple of item 0 and a float64's last item, SPEC 8.19)."""
    def factory(T, K, dtype):
        S = 0 if src == "first" else 31
        if form == "payload" and runtime:
            def body(bid, values, dst, r):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, values, items, offset=bid * (T * K))
                coop.store(block, dst, coop.broadcast(coop.this_warp(), items, src_rank=r), offset=bid * (T * K))
        elif form == "payload":
            def body(bid, values, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, values, items, offset=bid * (T * K))
                coop.store(block, dst, coop.broadcast(coop.this_warp(), items, src_rank=S), offset=bid * (T * K))
        elif form == "scalar":
            def body(bid, values, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, values, items, offset=bid * (T * K))
                items[0] = coop.broadcast(coop.this_warp(), items[0], src_rank=S)
                coop.store(block, dst, items, offset=bid * (T * K))
        else:
            def body(bid, values, values2, dst, dst2):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                wide = coop.ThreadData(K, np.float64)
                coop.load(block, values, items, offset=bid * (T * K))
                coop.load(block, values2, wide, offset=bid * (T * K))
                first, last = coop.broadcast(coop.this_warp(), (items[0], wide[K - 1]), src_rank=S)
                items[0] = first
                wide[K - 1] = last
                coop.store(block, dst, items, offset=bid * (T * K))
                coop.store(block, dst2, wide, offset=bid * (T * K))

        def oracle(v):
            sources = _group_sources(T, 32, S)
            if form == "scalars":
                return {"dst": _moved(v["src"], T, K, sources, 0), "dst2": _moved(v["src2"], T, K, sources, K - 1)}
            return {"dst": _moved(v["src"], T, K, sources, None if form == "payload" else 0)}
        return body, oracle, {"operands": _bcast_operands(T, K, dtype, wide=form == "scalars",
                                                          runtime=S if runtime else None), "canon": _bitwise}
    return factory


POW2_WIDTHS = (1, 2, 4, 8, 16)


def _bcast_lw_pow2_last(T, K, dtype):
    """Logical warps of 1, 2, 4, 8 and 16 lanes, each from its last lane (W-1, a literal); one output tile each."""
    tile = T * K

    def body(bid, values, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, dtype)
        coop.load(block, values, items, offset=bid * tile)
        coop.store(block, dst, coop.broadcast(coop.this_warp().group_by(1), items, src_rank=0),
                   offset=(0 * GRID + bid) * tile)
        coop.store(block, dst, coop.broadcast(coop.this_warp().group_by(2), items, src_rank=1),
                   offset=(1 * GRID + bid) * tile)
        coop.store(block, dst, coop.broadcast(coop.this_warp().group_by(4), items, src_rank=3),
                   offset=(2 * GRID + bid) * tile)
        coop.store(block, dst, coop.broadcast(coop.this_warp().group_by(8), items, src_rank=7),
                   offset=(3 * GRID + bid) * tile)
        coop.store(block, dst, coop.broadcast(coop.this_warp().group_by(16), items, src_rank=15),
                   offset=(4 * GRID + bid) * tile)

    def oracle(v):
        return {"dst": np.concatenate([_moved(v["src"], T, K, _group_sources(T, w, w - 1)) for w in POW2_WIDTHS])}
    return body, oracle, {"operands": _bcast_operands(T, K, dtype, tiles=len(POW2_WIDTHS)), "canon": _bitwise}




def _bcast_lw_pow2_first(T, K, dtype):
    """Logical warps of 2, 4, 8, 16 and 32 lanes (``group_by(32)``: a logical warp, not ``this_warp()``), each from
    rank ``r`` (runtime, 0), over item 0: one value per thread and width."""
    def body(bid, values, dst, r):
        block = coop.this_block()
        items = coop.ThreadData(K, dtype)
        coop.load(block, values, items, offset=bid * (T * K))
        s2 = coop.ThreadData(1, dtype)
        s2[0] = coop.broadcast(coop.this_warp().group_by(2), items[0], src_rank=r)
        coop.store(block, dst, s2, offset=(0 * GRID + bid) * T)
        s4 = coop.ThreadData(1, dtype)
        s4[0] = coop.broadcast(coop.this_warp().group_by(4), items[0], src_rank=r)
        coop.store(block, dst, s4, offset=(1 * GRID + bid) * T)
        s8 = coop.ThreadData(1, dtype)
        s8[0] = coop.broadcast(coop.this_warp().group_by(8), items[0], src_rank=r)
        coop.store(block, dst, s8, offset=(2 * GRID + bid) * T)
        s16 = coop.ThreadData(1, dtype)
        s16[0] = coop.broadcast(coop.this_warp().group_by(16), items[0], src_rank=r)
        coop.store(block, dst, s16, offset=(3 * GRID + bid) * T)
        s32 = coop.ThreadData(1, dtype)
        s32[0] = coop.broadcast(coop.this_warp().group_by(32), items[0], src_rank=r)
        coop.store(block, dst, s32, offset=(4 * GRID + bid) * T)

    def oracle(v):
        firsts = np.asarray(v["src"]).reshape(-1, T, K)[:, :, 0]
        return {"dst": np.concatenate([firsts[:, _group_sources(T, w, 0)].reshape(-1) for w in (2, 4, 8, 16, 32)])}
    return body, oracle, {"operands": _bcast_operands(T, K, dtype, tiles=0, values=5, runtime=0), "canon": _bitwise}


ODD_WIDTHS = (3, 7, 12, 17, 31)


def _bcast_lw_odd_last(T, K, dtype):
    """Logical warps of widths that do not divide 32 (``group_by(W, exhaustive=False)``, guarded by ``is_member()``),
    each from its last lane (W-1, a literal), over payloads; the lanes outside every group keep their items."""
    tile = T * K

    @staged.jit
    def body(bid, values, dst):
        block = coop.this_block()
        items = coop.ThreadData(K, dtype)
        coop.load(block, values, items, offset=bid * tile)
        g3 = coop.this_warp().group_by(3, exhaustive=False)
        o3 = coop.ThreadData(K, dtype)
        for i in range(K):
            o3[i] = items[i]
        if g3.is_member():
            x3 = coop.broadcast(g3, items, src_rank=2)
            for i in range(K):
                o3[i] = x3[i]
        coop.store(block, dst, o3, offset=(0 * GRID + bid) * tile)
        g7 = coop.this_warp().group_by(7, exhaustive=False)
        o7 = coop.ThreadData(K, dtype)
        for i in range(K):
            o7[i] = items[i]
        if g7.is_member():
            x7 = coop.broadcast(g7, items, src_rank=6)
            for i in range(K):
                o7[i] = x7[i]
        coop.store(block, dst, o7, offset=(1 * GRID + bid) * tile)
        g12 = coop.this_warp().group_by(12, exhaustive=False)
        o12 = coop.ThreadData(K, dtype)
        for i in range(K):
            o12[i] = items[i]
        if g12.is_member():
            x12 = coop.broadcast(g12, items, src_rank=11)
            for i in range(K):
                o12[i] = x12[i]
        coop.store(block, dst, o12, offset=(2 * GRID + bid) * tile)
        g17 = coop.this_warp().group_by(17, exhaustive=False)
        o17 = coop.ThreadData(K, dtype)
        for i in range(K):
            o17[i] = items[i]
        if g17.is_member():
            x17 = coop.broadcast(g17, items, src_rank=16)
            for i in range(K):
                o17[i] = x17[i]
        coop.store(block, dst, o17, offset=(3 * GRID + bid) * tile)
        g31 = coop.this_warp().group_by(31, exhaustive=False)
        o31 = coop.ThreadData(K, dtype)
        for i in range(K):
            o31[i] = items[i]
        if g31.is_member():
            x31 = coop.broadcast(g31, items, src_rank=30)
            for i in range(K):
                o31[i] = x31[i]
        coop.store(block, dst, o31, offset=(4 * GRID + bid) * tile)

    def oracle(v):
        return {"dst": np.concatenate([_moved(v["src"], T, K, _group_sources(T, w, w - 1)) for w in ODD_WIDTHS])}
    return body, oracle, {"operands": _bcast_operands(T, K, dtype, tiles=len(ODD_WIDTHS)), "canon": _bitwise}


def _bcast_lw_odd_runtime(T, K, dtype):
    """Logical warps of 5, 10 and 24 lanes (``exhaustive=False``, guarded), each from rank ``r % W`` (runtime; ``r``
    is 4: the last lane of the 5-lane groups), over item 0: one value per thread and width."""
    @staged.jit
    def body(bid, values, dst, r):
        block = coop.this_block()
        items = coop.ThreadData(K, dtype)
        coop.load(block, values, items, offset=bid * (T * K))
        g5 = coop.this_warp().group_by(5, exhaustive=False)
        s5 = coop.ThreadData(1, dtype)
        s5[0] = items[0]
        if g5.is_member():
            s5[0] = coop.broadcast(g5, items[0], src_rank=r % 5)
        coop.store(block, dst, s5, offset=(0 * GRID + bid) * T)
        g10 = coop.this_warp().group_by(10, exhaustive=False)
        s10 = coop.ThreadData(1, dtype)
        s10[0] = items[0]
        if g10.is_member():
            s10[0] = coop.broadcast(g10, items[0], src_rank=r % 10)
        coop.store(block, dst, s10, offset=(1 * GRID + bid) * T)
        g24 = coop.this_warp().group_by(24, exhaustive=False)
        s24 = coop.ThreadData(1, dtype)
        s24[0] = items[0]
        if g24.is_member():
            s24[0] = coop.broadcast(g24, items[0], src_rank=r % 24)
        coop.store(block, dst, s24, offset=(2 * GRID + bid) * T)

    def oracle(v):
        firsts = np.asarray(v["src"]).reshape(-1, T, K)[:, :, 0]
        return {"dst": np.concatenate([firsts[:, _group_sources(T, w, 4 % w)].reshape(-1) for w in (5, 10, 24)])}
    return body, oracle, {"operands": _bcast_operands(T, K, dtype, tiles=0, values=3, runtime=4), "canon": _bitwise}


def _bcast_lw_tuple(T, K, dtype):
    """A tuple of two payloads (the dtype's, float64) over logical warps of 8 lanes, from rank ``r`` (runtime, 7)."""
    def body(bid, values, values2, dst, dst2, r):
        block = coop.this_block()
        items = coop.ThreadData(K, dtype)
        wide = coop.ThreadData(K, np.float64)
        coop.load(block, values, items, offset=bid * (T * K))
        coop.load(block, values2, wide, offset=bid * (T * K))
        moved, moved_wide = coop.broadcast(coop.this_warp().group_by(8), (items, wide), src_rank=r)
        coop.store(block, dst, moved, offset=bid * (T * K))
        coop.store(block, dst2, moved_wide, offset=bid * (T * K))

    def oracle(v):
        sources = _group_sources(T, 8, 7)
        return {"dst": _moved(v["src"], T, K, sources), "dst2": _moved(v["src2"], T, K, sources)}
    return body, oracle, {"operands": _bcast_operands(T, K, dtype, wide=True, runtime=7), "canon": _bitwise}


# ------------------------------------------------------------------------------------------- select / partition

# select and partition (SPEC 8.20): blocks of one, two and three dimensions and with a partial warp; warps
SELECT_BLOCK_COMBOS = (((32, 1, 1), 1), ((8, 4, 1), 2), ((4, 4, 4), 3), ((20, 3, 1), 2), ((128, 1, 1), 4))
SELECT_WARP_COMBOS = (((32, 1, 1), 1), ((4, 4, 4), 3), ((128, 1, 1), 2))
WIDE_BLOCK_COMBOS = (((1024, 1, 1), 2), ((32, 8, 1), 3))


def compacted(values, flags, size, valid, partition):
    """SPEC 8.20 on each group's tile of ``size`` blocked positions (the rows of ``values``): the kept valid items
    first, in tile order; for ``partition`` the rejected valid items next, in tile order, and every position from
    ``valid`` on its own item; for ``select`` the positions from the count on poisoned (the case stores the count's
    items only). ``valid``: one count for every tile, or one per tile. Returns the results and each tile's count."""
    rows = np.asarray(values).reshape(-1, size)
    heads = np.asarray(flags).reshape(-1, size)
    valids = np.broadcast_to(np.asarray(valid), (rows.shape[0],))
    out = rows.copy() if partition else poisoned(rows.size, rows.dtype).reshape(rows.shape)
    counts = []
    for row, (tile, flag, v) in enumerate(zip(rows, heads, valids)):
        position = np.arange(size)
        keep = (position < v) & (flag != 0)
        count = int(keep.sum())
        out[row, :count] = tile[keep]
        if partition:
            out[row, count:v] = tile[(position < v) & ~keep]
        counts.append(count)
    return out.reshape(-1), np.asarray(counts, np.int32)


def some_flags(dtype=np.int32, share=0.4):
    """Flags at about ``share`` of the positions, non-zero values of either sign (any non-zero flag keeps)."""
    def make(n):
        def draw(rng):
            values = rng.integers(1, 5, n) * np.where(rng.random(n) < 0.5, -1, 1)
            if np.dtype(dtype).kind == "u":
                values = np.abs(values)
            return np.where(rng.random(n) < share, values, 0).astype(dtype)
        return draw
    return make


def _select_operands(T, K, dtype, *, wide=False, values=False, flag_dtype=np.int32, ints=()):
    """The items (``src``, a float64 ``src2`` with ``wide``), their flags, the outputs: a tile each (``dst``,
    ``dst2``), or with ``values`` one item per thread; every thread's count (``counts``); the runtime ints."""
    n = GRID * T * K
    out = GRID * T if values else n
    ops = [Array("src", dtype, n, "in", moved_bits(dtype)(n))]
    if wide:
        ops.append(Array("src2", np.float64, n, "in", moved_bits(np.float64)(n)))
    ops.append(Array("flags", flag_dtype, n, "in", some_flags(flag_dtype)(n)))
    ops.append(Array("dst", dtype, out, "out"))
    if wide:
        ops.append(Array("dst2", np.float64, out, "out"))
    ops.append(Array("counts", np.int32, GRID * T, "out"))
    return tuple(ops) + tuple(Int(name, value) for name, value in ints)


def _select_block(partition, valid):
    """A block's select or partition of a payload; ``valid``: None (the whole tile), a static count, or "runtime"
    (``n``: about two thirds of the tile). select stores the kept items only (``valid_items=count``)."""
    op = coop.partition if partition else coop.select

    def factory(T, K, dtype):
        tile = T * K
        static = tile if valid is None else (min(valid, tile) if valid != "runtime" else None)
        if valid == "runtime" and partition:
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                moved, count = op(block, items, heads, valid_items=n)
                coop.store(block, dst, moved, offset=bid * (T * K))
                coop.store(block, counts, count, offset=bid * T)
        elif valid == "runtime":
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                moved, count = op(block, items, heads, valid_items=n)
                coop.store(block, dst, moved, offset=bid * (T * K), valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        elif valid is None and partition:
            def body(bid, src, flags, dst, counts):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                moved, count = op(block, items, heads)
                coop.store(block, dst, moved, offset=bid * (T * K))
                coop.store(block, counts, count, offset=bid * T)
        elif valid is None:
            def body(bid, src, flags, dst, counts):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                moved, count = op(block, items, heads)
                coop.store(block, dst, moved, offset=bid * (T * K), valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        else:  # a static count, partition
            def body(bid, src, flags, dst, counts):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                moved, count = op(block, items, heads, valid_items=static)
                coop.store(block, dst, moved, offset=bid * (T * K))
                coop.store(block, counts, count, offset=bid * T)
        runtime = tile * 2 // 3 + 1

        def oracle(v):
            count = runtime if valid == "runtime" else static
            moved, counts = compacted(v["src"], v["flags"], tile, count, partition)
            return {"dst": moved, "counts": np.repeat(counts, T)}
        ints = (("n", runtime),) if valid == "runtime" else ()
        return body, oracle, {"operands": _select_operands(T, K, dtype, ints=ints), "canon": _bitwise}
    return factory


def _select_block_scalar(partition):
    """Item 0 of each member as a scalar (one item per member), flagged by a comparison of its flag (a boolean
    scalar), valid below the runtime ``n``."""
    op = coop.partition if partition else coop.select

    def factory(T, K, dtype):
        if partition:
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                moved, count = op(block, items[0], heads[0] != 0, valid_items=n)
                coop.store(block, dst, moved, offset=bid * T)
                coop.store(block, counts, count, offset=bid * T)
        else:
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                moved, count = op(block, items[0], heads[0] != 0, valid_items=n)
                coop.store(block, dst, moved, offset=bid * T, valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        runtime = T // 2 + 1

        def oracle(v):
            moved, counts = compacted(v["src"][::K], v["flags"][::K], T, runtime, partition)
            return {"dst": moved, "counts": np.repeat(counts, T)}
        return body, oracle, {"operands": _select_operands(T, K, dtype, values=True, ints=(("n", runtime),)),
                              "canon": _bitwise}
    return factory


def _select_block_tuple(T, K, dtype):
    """partition of a tuple (a payload of the dtype, a float64 payload: keys and values) by int8 flags, the runtime
    ``n`` valid: both moved by one permutation."""
    runtime = T * K - 1

    def body(bid, src, src2, flags, dst, dst2, counts, n):
        block = coop.this_block()
        items = coop.ThreadData(K, dtype)
        wide = coop.ThreadData(K, np.float64)
        heads = coop.ThreadData(K, np.int8)
        coop.load(block, src, items, offset=bid * (T * K))
        coop.load(block, src2, wide, offset=bid * (T * K))
        coop.load(block, flags, heads, offset=bid * (T * K))
        (moved, moved_wide), count = coop.partition(block, (items, wide), heads, valid_items=n)
        coop.store(block, dst, moved, offset=bid * (T * K))
        coop.store(block, dst2, moved_wide, offset=bid * (T * K))
        coop.store(block, counts, count, offset=bid * T)

    def oracle(v):
        moved, counts = compacted(v["src"], v["flags"], T * K, runtime, True)
        moved_wide, _ = compacted(v["src2"], v["flags"], T * K, runtime, True)
        return {"dst": moved, "dst2": moved_wide, "counts": np.repeat(counts, T)}
    return body, oracle, {"operands": _select_operands(T, K, dtype, wide=True, flag_dtype=np.int8,
                                                       ints=(("n", runtime),)), "canon": _bitwise}


def _select_block_tuple_scalars(T, K, dtype):
    """select of a tuple of scalars (item 0 of the dtype, the last item of a float64 payload), uint8 flags, the
    whole block valid: ``((a, b), count)``."""
    def body(bid, src, src2, flags, dst, dst2, counts):
        block = coop.this_block()
        items = coop.ThreadData(K, dtype)
        wide = coop.ThreadData(K, np.float64)
        heads = coop.ThreadData(K, np.uint8)
        coop.load(block, src, items, offset=bid * (T * K))
        coop.load(block, src2, wide, offset=bid * (T * K))
        coop.load(block, flags, heads, offset=bid * (T * K))
        (first, last), count = coop.select(block, (items[0], wide[K - 1]), heads[0])
        coop.store(block, dst, first, offset=bid * T, valid_items=count)
        coop.store(block, dst2, last, offset=bid * T, valid_items=count)
        coop.store(block, counts, count, offset=bid * T)

    def oracle(v):
        moved, counts = compacted(v["src"][::K], v["flags"][::K], T, T, False)
        moved_wide, _ = compacted(v["src2"][K - 1::K], v["flags"][::K], T, T, False)
        return {"dst": moved, "dst2": moved_wide, "counts": np.repeat(counts, T)}
    return body, oracle, {"operands": _select_operands(T, K, dtype, wide=True, values=True, flag_dtype=np.uint8),
                          "canon": _bitwise}


def _select_block_storage(T, K, dtype):
    """A partition, then a partition of its result below its count by the flags plus one (non-zero but where a
    flag was -1; the flags stay where they were loaded), through one explicit TempStorage(auto_sync=True)."""
    def body(bid, src, flags, dst, counts):
        block = coop.this_block()
        storage = coop.TempStorage(auto_sync=True)
        items = coop.ThreadData(K, dtype)
        heads = coop.ThreadData(K, np.int32)
        coop.load(block, src, items, offset=bid * (T * K))
        coop.load(block, flags, heads, offset=bid * (T * K))
        moved, count = coop.partition(block, items, heads, temp_storage=storage)
        for i in range(K):
            heads[i] = heads[i] + 1  # every position is flagged now, except those whose flag was -1
        again, total = coop.partition(block, moved, heads, valid_items=count, temp_storage=storage)
        coop.store(block, dst, again, offset=bid * (T * K))
        coop.store(block, counts, total, offset=bid * T)

    def oracle(v):
        tile = T * K
        first, counts = compacted(v["src"], v["flags"], tile, tile, True)
        # the second call's flags are the first call's flags plus one, at the same positions (not moved)
        second, totals = compacted(first, v["flags"] + 1, tile, counts, True)
        return {"dst": second, "counts": np.repeat(totals, T)}
    return body, oracle, {"operands": _select_operands(T, K, dtype), "canon": _bitwise}


def _select_warp(partition, width):
    """select or partition over each (logical) warp of ``width`` lanes (``this_warp()`` for None): payloads, each
    group's own runtime ``valid_items`` (``n`` modulo its tile plus one); select stores each group's kept items."""
    op = coop.partition if partition else coop.select

    def factory(T, K, dtype):
        w = 32 if width is None else width
        tile = w * K
        if width is None and partition:
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                warp = coop.this_warp()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                moved, count = op(warp, items, heads, valid_items=n % (tile + 1))
                coop.store(block, dst, moved, offset=bid * (T * K))
                coop.store(block, counts, count, offset=bid * T)
        elif width is None:
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                warp = coop.this_warp()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                moved, count = op(warp, items, heads, valid_items=n % (tile + 1))
                coop.store(warp, dst, moved, offset=bid * (T * K), valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        elif partition:
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                lanes = coop.this_warp().group_by(width)
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                moved, count = op(lanes, items, heads, valid_items=n % (tile + 1))
                coop.store(block, dst, moved, offset=bid * (T * K))
                coop.store(block, counts, count, offset=bid * T)
        else:
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                lanes = coop.this_warp().group_by(width)
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                moved, count = op(lanes, items, heads, valid_items=n % (tile + 1))
                coop.store(lanes, dst, moved, offset=bid * (T * K), valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        runtime = 2 * tile // 3 + 1

        def oracle(v):
            moved, counts = compacted(v["src"], v["flags"], tile, runtime % (tile + 1), partition)
            return {"dst": moved, "counts": np.repeat(counts, w)}
        return body, oracle, {"operands": _select_operands(T, K, dtype, ints=(("n", runtime),)), "canon": _bitwise}
    return factory


def _select_warp_tuple(T, K, dtype):
    """partition of a tuple of payloads (the dtype's, float64) over each warp, every position valid."""
    def body(bid, src, src2, flags, dst, dst2, counts):
        block = coop.this_block()
        items = coop.ThreadData(K, dtype)
        wide = coop.ThreadData(K, np.float64)
        heads = coop.ThreadData(K, np.int16)
        coop.load(block, src, items, offset=bid * (T * K))
        coop.load(block, src2, wide, offset=bid * (T * K))
        coop.load(block, flags, heads, offset=bid * (T * K))
        (moved, moved_wide), count = coop.partition(coop.this_warp(), (items, wide), heads)
        coop.store(block, dst, moved, offset=bid * (T * K))
        coop.store(block, dst2, moved_wide, offset=bid * (T * K))
        coop.store(block, counts, count, offset=bid * T)

    def oracle(v):
        moved, counts = compacted(v["src"], v["flags"], 32 * K, 32 * K, True)
        moved_wide, _ = compacted(v["src2"], v["flags"], 32 * K, 32 * K, True)
        return {"dst": moved, "dst2": moved_wide, "counts": np.repeat(counts, 32)}
    return body, oracle, {"operands": _select_operands(T, K, dtype, wide=True, flag_dtype=np.int16),
                          "canon": _bitwise}


def _select_lw_scalar(T, K, dtype):
    """select of item 0 over logical warps of 8 lanes, flagged by a comparison, the runtime ``n`` valid."""
    runtime = 5

    def body(bid, src, flags, dst, counts, n):
        block = coop.this_block()
        lanes = coop.this_warp().group_by(8)
        items = coop.ThreadData(K, dtype)
        heads = coop.ThreadData(K, np.int32)
        coop.load(block, src, items, offset=bid * (T * K))
        coop.load(block, flags, heads, offset=bid * (T * K))
        moved, count = coop.select(lanes, items[0], heads[0] > 0, valid_items=n)
        coop.store(lanes, dst, moved, offset=bid * T, valid_items=count)
        coop.store(block, counts, count, offset=bid * T)

    def oracle(v):
        moved, counts = compacted(v["src"][::K], v["flags"][::K] > 0, 8, runtime, False)
        return {"dst": moved, "counts": np.repeat(counts, 8)}
    return body, oracle, {"operands": _select_operands(T, K, dtype, values=True, ints=(("n", runtime),)),
                          "canon": _bitwise}


def _select_edges(partition, group, valid, flags):
    """The edge cases of SPEC 8.20: ``valid`` 0, 1 or "all" (the group's tile) as the runtime ``n``; ``flags``
    "given", "none" (all zero) or "all" (all set), made from the loaded flags with the runtime ``keep`` and ``force``
    (``(flag & keep) | force``); ``group`` "block" or "warp"."""
    op = coop.partition if partition else coop.select

    def factory(T, K, dtype):
        w = T if group == "block" else 32
        tile = w * K
        if group == "block" and partition:
            def body(bid, src, flags, dst, counts, n, keep, force):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                for i in range(K):
                    heads[i] = (heads[i] & keep) | force
                moved, count = op(block, items, heads, valid_items=n)
                coop.store(block, dst, moved, offset=bid * (T * K))
                coop.store(block, counts, count, offset=bid * T)
        elif group == "block":
            def body(bid, src, flags, dst, counts, n, keep, force):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                for i in range(K):
                    heads[i] = (heads[i] & keep) | force
                moved, count = op(block, items, heads, valid_items=n)
                coop.store(block, dst, moved, offset=bid * (T * K), valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        elif partition:
            def body(bid, src, flags, dst, counts, n, keep, force):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                for i in range(K):
                    heads[i] = (heads[i] & keep) | force
                moved, count = op(coop.this_warp(), items, heads, valid_items=n)
                coop.store(block, dst, moved, offset=bid * (T * K))
                coop.store(block, counts, count, offset=bid * T)
        else:
            def body(bid, src, flags, dst, counts, n, keep, force):
                block = coop.this_block()
                warp = coop.this_warp()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                for i in range(K):
                    heads[i] = (heads[i] & keep) | force
                moved, count = op(warp, items, heads, valid_items=n)
                coop.store(warp, dst, moved, offset=bid * (T * K), valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        count = {0: 0, 1: 1, "all": tile}[valid]
        keep, force = {"given": (-1, 0), "none": (0, 0), "all": (0, 1)}[flags]

        def oracle(v):
            moved, counts = compacted(v["src"], (v["flags"] & keep) | force, tile, count, partition)
            return {"dst": moved, "counts": np.repeat(counts, w)}
        ints = (("n", count), ("keep", keep), ("force", force))
        return body, oracle, {"operands": _select_operands(T, K, dtype, ints=ints), "canon": _bitwise}
    return factory


# ------------------------------------------------------------------------------------------- segmented reduce

_FOLDS = {"sum": np.add, "max": np.maximum, "min": np.minimum}


def segment_totals(values, flags, size, valid, fold):
    """SPEC 8.21 on each group's tile of ``size`` blocked positions (the rows of ``values``, or of a tuple of
    arrays): position 0 and every flagged position below ``valid`` start a segment, which ends before the next
    start or at ``valid``; each segment's total, in tile order, at the front of its row (the rest poisoned), and
    each row's count of segments. ``fold``: a NumPy ufunc, or a function of two tuples for a tuple of arrays."""
    columns = values if isinstance(values, tuple) else (values,)
    rows = [np.asarray(c).reshape(-1, size) for c in columns]
    heads = np.asarray(flags).reshape(-1, size)
    valids = np.broadcast_to(np.asarray(valid), (heads.shape[0],))
    outs = [poisoned(r.size, r.dtype).reshape(r.shape) for r in rows]
    counts = []
    for row, v in enumerate(valids):
        starts = [p for p in range(v) if p == 0 or heads[row, p] != 0]
        for j, (lo, hi) in enumerate(zip(starts, starts[1:] + [v])):
            if isinstance(values, tuple):
                total = tuple(r[row, lo] for r in rows)
                for p in range(lo + 1, hi):
                    total = fold(total, tuple(r[row, p] for r in rows))
                for out, r, t in zip(outs, rows, total):
                    out[row, j] = np.asarray(t).astype(r.dtype)
            else:
                outs[0][row, j] = fold.reduce(rows[0][row, lo:hi], dtype=rows[0].dtype)
        counts.append(len(starts))
    flat = tuple(out.reshape(-1) for out in outs)
    return (flat if isinstance(values, tuple) else flat[0]), np.asarray(counts, np.int32)


def starting_flags(group_tile, dtype=np.int32, share=0.3):
    """Flags at about ``share`` of the positions and always at the first position of each group's tile (every
    ``group_tile`` items of the array), so that the flags themselves mark every segment's first position."""
    def make(n):
        def draw(rng):
            flags = some_flags(dtype, share)(n)(rng)
            flags[::group_tile] = 1
            return flags
        return draw
    return make


def _segreduce_operands(T, K, dtype, *, group_tile=None, wide=False, values=False, flag_dtype=np.int32, ints=()):
    """The values (``src``, an int64 ``src2`` with ``wide``), their head flags (``flags``; with ``group_tile``
    flagged at every group's first position), the outputs (a tile each, or with ``values`` one per thread) and
    every thread's count."""
    n = GRID * T * K
    out = GRID * T if values else n
    ops = [Array("src", dtype, n, "in", small(dtype, -20, 20)(n))]
    if wide:
        ops.append(Array("src2", np.int64, n, "in", lambda rng: rng.integers(-10**9, 10**9, n).astype(np.int64)))
    make = starting_flags(group_tile, flag_dtype) if group_tile else some_flags(flag_dtype, 0.3)
    ops.append(Array("flags", flag_dtype, n, "in", make(n)))
    ops.append(Array("dst", dtype, out, "out"))
    if wide:
        ops.append(Array("dst2", np.int64, out, "out"))
    ops.append(Array("counts", np.int32, GRID * T, "out"))
    return tuple(ops) + tuple(Int(name, value) for name, value in ints)


def _segreduce_block(op, compact, valid):
    """A block's segmented reduction of a payload (``op``: "sum" through ``coop.sum``, else ``reduce`` with the
    operator name), compacted (stored count items) or not (its totals then compacted by ``select`` with the flags,
    which mark every segment start); ``valid``: None, or "runtime" (``n``, about two thirds of the tile)."""
    def factory(T, K, dtype):
        tile = T * K
        runtime = 2 * tile // 3 + 1
        if op == "sum" and compact:
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                totals, count = coop.sum(block, items, head_flags=heads, compact=True, valid_items=n)
                coop.store(block, dst, totals, offset=bid * (T * K), valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        elif op == "sum":
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                totals = coop.sum(block, items, head_flags=heads, valid_items=n)
                kept, count = coop.select(block, totals, heads, valid_items=n)
                coop.store(block, dst, kept, offset=bid * (T * K), valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        elif compact:
            def body(bid, src, flags, dst, counts):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                totals, count = coop.reduce(block, items, binary_op=op, head_flags=heads, compact=True)
                coop.store(block, dst, totals, offset=bid * (T * K), valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        else:
            def body(bid, src, flags, dst, counts):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                totals = coop.reduce(block, items, binary_op=op, head_flags=heads)
                kept, count = coop.select(block, totals, heads)
                coop.store(block, dst, kept, offset=bid * (T * K), valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        count = runtime if valid == "runtime" else tile

        def oracle(v):
            totals, counts = segment_totals(v["src"], v["flags"], tile, count, _FOLDS[op])
            return {"dst": totals, "counts": np.repeat(counts, T)}
        ints = (("n", runtime),) if valid == "runtime" else ()
        return body, oracle, {"operands": _segreduce_operands(T, K, dtype, group_tile=None if compact else tile,
                                                              ints=ints)}
    return factory


def _segreduce_block_scalar(compact):
    """Item 0 of each member as a scalar, flagged by a comparison (a boolean scalar), the runtime ``n`` valid: its
    minimum per segment compacted, or its segments' sums (compacted by ``select``)."""
    def factory(T, K, dtype):
        runtime = T // 2 + 3
        if compact:
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                total, count = coop.reduce(block, items[0], binary_op="min", head_flags=heads[0] != 0,
                                           compact=True, valid_items=n)
                coop.store(block, dst, total, offset=bid * T, valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        else:
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                total = coop.sum(block, items[0], head_flags=heads[0] != 0, valid_items=n)
                kept, count = coop.select(block, total, heads[0] != 0, valid_items=n)
                coop.store(block, dst, kept, offset=bid * T, valid_items=count)
                coop.store(block, counts, count, offset=bid * T)

        def oracle(v):
            totals, counts = segment_totals(v["src"][::K], v["flags"][::K], T, runtime,
                                            np.minimum if compact else np.add)
            return {"dst": totals, "counts": np.repeat(counts, T)}
        return body, oracle, {"operands": _segreduce_operands(T, K, dtype, values=True, ints=(("n", runtime),),
                                                              group_tile=None if compact else T * K)}
    return factory


def _segreduce_block_tuple(scalars):
    """A tuple (the dtype's, int64) reduced per segment with a function of tuples and compacted: payloads ``((a,
    b), count)`` with int8 flags, or item 0 of each as scalars with a comparison."""
    def factory(T, K, dtype):
        if scalars:
            def body(bid, src, src2, flags, dst, dst2, counts):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                wide = coop.ThreadData(K, np.int64)
                heads = coop.ThreadData(K, np.int8)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, src2, wide, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                (a, b), count = coop.reduce(block, (items[0], wide[0]), binary_op=add_both, head_flags=heads[0] > 0,
                                            compact=True)
                coop.store(block, dst, a, offset=bid * T, valid_items=count)
                coop.store(block, dst2, b, offset=bid * T, valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        else:
            def body(bid, src, src2, flags, dst, dst2, counts):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                wide = coop.ThreadData(K, np.int64)
                heads = coop.ThreadData(K, np.int8)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, src2, wide, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                (a, b), count = coop.reduce(block, (items, wide), binary_op=add_both, head_flags=heads, compact=True)
                coop.store(block, dst, a, offset=bid * (T * K), valid_items=count)
                coop.store(block, dst2, b, offset=bid * (T * K), valid_items=count)
                coop.store(block, counts, count, offset=bid * T)

        def oracle(v):
            if scalars:
                (a, b), counts = segment_totals((v["src"][::K], v["src2"][::K]), v["flags"][::K] > 0, T, T, add_both)
            else:
                (a, b), counts = segment_totals((v["src"], v["src2"]), v["flags"], T * K, T * K, add_both)
            return {"dst": a, "dst2": b, "counts": np.repeat(counts, T)}
        return body, oracle, {"operands": _segreduce_operands(T, K, dtype, wide=True, values=scalars,
                                                              flag_dtype=np.int8)}
    return factory


def _segreduce_block_storage(T, K, dtype):
    """Two segmented sums through one explicit TempStorage(auto_sync=True): the second over the first's compacted
    totals with every position flagged (each total its own segment), below the first's count."""
    def body(bid, src, flags, dst, counts):
        block = coop.this_block()
        storage = coop.TempStorage(auto_sync=True)
        items = coop.ThreadData(K, dtype)
        heads = coop.ThreadData(K, np.int32)
        ones = coop.ThreadData(K, np.int32)
        coop.load(block, src, items, offset=bid * (T * K))
        coop.load(block, flags, heads, offset=bid * (T * K))
        for i in range(K):
            ones[i] = 1
        totals, count = coop.sum(block, items, head_flags=heads, compact=True, temp_storage=storage)
        again, total = coop.sum(block, totals, head_flags=ones, compact=True, valid_items=count,
                                temp_storage=storage)
        coop.store(block, dst, again, offset=bid * (T * K), valid_items=total)
        coop.store(block, counts, total, offset=bid * T)

    def oracle(v):
        totals, counts = segment_totals(v["src"], v["flags"], T * K, T * K, np.add)
        return {"dst": totals, "counts": np.repeat(counts, T)}
    return body, oracle, {"operands": _segreduce_operands(T, K, dtype)}


def _segreduce_matches_scan(T, K, dtype):
    """SPEC 8.26: ``sum(..., head_flags=f)`` equals ``inclusive_sum(..., reverse=True, head_flags=f)`` bit for bit at
    segment starts, floats of any bits included (fractional values, so the order of the additions shows): both
    compacted by ``select`` with the flags (every tile's first position flagged), their difference stored."""
    n = GRID * T * K

    def body(bid, src, flags, dst, counts):
        block = coop.this_block()
        items = coop.ThreadData(K, dtype)
        heads = coop.ThreadData(K, np.int32)
        diff = coop.ThreadData(K, dtype)
        coop.load(block, src, items, offset=bid * (T * K))
        coop.load(block, flags, heads, offset=bid * (T * K))
        totals = coop.sum(block, items, head_flags=heads)
        scanned = coop.inclusive_sum(block, items, reverse=True, head_flags=heads)
        kept, count = coop.select(block, totals, heads)
        kept_scan, _ = coop.select(block, scanned, heads)
        for i in range(K):
            diff[i] = kept[i] - kept_scan[i]
        coop.store(block, dst, diff, offset=bid * (T * K), valid_items=count)
        coop.store(block, counts, count, offset=bid * T)

    def values(rng):
        if np.dtype(dtype).kind == "f":
            return (rng.standard_normal(n) * 100).astype(dtype)
        return small(dtype)(n)(rng)

    def oracle(v):
        _, counts = segment_totals(v["src"], v["flags"], T * K, T * K, np.add)
        out = poisoned(n, dtype).reshape(-1, T * K)
        for row, count in enumerate(counts):
            out[row, :count] = 0
        return {"dst": out.reshape(-1), "counts": np.repeat(counts, T)}
    operands = (Array("src", dtype, n, "in", values),
                Array("flags", np.int32, n, "in", starting_flags(T * K)(n)),
                Array("dst", dtype, n, "out"), Array("counts", np.int32, GRID * T, "out"))
    return body, oracle, {"operands": operands}


def _segreduce_warp(op, width, compact):
    """A warp's (``width`` None) or logical warp's segmented reduction of item 0 of each lane, the runtime ``n``
    modulo the group's size plus one valid: compacted, or its totals compacted by ``select``."""
    def factory(T, K, dtype):
        w = 32 if width is None else width
        runtime = 2 * w // 3 + 1
        if width is None and compact:
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                warp = coop.this_warp()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                total, count = coop.reduce(warp, items[0], binary_op=op, head_flags=heads[0], compact=True,
                                           valid_items=n % (w + 1))
                coop.store(warp, dst, total, offset=bid * T, valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        elif width is None:
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                warp = coop.this_warp()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                total = coop.reduce(warp, items[0], binary_op=op, head_flags=heads[0], valid_items=n % (w + 1))
                kept, count = coop.select(warp, total, heads[0], valid_items=n % (w + 1))
                coop.store(warp, dst, kept, offset=bid * T, valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        elif compact:
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                lanes = coop.this_warp().group_by(width)
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                total, count = coop.reduce(lanes, items[0], binary_op=op, head_flags=heads[0], compact=True,
                                           valid_items=n % (w + 1))
                coop.store(lanes, dst, total, offset=bid * T, valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        else:
            def body(bid, src, flags, dst, counts, n):
                block = coop.this_block()
                lanes = coop.this_warp().group_by(width)
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                total = coop.reduce(lanes, items[0], binary_op=op, head_flags=heads[0], valid_items=n % (w + 1))
                kept, count = coop.select(lanes, total, heads[0], valid_items=n % (w + 1))
                coop.store(lanes, dst, kept, offset=bid * T, valid_items=count)
                coop.store(block, counts, count, offset=bid * T)

        def oracle(v):
            totals, counts = segment_totals(v["src"][::K], v["flags"][::K], w, runtime % (w + 1), _FOLDS[op])
            return {"dst": totals, "counts": np.repeat(counts, w)}
        return body, oracle, {"operands": _segreduce_operands(T, K, dtype, values=True, ints=(("n", runtime),),
                                                              group_tile=None if compact else w * K)}
    return factory


def _segreduce_warp_tuple(T, K, dtype):
    """A warp's segmented reduction of a tuple of scalars (item 0 of the dtype's and of an int64 payload) with a
    function of tuples, not compacted: its totals compacted by ``select`` of the tuple."""
    def body(bid, src, src2, flags, dst, dst2, counts):
        block = coop.this_block()
        warp = coop.this_warp()
        items = coop.ThreadData(K, dtype)
        wide = coop.ThreadData(K, np.int64)
        heads = coop.ThreadData(K, np.int16)
        coop.load(block, src, items, offset=bid * (T * K))
        coop.load(block, src2, wide, offset=bid * (T * K))
        coop.load(block, flags, heads, offset=bid * (T * K))
        a, b = coop.reduce(warp, (items[0], wide[0]), binary_op=add_both, head_flags=heads[0])
        (ka, kb), count = coop.select(warp, (a, b), heads[0])
        coop.store(warp, dst, ka, offset=bid * T, valid_items=count)
        coop.store(warp, dst2, kb, offset=bid * T, valid_items=count)
        coop.store(block, counts, count, offset=bid * T)

    def oracle(v):
        (a, b), counts = segment_totals((v["src"][::K], v["src2"][::K]), v["flags"][::K], 32, 32, add_both)
        return {"dst": a, "dst2": b, "counts": np.repeat(counts, 32)}
    return body, oracle, {"operands": _segreduce_operands(T, K, dtype, wide=True, values=True, flag_dtype=np.int16,
                                                          group_tile=32 * K)}


def _segreduce_edges(group, valid, flags):
    """The edge cases of SPEC 8.21, compacted sums: ``valid`` 0, 1 or "all" as the runtime ``n``; ``flags`` "given",
    "none" (one segment) or "all" (every position its own), made as ``(flag & keep) | force``; ``group`` "block"
    (payloads) or "warp" (item 0 of each lane)."""
    def factory(T, K, dtype):
        w = T if group == "block" else 32
        tile = w * K if group == "block" else w
        if group == "block":
            def body(bid, src, flags, dst, counts, n, keep, force):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                for i in range(K):
                    heads[i] = (heads[i] & keep) | force
                totals, count = coop.sum(block, items, head_flags=heads, compact=True, valid_items=n)
                coop.store(block, dst, totals, offset=bid * (T * K), valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        else:
            def body(bid, src, flags, dst, counts, n, keep, force):
                block = coop.this_block()
                warp = coop.this_warp()
                items = coop.ThreadData(K, dtype)
                heads = coop.ThreadData(K, np.int32)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.load(block, flags, heads, offset=bid * (T * K))
                total, count = coop.sum(warp, items[0], head_flags=(heads[0] & keep) | force, compact=True,
                                        valid_items=n)
                coop.store(warp, dst, total, offset=bid * T, valid_items=count)
                coop.store(block, counts, count, offset=bid * T)
        count = {0: 0, 1: 1, "all": tile}[valid]
        keep, force = {"given": (-1, 0), "none": (0, 0), "all": (0, 1)}[flags]

        def oracle(v):
            heads = (v["flags"] & keep) | force
            if group == "block":
                totals, counts = segment_totals(v["src"], heads, tile, count, np.add)
            else:
                totals, counts = segment_totals(v["src"][::K], heads[::K], tile, count, np.add)
            return {"dst": totals, "counts": np.repeat(counts, w)}
        ints = (("n", count), ("keep", keep), ("force", force))
        return body, oracle, {"operands": _segreduce_operands(T, K, dtype, values=group != "block", ints=ints)}
    return factory


# ------------------------------------------------------------------------------------------- several operands


def add_both(a, b):
    return (a[0] + b[0], a[1] + b[1])


def sum_and_keep_right(a, b):
    """A sum and a non-commutative member: its scan shows the operand order."""
    return (a[0] + b[0], b[1])


def sum_and_or(a, b):
    return (a[0] + b[0], a[1] | b[1])


def _multi_reassigned(T, K, dtype):
    """Tuple operands whose variables hold, where the call stands, other values than the tuple first assigned
    (SPEC 8.18: a call takes the values its operand holds): a tuple a loop assigns again (each thread's last item
    and position), and a tuple one of whose members is assigned again after it was built (its first); each reduced
    with a function of tuples over the block (K >= 2)."""
    def body(bid, src, pos, dst, dst2, dst3, dst4):
        block = coop.this_block()
        items = coop.ThreadData(K, dtype)
        places = coop.ThreadData(K, np.int32)
        coop.load(block, src, items, offset=bid * (T * K))
        coop.load(block, pos, places, offset=bid * (T * K))
        best = (items[0], places[0])
        for i in range(1, K):
            best = (items[i], places[i])  # the last item's
        top, at = coop.reduce(block, best, binary_op=add_both)
        place = places[0]
        pair = (items[0], place)
        place = places[K - 1]  # after the tuple was built: the tuple keeps places[0]
        first, where = coop.reduce(block, pair, binary_op=add_both)
        coop.store(block, dst, top, offset=bid * T)
        coop.store(block, dst2, at, offset=bid * T)
        coop.store(block, dst3, first, offset=bid * T)
        coop.store(block, dst4, where, offset=bid * T)

    def oracle(v):
        x, p = v["src"].reshape(-1, T, K), v["pos"].reshape(-1, T, K)
        def total(a):  # per block; integers, exact in any order
            return np.repeat(a.sum(axis=1, dtype=a.dtype), T)
        return {"dst": total(x[:, :, -1]), "dst2": total(p[:, :, -1]), "dst3": total(x[:, :, 0]),
                "dst4": total(p[:, :, 0])}
    n, outs = GRID * T * K, GRID * T
    return body, oracle, {"operands": (Array("src", dtype, n, "in", unique_per_tile(dtype, T * K)(n)),
                                       Array("pos", np.int32, n, "in", small(np.int32, 0, 1000)(n)),
                                       Array("dst", dtype, outs, "out"), Array("dst2", np.int32, outs, "out"),
                                       Array("dst3", dtype, outs, "out"), Array("dst4", np.int32, outs, "out"))}


def _multi(kind):
    """Scans and reductions over a tuple (first operand of the case's dtype, second int64; SPEC 8.18)."""
    def factory(T, K, dtype):
        if kind == "block_inclusive":
            def body(bid, src, src2, dst, dst2):
                block = coop.this_block()
                a = coop.ThreadData(K, dtype)
                b = coop.ThreadData(K, np.int64)
                coop.load(block, src, a, offset=bid * (T * K))
                coop.load(block, src2, b, offset=bid * (T * K))
                x, y = coop.inclusive_scan(block, (a, b), scan_op=add_both)
                coop.store(block, dst, x, offset=bid * (T * K))
                coop.store(block, dst2, y, offset=bid * (T * K))
        elif kind == "block_exclusive":
            def body(bid, src, src2, dst, dst2):
                block = coop.this_block()
                a = coop.ThreadData(K, dtype)
                b = coop.ThreadData(K, np.int64)
                coop.load(block, src, a, offset=bid * (T * K))
                coop.load(block, src2, b, offset=bid * (T * K))
                x, y = coop.exclusive_scan(block, (a, b), scan_op=sum_and_keep_right, initial_value=(5, -1))
                coop.store(block, dst, x, offset=bid * (T * K))
                coop.store(block, dst2, y, offset=bid * (T * K))
        elif kind == "block_reverse":
            def body(bid, src, src2, dst, dst2):
                block = coop.this_block()
                a = coop.ThreadData(K, dtype)
                b = coop.ThreadData(K, np.int64)
                coop.load(block, src, a, offset=bid * (T * K))
                coop.load(block, src2, b, offset=bid * (T * K))
                x, y = coop.scan(block, (a, b), mode="inclusive", scan_op=sum_and_keep_right, reverse=True)
                coop.store(block, dst, x, offset=bid * (T * K))
                coop.store(block, dst2, y, offset=bid * (T * K))
        elif kind == "warp_inclusive":
            def body(bid, src, src2, dst, dst2):
                block = coop.this_block()
                a = coop.ThreadData(K, dtype)
                b = coop.ThreadData(K, np.int64)
                coop.load(block, src, a, offset=bid * (T * K))
                coop.load(block, src2, b, offset=bid * (T * K))
                x, y = coop.inclusive_scan(coop.this_warp(), (a[0], b[0]), scan_op=add_both)
                a[0] = x
                b[0] = y
                coop.store(block, dst, a, offset=bid * (T * K))
                coop.store(block, dst2, b, offset=bid * (T * K))
        elif kind == "block_reduce":
            def body(bid, src, src2, dst, dst2):
                block = coop.this_block()
                a = coop.ThreadData(K, dtype)
                b = coop.ThreadData(K, np.int64)
                coop.load(block, src, a, offset=bid * (T * K))
                coop.load(block, src2, b, offset=bid * (T * K))
                total, bits = coop.reduce(block, (a, b), binary_op=sum_and_or)
                coop.store(block, dst, total, offset=bid * T)
                coop.store(block, dst2, bits, offset=bid * T)
        else:  # warp_reduce
            def body(bid, src, src2, dst, dst2):
                block = coop.this_block()
                a = coop.ThreadData(K, dtype)
                b = coop.ThreadData(K, np.int64)
                coop.load(block, src, a, offset=bid * (T * K))
                coop.load(block, src2, b, offset=bid * (T * K))
                total, bits = coop.reduce(coop.this_warp(), (a[0], b[0]), binary_op=sum_and_or)
                coop.store(block, dst, total, offset=bid * T)
                coop.store(block, dst2, bits, offset=bid * T)

        def oracle(v):
            first, second = v["src"], v["src2"]
            if kind in ("block_reduce", "warp_reduce"):
                width = T if kind == "block_reduce" else 32
                if kind == "warp_reduce":
                    first, second = first[::K], second[::K]
                a, b = first.reshape(-1, width * (K if kind == "block_reduce" else 1)), None
                b = second.reshape(a.shape)
                return {"dst": np.repeat(a.sum(axis=1, dtype=a.dtype), width),
                        "dst2": np.repeat(np.bitwise_or.reduce(b, axis=1), width)}
            if kind == "warp_inclusive":
                x, y = first.copy(), second.copy()
                x[::K] = np.cumsum(first[::K].reshape(-1, 32), axis=1, dtype=first.dtype).reshape(-1)
                y[::K] = np.cumsum(second[::K].reshape(-1, 32), axis=1).reshape(-1)
                return {"dst": x, "dst2": y}
            a, b = tiles(first, T * K), tiles(second, T * K)
            if kind == "block_inclusive":
                return {"dst": np.cumsum(a, axis=1, dtype=a.dtype).reshape(-1),
                        "dst2": np.cumsum(b, axis=1).reshape(-1)}
            if kind == "block_exclusive":
                x = np.concatenate([np.full((a.shape[0], 1), 5, a.dtype),
                                    5 + np.cumsum(a, axis=1, dtype=a.dtype)[:, :-1]], axis=1)
                y = np.concatenate([np.full((b.shape[0], 1), -1, b.dtype), b[:, :-1]], axis=1)
                return {"dst": x.reshape(-1), "dst2": y.reshape(-1)}
            suffix = np.ascontiguousarray(np.cumsum(a[:, ::-1], axis=1, dtype=a.dtype)[:, ::-1])  # block_reverse
            return {"dst": suffix.reshape(-1), "dst2": np.repeat(b[:, -1:], b.shape[1], axis=1).reshape(-1)}
        return body, oracle, {"reduce": kind.endswith("reduce")}
    return factory


# ------------------------------------------------------------------------------------------- merge sort


def _merge_sort(pairs, descending):
    def factory(T, K, dtype):
        if pairs:
            def body(bid, keys_in, vals_in, keys_out, vals_out):
                block = coop.this_block()
                keys = coop.ThreadData(K, dtype)
                vals = coop.ThreadData(K, np.int32)
                coop.load(block, keys_in, keys, offset=bid * (T * K))
                coop.load(block, vals_in, vals, offset=bid * (T * K))
                k, v = coop.merge_sort_pairs(block, keys, vals, descending=descending)
                coop.store(block, keys_out, k, offset=bid * (T * K))
                coop.store(block, vals_out, v, offset=bid * (T * K))
        else:
            def body(bid, keys_in, keys_out):
                block = coop.this_block()
                keys = coop.ThreadData(K, dtype)
                coop.load(block, keys_in, keys, offset=bid * (T * K))
                coop.store(block, keys_out, coop.merge_sort_keys(block, keys, descending=descending),
                           offset=bid * (T * K))

        def oracle(v):
            k = tiles(v["keys_in"], T * K)
            order = np.argsort(-k if descending else k, axis=1, kind="stable")  # keys are distinct per tile
            out = {"keys_out": np.take_along_axis(k, order, 1).reshape(-1)}
            if pairs:
                out["vals_out"] = np.take_along_axis(tiles(v["vals_in"], T * K), order, 1).reshape(-1)
            return out
        return body, oracle, {}
    return factory


# ------------------------------------------------------------------------------------------- radix sort


def _radix_sort(pairs, descending):
    def factory(T, K, dtype):
        if pairs:
            def body(bid, keys_in, vals_in, keys_out, vals_out):
                block = coop.this_block()
                keys = coop.ThreadData(K, dtype)
                vals = coop.ThreadData(K, np.float32)
                coop.load(block, keys_in, keys, offset=bid * (T * K))
                coop.load(block, vals_in, vals, offset=bid * (T * K))
                k, v = coop.radix_sort_pairs(block, keys, vals, descending=descending)
                coop.store(block, keys_out, k, offset=bid * (T * K))
                coop.store(block, vals_out, v, offset=bid * (T * K))
        else:
            def body(bid, keys_in, keys_out):
                block = coop.this_block()
                keys = coop.ThreadData(K, dtype)
                coop.load(block, keys_in, keys, offset=bid * (T * K))
                coop.store(block, keys_out, coop.radix_sort_keys(block, keys, descending=descending),
                           offset=bid * (T * K))

        def oracle(v):
            k = tiles(v["keys_in"], T * K)
            wide = k.astype(np.int64)
            order = np.argsort(-wide if descending else wide, axis=1, kind="stable")  # radix sort is stable
            out = {"keys_out": np.take_along_axis(k, order, 1).reshape(-1)}
            if pairs:
                out["vals_out"] = np.take_along_axis(tiles(v["vals_in"], T * K), order, 1).reshape(-1)
            return out
        return body, oracle, {}
    return factory


# ------------------------------------------------------------------------------------------- histogram


def _histogram(algorithm):
    def factory(T, K, dtype):
        bins = T - 5 if K != 4 else 2 * T - 3  # K=4: several bins per thread
        per_thread = 1 if bins <= T else 2

        def body(bid, src, counts_out):
            block = coop.this_block()
            items = coop.ThreadData(K, dtype)
            coop.load(block, src, items, offset=bid * (T * K))
            counts = coop.histogram(block, items, bins=bins, bins_per_thread=per_thread, algorithm=algorithm)
            coop.store(block, counts_out, counts, offset=bid * (T * per_thread), algorithm="striped")

        def oracle(v):
            return {"counts_out": np.concatenate([np.bincount(t.astype(np.int64), minlength=T * per_thread)
                                                  for t in tiles(v["src"], T * K)])}
        return body, oracle, {"bins": bins, "per_thread": per_thread}
    return factory


# ------------------------------------------------------------------------------------------- partial tiles (SPEC 8.23)


def _case_rng(*parts):
    """A generator seeded by the case's factory arguments: the case's 'random' valid_items and oob_default."""
    return np.random.default_rng(zlib.crc32("-".join(map(str, parts)).encode()))


def _valid_count(valid, tile, rng):
    """``valid``: "zero", "one", "full", "random" (the count; static or runtime is the variant's other half)."""
    return {"zero": 0, "one": 1, "full": tile}.get(valid) if valid != "random" else int(rng.integers(2, tile - 1))


def _garbage(dtype, n):
    """Random values standing for what an unwritten buffer holds: never zero (the kindest garbage), any value of
    the dtype but its poison; an integer never holds a small bin index, so a histogram that used it would show."""
    def draw(rng):
        x = full_range(dtype)(n)(rng)
        if np.dtype(dtype).itemsize == 1:  # every byte may be a bin: only zero is left out
            x[x == 0] = 1
        else:
            x[np.abs(x.astype(np.float64)) < 1000] = np.dtype(dtype).type(np.iinfo(dtype).max // 3 + 7)
        return x
    return draw


def _partial_tiles(valid_part, count, tile, dtype):
    """An input whose blocked positions ``< count`` of each tile come from ``valid_part`` and the others are
    ``_garbage``."""
    def make(n):
        def draw(rng):
            x = _garbage(dtype, n)(rng).reshape(-1, tile)
            x[:, :count] = valid_part(x[:, :count].size)(rng).reshape(x.shape[0], count)
            return x.reshape(-1)
        return draw
    return make


def _ordered_digits(keys, dtype, begin, end):
    """Bits ``[begin, end)`` of SPEC 8.9's ordered representation (signed keys: the sign bit inverted) as uint64,
    written independently of the code under test."""
    width = np.dtype(dtype).itemsize * 8
    bits = keys.view(f"u{width // 8}").astype(np.uint64)
    if np.dtype(dtype).kind == "i":
        bits ^= np.uint64(1 << (width - 1))
    mask = np.uint64((1 << (end - begin)) - 1)
    return (bits >> np.uint64(begin)) & mask, mask


def _radix_partial(pairs, descending, valid, static, oob=None, bits=None, load="whole", value_dtype=np.float32):
    """radix_sort_keys/pairs of a partial tile (SPEC 8.23). ``valid``: see ``_valid_count``; ``static``: a
    compile-time valid_items (else the runtime ``n``); ``oob``: None, "static" (a literal) or "runtime" (the
    ``oob`` argument, of the keys' dtype); ``bits``: (begin_bit, bits left off the top) or None; ``load``: "whole"
    (the invalid positions hold garbage from memory) or "valid" (loaded with valid_items: those slots are never
    written). Keys past valid_items are unspecified without oob_default: ``canon`` hides them."""
    def factory(T, K, dtype):
        tile = T * K
        rng = _case_rng("radix", pairs, descending, valid, static, oob, bits, load, T, K, dname(dtype))
        count = _valid_count(valid, tile, rng)
        width = np.dtype(dtype).itemsize * 8
        begin, end = (0, width) if bits is None else (bits[0], width - bits[1])
        literal = -7 if np.dtype(dtype).kind == "i" else 4_000_000_001
        fill = None if oob is None else (literal if oob == "static" else int(_garbage(dtype, 1)(rng)[0]))
        oob_static = literal if oob == "static" else None
        VALID = count

        if pairs and oob == "runtime":
            def body(bid, keys_in, vals_in, keys_out, vals_out, n, oob_value):
                block = coop.this_block()
                keys = coop.ThreadData(K, dtype)
                vals = coop.ThreadData(K, value_dtype)
                coop.load(block, keys_in, keys, offset=bid * tile)
                coop.load(block, vals_in, vals, offset=bid * tile)
                k, v = coop.radix_sort_pairs(block, keys, vals, begin_bit=begin, end_bit=end, descending=descending,
                                             valid_items=n, oob_default=oob_value)
                coop.store(block, keys_out, k, offset=bid * tile)
                coop.store(block, vals_out, v, offset=bid * tile)
        elif pairs and static:
            def body(bid, keys_in, vals_in, keys_out, vals_out, n, oob_value):
                block = coop.this_block()
                keys = coop.ThreadData(K, dtype)
                vals = coop.ThreadData(K, value_dtype)
                coop.load(block, keys_in, keys, offset=bid * tile)
                coop.load(block, vals_in, vals, offset=bid * tile)
                k, v = coop.radix_sort_pairs(block, keys, vals, begin_bit=begin, end_bit=end, descending=descending,
                                             valid_items=VALID, oob_default=oob_static)
                coop.store(block, keys_out, k, offset=bid * tile)
                coop.store(block, vals_out, v, offset=bid * tile)
        elif pairs and load == "valid":
            def body(bid, keys_in, vals_in, keys_out, vals_out, n, oob_value):
                block = coop.this_block()
                keys = coop.ThreadData(K, dtype)
                vals = coop.ThreadData(K, value_dtype)
                coop.load(block, keys_in, keys, offset=bid * tile, valid_items=n)
                coop.load(block, vals_in, vals, offset=bid * tile)
                k, v = coop.radix_sort_pairs(block, keys, vals, begin_bit=begin, end_bit=end, descending=descending,
                                             valid_items=n, oob_default=oob_static)
                coop.store(block, keys_out, k, offset=bid * tile)
                coop.store(block, vals_out, v, offset=bid * tile)
        elif pairs:
            def body(bid, keys_in, vals_in, keys_out, vals_out, n, oob_value):
                block = coop.this_block()
                keys = coop.ThreadData(K, dtype)
                vals = coop.ThreadData(K, value_dtype)
                coop.load(block, keys_in, keys, offset=bid * tile)
                coop.load(block, vals_in, vals, offset=bid * tile)
                k, v = coop.radix_sort_pairs(block, keys, vals, begin_bit=begin, end_bit=end, descending=descending,
                                             valid_items=n, oob_default=oob_static)
                coop.store(block, keys_out, k, offset=bid * tile)
                coop.store(block, vals_out, v, offset=bid * tile)
        elif oob == "runtime":
            def body(bid, keys_in, keys_out, n, oob_value):
                block = coop.this_block()
                keys = coop.ThreadData(K, dtype)
                coop.load(block, keys_in, keys, offset=bid * tile)
                out = coop.radix_sort_keys(block, keys, begin_bit=begin, end_bit=end, descending=descending,
                                           valid_items=n, oob_default=oob_value)
                coop.store(block, keys_out, out, offset=bid * tile)
        elif static:
            def body(bid, keys_in, keys_out, n, oob_value):
                block = coop.this_block()
                keys = coop.ThreadData(K, dtype)
                coop.load(block, keys_in, keys, offset=bid * tile)
                out = coop.radix_sort_keys(block, keys, begin_bit=begin, end_bit=end, descending=descending,
                                           valid_items=VALID, oob_default=oob_static)
                coop.store(block, keys_out, out, offset=bid * tile)
        elif load == "valid":
            def body(bid, keys_in, keys_out, n, oob_value):
                block = coop.this_block()
                keys = coop.ThreadData(K, dtype)
                coop.load(block, keys_in, keys, offset=bid * tile, valid_items=n)
                out = coop.radix_sort_keys(block, keys, begin_bit=begin, end_bit=end, descending=descending,
                                           valid_items=n, oob_default=oob_static)
                coop.store(block, keys_out, out, offset=bid * tile)
        else:
            def body(bid, keys_in, keys_out, n, oob_value):
                block = coop.this_block()
                keys = coop.ThreadData(K, dtype)
                coop.load(block, keys_in, keys, offset=bid * tile)
                out = coop.radix_sort_keys(block, keys, begin_bit=begin, end_bit=end, descending=descending,
                                           valid_items=n, oob_default=oob_static)
                coop.store(block, keys_out, out, offset=bid * tile)

        def oracle(v):
            keys_out, vals_out = [], []
            for row, t in enumerate(tiles(v["keys_in"], tile)):
                digits, mask = _ordered_digits(t[:count], dtype, begin, end)
                order = np.argsort(mask - digits if descending else digits, kind="stable")  # radix sort is stable
                k = t.copy()
                k[:count] = t[:count][order]
                k[count:] = 0 if fill is None else fill  # unspecified without oob_default (canon hides them)
                keys_out.append(k)
                if pairs:
                    vals = tiles(v["vals_in"], tile)[row].copy()
                    vals[:count] = vals[:count][order]  # the tail keeps its input order
                    vals_out.append(vals)
            out = {"keys_out": np.concatenate(keys_out)}
            if pairs:
                out["vals_out"] = np.concatenate(vals_out)
            return out

        def canon(name, x):
            if name != "keys_out" or fill is not None:
                return x
            x = tiles(x, tile).copy()
            x[:, count:] = 0
            return x.reshape(-1)

        valid_keys = small(dtype, -20, 20) if bits is None else full_range(dtype)  # repeated keys: stability shows
        ops = [Array("keys_in", dtype, GRID * tile, "in", _partial_tiles(valid_keys, count, tile, dtype)(GRID * tile))]
        if pairs:
            ops.append(Array("vals_in", value_dtype, GRID * tile, "in", _values_never_zero(value_dtype, GRID * tile)))
        ops.append(Array("keys_out", dtype, GRID * tile, "out"))
        if pairs:
            ops.append(Array("vals_out", value_dtype, GRID * tile, "out"))
        ops += [Int("n", count), Int("oob_value", fill if oob == "runtime" else 1, dtype)]
        return body, oracle, {"canon": canon, "operands": tuple(ops)}
    return factory


def _values_never_zero(dtype, n):
    def draw(rng):
        x = small(dtype, 1, 1000)(n)(rng)
        return np.where(rng.random(n) < 0.5, x, -x) if np.dtype(dtype).kind != "u" else x
    return draw


def _histogram_partial(algorithm, valid, static, load="whole", counter=None, bins=None):
    """histogram of a partial tile (SPEC 8.23): ``valid``/``static`` as ``_radix_partial``'s; ``bins``: None for a
    count that fits the block with one or two counters per thread, or a number (256: every uint8 value a bin);
    ``counter``: the counter dtype (None: int32). The samples past valid_items are ``_garbage`` (integers far outside
    ``[0, bins)`` where the dtype allows: counting one would write outside the counters), or never loaded."""
    def factory(T, K, dtype):
        tile = T * K
        rng = _case_rng("histogram", algorithm, valid, static, load, counter, bins, T, K, dname(dtype))
        count = _valid_count(valid, tile, rng)
        nbins = bins if bins is not None else (T - 5 if K != 4 else 2 * T - 3)
        per_thread = -(-nbins // T)
        VALID = count
        out_dtype = np.int32 if counter is None else counter

        if static:
            def body(bid, src, counts_out, n):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * tile)
                counts = coop.histogram(block, items, bins=nbins, bins_per_thread=per_thread, counter_dtype=counter,
                                        algorithm=algorithm, valid_items=VALID)
                coop.store(block, counts_out, counts, offset=bid * (T * per_thread), algorithm="striped")
        elif load == "valid":
            def body(bid, src, counts_out, n):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * tile, valid_items=n)
                counts = coop.histogram(block, items, bins=nbins, bins_per_thread=per_thread, counter_dtype=counter,
                                        algorithm=algorithm, valid_items=n)
                coop.store(block, counts_out, counts, offset=bid * (T * per_thread), algorithm="striped")
        else:
            def body(bid, src, counts_out, n):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * tile)
                counts = coop.histogram(block, items, bins=nbins, bins_per_thread=per_thread, counter_dtype=counter,
                                        algorithm=algorithm, valid_items=n)
                coop.store(block, counts_out, counts, offset=bid * (T * per_thread), algorithm="striped")

        def oracle(v):
            return {"counts_out": np.concatenate([np.bincount(t[:count].astype(np.int64), minlength=T * per_thread)
                                                  for t in tiles(v["src"], tile)])}

        def bin_indices(n):
            bins_drawn = np.setdiff1d(np.arange(nbins), [int(poison_value(dtype))])  # uint8, 256 bins: not 254,
            return lambda rng: rng.choice(bins_drawn, n).astype(dtype)  # the poison, which no input holds

        ops = (Array("src", dtype, GRID * tile, "in", _partial_tiles(bin_indices, count, tile, dtype)(GRID * tile)),
               Array("counts_out", out_dtype, GRID * T * per_thread, "out"), Int("n", count))
        return body, oracle, {"operands": ops}
    return factory


# ------------------------------------------------------------------------------------------- adjacent / discontinuity


def _adjacent(direction):
    def factory(T, K, dtype):
        def body(bid, src, dst):
            block = coop.this_block()
            items = coop.ThreadData(K, dtype)
            coop.load(block, src, items, offset=bid * (T * K))
            coop.store(block, dst, coop.adjacent_difference(block, items, direction=direction), offset=bid * (T * K))

        def oracle(v):
            t = tiles(v["src"], T * K)
            out = t.copy()
            if direction == "left":
                out[:, 1:] = t[:, 1:] - t[:, :-1]
            else:
                out[:, :-1] = t[:, :-1] - t[:, 1:]
            return {"dst": out.reshape(-1)}
        return body, oracle, {}
    return factory


def _discontinuity(mode):
    def factory(T, K, dtype):
        if mode == "heads_and_tails":
            def body(bid, src, heads_out, tails_out):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                heads, tails = coop.discontinuity(block, items, mode="heads_and_tails")
                coop.store(block, heads_out, heads, offset=bid * (T * K))
                coop.store(block, tails_out, tails, offset=bid * (T * K))
        else:
            def body(bid, src, flags_out):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.store(block, flags_out, coop.discontinuity(block, items, mode=mode), offset=bid * (T * K))

        def oracle(v):
            t = tiles(v["src"], T * K)
            heads = np.ones(t.shape, np.int32)
            heads[:, 1:] = t[:, 1:] != t[:, :-1]
            tails = np.ones(t.shape, np.int32)
            tails[:, :-1] = t[:, :-1] != t[:, 1:]
            if mode == "heads":
                return {"flags_out": heads.reshape(-1)}
            if mode == "tails":
                return {"flags_out": tails.reshape(-1)}
            return {"heads_out": heads.reshape(-1), "tails_out": tails.reshape(-1)}
        return body, oracle, {}
    return factory


# ------------------------------------------------------------------------------------------- run-length decode

WINDOW_START = 3


def _run_length_decode(T, K, dtype):
    D = 2 * K  # decoded items per thread: the window is shorter than the stream (lengths 1..3 average 2)

    def body(bid, values, lengths, dst, start):
        block = coop.this_block()
        v = coop.ThreadData(K, dtype)
        n = coop.ThreadData(K, np.int32)
        coop.load(block, values, v, offset=bid * (T * K))
        coop.load(block, lengths, n, offset=bid * (T * K))
        out = coop.run_length_decode(block, v, n, decoded_items_per_thread=D, decoded_window_offset=start)
        coop.store(block, dst, out, offset=bid * (T * D))

    def oracle(v):
        out = []
        for vals, lens in zip(tiles(v["values"], T * K), tiles(v["lengths"], T * K)):
            stream = np.repeat(vals, lens.astype(np.int64))[v["start"]:v["start"] + T * D]
            window = np.zeros(T * D, vals.dtype)
            window[:stream.size] = stream
            out.append(window)
        return {"dst": np.concatenate(out)}
    return body, oracle, {"D": D}


# ------------------------------------------------------------------------------------------- top-k


def _topk(largest):
    def factory(T, K, dtype):
        k = min(10, T * K - 1)

        if largest:
            def body(bid, src, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.store(block, dst, coop.topk_max_keys(block, items, k=k), offset=bid * (T * K), valid_items=k)
        else:
            def body(bid, src, dst):
                block = coop.this_block()
                items = coop.ThreadData(K, dtype)
                coop.load(block, src, items, offset=bid * (T * K))
                coop.store(block, dst, coop.topk_min_keys(block, items, k=k), offset=bid * (T * K), valid_items=k)

        def oracle(v):
            out = []
            for t in tiles(v["src"], T * K):
                tile = poisoned(T * K, t.dtype)
                tile[:k] = np.sort(t)[::-1][:k] if largest else np.sort(t)[:k]
                out.append(tile)
            return {"dst": np.concatenate(out)}

        def canon(name, x):  # the first k positions come in unspecified order
            x = tiles(x, T * K).copy()
            x[:, :k] = np.sort(x[:, :k], axis=1)
            return x.reshape(-1)
        return body, oracle, {"canon": canon}
    return factory


# ------------------------------------------------------------------------------------------- top-k on warp groups


@dataclass(frozen=True)
class Selection:
    """One top-k call of a warp-group case (SPEC 8.22): its group's width, ``k``, ``valid_items`` (None: the whole
    tile), which end it selects and whether values come along (``*_pairs``). The body stores selection ``s``'s
    result as output tile ``s``: block ``bid``'s at ``(s * GRID + bid) * T * K`` of ``dst`` (its values likewise in
    ``vdst``)."""

    width: int
    k: int
    valid: int | None
    largest: bool
    pairs: bool = False


TOPK_WARP_COMBOS = (((32, 1, 1), 1), ((4, 4, 4), 3), ((128, 1, 1), 2))  # any block of complete warps (G5)
MOE_COMBOS = (((32, 1, 1), 1), ((128, 1, 1), 1), ((8, 4, 2), 1))  # one key per lane: the shuffle route


# NaNs of both signs: all ones but the sign (the ordered representation's maximum, the pad of a smallest-keys sort),
# all ones (its minimum, the pad of a largest-keys sort), the canonical quiet ones and a signalling one
TOPK_NANS = {4: (0x7FFFFFFF, 0xFFFFFFFF, 0x7FC00000, 0xFFC00000, 0x7F800001),
             8: (0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001)}


def topk_keys(dtype):
    """Keys with many ties (a small range); integers also at both ends of their range, where the sort's pad lies
    (SPEC 8.22); floats also -0.0, +0.0, both infinities and the NaNs of ``TOPK_NANS`` (never the poison's bits)."""
    dtype = np.dtype(dtype)

    def make(n):
        def draw(rng):
            x = rng.integers(-6 if dtype.kind != "u" else 0, 7, n).astype(dtype)
            pick = rng.random(n)
            if dtype.kind in "iu":
                info = np.iinfo(dtype)
                x[pick < 0.06] = info.max
                x[(pick >= 0.06) & (pick < 0.1)] = info.min
                return x
            nans = np.array(TOPK_NANS[dtype.itemsize], f"u{dtype.itemsize}")
            x.view(nans.dtype)[pick < 0.08] = nans[rng.integers(0, nans.size, n)][pick < 0.08]
            x[(pick >= 0.08) & (pick < 0.14)] = -0.0
            x[(pick >= 0.14) & (pick < 0.2)] = 0.0
            x[(pick >= 0.2) & (pick < 0.23)] = np.inf
            x[(pick >= 0.23) & (pick < 0.26)] = -np.inf
            return x
        return draw
    return make


def _positions(n):
    """Values that name their input position (distinct, never the poison): where each value went says which key
    it came with."""
    return lambda rng: (rng.permutation(n) + 1000).astype(np.int32)


def _best_first(keys, largest):
    """Positions of ``keys`` from the first selected to the last: NumPy's order, non-NaN keys first (ties in input
    order), the NaNs after them."""
    keys = np.asarray(keys)
    nan = np.isnan(keys) if keys.dtype.kind == "f" else np.zeros(keys.size, bool)
    ordered = np.flatnonzero(~nan)
    order = np.argsort(keys[ordered], kind="stable")
    if largest:
        order = order[::-1]
    return np.concatenate([ordered[order], np.flatnonzero(nan)]).astype(np.int64)


def _topk_groups(T, K, selections, src):
    """Per selection, per block, per group: (selection, the group's offset in the block tile, its valid keys' count,
    the number of selected positions, the group's keys)."""
    tile = T * K
    for s, sel in enumerate(selections):
        group_tile = sel.width * K
        valid = group_tile if sel.valid is None else sel.valid
        for b in range(GRID):
            for g in range(tile // group_tile):
                start = b * tile + g * group_tile
                yield s, sel, b, start, valid, min(sel.k, valid), np.asarray(src)[start:start + valid]


def _topk_oracle(T, K, selections):
    """NumPy's own selection of each group: its first min(k, valid_items) blocked positions hold the selected keys
    (and their values) best first; every other position keeps the poison."""
    tile = T * K

    def oracle(v):
        src = v["src"]
        dst = poisoned(len(selections) * GRID * tile, src.dtype)
        vdst = poisoned(len(selections) * GRID * tile, np.int32)
        for s, sel, b, start, valid, m, keys in _topk_groups(T, K, selections, src):
            at = (s * GRID + b) * tile + (start - b * tile)
            chosen = _best_first(keys, sel.largest)[:m]
            dst[at:at + m] = keys[chosen]
            if sel.pairs:
                vdst[at:at + m] = v["vals"][start + chosen]
        return {"dst": dst, "vdst": vdst} if any(sel.pairs for sel in selections) else {"dst": dst}
    return oracle


def _topk_verify(T, K, selections):
    """The contract of SPEC 8.22 / 8.26 on each group's first m = min(k, valid_items) positions: every selected key
    is a bit-exact copy of a valid key of the group, each taken at most once (pairs: each value is the one of a
    distinct valid position whose key it came with); the non-NaN selected keys are, as numbers (-0.0 == +0.0), the
    oracle's best m - q, q being the NaNs selected (NaNs are unordered, so they may take any places)."""
    tile = T * K

    def verify(before, after, want):
        src, got, ref = before["src"], after["dst"], want["dst"]
        bits = np.dtype(f"u{src.dtype.itemsize}")
        for s, sel, b, start, valid, m, keys in _topk_groups(T, K, selections, src):
            at = (s * GRID + b) * tile + (start - b * tile)
            where = f"selection {s} ({sel}), block {b}, group at {start - b * tile}"
            chosen = got[at:at + m]
            if sel.pairs:
                values = after["vdst"][at:at + m]
                origin = {int(value): p for p, value in enumerate(before["vals"].tolist())}
                positions = [origin.get(int(value), -1) for value in values]
                assert all(start <= p < start + valid for p in positions), f"{where}: values {values} not valid"
                assert len(set(positions)) == m, f"{where}: a value selected twice: {values}"
                assert np.array_equal(chosen.view(bits), src[positions].view(bits)), \
                    f"{where}: a value left its key: keys {chosen}, values {values}"
            else:
                pool = collections.Counter(keys.view(bits).tolist())
                taken = collections.Counter(chosen.view(bits).tolist())
                assert not taken - pool, f"{where}: keys {chosen} are not valid keys of the group {keys}"
            nan = np.isnan(chosen) if chosen.dtype.kind == "f" else np.zeros(m, bool)
            numbers = np.sort(chosen[~nan])
            expected = np.sort(ref[at:at + m - int(nan.sum())])
            assert numbers.shape == expected.shape and bool(np.all(numbers == expected)), \
                f"{where}: selected {chosen}, expected the keys {expected} besides NaNs"
    return verify


def _topk_case(T, K, dtype, selections, runtime=()):
    """What a warp-group top-k factory returns besides its body: the oracle, and as extras the operands (keys; with
    ``*_pairs`` selections values naming their positions; one output tile per selection; the runtime controls
    ``runtime``, (name, value) pairs) and the verify."""
    n = GRID * T * K
    pairs = any(sel.pairs for sel in selections)
    ops = [Array("src", dtype, n, "in", topk_keys(dtype)(n))]
    if pairs:
        ops.append(Array("vals", np.int32, n, "in", _positions(n)))
    ops.append(Array("dst", dtype, len(selections) * n, "out"))
    if pairs:
        ops.append(Array("vdst", np.int32, len(selections) * n, "out"))
    ops += [Int(name, value) for name, value in runtime]
    verify = _topk_verify(T, K, selections)
    verify.selections = selections  # for the checks of the verify itself (test_conformance_checks)
    return _topk_oracle(T, K, selections), {"operands": tuple(ops), "verify": verify}


def _topk_warp_k(T, K, dtype):
    """A warp's smallest keys for k = 0, 1, 2, 4, 8 and the whole tile N (SPEC 8.22: k in 0 ... N)."""
    N = 32 * K
    sels = [Selection(32, k, None, False) for k in (0, 1, 2, 4, 8, N)]
    tile = T * K

    def body(bid, src, dst):
        block = coop.this_block()
        warp = coop.this_warp()
        keys = coop.ThreadData(K, dtype)
        coop.load(block, src, keys, offset=bid * tile)
        coop.store(block, dst, coop.topk_min_keys(warp, keys, k=0), offset=(0 * GRID + bid) * tile)
        coop.store(block, dst, coop.topk_min_keys(warp, keys, k=1), offset=(1 * GRID + bid) * tile)
        coop.store(block, dst, coop.topk_min_keys(warp, keys, k=2), offset=(2 * GRID + bid) * tile)
        coop.store(block, dst, coop.topk_min_keys(warp, keys, k=4), offset=(3 * GRID + bid) * tile)
        coop.store(block, dst, coop.topk_min_keys(warp, keys, k=8), offset=(4 * GRID + bid) * tile)
        coop.store(block, dst, coop.topk_min_keys(warp, keys, k=N), offset=(5 * GRID + bid) * tile)

    return (body, *_topk_case(T, K, dtype, sels))


def _topk_warp_valid(T, K, dtype):
    """A warp's largest keys of partial tiles: valid_items 0, 1 and N with k = 4, and 5 valid keys with k = N (all of
    them: SPEC 8.11, k > valid_items)."""
    N = 32 * K
    sels = [Selection(32, 4, 0, True), Selection(32, 4, 1, True), Selection(32, 4, N, True),
            Selection(32, N, 5, True)]
    tile = T * K

    def body(bid, src, dst):
        block = coop.this_block()
        warp = coop.this_warp()
        keys = coop.ThreadData(K, dtype)
        coop.load(block, src, keys, offset=bid * tile)
        coop.store(block, dst, coop.topk_max_keys(warp, keys, k=4, valid_items=0), offset=(0 * GRID + bid) * tile)
        coop.store(block, dst, coop.topk_max_keys(warp, keys, k=4, valid_items=1), offset=(1 * GRID + bid) * tile)
        coop.store(block, dst, coop.topk_max_keys(warp, keys, k=4, valid_items=N), offset=(2 * GRID + bid) * tile)
        coop.store(block, dst, coop.topk_max_keys(warp, keys, k=N, valid_items=5), offset=(3 * GRID + bid) * tile)

    return (body, *_topk_case(T, K, dtype, sels))


def _topk_lw(largest, partial):
    """Logical warps of 1, 2, 4, 8, 16 and 32 lanes (``group_by(32)``), each selecting with its values; k is 3 (or
    the tile, if smaller); ``partial``: the last key of each group's tile is not valid."""
    def factory(T, K, dtype):
        k1, k2, k4, k8, k16, k32 = (min(3, w * K) for w in (1, 2, 4, 8, 16, 32))
        n1, n2, n4, n8, n16, n32 = (w * K - 1 if partial else w * K for w in (1, 2, 4, 8, 16, 32))
        sels = [Selection(w, min(3, w * K), w * K - 1 if partial else None, largest, True)
                for w in (1, 2, 4, 8, 16, 32)]
        select = coop.topk_max_pairs if largest else coop.topk_min_pairs
        tile = T * K

        def body(bid, src, vals, dst, vdst):
            block = coop.this_block()
            keys = coop.ThreadData(K, dtype)
            values = coop.ThreadData(K, np.int32)
            coop.load(block, src, keys, offset=bid * tile)
            coop.load(block, vals, values, offset=bid * tile)
            c1, v1 = select(coop.this_warp().group_by(1), keys, values, k=k1, valid_items=n1)
            coop.store(block, dst, c1, offset=(0 * GRID + bid) * tile)
            coop.store(block, vdst, v1, offset=(0 * GRID + bid) * tile)
            c2, v2 = select(coop.this_warp().group_by(2), keys, values, k=k2, valid_items=n2)
            coop.store(block, dst, c2, offset=(1 * GRID + bid) * tile)
            coop.store(block, vdst, v2, offset=(1 * GRID + bid) * tile)
            c4, v4 = select(coop.this_warp().group_by(4), keys, values, k=k4, valid_items=n4)
            coop.store(block, dst, c4, offset=(2 * GRID + bid) * tile)
            coop.store(block, vdst, v4, offset=(2 * GRID + bid) * tile)
            c8, v8 = select(coop.this_warp().group_by(8), keys, values, k=k8, valid_items=n8)
            coop.store(block, dst, c8, offset=(3 * GRID + bid) * tile)
            coop.store(block, vdst, v8, offset=(3 * GRID + bid) * tile)
            c16, v16 = select(coop.this_warp().group_by(16), keys, values, k=k16, valid_items=n16)
            coop.store(block, dst, c16, offset=(4 * GRID + bid) * tile)
            coop.store(block, vdst, v16, offset=(4 * GRID + bid) * tile)
            c32, v32 = select(coop.this_warp().group_by(32), keys, values, k=k32, valid_items=n32)
            coop.store(block, dst, c32, offset=(5 * GRID + bid) * tile)
            coop.store(block, vdst, v32, offset=(5 * GRID + bid) * tile)

        return (body, *_topk_case(T, K, dtype, sels))
    return factory


def _topk_runtime(T, K, dtype):
    """Runtime k and valid_items (``kk`` = 5, ``n`` = 7), group-uniform, on a warp and on logical warps of 8 lanes,
    with values."""
    sels = [Selection(32, 5, 7, True, True), Selection(8, 5, 7, False, True)]
    tile = T * K

    def body(bid, src, vals, dst, vdst, kk, n):
        block = coop.this_block()
        keys = coop.ThreadData(K, dtype)
        values = coop.ThreadData(K, np.int32)
        coop.load(block, src, keys, offset=bid * tile)
        coop.load(block, vals, values, offset=bid * tile)
        top, carried = coop.topk_max_pairs(coop.this_warp(), keys, values, k=kk, valid_items=n)
        coop.store(block, dst, top, offset=(0 * GRID + bid) * tile)
        coop.store(block, vdst, carried, offset=(0 * GRID + bid) * tile)
        low, low_values = coop.topk_min_pairs(coop.this_warp().group_by(8), keys, values, k=kk, valid_items=n)
        coop.store(block, dst, low, offset=(1 * GRID + bid) * tile)
        coop.store(block, vdst, low_values, offset=(1 * GRID + bid) * tile)

    return (body, *_topk_case(T, K, dtype, sels, (("kk", 5), ("n", 7))))


def _topk_moe(T, K, dtype):
    """The routing of a mixture of experts: one score per lane, 32 experts per warp, the k = 2, 4 and 8 largest
    scores with their expert numbers (values)."""
    sels = [Selection(32, k, None, True, True) for k in (2, 4, 8)]
    tile = T * K

    def body(bid, src, vals, dst, vdst):
        block = coop.this_block()
        warp = coop.this_warp()
        scores = coop.ThreadData(K, dtype)
        experts = coop.ThreadData(K, np.int32)
        coop.load(block, src, scores, offset=bid * tile)
        coop.load(block, vals, experts, offset=bid * tile)
        s2, e2 = coop.topk_max_pairs(warp, scores, experts, k=2)
        coop.store(block, dst, s2, offset=(0 * GRID + bid) * tile)
        coop.store(block, vdst, e2, offset=(0 * GRID + bid) * tile)
        s4, e4 = coop.topk_max_pairs(warp, scores, experts, k=4)
        coop.store(block, dst, s4, offset=(1 * GRID + bid) * tile)
        coop.store(block, vdst, e4, offset=(1 * GRID + bid) * tile)
        s8, e8 = coop.topk_max_pairs(warp, scores, experts, k=8)
        coop.store(block, dst, s8, offset=(2 * GRID + bid) * tile)
        coop.store(block, vdst, e8, offset=(2 * GRID + bid) * tile)

    return (body, *_topk_case(T, K, dtype, sels))


def _topk_sibling_paths(T, K, dtype):
    """Sibling logical warps of 16 lanes on different paths around a one-key-per-lane top-k (SPEC 2.7: different
    sibling groups may take different paths): each half-warp takes its 3 smallest keys at one of two call sites, as
    a loaded route (1 or 2) says (loaded data: the participation analysis accepts it), while the other half of its
    warp may be at the other. Each logical warp's shuffles must name only its own lanes (a full-warp mask there is
    undefined)."""
    sels = [Selection(16, 3, None, False)]
    tile = T * K

    @staged.jit
    def body(bid, src, route, dst):
        block = coop.this_block()
        lanes = coop.this_warp().group_by(16)
        keys = coop.ThreadData(K, dtype)
        coop.load(block, src, keys, offset=bid * tile)
        out = coop.ThreadData(K, dtype)
        if route[bid * T + block.rank_as(np.int32)] == 1:
            first = coop.topk_min_keys(lanes, keys, k=3)
            for i in range(K):
                out[i] = first[i]
        else:
            second = coop.topk_min_keys(lanes, keys, k=3)
            for i in range(K):
                out[i] = second[i]
        coop.store(block, dst, out, offset=bid * tile)

    n = GRID * tile
    oracle, extras = _topk_case(T, K, dtype, sels)
    src, dst = extras["operands"]
    route = Array("route", np.int32, n, "in", lambda rng: np.repeat(rng.integers(1, 3, n // 16), 16).astype(np.int32))
    return body, oracle, {**extras, "operands": (src, route, dst)}


def _topk_dtypes(T, K, dtype):
    """Every dtype: a warp's smallest keys with values over all but the last 5 positions (the pad then competes
    with valid keys equal to it), a logical warp of 8 lanes' largest keys."""
    N = 32 * K
    sels = [Selection(32, 6, N - 5, False, True), Selection(8, 3, None, True)]
    tile = T * K

    def body(bid, src, vals, dst, vdst):
        block = coop.this_block()
        keys = coop.ThreadData(K, dtype)
        values = coop.ThreadData(K, np.int32)
        coop.load(block, src, keys, offset=bid * tile)
        coop.load(block, vals, values, offset=bid * tile)
        low, carried = coop.topk_min_pairs(coop.this_warp(), keys, values, k=6, valid_items=N - 5)
        coop.store(block, dst, low, offset=(0 * GRID + bid) * tile)
        coop.store(block, vdst, carried, offset=(0 * GRID + bid) * tile)
        high = coop.topk_max_keys(coop.this_warp().group_by(8), keys, k=3)
        coop.store(block, dst, high, offset=(1 * GRID + bid) * tile)

    return (body, *_topk_case(T, K, dtype, sels))


# ------------------------------------------------------------------------------------------- the case list



# ------------------------------------------------------------------------------------------- shuffle


def _shuffle(mode):
    def factory(T, K, dtype):
        def body(bid, src, dst):
            block = coop.this_block()
            items = coop.ThreadData(K, dtype)
            coop.load(block, src, items, offset=bid * (T * K))
            moved = coop.shuffle(block, items, mode=mode)
            coop.store(block, dst, moved, offset=bid * (T * K))

        def oracle(v):
            t = tiles(v["src"], T * K)
            shifted = np.roll(t, 1 if mode == "up" else -1, axis=1)
            return {"dst": shifted.reshape(-1)}

        unspecified = 0 if mode == "up" else T * K - 1  # position 0 (up) and the last one (down)

        def canon(name, array):
            out = tiles(array, T * K).copy()
            out[:, unspecified] = 0
            return out.reshape(-1)
        return body, oracle, {"canon": canon}
    return factory


# ------------------------------------------------------------------------------------------- logical warps


def _logical_warp_reduce(op, width):
    def factory(T, K, dtype):
        def body(bid, src, out):
            block = coop.this_block()
            items = coop.ThreadData(K, dtype)
            coop.load(block, src, items, offset=bid * (T * K))
            lanes = coop.this_warp().group_by(width)
            r = coop.reduce(lanes, items, binary_op=op)
            coop.store(block, out, r, offset=bid * T)

        def oracle(v):
            per_group = tiles(v["src"], width * K)
            folded = _FOLD[op].reduce(per_group, axis=1, dtype=per_group.dtype)
            return {"out": np.repeat(folded, width)}
        return body, oracle, {}
    return factory


# ------------------------------------------------------------------------------------------- run-length decode into


def _run_length_decode_into(T, K, dtype):
    D = 2 * K
    capacity = 3 * T * K  # lengths are 1..3

    def body(bid, values, lengths, dst, totals):
        block = coop.this_block()
        v = coop.ThreadData(K, dtype)
        n = coop.ThreadData(K, np.int32)
        coop.load(block, values, v, offset=bid * (T * K))
        coop.load(block, lengths, n, offset=bid * (T * K))
        total = coop.run_length_decode_into(block, v, n, dst, decoded_items_per_thread=D,
                                            destination_offset=bid * capacity)
        coop.store(block, totals, total, offset=bid * T)

    def oracle(v):
        dst = v["dst"].copy()  # the poison past each block's stream stays
        totals = []
        for b, (vals, lens) in enumerate(zip(tiles(v["values"], T * K), tiles(v["lengths"], T * K))):
            stream = np.repeat(vals, lens.astype(np.int64))
            dst[b * capacity:b * capacity + stream.size] = stream
            totals.append(np.full(T, stream.size, np.uint32))
        return {"dst": dst, "totals": np.concatenate(totals)}
    return body, oracle, {"capacity": capacity}


def _operands(family, T, K, dtype, extra):
    if "operands" in extra:  # the factory's own (broadcast)
        return extra["operands"]
    n = GRID * T * K
    if family in ("load_store", "exchange", "scan", "adjacent_difference", "topk", "shuffle"):
        make = unique_per_tile(dtype, T * K) if family == "topk" else small(dtype)
        return (Array("src", dtype, n, "in", make(n)), Array("dst", dtype, n, "out"))
    if family == "running_scan":  # TILES tiles per block; their flags, tile by tile, from _running_flags
        size = n * TILES
        return (Array("src", dtype, size, "in", small(dtype)(size)),
                Array("flags", np.int32, size, "in", _running_flags(T * K, size)),
                Array("dst", dtype, size, "out"))
    if family == "segmented_scan":  # a head flag at about one position in four
        return (Array("src", dtype, n, "in", small(dtype)(n)),
                Array("flags", np.int32, n, "in", lambda rng: (rng.random(n) < 0.25).astype(np.int32)),
                Array("dst", dtype, n, "out"))
    if family == "argreduce":
        def values(rng):  # ties, and for floats NaNs and signed zeros (NumPy's first-occurrence rule)
            x = small(dtype, -5, 5)(n)(rng)
            if np.dtype(dtype).kind == "f":
                x[rng.random(n) < 0.004] = np.nan
                zeros = np.flatnonzero(x == 0)
                x[zeros[::2]] = -0.0
            return x
        index_dtype = np.int64 if extra["indices"] else np.int32
        ops = [Array("src", dtype, n, "in", values)]
        if extra["indices"]:
            ops.append(Array("pos", np.int64, n, "in", lambda rng: rng.permutation(n).astype(np.int64) + 10**10))
        ops += [Array("val_out", dtype, GRID * T, "out"), Array("idx_out", index_dtype, GRID * T, "out")]
        if extra["valid"] == "runtime":
            ops.append(Int("n", extra["tile"] // 3 + 1))
        return tuple(ops)
    if family == "multi_operand":
        out = GRID * T if extra["reduce"] else n
        return (Array("src", dtype, n, "in", small(dtype)(n)),
                Array("src2", np.int64, n, "in", lambda rng: rng.integers(-10**9, 10**9, n).astype(np.int64)),
                Array("dst", dtype, out, "out"), Array("dst2", np.int64, out, "out"))
    if family == "load_partial":
        return (Array("src", dtype, n, "in", small(dtype)(n)), Array("dst", dtype, 2 * n, "out"),
                Int("n", T * K // 2 + 1))
    if family == "logical_warp_reduce":
        return (Array("src", dtype, n, "in", small(dtype)(n)), Array("out", dtype, GRID * T, "out"))
    if family == "run_length_decode_into":
        return (Array("values", dtype, n, "in", small(dtype, 1, 100)(n)),
                Array("lengths", np.int32, n, "in", small(np.int32, 1, 4)(n)),
                Array("dst", dtype, GRID * extra["capacity"], "out"), Array("totals", np.uint32, GRID * T, "out"))
    if family == "reduce":
        return (Array("src", dtype, n, "in", small(dtype)(n)), Array("out", dtype, GRID * T, "out"))
    if family in ("merge_sort_keys", "merge_sort_pairs"):
        ops = [Array("keys_in", dtype, n, "in", unique_per_tile(dtype, T * K)(n))]
        if family == "merge_sort_pairs":
            ops.append(Array("vals_in", np.int32, n, "in", small(np.int32, -10**6, 10**6)(n)))
        ops.append(Array("keys_out", dtype, n, "out"))
        if family == "merge_sort_pairs":
            ops.append(Array("vals_out", np.int32, n, "out"))
        return tuple(ops)
    if family in ("radix_sort_keys", "radix_sort_pairs"):
        if family == "radix_sort_keys":
            return (Array("keys_in", dtype, n, "in", full_range(dtype)(n)), Array("keys_out", dtype, n, "out"))
        return (Array("keys_in", dtype, n, "in", small(dtype, -20, 20)(n)),  # repeated keys: stability shows
                Array("vals_in", np.float32, n, "in", small(np.float32)(n)),
                Array("keys_out", dtype, n, "out"), Array("vals_out", np.float32, n, "out"))
    if family == "histogram":
        bins = extra["bins"]
        return (Array("src", dtype, n, "in", lambda rng: rng.integers(0, bins, n).astype(dtype)),
                Array("counts_out", np.int32, GRID * T * extra["per_thread"], "out"))
    if family == "discontinuity":
        src = Array("src", dtype, n, "in", small(dtype, 1, 4)(n))  # few distinct values: runs and boundaries
        if extra.get("both"):
            return (src, Array("heads_out", np.int32, n, "out"), Array("tails_out", np.int32, n, "out"))
        return (src, Array("flags_out", np.int32, n, "out"))
    if family == "run_length_decode":
        return (Array("values", dtype, n, "in", small(dtype, 1, 100)(n)),
                Array("lengths", np.int32, n, "in", small(np.int32, 1, 4)(n)),
                Array("dst", dtype, GRID * T * extra["D"], "out"), Int("start", WINDOW_START))
    raise AssertionError(family)


# (family, variant name, factory, dtypes, combos)
_VARIANTS = [
    ("load_store", "direct", _load_store("direct", "direct", False), INT_AND_FLOAT, COMBOS_3D),
    ("load_store", "striped", _load_store("striped", "striped", False), INT_AND_FLOAT, COMBOS_3D),
    ("load_store", "transpose", _load_store("transpose", "transpose", True), INT_AND_FLOAT, COMBOS_3D),
    ("load_store", "striped_as_blocked", _load_store("striped", "direct", False), INT_AND_FLOAT, COMBOS_3D),
    # vector accesses of 4 to 16 bytes, or CUB's scalar fallback where a thread's items make no such vector
    ("load_store", "vectorize", _load_store("vectorize", "vectorize", True), INT_AND_FLOAT, COMBOS_3D),
    ("load_store", "vectorize_widths", _load_store("vectorize", "vectorize", False),
     (np.int8, np.int16, np.int64, np.float64), COMBOS_3D),
    # 16-byte vectors of narrow items, aligned and not
    *[("load_store", f"vectorize_shift{shift}", _load_store_shifted(shift), (np.int8, np.int16, np.float32),
       (((32, 1, 1), 16), ((8, 4, 1), 8))) for shift in (0, 1)],
    ("load_partial", "valid_items", _load_partial, INT_AND_FLOAT, COMBOS_3D),
    ("exchange", "blocked_to_striped", _exchange("blocked_to_striped"), INT_AND_FLOAT, COMBOS_3D),
    ("exchange", "striped_to_blocked", _exchange("striped_to_blocked"), INT_AND_FLOAT, COMBOS_3D),
    ("exchange", "storage_attributes", _exchange_storage_attributes, (np.int32,), (((128, 1, 1), 4),)),
    ("exchange", "index_globals", _exchange_index_globals, (np.int32,), (((128, 1, 1), 4),)),
    ("load_store", "converted_results", _converted_results, (np.int32,), (((128, 1, 1), 4), ((8, 4, 1), 2))),
    ("reduce", "block_sum", _reduce("sum", False), INT_AND_FLOAT, COMBOS_3D),
    ("reduce", "block_min", _reduce("min", False), INT_AND_FLOAT, COMBOS_3D),
    ("reduce", "block_max", _reduce("max", False), INT_AND_FLOAT, COMBOS_3D),
    ("reduce", "warp_sum", _reduce("sum", True), INT_AND_FLOAT, COMBOS_3D),
    ("reduce", "warp_min", _reduce("min", True), INT_AND_FLOAT, COMBOS_3D),
    ("reduce", "warp_max", _reduce("max", True), INT_AND_FLOAT, COMBOS_3D),
    ("scan", "inclusive_sum", _scan("inclusive_sum"), INT_AND_FLOAT, COMBOS_3D),
    ("scan", "exclusive_sum", _scan("exclusive_sum"), INT_AND_FLOAT, COMBOS_3D),
    ("scan", "inclusive_max", _scan("inclusive_max"), INT_AND_FLOAT, COMBOS_3D),
    ("scan", "exclusive_max", _scan("exclusive_max"), INT_AND_FLOAT, COMBOS_3D),
    ("scan", "results_in_branches", _scans_in_branches, INT_AND_FLOAT, COMBOS_3D),
    ("scan", "reverse_inclusive_sum", _reverse_scan("inclusive_sum"), INT_AND_FLOAT, COMBOS_3D),
    ("scan", "reverse_exclusive_sum", _reverse_scan("exclusive_sum"), INT_AND_FLOAT, COMBOS_3D),
    ("scan", "reverse_exclusive_max", _reverse_scan("exclusive_max"), INT_AND_FLOAT, COMBOS_3D),
    ("scan", "reverse_inclusive_keep_right", _reverse_scan("inclusive_keep_right"), INT_AND_FLOAT, COMBOS_3D),
    ("scan", "reverse_warp_inclusive_keep_right", _reverse_scan("inclusive_keep_right", 32), INT_AND_FLOAT,
     COMBOS_3D),
    ("scan", "reverse_warp_exclusive_max", _reverse_scan("exclusive_max", 32), INT_AND_FLOAT, COMBOS_3D),
    ("scan", "reverse_lw8_exclusive_sum", _reverse_scan("exclusive_sum", 8), INT_AND_FLOAT, COMBOS_3D),
    ("argreduce", "argmax_block", _argreduce(True, "block"), INT_AND_FLOAT, COMBOS_3D),
    ("argreduce", "argmin_block", _argreduce(False, "block"), INT_AND_FLOAT, COMBOS_3D),
    ("argreduce", "argmax_block_dtypes", _argreduce(True, "block"), TEN_DTYPES, (((128, 1, 1), 2),)),
    ("argreduce", "argmin_block_valid_static", _argreduce(False, "block", valid=37), INT_AND_FLOAT, COMBOS_3D),
    ("argreduce", "argmax_block_valid_runtime", _argreduce(True, "block", valid="runtime"), INT_AND_FLOAT,
     COMBOS_3D),
    ("argreduce", "argmin_block_scalar", _argreduce(False, "block_scalar"), INT_AND_FLOAT, COMBOS_3D),
    ("argreduce", "argmax_warp", _argreduce(True, "warp"), INT_AND_FLOAT, COMBOS_3D),
    ("argreduce", "argmin_lw8_indices", _argreduce(False, "lw8", with_indices=True), INT_AND_FLOAT, COMBOS_3D),
    # blocks whose last warp is partial (CUB's BlockReduce path) and a block's indices (pairs carry the position)
    ("argreduce", "argmax_block_partial_warp", _argreduce(True, "block"), INT_AND_FLOAT, (((48, 1, 1), 3),
                                                                                           ((20, 3, 1), 2))),
    ("argreduce", "argmin_block_valid_partial_warp", _argreduce(False, "block", valid=37), (np.float32,),
     (((48, 1, 1), 3),)),
    ("argreduce", "argmin_block_indices", _argreduce(False, "block", with_indices=True), INT_AND_FLOAT,
     COMBOS_3D + (((48, 1, 1), 2),)),
    # broadcast (SPEC 8.19): blocks of one, two and three dimensions and with a partial warp, warps, logical warps
    # of every kind of width; src_rank at both ends, literal and runtime; scalars, payloads and tuples mixing them
    ("broadcast", "block_first", _bcast_block("payload", "first"), INT_AND_FLOAT, BCAST_BLOCK_COMBOS),
    ("broadcast", "block_last_runtime", _bcast_block("payload", "last", runtime=True), INT_AND_FLOAT,
     BCAST_BLOCK_COMBOS),
    ("broadcast", "block_dtypes", _bcast_block("payload", "last"), (np.int8, np.uint16, np.int64, np.uint64,
                                                                     np.float64), (((128, 1, 1), 2),)),
    ("broadcast", "block_scalar_last", _bcast_block("scalar", "last"), INT_AND_FLOAT, BCAST_BLOCK_COMBOS),
    ("broadcast", "block_tuple_mixed", _bcast_block_tuple, INT_AND_FLOAT, BCAST_BLOCK_COMBOS),
    ("broadcast", "block_temp_storage", _bcast_block_storage, INT_AND_FLOAT, BCAST_BLOCK_COMBOS[1:4]),
    ("broadcast", "warp_scalar_first", _bcast_warp("scalar", "first"), INT_AND_FLOAT, BCAST_WARP_COMBOS),
    ("broadcast", "warp_last_runtime", _bcast_warp("payload", "last", runtime=True), INT_AND_FLOAT,
     BCAST_WARP_COMBOS),
    ("broadcast", "warp_dtypes", _bcast_warp("payload", "last"), TEN_DTYPES, (((64, 1, 1), 2),)),
    ("broadcast", "warp_tuple_scalars", _bcast_warp("scalars", "last"), INT_AND_FLOAT, BCAST_WARP_COMBOS),
    ("broadcast", "lw_pow2_last", _bcast_lw_pow2_last, INT_AND_FLOAT, BCAST_WARP_COMBOS),
    ("broadcast", "lw_pow2_first_runtime", _bcast_lw_pow2_first, INT_AND_FLOAT, BCAST_WARP_COMBOS),
    ("broadcast", "lw_odd_last", _bcast_lw_odd_last, (np.int32, np.float32, np.float64), BCAST_WARP_COMBOS),
    ("broadcast", "lw_odd_runtime", _bcast_lw_odd_runtime, INT_AND_FLOAT, BCAST_WARP_COMBOS),
    ("broadcast", "lw_tuple_payloads", _bcast_lw_tuple, INT_AND_FLOAT, BCAST_WARP_COMBOS),
    # select and partition (SPEC 8.20): blocks of every shape, warps and logical warps of 1-32 lanes; payloads,
    # scalars (flagged by comparisons) and tuples of mixed dtypes; valid_items none, static, runtime, 0, 1 and the
    # tile; flags of several integer dtypes, all zero and all set; explicit TempStorage
    ("select", "block_select_runtime", _select_block(False, "runtime"), INT_AND_FLOAT, SELECT_BLOCK_COMBOS),
    ("select", "block_partition_runtime", _select_block(True, "runtime"), INT_AND_FLOAT, SELECT_BLOCK_COMBOS),
    ("select", "block_select_whole", _select_block(False, None), INT_AND_FLOAT, SELECT_BLOCK_COMBOS),
    ("select", "block_partition_static", _select_block(True, 37), INT_AND_FLOAT, SELECT_BLOCK_COMBOS),
    ("select", "block_partition_dtypes", _select_block(True, "runtime"), TEN_DTYPES, (((128, 1, 1), 2),)),
    ("select", "block_select_dtypes", _select_block(False, None), TEN_DTYPES, (((20, 3, 1), 3),)),
    ("select", "block_select_scalar", _select_block_scalar(False), INT_AND_FLOAT, SELECT_BLOCK_COMBOS),
    ("select", "block_partition_scalar", _select_block_scalar(True), INT_AND_FLOAT, SELECT_BLOCK_COMBOS),
    ("select", "block_partition_tuple", _select_block_tuple, INT_AND_FLOAT, SELECT_BLOCK_COMBOS),
    ("select", "block_select_tuple_scalars", _select_block_tuple_scalars, INT_AND_FLOAT, SELECT_BLOCK_COMBOS),
    ("select", "block_temp_storage", _select_block_storage, INT_AND_FLOAT, SELECT_BLOCK_COMBOS[1:4]),
    ("select", "warp_select", _select_warp(False, None), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("select", "warp_partition", _select_warp(True, None), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("select", "warp_partition_tuple", _select_warp_tuple, INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("select", "warp_select_dtypes", _select_warp(False, None), TEN_DTYPES, (((64, 1, 1), 2),)),
    ("select", "lw1_select", _select_warp(False, 1), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("select", "lw2_partition", _select_warp(True, 2), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("select", "lw4_select", _select_warp(False, 4), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("select", "lw8_partition", _select_warp(True, 8), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("select", "lw16_select", _select_warp(False, 16), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("select", "lw32_partition", _select_warp(True, 32), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("select", "lw8_select_scalar", _select_lw_scalar, INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("select", "block_partition_valid0", _select_edges(True, "block", 0, "given"), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS[1:3]),
    ("select", "block_select_valid0", _select_edges(False, "block", 0, "given"), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS[1:3]),
    ("select", "block_partition_valid1", _select_edges(True, "block", 1, "all"), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS[1:3]),
    ("select", "block_select_valid1", _select_edges(False, "block", 1, "given"), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS[1:3]),
    ("select", "block_partition_valid_all", _select_edges(True, "block", "all", "given"), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS[1:3]),
    ("select", "block_partition_flags_none", _select_edges(True, "block", "all", "none"), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS[1:3]),
    ("select", "block_select_flags_none", _select_edges(False, "block", "all", "none"), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS[1:3]),
    ("select", "block_partition_flags_all", _select_edges(True, "block", "all", "all"), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS[1:3]),
    ("select", "block_select_flags_all", _select_edges(False, "block", 1, "all"), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS[1:3]),
    ("select", "warp_partition_valid0", _select_edges(True, "warp", 0, "all"), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("select", "warp_select_valid1", _select_edges(False, "warp", 1, "given"), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("select", "warp_partition_flags_none", _select_edges(True, "warp", "all", "none"), INT_AND_FLOAT,
     SELECT_WARP_COMBOS),
    ("select", "warp_select_flags_all", _select_edges(False, "warp", "all", "all"), INT_AND_FLOAT,
     SELECT_WARP_COMBOS),
    # segmented reduce and sum (SPEC 8.21): blocks of every shape (payloads and scalars), warps and logical warps
    # of 1-32 lanes (scalars); compacted, or the totals at segment starts (compacted by select); tuples with a
    # function of tuples; valid_items none, runtime, 0, 1 and the tile; flags all zero and all set
    ("segmented_reduce", "block_sum_compact", _segreduce_block("sum", True, "runtime"), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS),
    ("segmented_reduce", "block_max_compact", _segreduce_block("max", True, None), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS),
    ("segmented_reduce", "block_sum_totals", _segreduce_block("sum", False, "runtime"), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS),
    ("segmented_reduce", "block_min_totals", _segreduce_block("min", False, None), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS),
    ("segmented_reduce", "block_max_dtypes", _segreduce_block("max", True, None), TEN_DTYPES, (((128, 1, 1), 2),)),
    ("segmented_reduce", "block_scalar_min_compact", _segreduce_block_scalar(True), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS),
    ("segmented_reduce", "block_scalar_sum_totals", _segreduce_block_scalar(False), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS),
    ("segmented_reduce", "block_tuple_compact", _segreduce_block_tuple(False), INT_AND_FLOAT, SELECT_BLOCK_COMBOS),
    # the suffix scan rakes pairs and tuples through warp 0 in blocks of whole warps: 32 threads a lane at 1024
    ("segmented_reduce", "block_sum_compact_wide", _segreduce_block("sum", True, "runtime"), INT_AND_FLOAT,
     WIDE_BLOCK_COMBOS),
    ("segmented_reduce", "block_tuple_compact_wide", _segreduce_block_tuple(False), INT_AND_FLOAT, WIDE_BLOCK_COMBOS),
    ("segmented_reduce", "block_tuple_scalars_compact", _segreduce_block_tuple(True), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS),
    ("segmented_reduce", "block_sum_matches_reverse_scan", _segreduce_matches_scan, (np.int32, np.float32,
                                                                                       np.float64), COMBOS_3D),
    ("segmented_reduce", "block_temp_storage", _segreduce_block_storage, INT_AND_FLOAT, SELECT_BLOCK_COMBOS[1:4]),
    ("segmented_reduce", "warp_sum_compact", _segreduce_warp("sum", None, True), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("segmented_reduce", "warp_max_totals", _segreduce_warp("max", None, False), INT_AND_FLOAT,
     SELECT_WARP_COMBOS),
    ("segmented_reduce", "warp_tuple_totals", _segreduce_warp_tuple, INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("segmented_reduce", "lw1_sum_compact", _segreduce_warp("sum", 1, True), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("segmented_reduce", "lw2_min_totals", _segreduce_warp("min", 2, False), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("segmented_reduce", "lw4_max_compact", _segreduce_warp("max", 4, True), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("segmented_reduce", "lw8_sum_totals", _segreduce_warp("sum", 8, False), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("segmented_reduce", "lw16_sum_compact", _segreduce_warp("sum", 16, True), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("segmented_reduce", "lw32_min_compact", _segreduce_warp("min", 32, True), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("segmented_reduce", "block_valid0", _segreduce_edges("block", 0, "given"), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS[1:3]),
    ("segmented_reduce", "block_valid1", _segreduce_edges("block", 1, "all"), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS[1:3]),
    ("segmented_reduce", "block_flags_none", _segreduce_edges("block", "all", "none"), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS[1:3]),
    ("segmented_reduce", "block_flags_all", _segreduce_edges("block", "all", "all"), INT_AND_FLOAT,
     SELECT_BLOCK_COMBOS[1:3]),
    ("segmented_reduce", "warp_valid0", _segreduce_edges("warp", 0, "all"), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("segmented_reduce", "warp_valid1", _segreduce_edges("warp", 1, "given"), INT_AND_FLOAT, SELECT_WARP_COMBOS),
    ("segmented_reduce", "warp_flags_none", _segreduce_edges("warp", "all", "none"), INT_AND_FLOAT,
     SELECT_WARP_COMBOS),
    ("segmented_reduce", "warp_flags_all", _segreduce_edges("warp", "all", "all"), INT_AND_FLOAT,
     SELECT_WARP_COMBOS),
    ("multi_operand", "block_inclusive_scan", _multi("block_inclusive"), INT_AND_FLOAT, COMBOS_3D),
    ("multi_operand", "block_exclusive_scan", _multi("block_exclusive"), INT_AND_FLOAT, COMBOS_3D),
    ("multi_operand", "block_reverse_scan", _multi("block_reverse"), INT_AND_FLOAT, COMBOS_3D),
    ("multi_operand", "warp_inclusive_scan", _multi("warp_inclusive"), INT_AND_FLOAT, COMBOS_3D),
    ("multi_operand", "block_reduce", _multi("block_reduce"), INT_AND_FLOAT, COMBOS_3D),
    ("multi_operand", "warp_reduce", _multi("warp_reduce"), INT_AND_FLOAT, COMBOS_3D),
    ("multi_operand", "block_reduce_reassigned", _multi_reassigned, INT_AND_FLOAT,
     (((32, 1, 1), 2), ((8, 4, 1), 3), ((128, 1, 1), 4))),
    ("segmented_scan", "inclusive_sum", _segmented_scan("inclusive_sum", False), INT_AND_FLOAT, COMBOS_3D),
    ("segmented_scan", "exclusive_max", _segmented_scan("exclusive_max", False), INT_AND_FLOAT, COMBOS_3D),
    ("segmented_scan", "reverse_exclusive_sum", _segmented_scan("exclusive_sum", True), INT_AND_FLOAT, COMBOS_3D),
    ("segmented_scan", "reverse_exclusive_max", _segmented_scan("exclusive_max", True), INT_AND_FLOAT, COMBOS_3D),
    ("segmented_scan", "reverse_inclusive_keep_right", _segmented_scan("inclusive_keep_right", True), INT_AND_FLOAT,
     COMBOS_3D),
    ("segmented_scan", "lw8_exclusive_sum", _segmented_scan("exclusive_sum", False, 8), INT_AND_FLOAT, COMBOS_3D),
    ("segmented_scan", "warp_inclusive_keep_right", _segmented_scan("inclusive_keep_right", False, 32),
     INT_AND_FLOAT, COMBOS_3D),
    ("segmented_scan", "reverse_warp_exclusive_max", _segmented_scan("exclusive_max", True, 32), INT_AND_FLOAT,
     COMBOS_3D),
    ("segmented_scan", "reverse_lw8_inclusive_sum", _segmented_scan("inclusive_sum", True, 8), INT_AND_FLOAT,
     COMBOS_3D),
    # head_flags as a comparison (a boolean scalar)
    ("segmented_scan", "block_scalar_compared_flags", _segmented_compared_flags("exclusive_sum", False),
     INT_AND_FLOAT, COMBOS_3D),
    ("segmented_scan", "reverse_warp_compared_flags", _segmented_compared_flags("inclusive_keep_right", True, 32),
     INT_AND_FLOAT, COMBOS_3D),
    ("segmented_scan", "lw8_compared_flags", _segmented_compared_flags("exclusive_max", False, 8), INT_AND_FLOAT,
     COMBOS_3D),
    # prefix callbacks running a block's scans across tiles (qualified, SPEC 9.6 and 12.9), with head_flags (running
    # segmented scans) and reverse (SPEC 8.24)
    *[("running_scan", variant, _running(variant), INT_AND_FLOAT, RUNNING_COMBOS) for variant in RUNNING_VARIANTS],
    ("merge_sort_keys", "ascending", _merge_sort(False, False), INT_AND_FLOAT, COMBOS_3D),
    ("merge_sort_keys", "descending", _merge_sort(False, True), INT_AND_FLOAT, COMBOS_3D),
    ("merge_sort_pairs", "ascending", _merge_sort(True, False), INT_AND_FLOAT, COMBOS_3D),
    ("radix_sort_keys", "ascending", _radix_sort(False, False), (np.int32, np.uint32), COMBOS_3D),
    ("radix_sort_keys", "descending", _radix_sort(False, True), (np.int32, np.uint32), COMBOS_3D),
    ("radix_sort_pairs", "ascending", _radix_sort(True, False), (np.int32, np.uint32), COMBOS_3D),
    ("histogram", "atomic", _histogram("atomic"), (np.uint8,), COMBOS_1D),
    ("histogram", "sort", _histogram("sort"), (np.uint8,), COMBOS_1D),
    # partial tiles (SPEC 8.23): valid_items static and runtime, 0, 1, the whole tile and random, garbage or never
    # loaded slots past it; radix sort ascending and descending, bit ranges, pairs, oob_default given or absent;
    # histogram atomic and sort, uint8 with 256 bins, several counter dtypes
    ("radix_sort_keys", "partial_random_oob_runtime", _radix_partial(False, False, "random", False, "runtime"),
     RADIX_KEYS, COMBOS_3D),
    ("radix_sort_keys", "partial_random_desc_bits", _radix_partial(False, True, "random", False, "static", (3, 5)),
     (np.int32, np.uint64), COMBOS_3D),
    ("radix_sort_keys", "partial_zero_static", _radix_partial(False, False, "zero", True, "static"), (np.int64,),
     COMBOS_3D),
    ("radix_sort_keys", "partial_one_static", _radix_partial(False, True, "one", True), (np.uint32,), COMBOS_3D),
    ("radix_sort_keys", "partial_full_static", _radix_partial(False, False, "full", True, "static"), (np.int32,),
     COMBOS_3D),
    ("radix_sort_keys", "partial_zero_runtime", _radix_partial(False, False, "zero", False, "runtime"), (np.uint32,),
     COMBOS_3D),
    ("radix_sort_keys", "partial_full_runtime", _radix_partial(False, True, "full", False), (np.int64,), COMBOS_3D),
    ("radix_sort_keys", "partial_unloaded_bits", _radix_partial(False, False, "random", False, None, (4, 0), "valid"),
     (np.int32, np.uint64), COMBOS_3D),
    ("radix_sort_pairs", "partial_random_oob_runtime", _radix_partial(True, False, "random", False, "runtime"),
     (np.int32, np.uint64), COMBOS_3D),
    ("radix_sort_pairs", "partial_random_desc_bits",
     _radix_partial(True, True, "random", False, None, (2, 3), value_dtype=np.int64), (np.uint32, np.int64), COMBOS_3D),
    ("radix_sort_pairs", "partial_static_desc", _radix_partial(True, True, "random", True, "static",
                                                               value_dtype=np.float64), (np.int32,), COMBOS_3D),
    ("radix_sort_pairs", "partial_zero_runtime", _radix_partial(True, False, "zero", False, value_dtype=np.int16),
     (np.uint32,), COMBOS_3D),
    ("radix_sort_pairs", "partial_one_static", _radix_partial(True, False, "one", True, "static"), (np.int64,),
     COMBOS_3D),
    ("radix_sort_pairs", "partial_unloaded", _radix_partial(True, False, "random", False, "static", load="valid"),
     (np.int32,), COMBOS_3D),
    ("histogram", "partial_atomic_random", _histogram_partial("atomic", "random", False),
     (np.uint8, np.int32, np.uint64), COMBOS_1D),
    ("histogram", "partial_sort_random", _histogram_partial("sort", "random", False),
     (np.uint8, np.int64, np.uint32), COMBOS_1D),
    ("histogram", "partial_atomic_256", _histogram_partial("atomic", "random", False, bins=256), (np.uint8,),
     COMBOS_1D),
    ("histogram", "partial_sort_256", _histogram_partial("sort", "random", False, counter=np.uint32, bins=256),
     (np.uint8,), COMBOS_1D),
    ("histogram", "partial_sort_256_zero", _histogram_partial("sort", "zero", False, bins=256), (np.uint8,),
     COMBOS_1D),
    ("histogram", "partial_sort_full_static", _histogram_partial("sort", "full", True, counter=np.int64),
     (np.uint8,), COMBOS_1D),
    ("histogram", "partial_atomic_one_static", _histogram_partial("atomic", "one", True), (np.int32,), COMBOS_1D),
    ("histogram", "partial_sort_zero_static", _histogram_partial("sort", "zero", True, counter=np.uint64),
     (np.uint32,), COMBOS_1D),
    ("histogram", "partial_atomic_full_runtime", _histogram_partial("atomic", "full", False), (np.uint8,),
     COMBOS_1D),
    ("histogram", "partial_atomic_unloaded", _histogram_partial("atomic", "random", False, load="valid"),
     (np.int32,), COMBOS_1D),
    ("histogram", "partial_sort_unloaded_256", _histogram_partial("sort", "random", False, "valid", np.int64, 256),
     (np.uint8,), COMBOS_1D),
    ("adjacent_difference", "left", _adjacent("left"), INT_AND_FLOAT, COMBOS_3D),
    ("adjacent_difference", "right", _adjacent("right"), INT_AND_FLOAT, COMBOS_3D),
    ("discontinuity", "heads", _discontinuity("heads"), INT_AND_FLOAT, COMBOS_3D),
    ("discontinuity", "tails", _discontinuity("tails"), INT_AND_FLOAT, COMBOS_3D),
    ("discontinuity", "heads_and_tails", _discontinuity("heads_and_tails"), INT_AND_FLOAT, COMBOS_3D),
    ("run_length_decode", "window", _run_length_decode, INT_AND_FLOAT, COMBOS_1D),
    ("topk", "max_keys", _topk(True), INT_AND_FLOAT, COMBOS_1D),
    ("topk", "min_keys", _topk(False), INT_AND_FLOAT, COMBOS_1D),
    # top-k on warps and logical warps (SPEC 8.22): k and valid_items at their ends, static and runtime, every width,
    # values carried, ties, NaNs, signed zeros and keys equal to the sort's pad; one key per lane (the routing of a
    # mixture of experts: the shuffle route) and several (the merge route), in blocks of one to three dimensions
    ("topk", "warp_min_keys_k", _topk_warp_k, INT_AND_FLOAT, TOPK_WARP_COMBOS),
    ("topk", "warp_max_keys_valid", _topk_warp_valid, INT_AND_FLOAT, TOPK_WARP_COMBOS),
    ("topk", "lw_min_pairs", _topk_lw(False, False), INT_AND_FLOAT, TOPK_WARP_COMBOS),
    ("topk", "lw_max_pairs_partial", _topk_lw(True, True), INT_AND_FLOAT, TOPK_WARP_COMBOS),
    ("topk", "warp_pairs_runtime", _topk_runtime, INT_AND_FLOAT, TOPK_WARP_COMBOS),
    ("topk", "moe_routing", _topk_moe, (np.float32, np.float64, np.int32), MOE_COMBOS),
    ("topk", "lw16_sibling_paths", _topk_sibling_paths, INT_AND_FLOAT, MOE_COMBOS),
    ("topk", "warp_dtypes", _topk_dtypes, TEN_DTYPES, (((64, 1, 1), 1), ((64, 1, 1), 2))),
    ("shuffle", "up", _shuffle("up"), INT_AND_FLOAT, COMBOS_1D),
    ("shuffle", "down", _shuffle("down"), INT_AND_FLOAT, COMBOS_1D),
    ("logical_warp_reduce", "sum_8", _logical_warp_reduce("sum", 8), INT_AND_FLOAT, COMBOS_3D),
    ("logical_warp_reduce", "max_4", _logical_warp_reduce("max", 4), INT_AND_FLOAT, COMBOS_3D),
    ("run_length_decode_into", "whole", _run_length_decode_into, INT_AND_FLOAT, COMBOS_1D),
]

#: Cases known to fail on one backend: {case id prefix: {backend: reason}}. Filled from /tmp/conformance_findings.md.
KNOWN_FAILURES: dict[str, dict[str, str]] = {}


def _build() -> list[Case]:
    cases = []
    for family, variant, factory, dtypes, combos in _VARIANTS:
        for dtype in dtypes:
            for block, K in combos:
                T = int(np.prod(block))
                body, oracle, extra = factory(T, K, dtype)
                if family == "discontinuity" and variant == "heads_and_tails":
                    extra = {**extra, "both": True}
                shape = "x".join(map(str, block))
                case_id = f"{family}-{variant}-{dname(dtype)}-k{K}-{shape}"
                known = {}
                for prefix, reasons in KNOWN_FAILURES.items():
                    if case_id.startswith(prefix):
                        known.update(reasons)
                cases.append(Case(case_id, family, body, block, GRID, _operands(family, T, K, dtype, extra), oracle,
                                  canon=extra.get("canon"), known_failures=known, verify=extra.get("verify")))
    return cases


CASES: list[Case] = _build()
BY_ID: dict[str, Case] = {c.id: c for c in CASES}


def group_of(case: Case) -> str:
    """The case's (family, variant, dtype), as its id spells them: ``family-variant-dtype``."""
    return case.id.rsplit("-", 2)[0]


def combination_of(case: Case) -> tuple[str, tuple[int, int, int], str]:
    """The case's family with its (block shape, K) combination."""
    return case.family, case.block, case.id.rsplit("-", 2)[1]


def compile_subset() -> list[Case]:
    """One case per (family, variant, dtype) group, in the order of CASES: what the CPU compile test builds. Each group
    takes the first of its cases whose (block shape, K) combination its family has not built yet, looking from a
    starting point that rotates from group to group; so every combination of CASES is built somewhere, and every
    combination of a family that has at least as many groups as combinations."""
    groups: dict[str, list[Case]] = {}
    for case in CASES:
        groups.setdefault(group_of(case), []).append(case)
    chosen, built = [], set()
    for ordinal, cases in enumerate(groups.values()):
        start = ordinal % len(cases)
        rotated = cases[start:] + cases[:start]
        case = next((c for c in rotated if combination_of(c) not in built), rotated[0])
        built.add(combination_of(case))
        chosen.append(case)
    return chosen


BATCH_SIZE = 8  # cases a CPU compile test builds as one kernel


def compile_batches(backend: str) -> list[tuple[Case, ...]]:
    """compile_subset's cases in the batches the CPU compile test builds, one kernel each: the cases of one family and
    block shape, at most BATCH_SIZE a batch, in the order of compile_subset, each body behind its own value of a
    kernel argument. A build per case spent most of its time parsing the same CUB headers and running the same
    compiler passes (a batch of 8 builds 3-5x faster than its cases one by one, on both backends). A case the backend
    is known to fail stays a batch of its own."""
    batches: list[tuple[Case, ...]] = []
    open_batches: dict[tuple[str, tuple[int, int, int]], list[Case]] = {}
    for case in compile_subset():
        if backend in case.known_failures:
            batches.append((case,))
            continue
        key = (case.family, case.block)
        members = open_batches.setdefault(key, [])
        members.append(case)
        if len(members) == BATCH_SIZE:
            batches.append(tuple(members))
            del open_batches[key]
    batches.extend(tuple(members) for members in open_batches.values())
    return batches


def batch_id(batch: tuple[Case, ...]) -> str:
    """A batch's test id: its one case's id, or its family, block shape and first and last case."""
    if len(batch) == 1:
        return batch[0].id
    x, y, z = batch[0].block
    return f"{batch[0].family}-{x}x{y}x{z}[{batch[0].id}..{batch[-1].id}]"
