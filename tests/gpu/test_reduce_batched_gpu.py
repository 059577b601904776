"""reduce_batched on the GPU against a NumPy oracle per warp / logical warp (SPEC 8.6)."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir  # noqa: F401  (registers the backend)
from cuda import coop
from numba_cuda_mlir import cuda

from gpu_helpers import SEEDED_PER_TEST, full_range, poisoned, reduce_batched_expected

pytestmark = pytest.mark.gpu
GRID = 2
WIDTHS = [1, 2, 4, 8, 16, 32]
LAYOUTS = ("striped", "blocked")
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)


def my_max(a, b):
    return a if a > b else b


ORACLES = {"sum": np.add, "max": np.maximum, my_max: np.maximum}


def batch_counts(width):
    return (1, 3, width, 2 * width + 1)


def data(n, dtype, op):
    if np.dtype(dtype).kind == "f":  # integer-valued, so that float sums are exact in any order
        return rng.integers(-100, 101, n).astype(dtype)
    if op == "sum":
        return full_range(rng, n, np.int32)
    return rng.integers(-(10 ** 6), 10 ** 6, n).astype(dtype)


def make_kernel(width, op):
    """One kernel: B in {1, 3, W, 2W+1}, each reduced to both layouts; blocked tiles of the whole block."""
    b1, b2, b3, b4 = batch_counts(width)
    m1, m2, m3, m4 = (-(-b // width) for b in (b1, b2, b3, b4))

    @cuda.jit
    def kernel(s1, s2, s3, s4, o1s, o1b, o2s, o2b, o3s, o3b, o4s, o4b, kept):
        block = coop.this_block()
        g = coop.this_warp() if width == 32 else coop.this_warp().group_by(width)
        first = np.int64(cuda.blockIdx.x) * block.count()  # linear rank of the block's first thread in the grid
        x1 = coop.ThreadData(b1)
        x2 = coop.ThreadData(b2)
        x3 = coop.ThreadData(b3)
        x4 = coop.ThreadData(b4)
        coop.load(block, s1, x1, offset=first * b1)
        coop.load(block, s2, x2, offset=first * b2)
        coop.load(block, s3, x3, offset=first * b3)
        coop.load(block, s4, x4, offset=first * b4)
        coop.store(block, o1s, coop.reduce_batched(g, x1, binary_op=op), offset=first * m1)
        coop.store(block, o1b, coop.reduce_batched(g, x1, binary_op=op, output_layout="blocked"), offset=first * m1)
        coop.store(block, o2s, coop.reduce_batched(g, x2, binary_op=op, output_layout="striped"), offset=first * m2)
        coop.store(block, o2b, coop.reduce_batched(g, x2, binary_op=op, output_layout="blocked"), offset=first * m2)
        coop.store(block, o3s, coop.reduce_batched(g, x3, binary_op=op, output_layout="striped"), offset=first * m3)
        coop.store(block, o3b, coop.reduce_batched(g, x3, binary_op=op, output_layout="blocked"), offset=first * m3)
        coop.store(block, o4s, coop.reduce_batched(g, x4, binary_op=op, output_layout="striped"), offset=first * m4)
        coop.store(block, o4b, coop.reduce_batched(g, x4, binary_op=op, output_layout="blocked"), offset=first * m4)
        coop.store(block, kept, x4, offset=first * b4)  # the input payload is preserved

    return kernel


def arguments(width, op, dtype, threads):
    """(sources, poisoned outputs in kernel order, poisoned copy of the last input)."""
    n = GRID * threads
    sources = [data(n * b, dtype, op) for b in batch_counts(width)]
    outputs = []
    for b in batch_counts(width):
        outputs += [poisoned(n * -(-b // width), dtype) for _ in LAYOUTS]
    return sources, outputs, poisoned(n * batch_counts(width)[-1], dtype)


def check(width, op, dtype, block):
    threads = int(np.prod(block))
    sources, outputs, kept = arguments(width, op, dtype, threads)
    originals = [s.copy() for s in sources]
    make_kernel(width, op)[GRID, block](*sources, *outputs, kept)
    cuda.synchronize()
    for src, original in zip(sources, originals):
        np.testing.assert_array_equal(src, original)
    np.testing.assert_array_equal(kept, sources[-1])
    for index, batches in enumerate(batch_counts(width)):
        for j, layout in enumerate(LAYOUTS):
            m = -(-batches // width)
            got = outputs[2 * index + j].reshape(-1, m)
            want, defined = reduce_batched_expected(sources[index], width, batches, layout, ORACLES[op], dtype)
            assert defined.sum() == GRID * threads // width * batches  # each batch result in exactly one lane
            np.testing.assert_array_equal(got[defined], want[defined], err_msg=f"W={width} B={batches} {layout}")


@pytest.mark.parametrize("op", ["sum", "max", my_max], ids=["sum", "max", "python_max"])
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
@pytest.mark.parametrize("width", WIDTHS)
def test_reduce_batched_operators(width, dtype, op):
    check(width, op, dtype, (128,))


@pytest.mark.parametrize("block", [(32,), (8, 4, 1)], ids=["32", "8x4x1"])
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
@pytest.mark.parametrize("width", WIDTHS)
def test_reduce_batched_block_shapes(width, dtype, block):
    check(width, "sum", dtype, block)
