"""The CuTe DSL backend on the GPU: first kernels (scan, sum, sort) against NumPy oracles, poisoned outputs."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # before cutlass (the other order once broke torch's schema parser)
cutlass = pytest.importorskip("cutlass")
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.runtime import from_dlpack  # noqa: E402

import cuda.coop.cutlass as cute_coop  # noqa: E402  (registers the backend)
from cuda import coop  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cute_dsl"))
import cute_kernels as ck  # noqa: E402  (the CPU tests' kernels, run here: user functions, fragments in loops)
from gpu_helpers import assert_traps, poisoned  # noqa: E402

pytestmark = pytest.mark.gpu
rng = np.random.default_rng(21)
THREADS, K = 128, 4
assert (ck.THREADS, ck.K) == (THREADS, K)  # the shared kernels tile as these tests do


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
    return torch.from_numpy(poisoned(n, dtype)).cuda()


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


@cute.kernel
def interop_kernel(src: cute.Tensor, dst: cute.Tensor, flags: cute.Tensor):
    """The user's own shared memory beside a TempStorage, register tensors as payloads, fragments read by CuTe."""
    tid, _, _ = cute.arch.thread_idx()
    bid, _, _ = cute.arch.block_idx()
    smem = cutlass.memory.SmemAllocator()
    mine = smem.allocate_tensor(cutlass.Int32, cute.make_layout(THREADS))
    mine[tid] = tid * 3 + 1
    block = coop.this_block()
    frag = cute.make_rmem_tensor((K,), cutlass.Int32)
    cute_coop.load(block, src, frag, offset=bid * (THREADS * K))  # a register tensor: a qualified call
    storage = coop.TempStorage()
    items = cute_coop.ThreadData.from_fragment(frag)
    prefix = coop.inclusive_sum(block, items, temp_storage=storage)
    block.sync()
    for i in cutlass.range_constexpr(K):
        prefix.fragment[i] = prefix.fragment[i] + mine[(tid + 1) % THREADS]
    coop.store(block, dst, prefix, offset=bid * (THREADS * K))
    heads = coop.discontinuity(block, prefix, temp_storage=storage)
    coop.store(block, flags, heads, offset=bid * (THREADS * K))


@cute.jit
def interop_launch(src: cute.Tensor, dst: cute.Tensor, flags: cute.Tensor, blocks: cutlass.Constexpr):
    interop_kernel(src, dst, flags).launch(grid=(blocks, 1, 1), block=(THREADS, 1, 1))


def test_user_shared_memory_beside_temp_storage_and_fragments():
    blocks = 4
    host = rng.integers(0, 3, size=blocks * THREADS * K).astype(np.int32)
    src = torch.from_numpy(host.copy()).cuda()
    dst = _poisoned(host.size, np.int32)
    flags = _poisoned(host.size, np.int32)
    interop_launch(from_dlpack(src), from_dlpack(dst), from_dlpack(flags), blocks)
    torch.cuda.synchronize()
    tiles = host.reshape(blocks, THREADS, K)
    scanned = np.cumsum(tiles.reshape(blocks, -1), axis=1, dtype=np.int32).reshape(blocks, THREADS, K)
    neighbour = ((np.arange(THREADS) + 1) % THREADS * 3 + 1).astype(np.int32)
    want = scanned + neighbour[None, :, None]
    np.testing.assert_array_equal(dst.cpu().numpy(), want.ravel())
    flat = want.reshape(blocks, -1)
    heads = np.ones_like(flat)
    heads[:, 1:] = (flat[:, 1:] != flat[:, :-1]).astype(np.int32)
    np.testing.assert_array_equal(flags.cpu().numpy(), heads.ravel())
    np.testing.assert_array_equal(src.cpu().numpy(), host)


TRAP_CHILD = """
import sys
import numpy as np, torch, cutlass, cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack
import cuda.coop.cutlass
from cuda import coop

@cute.kernel
def k(src: cute.Tensor, dst: cute.Tensor, count: cutlass.Int32):
    block = coop.this_block()
    items = coop.ThreadData(4, np.int32)
    coop.load(block, src, items, valid_items=count, oob_default=0)
    coop.store(block, dst, items)

@cute.jit
def launch(src: cute.Tensor, dst: cute.Tensor, count: cutlass.Int32):
    k(src, dst, count).launch(grid=(1, 1, 1), block=(128, 1, 1))

x = torch.arange(512, dtype=torch.int32, device="cuda")
y = torch.full_like(x, -7)
launch(from_dlpack(x), from_dlpack(y), 300)
torch.cuda.synchronize()
want = np.where(np.arange(512) < 300, np.arange(512), 0)
assert (y.cpu().numpy() == want).all(), "the in-range launch is wrong"
print("IN_RANGE_OK", flush=True)
launch(from_dlpack(x), from_dlpack(y), int(sys.argv[1]))
torch.cuda.synchronize()
print("NO_TRAP", flush=True)
"""


@pytest.mark.parametrize("count", [513, -1])
def test_valid_items_out_of_range_traps(count):
    """An in-range valid_items loads exactly its items; one past the tile or negative traps (SPEC 8.1), and the trap
    is the child's first CUDA error (not an illegal address from a missing guard)."""
    assert_traps(TRAP_CHILD, count)


def test_this_suite_runs_on_the_bitcode_route():
    """The README's install inlines the calls (docs: cutlass, "How it works"): the GPU tests above ran that route."""
    from cuda.coop.cutlass import _route

    assert _route.route() == "bitcode", _route.clang_lookup().reason


FALLBACK_SCRIPT = """
import sys
sys.modules["ziglang"] = None  # as if the ziglang wheel were not installed
import warnings
import numpy as np
import torch
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack
import cuda.coop.cutlass as cute_coop
from cuda import coop
from cuda.coop.cutlass import _route

THREADS, K, BLOCKS = 128, 4, 6

@cute.kernel
def k(src: cute.Tensor, dst: cute.Tensor, keys: cute.Tensor):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, offset=bid * (THREADS * K), algorithm="transpose")
    prefix = coop.exclusive_sum(block, items)
    coop.store(block, dst, prefix, offset=bid * (THREADS * K))
    sorted_items = coop.radix_sort_keys(block, items)
    coop.store(block, keys, sorted_items, offset=bid * (THREADS * K))

@cute.jit
def launch(src: cute.Tensor, dst: cute.Tensor, keys: cute.Tensor):
    k(src, dst, keys).launch(grid=(BLOCKS, 1, 1), block=(THREADS, 1, 1))

host = np.random.default_rng(int(sys.argv[1])).integers(-10**6, 10**6, size=BLOCKS * THREADS * K).astype(np.int32)
src = torch.from_numpy(host.copy()).cuda()
dst = torch.full_like(src, -2**31 + 1)  # outside the inputs' range (tests/poison.py)
keys = torch.full_like(src, -2**31 + 1)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    launch(from_dlpack(src), from_dlpack(dst), from_dlpack(keys))
torch.cuda.synchronize()
tiles = host.reshape(BLOCKS, -1)
want = np.concatenate([np.zeros((BLOCKS, 1), np.int32), np.cumsum(tiles, axis=1, dtype=np.int32)[:, :-1]], 1)
np.testing.assert_array_equal(dst.cpu().numpy(), want.ravel())
np.testing.assert_array_equal(keys.cpu().numpy(), np.sort(tiles, axis=1).ravel())
print("route", _route.route(), "warnings", sum("link route" in str(w.message) for w in caught))
"""


def test_without_ziglang_the_link_route_runs_and_is_correct(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "fallback_kernel.py"
    script.write_text(FALLBACK_SCRIPT)
    done = subprocess.run([sys.executable, str(script), "29"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert done.stdout.split()[-4:] == ["route", "link", "warnings", "1"], done.stdout


# ---- issue 30: large blocks (the link route once failed to link them), builtin operators, fragments in loops
@cute.kernel
def large_sort_kernel(src: cute.Tensor, dst: cute.Tensor, total: cute.Tensor, k: cutlass.Constexpr,
                      threads: cutlass.Constexpr):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(k, np.int32)
    coop.load(block, src, items, offset=bid * (threads * k), algorithm="transpose")
    keys = coop.radix_sort_keys(block, items)
    coop.store(block, dst, keys, offset=bid * (threads * k))
    prefix = coop.inclusive_sum(block, items)
    if block.rank() == threads - 1:
        total[bid] = prefix[k - 1]


@cute.jit
def large_sort_launch(src: cute.Tensor, dst: cute.Tensor, total: cute.Tensor, blocks: cutlass.Constexpr,
                      threads: cutlass.Constexpr, k: cutlass.Constexpr):
    large_sort_kernel(src, dst, total, k, threads).launch(grid=(blocks, 1, 1), block=(threads, 1, 1))


@pytest.fixture(params=["bitcode", "link"])
def route(request, monkeypatch):
    """Each route of the calls (docs: cutlass, "How it works"), chosen afresh for the test."""
    from cuda.coop._cub import bitcode
    from cuda.coop.cutlass import _route

    if request.param == "link":
        monkeypatch.setenv(_route.ROUTE_VARIABLE, "link")
    monkeypatch.setattr(_route, "_warned", set())
    _route.clang_lookup.cache_clear()
    bitcode.find_clang.cache_clear()
    yield request.param
    monkeypatch.delenv(_route.ROUTE_VARIABLE, raising=False)
    _route.clang_lookup.cache_clear()
    bitcode.find_clang.cache_clear()


@pytest.mark.parametrize("threads, k", [(1024, 1), (1024, 4), (512, 8), (512, 16)])
def test_large_blocks_on_both_routes(route, threads, k):
    import warnings

    from cuda.coop.cutlass import _route

    blocks = 3
    host = rng.integers(-10**6, 10**6, size=blocks * threads * k).astype(np.int32)
    src = torch.from_numpy(host.copy()).cuda()
    dst = _poisoned(host.size, np.int32)
    total = _poisoned(blocks, np.int32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        large_sort_launch(from_dlpack(src), from_dlpack(dst), from_dlpack(total), blocks, threads, k)
    torch.cuda.synchronize()
    assert _route.route() == route
    # the kernel was traced and built on this route (the link route says so once)
    assert any("link route" in str(w.message) for w in caught) == (route == "link")
    tiles = host.reshape(blocks, -1)
    np.testing.assert_array_equal(dst.cpu().numpy(), np.sort(tiles, axis=1).ravel())
    np.testing.assert_array_equal(total.cpu().numpy(), tiles.sum(axis=1, dtype=np.int32))


@cute.kernel
def builtin_operator_kernel(src: cute.Tensor, dst: cute.Tensor, low: cute.Tensor):
    bid, _, _ = cute.arch.block_idx()
    block = coop.this_block()
    items = coop.ThreadData(K, np.int32)
    coop.load(block, src, items, offset=bid * (THREADS * K))
    smallest = coop.reduce(block, items, binary_op=min)
    running = coop.inclusive_scan(block, items, scan_op=max)
    coop.store(block, dst, running, offset=bid * (THREADS * K))
    if block.rank() == 0:
        low[bid] = smallest


@cute.jit
def builtin_operator_launch(src: cute.Tensor, dst: cute.Tensor, low: cute.Tensor, blocks: cutlass.Constexpr):
    builtin_operator_kernel(src, dst, low).launch(grid=(blocks, 1, 1), block=(THREADS, 1, 1))


def test_builtin_min_and_max_as_operators():
    blocks = 4
    host = rng.integers(-2**31, 2**31 - 1, size=blocks * THREADS * K, dtype=np.int64).astype(np.int32)
    src = torch.from_numpy(host.copy()).cuda()
    dst = _poisoned(host.size, np.int32)
    low = _poisoned(blocks, np.int32)
    builtin_operator_launch(from_dlpack(src), from_dlpack(dst), from_dlpack(low), blocks)
    torch.cuda.synchronize()
    tiles = host.reshape(blocks, -1)
    np.testing.assert_array_equal(dst.cpu().numpy(), np.maximum.accumulate(tiles, axis=1).ravel())
    np.testing.assert_array_equal(low.cpu().numpy(), tiles.min(axis=1))


def test_a_fragment_payload_carried_through_a_runtime_loop():
    host = rng.integers(-5, 5, size=THREADS * K).astype(np.int32)
    src = torch.from_numpy(host.copy()).cuda()
    dst = _poisoned(host.size, np.int32)
    ck.fragment_loop_launch(from_dlpack(src), from_dlpack(dst), 3)
    torch.cuda.synchronize()
    want = host
    for _ in range(3):
        want = np.cumsum(want, dtype=np.int32)
    np.testing.assert_array_equal(dst.cpu().numpy(), want)


def test_a_payload_typed_inside_a_runtime_loop():
    """Every thread assigns ``src[i] + 1`` for i < K in a ``cutlass.range`` loop, then the block scans the tile."""
    host = rng.integers(-50, 50, size=ck.THREADS * ck.K).astype(np.int32)
    src = torch.from_numpy(host.copy()).cuda()
    dst = _poisoned(host.size, np.int32)
    ck.loop_assignment_launch(from_dlpack(src), from_dlpack(dst))
    torch.cuda.synchronize()
    tile = np.tile(host[:ck.K] + 1, ck.THREADS)
    np.testing.assert_array_equal(dst.cpu().numpy(), np.cumsum(tile, dtype=np.int32))


def test_user_functions_as_operators_on_both_routes(route):
    """The same results as NumPy (and as the numba-cuda-mlir backend's user operators) on either route."""
    import warnings

    blocks = 3
    host = rng.integers(-30, 30, size=blocks * THREADS * K).astype(np.int32)
    src = torch.from_numpy(host.copy()).cuda()
    outs = [_poisoned(host.size, np.int32) for _ in range(4)]
    folded = _poisoned(blocks, np.int32)
    seeded = _poisoned(host.size, np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ck.user_functions_launch(from_dlpack(src), *[from_dlpack(o) for o in outs], from_dlpack(folded),
                                 from_dlpack(seeded), blocks)
    torch.cuda.synchronize()
    tiles = host.reshape(blocks, -1)
    prefix, sorted_out, diffs, heads = (o.cpu().numpy().reshape(blocks, -1) for o in outs)
    exclusive = np.cumsum(tiles, axis=1, dtype=np.int32) - tiles
    np.testing.assert_array_equal(seeded.cpu().numpy().reshape(blocks, -1),
                                  exclusive + (tiles.sum(axis=1, dtype=np.int32) + 1000)[:, None])
    np.testing.assert_array_equal(prefix, np.cumsum(tiles, axis=1, dtype=np.int32))
    np.testing.assert_array_equal(sorted_out, -np.sort(-tiles, axis=1))
    want_diffs = tiles * 2 - np.concatenate([tiles[:, :1], tiles[:, :-1]], axis=1)
    want_diffs[:, 0] = tiles[:, 0]  # the first item has no predecessor: kept
    np.testing.assert_array_equal(diffs, want_diffs)
    step = (tiles[:, 1:] - tiles[:, :-1]).astype(np.int64)
    want_heads = np.concatenate([np.ones((blocks, 1), np.int32), (step * step > 100).astype(np.int32)], axis=1)
    np.testing.assert_array_equal(heads, want_heads)
    np.testing.assert_array_equal(folded.cpu().numpy(), np.bitwise_xor.reduce(tiles, axis=1))


@pytest.mark.parametrize("broadcast", [True, False])
def test_qualified_argmax_in_rank_zero_and_every_warp(broadcast):
    """cuda.coop.cutlass.argmax / argmin with and without the broadcast: rank 0 of the block and lane 0 of every
    warp hold NumPy's (value, first index) either way."""
    blocks, warps = 3, THREADS // 32
    host = rng.integers(-50, 50, size=blocks * THREADS * K).astype(np.int32)  # repeats: ties keep the first
    src = torch.from_numpy(host.copy()).cuda()
    block_out = _poisoned(blocks * 2, np.int32)
    warp_out = _poisoned(blocks * warps * 2, np.int32)
    launch = ck.argmax_broadcast_launch if broadcast else ck.argmax_rank0_launch
    launch(from_dlpack(src), from_dlpack(block_out), from_dlpack(warp_out), blocks)
    torch.cuda.synchronize()
    tiles = host.reshape(blocks, -1)
    at = np.argmax(tiles, axis=1)
    np.testing.assert_array_equal(block_out.cpu().numpy().reshape(blocks, 2),
                                  np.stack([tiles[np.arange(blocks), at], at], 1))
    firsts = tiles.reshape(blocks, THREADS, K)[:, :, 0].reshape(blocks * warps, 32)  # item 0 of every lane
    lane = np.argmin(firsts, axis=1)
    np.testing.assert_array_equal(warp_out.cpu().numpy().reshape(-1, 2),
                                  np.stack([firsts[np.arange(firsts.shape[0]), lane], lane], 1))
