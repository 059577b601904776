"""The docs' explorers as test cases: each picture of a ``.. coop-explain::`` or ``.. coop-explorer::`` line, a
kernel that runs the operation the picture draws at the picture's shape, and the output the picture predicts.

The picture (``cuda.coop._cli.explain.picture_for``, what the docs render) is the oracle: its result panels say, cell
by cell, which input elements a slot combines (``x[a:b]``, ``x5-x4``, ``x0!=pred``), which key or value it holds, or
that it is unspecified (``-``). ``expected`` turns those labels into numbers for the kernel's random input, so a test
that compares them checks the drawing against the built kernel. Not a test module itself (no ``test_`` prefix).
"""
from __future__ import annotations

import argparse
import functools
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cuda.coop._cli.explain import add_parser, picture_for
from cuda.coop._cli.render import UNSPECIFIED, Picture

DOCS = Path(__file__).resolve().parents[1] / "docs"
HARDWARE_WARP = 32
PRED, SUCC = 7, -3  # boundary items of the adjacent-difference and discontinuity kernels
XOR_INIT = 0x5BD1E995  # initial_value of the exclusive xor scan
MASK32 = 0xFFFFFFFF

# The operations whose pictures run as kernels here (reduce and sum with head flags too: segment totals); load/store
# and exchange are checked against the same layout rules by tests/gpu/test_layouts_gpu.py, histogram, run-length
# decode and reduce_batched by their own GPU tests.
SHUFFLES = ("shuffle",)
REDUCTIONS = ("reduce", "sum")
SCANS = ("exclusive_sum", "inclusive_sum", "exclusive_scan", "inclusive_scan")
NEIGHBOURS = ("adjacent_difference", "discontinuity")
EXTREMES = ("argmax", "argmin")
BROADCASTS = ("broadcast",)
COMPACTIONS = ("select", "partition")
SORTS = ("merge_sort_keys", "merge_sort_pairs", "radix_sort_keys", "radix_sort_pairs", "radix_rank",
         "topk_min_keys", "topk_max_keys", "topk_min_pairs", "topk_max_pairs")
KERNEL_OPERATIONS = SHUFFLES + REDUCTIONS + SCANS + NEIGHBOURS + SORTS + EXTREMES + BROADCASTS + COMPACTIONS
INDEX_SCALE = 1 << 16  # an argmax kernel writes value * INDEX_SCALE + index: one number checks both


def docs_lines() -> list[tuple[str, str]]:
    """(page, explain arguments) for every picture in the docs, in page order."""
    found = []
    for page in sorted(DOCS.rglob("*.rst")):
        text = page.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(text):
            single = re.match(r"\.\. coop-explain:: (.+)", line)
            if single:
                found.append((page.name, single.group(1).strip()))
            elif line.startswith(".. coop-explorer::"):
                for body in text[number + 1:]:
                    if body.strip() and not body.startswith("   "):
                        break
                    if body.strip():
                        found.append((page.name, body.strip()))
    return found


def parse(arguments: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m cuda.coop")
    add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["explain", *shlex.split(arguments)])


@dataclass(frozen=True)
class Case:
    """One picture and the launch that reproduces it."""

    line: str
    args: argparse.Namespace
    picture: Picture

    @property
    def op(self) -> str:
        return self.args.operation

    @property
    def threads(self) -> int:  # members drawn
        return len(self.picture.panels[0].rows)

    @property
    def items(self) -> int:  # slots of the input payload
        return len(self.picture.panels[0].columns)

    @property
    def warp(self) -> int:  # lanes per logical warp group; 0 for the block
        return self.args.warp_size if self.args.group == "warp" else 0

    @property
    def block(self) -> int:
        """Threads launched: warp groups need complete hardware warps (G5); the first ``threads`` are drawn."""
        return -(-self.threads // HARDWARE_WARP) * HARDWARE_WARP if self.warp else self.threads

    @property
    def scalar(self) -> bool:
        """Whether each member passes one scalar rather than a ThreadData."""
        if self.op in SHUFFLES:
            return self.args.mode not in ("up", "down")
        if self.op in REDUCTIONS + BROADCASTS + COMPACTIONS:
            return self.items == 1
        return self.op in SCANS and bool(self.warp)

    @property
    def segmented(self) -> bool:
        """A scan or reduction with head flags (a reduction's: one total per segment)."""
        return self.op in SCANS + REDUCTIONS and getattr(self.args, "head_flags", None) is not None

    @property
    def counted(self) -> bool:
        """Whether the last result panel is a count (select, partition, compacted segment totals)."""
        return self.op in COMPACTIONS or (self.op in REDUCTIONS and self.args.compact)

    def result_columns(self) -> list[int]:
        return [len(p.columns) for p in self.picture.panels[1:]]


def case_for(line: str) -> Case:
    args = parse(line)
    return Case(line, args, picture_for(args))


def kernel_cases() -> list[Case]:
    return [case_for(line) for _, line in docs_lines() if parse(line).operation in KERNEL_OPERATIONS]


# ---------------------------------------------------------------- inputs and the picture's prediction

def _labels(case: Case, panel: int) -> list[list[str]]:
    return [[cell.label for cell in cells] for _, cells in case.picture.panels[panel].rows]


def inputs(case: Case, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(src, values) for the launch: src is the blocked tile (or one scalar per member), values the payload of the
    pair sorts (a permutation, so that each value names the position it came from), a segmented scan's or
    reduction's head flags, or the flags of a compaction (the picture's, any non-zero value; random past the drawn
    members)."""
    count = case.block * (1 if case.scalar else case.items)
    if case.segmented:
        flags = np.zeros(count, np.int32)
        flags[:len(case.args.head_flags)] = case.args.head_flags
        src = rng.integers(0, 1 << 32, size=count, dtype=np.uint64).astype(np.uint32)
        return src, flags
    if case.op in BROADCASTS + COMPACTIONS:  # distinct values: a slot holding the wrong element shows
        src = (rng.permutation(count) * 3 - count).astype(np.int32)
        flags = rng.choice(np.array([0, 0, 1, -2, 5], np.int32), size=count)
        if case.op in COMPACTIONS:
            drawn = [label.endswith("*") for row in _labels(case, 0) for label in row]
            kept = rng.choice(np.array([1, -2, 5, 127], np.int32), size=len(drawn))
            flags[:len(drawn)] = np.where(drawn, kept, 0)
        return src, flags
    if case.op in SORTS + EXTREMES:
        drawn = [int(v) for row in _labels(case, 0) for v in row]  # the picture's own keys, blocked order
        src = rng.integers(0, max(drawn) + 1, size=count).astype(np.int32)
        src[:len(drawn)] = drawn
    elif case.op == "discontinuity":
        src = rng.integers(0, 3, size=count).astype(np.int32)  # repeats, so both flags occur
    elif case.op in REDUCTIONS + SCANS:
        src = rng.integers(0, 1 << 32, size=count, dtype=np.uint64).astype(np.uint32)
    else:
        src = rng.integers(-1000, 1000, size=count).astype(np.int32)
    values = (rng.permutation(count) + 1000).astype(np.int32)
    return src, values


def _fold(op: str, values: np.ndarray) -> int:
    """The reduction of ``values`` in order: a wrapping uint32 sum, or xor for the operator kernels (an xor of random
    words tells every range of positions apart)."""
    total = 0
    for v in values.tolist():
        total = (total + v) & MASK32 if "sum" in op else total ^ v
    return total


_SLICE = re.compile(r"x\[(\d+):(\d+)\]")
_NEIGHBOUR = re.compile(r"x(\d+)(?:(-|!=)(?:x(\d+)|(pred|succ)))?")


def _cell_value(case: Case, label: str, src: np.ndarray, values: np.ndarray, panel: int) -> int | None:
    if label == UNSPECIFIED:
        return None
    op = case.op
    if case.counted and panel == len(case.picture.panels) - 1:  # the count, the same in every member of a group
        return int(label)
    if op in SHUFFLES + BROADCASTS + COMPACTIONS:
        return int(src[int(label)])
    if op in REDUCTIONS + SCANS:
        start = 0 if op.endswith("_sum") else XOR_INIT
        match = _SLICE.fullmatch(label)
        if match is None:  # an exclusive scan's first position: its initial value alone
            assert label in ("0", "initial_value"), label
            return start
        folded = _fold(op, src[int(match.group(1)):int(match.group(2))])
        if op.startswith("exclusive"):
            folded = (start + folded) & MASK32 if op.endswith("_sum") else start ^ folded
        return folded
    if op in NEIGHBOURS:
        if label == "1":  # discontinuity's edge flag without a boundary item
            return 1
        match = _NEIGHBOUR.fullmatch(label)
        assert match is not None, label
        mine = int(src[int(match.group(1))])
        if match.group(2) is None:  # adjacent_difference copies its edge
            return mine
        other = int(src[int(match.group(3))]) if match.group(3) else {"pred": PRED, "succ": SUCC}[match.group(4)]
        return mine - other if match.group(2) == "-" else int(mine != other)
    if op in EXTREMES:  # "v @ i": the value and the index of its first occurrence
        value, index = (int(part) for part in label.split(" @ "))
        return value * INDEX_SCALE + index
    if op.endswith("_pairs") and panel == 2:  # "vP": the value that was at tile position P
        return int(values[int(label[1:])])
    return int(label)  # a key, or radix_rank's rank


def expected(case: Case, src: np.ndarray, values: np.ndarray) -> list[list[list[int | None]]]:
    """Per result panel, per drawn member, per slot: the value the picture predicts (None: unspecified)."""
    return [[[_cell_value(case, label, src, values, panel) for label in row] for row in _labels(case, panel)]
            for panel in range(1, len(case.picture.panels))]


def check(case: Case, src: np.ndarray, values: np.ndarray, outputs: list[np.ndarray]) -> None:
    """Assert the kernel's outputs (one flat array per result panel, ``columns`` slots per member) are what the
    picture draws. Top-k and merge sort promise no order among what they select or among equal keys: there the
    selected keys are compared as a multiset and each value must travel with its key."""
    want = expected(case, src, values)
    got = [out.reshape(case.block, columns)[:case.threads].tolist()
           for out, columns in zip(outputs, case.result_columns(), strict=True)]
    unordered = case.op.startswith("topk")
    for panel, (predicted, actual) in enumerate(zip(want, got, strict=True), 1):
        defined = [(r, s) for r, row in enumerate(predicted) for s, v in enumerate(row) if v is not None]
        if case.op.endswith("_pairs") and panel == 2 and not case.op.startswith("radix"):
            continue  # unstable sorts and top-k: checked below, value by value
        drawn = [predicted[r][s] for r, s in defined]
        ran = [actual[r][s] for r, s in defined]
        if unordered:
            drawn, ran = sorted(drawn), sorted(ran)
        assert ran == drawn, f"{case.line}: panel {panel} of the picture says {drawn}, the kernel gave {ran}"
    if case.op.endswith("_pairs") and not case.op.startswith("radix"):
        origin = {int(v): p for p, v in enumerate(values.tolist())}
        keys, carried = got
        picked = [(keys[r][s], carried[r][s]) for r, row in enumerate(want[1]) for s, v in enumerate(row)
                  if v is not None]
        positions = [origin.get(value) for _, value in picked]
        assert None not in positions and len(set(positions)) == len(positions), f"{case.line}: values {picked}"
        assert all(int(src[p]) == key for (key, _), p in zip(picked, positions, strict=True)), \
            f"{case.line}: a value left its key: {picked}"


def outputs(case: Case, src: np.ndarray, allocate) -> list[np.ndarray]:
    """The kernel's two output arrays, ``allocate(count, dtype)`` each: out1 takes the first result panel (the
    input's dtype, or int32 flags and ranks), out2 the second (values or tails) or nothing."""
    columns = case.result_columns() + [case.items]
    first = np.int32 if case.op in ("discontinuity", "radix_rank") else src.dtype
    return [allocate(case.block * columns[0], first), allocate(case.block * columns[1], np.int32)]


# ---------------------------------------------------------------- kernels


@functools.cache
def kernel(line: str):
    """The cuda.jit kernel that runs ``line``'s operation: kernel(src, values, out1, out2), where out_j receives
    result panel j, ``columns`` slots per member in rank order."""
    from numba_cuda_mlir import cuda

    import cuda.coop.numba_mlir as numba_coop
    from cuda import coop

    case = case_for(line)
    args, op, K, W = case.args, case.op, case.items, case.warp

    if op in SHUFFLES and case.scalar:
        mode, distance = args.mode, args.distance

        @cuda.jit
        def scalar_shuffle(src, values, out1, out2):
            block = coop.this_block()
            out1[block.rank()] = numba_coop.shuffle(block, src[block.rank()], mode=mode, distance=distance)

        return scalar_shuffle
    if op in SHUFFLES:
        mode = args.mode

        @cuda.jit
        def payload_shuffle(src, values, out1, out2):
            block = coop.this_block()
            items = coop.ThreadData(K)
            coop.load(block, src, items)
            moved = coop.shuffle(block, items, mode=mode)
            for i in range(K):
                out1[block.rank() * K + i] = moved[i]

        return payload_shuffle
    if op in REDUCTIONS:
        broadcast, valid, binary_op = not args.no_broadcast, args.valid_items, "sum" if op == "sum" else "bit_xor"
        if case.segmented:
            return _segment_totals_kernel(case, binary_op)
        if case.scalar:
            @cuda.jit
            def scalar_reduce(src, values, out1, out2):
                block = coop.this_block()
                group = coop.this_warp().group_by(W) if W else coop.this_block()
                out1[block.rank()] = coop.reduce(group, src[block.rank()], binary_op=binary_op, broadcast=broadcast,
                                                 valid_items=valid)

            return scalar_reduce

        @cuda.jit
        def payload_reduce(src, values, out1, out2):
            block = coop.this_block()
            group = coop.this_warp().group_by(W) if W else coop.this_block()
            items = coop.ThreadData(K)
            coop.load(block, src, items)
            out1[block.rank()] = coop.reduce(group, items, binary_op=binary_op, broadcast=broadcast)

        return payload_reduce
    if op in SCANS:
        return _scan_kernel(case)
    if op in BROADCASTS + COMPACTIONS:
        return _movement_kernel(case)
    if op in EXTREMES:
        valid = args.valid_items
        pick = coop.argmax if op == "argmax" else coop.argmin

        @cuda.jit
        def extreme(src, values, out1, out2):
            block = coop.this_block()
            group = coop.this_warp().group_by(W) if W else coop.this_block()
            items = coop.ThreadData(K)
            coop.load(block, src, items)
            value, index = pick(group, items, valid_items=valid)
            out1[block.rank()] = value * INDEX_SCALE + index

        return extreme
    if op == "adjacent_difference":
        direction = args.direction
        pred = PRED if args.boundary and direction == "left" else None
        succ = SUCC if args.boundary and direction == "right" else None

        @cuda.jit
        def differences(src, values, out1, out2):
            block = coop.this_block()
            items = coop.ThreadData(K)
            coop.load(block, src, items)
            result = coop.adjacent_difference(block, items, direction=direction, tile_predecessor_item=pred,
                                              tile_successor_item=succ)
            for i in range(K):
                out1[block.rank() * K + i] = result[i]

        return differences
    if op == "discontinuity":
        mode = args.mode
        pred = PRED if args.boundary and mode != "tails" else None
        succ = SUCC if args.boundary and mode != "heads" else None
        if mode == "heads_and_tails":
            @cuda.jit
            def heads_and_tails(src, values, out1, out2):
                block = coop.this_block()
                items = coop.ThreadData(K)
                coop.load(block, src, items)
                heads, tails = coop.discontinuity(block, items, mode=mode, tile_predecessor_item=pred,
                                                  tile_successor_item=succ)
                for i in range(K):
                    out1[block.rank() * K + i] = heads[i]
                    out2[block.rank() * K + i] = tails[i]

            return heads_and_tails

        @cuda.jit
        def flags(src, values, out1, out2):
            block = coop.this_block()
            items = coop.ThreadData(K)
            coop.load(block, src, items)
            result = coop.discontinuity(block, items, mode=mode, tile_predecessor_item=pred,
                                        tile_successor_item=succ)
            for i in range(K):
                out1[block.rank() * K + i] = result[i]

        return flags
    if op == "radix_rank":
        begin, bits, descending = args.begin_bit, args.radix_bits, args.descending

        @cuda.jit
        def ranks(src, values, out1, out2):
            block = coop.this_block()
            keys = coop.ThreadData(K)
            coop.load(block, src, keys)
            result = coop.radix_rank(block, keys, begin_bit=begin, radix_bits=bits, descending=descending)
            for i in range(K):
                out1[block.rank() * K + i] = result[i]

        return ranks
    return _sort_kernel(op, args, K, W)


def _segment_totals_kernel(case: Case, binary_op: str):
    """reduce or sum with the picture's head flags (from ``values``), valid_items and compact: the totals in out1,
    with compact=True the count in out2."""
    from numba_cuda_mlir import cuda

    from cuda import coop

    K, W, valid = case.items, case.warp, case.args.valid_items
    if case.scalar and case.args.compact:
        @cuda.jit
        def scalar_compact_totals(src, values, out1, out2):
            block = coop.this_block()
            group = coop.this_warp().group_by(W) if W else coop.this_block()
            total, count = coop.reduce(group, src[block.rank()], binary_op=binary_op, head_flags=values[block.rank()],
                                       compact=True, valid_items=valid)
            out1[block.rank()] = total
            out2[block.rank()] = count

        return scalar_compact_totals
    if case.scalar:
        @cuda.jit
        def scalar_totals(src, values, out1, out2):
            block = coop.this_block()
            group = coop.this_warp().group_by(W) if W else coop.this_block()
            out1[block.rank()] = coop.reduce(group, src[block.rank()], binary_op=binary_op,
                                             head_flags=values[block.rank()], valid_items=valid)

        return scalar_totals
    if case.args.compact:
        @cuda.jit
        def payload_compact_totals(src, values, out1, out2):
            block = coop.this_block()
            items, flags = coop.ThreadData(K), coop.ThreadData(K)
            coop.load(block, src, items)
            coop.load(block, values, flags)
            totals, count = coop.reduce(block, items, binary_op=binary_op, head_flags=flags, compact=True,
                                        valid_items=valid)
            for i in range(K):
                out1[block.rank() * K + i] = totals[i]
            out2[block.rank()] = count

        return payload_compact_totals

    @cuda.jit
    def payload_totals(src, values, out1, out2):
        block = coop.this_block()
        items, flags = coop.ThreadData(K), coop.ThreadData(K)
        coop.load(block, src, items)
        coop.load(block, values, flags)
        totals = coop.reduce(block, items, binary_op=binary_op, head_flags=flags, valid_items=valid)
        for i in range(K):
            out1[block.rank() * K + i] = totals[i]

    return payload_totals


def _movement_kernel(case: Case):
    """broadcast (from the picture's src_rank), select or partition (flags from ``values``, the picture's
    valid_items; the count in out2)."""
    from numba_cuda_mlir import cuda

    from cuda import coop

    K, W = case.items, case.warp
    if case.op in BROADCASTS:
        src_rank = case.args.src_rank
        if case.scalar:
            @cuda.jit
            def scalar_broadcast(src, values, out1, out2):
                block = coop.this_block()
                group = coop.this_warp().group_by(W) if W else coop.this_block()
                out1[block.rank()] = coop.broadcast(group, src[block.rank()], src_rank=src_rank)

            return scalar_broadcast

        @cuda.jit
        def payload_broadcast(src, values, out1, out2):
            block = coop.this_block()
            group = coop.this_warp().group_by(W) if W else coop.this_block()
            items = coop.ThreadData(K)
            coop.load(block, src, items)
            result = coop.broadcast(group, items, src_rank=src_rank)
            for i in range(K):
                out1[block.rank() * K + i] = result[i]

        return payload_broadcast
    valid, compact = case.args.valid_items, coop.select if case.op == "select" else coop.partition
    if case.scalar:
        @cuda.jit
        def scalar_compaction(src, values, out1, out2):
            block = coop.this_block()
            group = coop.this_warp().group_by(W) if W else coop.this_block()
            result, count = compact(group, src[block.rank()], values[block.rank()], valid_items=valid)
            out1[block.rank()] = result
            out2[block.rank()] = count

        return scalar_compaction

    @cuda.jit
    def payload_compaction(src, values, out1, out2):
        block = coop.this_block()
        group = coop.this_warp().group_by(W) if W else coop.this_block()
        items, flags = coop.ThreadData(K), coop.ThreadData(K)
        coop.load(block, src, items)
        coop.load(block, values, flags)
        result, count = compact(group, items, flags, valid_items=valid)
        for i in range(K):
            out1[block.rank() * K + i] = result[i]
        out2[block.rank()] = count

    return payload_compaction


def _scan_kernel(case: Case):
    """The scan kernel of ``case``'s form, with the picture's ``reverse`` and head flags (from ``values``)."""
    from numba_cuda_mlir import cuda

    from cuda import coop

    op, K, W = case.op, case.items, case.warp
    inclusive, operator = op.startswith("inclusive"), "sum" if op.endswith("_sum") else "bit_xor"
    initial = None if inclusive else (0 if op.endswith("_sum") else XOR_INIT)
    mode = "inclusive" if inclusive else "exclusive"
    reverse, segmented = case.args.reverse, case.args.head_flags is not None
    if case.scalar:
        if segmented:
            @cuda.jit
            def scalar_segmented_scan(src, values, out1, out2):
                block = coop.this_block()
                group = coop.this_warp().group_by(W)
                out1[block.rank()] = coop.scan(group, src[block.rank()], mode=mode, scan_op=operator,
                                               initial_value=initial, reverse=reverse,
                                               head_flags=values[block.rank()])

            return scalar_segmented_scan

        @cuda.jit
        def scalar_scan(src, values, out1, out2):
            block = coop.this_block()
            group = coop.this_warp().group_by(W)
            out1[block.rank()] = coop.scan(group, src[block.rank()], mode=mode, scan_op=operator,
                                           initial_value=initial, reverse=reverse)

        return scalar_scan
    if segmented:
        @cuda.jit
        def payload_segmented_scan(src, values, out1, out2):
            block = coop.this_block()
            items, flags = coop.ThreadData(K), coop.ThreadData(K)
            coop.load(block, src, items)
            coop.load(block, values, flags)
            result = coop.scan(block, items, mode=mode, scan_op=operator, initial_value=initial, reverse=reverse,
                               head_flags=flags)
            for i in range(K):
                out1[block.rank() * K + i] = result[i]

        return payload_segmented_scan

    @cuda.jit
    def payload_scan(src, values, out1, out2):
        block = coop.this_block()
        items = coop.ThreadData(K)
        coop.load(block, src, items)
        result = coop.scan(block, items, mode=mode, scan_op=operator, initial_value=initial, reverse=reverse)
        for i in range(K):
            out1[block.rank() * K + i] = result[i]

    return payload_scan


def _sort_kernel(op: str, args: argparse.Namespace, K: int, W: int):
    """The merge sort, radix sort or top-k kernel of ``op`` with the picture's options."""
    from numba_cuda_mlir import cuda

    import cuda.coop.numba_mlir as numba_coop
    from cuda import coop

    descending = bool(getattr(args, "descending", False))
    if op == "merge_sort_keys" or op == "merge_sort_pairs":
        valid = args.valid_items
        oob = None if valid is None else int(np.iinfo(np.int32).min if descending else np.iinfo(np.int32).max)
        if op == "merge_sort_pairs":
            @cuda.jit
            def merge_pairs(src, values, out1, out2):
                block = coop.this_block()
                group = coop.this_warp().group_by(W) if W else coop.this_block()
                keys, carried = coop.ThreadData(K), coop.ThreadData(K)
                coop.load(block, src, keys)
                coop.load(block, values, carried)
                sorted_keys, sorted_values = coop.merge_sort_pairs(group, keys, carried, descending=descending,
                                                                   valid_items=valid, oob_default=oob)
                for i in range(K):
                    out1[block.rank() * K + i] = sorted_keys[i]
                    out2[block.rank() * K + i] = sorted_values[i]

            return merge_pairs

        @cuda.jit
        def merge_keys(src, values, out1, out2):
            block = coop.this_block()
            group = coop.this_warp().group_by(W) if W else coop.this_block()
            keys = coop.ThreadData(K)
            coop.load(block, src, keys)
            result = coop.merge_sort_keys(group, keys, descending=descending, valid_items=valid, oob_default=oob)
            for i in range(K):
                out1[block.rank() * K + i] = result[i]

        return merge_keys
    if op == "radix_sort_keys" or op == "radix_sort_pairs":
        striped = args.blocked_to_striped
        if op == "radix_sort_pairs":
            @cuda.jit
            def radix_pairs(src, values, out1, out2):
                block = coop.this_block()
                keys, carried = coop.ThreadData(K), coop.ThreadData(K)
                coop.load(block, src, keys)
                coop.load(block, values, carried)
                sorted_keys, sorted_values = numba_coop.radix_sort_pairs(block, keys, carried, descending=descending,
                                                                         blocked_to_striped=striped)
                for i in range(K):
                    out1[block.rank() * K + i] = sorted_keys[i]
                    out2[block.rank() * K + i] = sorted_values[i]

            return radix_pairs

        @cuda.jit
        def radix_keys(src, values, out1, out2):
            block = coop.this_block()
            keys = coop.ThreadData(K)
            coop.load(block, src, keys)
            result = numba_coop.radix_sort_keys(block, keys, descending=descending, blocked_to_striped=striped)
            for i in range(K):
                out1[block.rank() * K + i] = result[i]

        return radix_keys
    k, valid, select = args.k, args.valid_items, getattr(coop, op)
    if op.endswith("_pairs"):
        @cuda.jit
        def topk_pairs(src, values, out1, out2):
            block = coop.this_block()
            group = coop.this_warp().group_by(W) if W else coop.this_block()
            keys, carried = coop.ThreadData(K), coop.ThreadData(K)
            coop.load(block, src, keys)
            coop.load(block, values, carried)
            chosen_keys, chosen_values = select(group, keys, carried, k=k, valid_items=valid)
            for i in range(K):
                out1[block.rank() * K + i] = chosen_keys[i]
                out2[block.rank() * K + i] = chosen_values[i]

        return topk_pairs

    @cuda.jit
    def topk_keys(src, values, out1, out2):
        block = coop.this_block()
        group = coop.this_warp().group_by(W) if W else coop.this_block()
        keys = coop.ThreadData(K)
        coop.load(block, src, keys)
        result = select(group, keys, k=k, valid_items=valid)
        for i in range(K):
            out1[block.rank() * K + i] = result[i]

    return topk_keys
