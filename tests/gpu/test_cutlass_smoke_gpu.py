"""The CuTe DSL backend on the GPU: first kernels (scan, sum, sort) against NumPy oracles, poisoned outputs."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # before cutlass (the other order once broke torch's schema parser)
cutlass = pytest.importorskip("cutlass")
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.runtime import from_dlpack  # noqa: E402

import cuda.coop.cutlass  # noqa: E402,F401  (registers the backend)
from cuda import coop  # noqa: E402

pytestmark = pytest.mark.gpu
rng = np.random.default_rng(21)
THREADS, K = 128, 4


@cute.kernel
def scan_kernel(src: cute.Tensor, dst: cute.Tensor, total: cute.Tensor):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, offset=bid * (THREADS * K))
    out = coop.exclusive_sum(block, items)
    s = coop.sum(block, items)
    coop.store(block, dst, out, offset=bid * (THREADS * K))
    if block.rank() == 0:
        total[bid] = s


@cute.jit
def scan_launch(src: cute.Tensor, dst: cute.Tensor, total: cute.Tensor, blocks: cutlass.Constexpr):
    scan_kernel(src, dst, total).launch(grid=(blocks, 1, 1), block=(THREADS, 1, 1))


def _poisoned(n, dtype):
    return torch.from_numpy(np.frombuffer(np.full(n * np.dtype(dtype).itemsize, 0x5A, np.uint8).tobytes(),
                                          dtype=dtype).copy()).cuda()


def test_scan_and_sum():
    blocks = 5
    host = rng.integers(-1000, 1000, size=blocks * THREADS * K).astype(np.int32)
    src = torch.from_numpy(host.copy()).cuda()
    dst = _poisoned(host.size, np.int32)
    total = _poisoned(blocks, np.int32)
    scan_launch(from_dlpack(src), from_dlpack(dst), from_dlpack(total), blocks)
    torch.cuda.synchronize()
    tiles = host.reshape(blocks, -1)
    want = np.concatenate([np.zeros((blocks, 1), np.int32), np.cumsum(tiles, axis=1, dtype=np.int32)[:, :-1]], 1)
    np.testing.assert_array_equal(dst.cpu().numpy(), want.ravel())
    np.testing.assert_array_equal(total.cpu().numpy(), tiles.sum(axis=1, dtype=np.int32))
    np.testing.assert_array_equal(src.cpu().numpy(), host)


@cute.kernel
def sort_kernel(src: cute.Tensor, dst: cute.Tensor):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, offset=bid * (THREADS * K), algorithm="transpose")
    keys = coop.radix_sort_keys(block, items)
    coop.store(block, dst, keys, offset=bid * (THREADS * K))


@cute.jit
def sort_launch(src: cute.Tensor, dst: cute.Tensor, blocks: cutlass.Constexpr):
    sort_kernel(src, dst).launch(grid=(blocks, 1, 1), block=(THREADS, 1, 1))


def test_radix_sort():
    blocks = 3
    host = rng.integers(-2**31, 2**31 - 1, size=blocks * THREADS * K, dtype=np.int64).astype(np.int32)
    src = torch.from_numpy(host.copy()).cuda()
    dst = _poisoned(host.size, np.int32)
    sort_launch(from_dlpack(src), from_dlpack(dst), blocks)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(dst.cpu().numpy(), np.sort(host.reshape(blocks, -1), axis=1).ravel())
