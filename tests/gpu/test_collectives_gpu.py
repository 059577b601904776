"""exchange, shuffle, reduce/sum and the scan family on the GPU against NumPy oracles (SPEC 8.3-8.7)."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir  # noqa: F401  (registers the backend)
from cuda import coop
from numba_cuda_mlir import cuda

from gpu_helpers import SEEDED_PER_TEST, check_float_scan, check_float_sum, exact_float_items, full_range, poisoned

pytestmark = pytest.mark.gpu
GRID = 2
rng = SEEDED_PER_TEST  # each test draws from its own generator (tests/gpu/conftest.py)
DTYPES = [np.int8, np.int32, np.uint64, np.float32, np.float64]


def data(n, dtype, small=False):
    """Integers: the whole range but the poison (sums wrap), or 1..3 (``small``: products stay in range). Floats:
    nonzero multiples of 1/8 whose sums are exact in any order, or (``small``) +-0.5 and +-2, whose products are
    exact: float sums and products are compared exactly, so one dropped or repeated item fails."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f" and small:
        return rng.choice([-2.0, -0.5, 0.5, 2.0], n).astype(dtype)
    if dtype.kind == "f":
        return exact_float_items(rng, n, dtype)
    if small:
        return rng.integers(1, 4, n).astype(dtype)
    return full_range(rng, n, dtype)


def group_of(width):
    """Width 0: the block; 32: physical warps; otherwise logical warps."""
    if width == 0:
        return lambda: coop.this_block()
    if width == 32:
        return lambda: coop.this_warp()
    return lambda: coop.this_warp().group_by(width)


def run(kernel, block, *args):
    kernel[GRID, block](*args)
    cuda.synchronize()


def fold(values, op, dtype):
    acc = values[0]
    for v in values[1:]:
        acc = op(acc, v)
    return np.array(acc).astype(dtype)[()]


def my_max(a, b):
    return a if a > b else b


OPS = {"sum": np.add, "max": np.maximum, "min": np.minimum, "multiplies": np.multiply, "bit_xor": np.bitwise_xor,
       my_max: np.maximum}


def _reduce_kernel(width, op, k, algorithm, broadcast, partial):
    is_sum = op == "sum"

    @cuda.jit
    def kernel(src, out, valid):
        block = coop.this_block()
        group = coop.this_block() if width == 0 else (coop.this_warp() if width == 32
                                                      else coop.this_warp().group_by(width))
        rank = np.int64(block.rank())
        base = np.int64(cuda.blockIdx.x) * block.count() * max(k, 1)
        if k == 0:
            value = src[base + rank]
            if partial:
                r = coop.reduce(group, value, binary_op=op, valid_items=valid)
            elif is_sum:
                r = coop.sum(group, value, broadcast=broadcast, algorithm=algorithm)
            else:
                r = coop.reduce(group, value, binary_op=op, broadcast=broadcast, algorithm=algorithm)
        else:
            items = coop.ThreadData(k)
            coop.load(block, src, items, offset=base)
            if is_sum:
                r = coop.sum(group, items, broadcast=broadcast, algorithm=algorithm)
            else:
                r = coop.reduce(group, items, binary_op=op, broadcast=broadcast, algorithm=algorithm)
        out[np.int64(cuda.blockIdx.x) * block.count() + rank] = r

    return kernel


def check_reduce(width, op, k, dtype, algorithm=None, broadcast=True, partial=False, block=(128,)):
    threads = int(np.prod(block))
    g = threads if width == 0 else width
    small = op == "multiplies"  # keep products inside the dtype range
    src = data(GRID * threads * max(k, 1), dtype, small=small)
    out = poisoned(GRID * threads, dtype)
    valid = max(1, g // 2 + 1)
    run(_reduce_kernel(width, op, k, algorithm if width == 0 else None, broadcast, partial), block, src, out,
        np.int32(valid))
    fn = OPS[op]
    per_thread = src.reshape(GRID * threads, max(k, 1))
    for first in range(0, GRID * threads, g):  # each group's first member (groups never straddle blocks)
        members = per_thread[first:first + (valid if partial else g)].reshape(-1)
        got = out[first:first + g] if broadcast and not partial else out[first:first + 1]  # where it is defined
        if np.dtype(dtype).kind == "f" and op == "sum":
            check_float_sum(got, members, what=f"the group from thread {first}")
        else:  # integers wrap as NumPy's do; float products of +-0.5 and +-2 are exact
            np.testing.assert_array_equal(got, fold(members, fn, dtype), err_msg=f"the group from thread {first}")


@pytest.mark.parametrize("algorithm", [None, "raking", "raking_commutative_only"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [0, 1, 3, 4])
def test_block_sum(algorithm, dtype, k):
    check_reduce(0, "sum", k, dtype, algorithm, block=(128,) if k % 2 else (8, 4, 4))


@pytest.mark.parametrize("op", ["max", "min", "multiplies", "bit_xor", my_max])
@pytest.mark.parametrize("width", [0, 32, 16, 8, 1])
def test_reduce_operators_per_group(op, width):
    dtype = np.int32 if op != "multiplies" else np.float64
    check_reduce(width, op, 0 if width else 3, dtype, broadcast=width != 16)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("width", [32, 4])
def test_warp_sum_dtypes(width, dtype):
    check_reduce(width, "sum", 0, dtype, block=(8, 4, 4))


@pytest.mark.parametrize("width", [0, 32, 8])
def test_partial_reductions(width):
    check_reduce(width, "sum", 0, np.int32, partial=True)
    check_reduce(width, "max", 0, np.float32, partial=True)


def test_non_exhaustive_logical_warp_of_24():
    @cuda.jit
    def kernel(src, out):
        block = coop.this_block()
        group = coop.this_warp().group_by(24, exhaustive=False)
        rank = block.rank()
        if group.is_member():
            out[rank] = coop.sum(group, src[rank])

    src = data(128, np.int32)
    out = poisoned(128, np.int32)
    kernel[1, 128](src, out)
    cuda.synchronize()
    for w in range(4):
        want = src[w * 32:w * 32 + 24].sum(dtype=np.int32)
        np.testing.assert_array_equal(out[w * 32:w * 32 + 24], np.full(24, want, np.int32))
    np.testing.assert_array_equal(out[24:32], poisoned(8, np.int32))


def _scan_kernel(width, form, k, op, initial, algorithm):
    @cuda.jit
    def kernel(src, out):
        block = coop.this_block()
        group = coop.this_block() if width == 0 else (coop.this_warp() if width == 32
                                                      else coop.this_warp().group_by(width))
        rank = np.int64(block.rank())
        base = np.int64(cuda.blockIdx.x) * block.count() * max(k, 1)
        if k == 0:
            value = src[base + rank]
            if form == "exclusive_sum":
                r = coop.exclusive_sum(group, value, algorithm=algorithm)
            elif form == "inclusive_sum":
                r = coop.inclusive_sum(group, value, algorithm=algorithm)
            elif form == "exclusive_scan":
                r = coop.exclusive_scan(group, value, scan_op=op, initial_value=initial, algorithm=algorithm)
            else:
                r = coop.scan(group, value, mode="inclusive", scan_op=op, algorithm=algorithm)
            out[base + rank] = r
        else:
            items = coop.ThreadData(k)
            coop.load(block, src, items, offset=base)
            if form == "exclusive_sum":
                r = coop.exclusive_sum(group, items, algorithm=algorithm)
            elif form == "inclusive_sum":
                r = coop.inclusive_sum(group, items, algorithm=algorithm)
            elif form == "exclusive_scan":
                r = coop.exclusive_scan(group, items, scan_op=op, initial_value=initial, algorithm=algorithm)
            else:
                r = coop.scan(group, items, mode="inclusive", scan_op=op, algorithm=algorithm)
            coop.store(block, out, r, offset=base)
            for i in range(k):  # the input is preserved
                src[base + rank * k + i] = items[i]

    return kernel


def check_scan(width, form, k, dtype, op="sum", initial=None, algorithm=None, block=(128,)):
    threads = int(np.prod(block))
    g = threads if width == 0 else width
    src = data(GRID * threads * max(k, 1), dtype)
    original = src.copy()
    out = poisoned(src.size, dtype)
    run(_scan_kernel(width, form, k, op, initial, algorithm if width == 0 else None), block, src, out)
    np.testing.assert_array_equal(src, original)
    fn = OPS[op] if form not in ("exclusive_sum", "inclusive_sum") else np.add
    tile = g * max(k, 1)
    init = np.array(initial if initial is not None else 0).astype(dtype)[()]
    for start in range(0, src.size, tile):
        x = original[start:start + tile]
        got = out[start:start + tile]
        if np.dtype(dtype).kind == "f" and fn is np.add:
            assert init == 0
            check_float_scan(got, x, exclusive=form.startswith("exclusive"), what=f"tile at {start}")
        else:  # integers wrap as NumPy's do; max scans are exact
            np.testing.assert_array_equal(got, scan_oracle(x, fn, form.startswith("exclusive"), init, dtype))


def scan_oracle(x, fn, exclusive, init, dtype):
    """Sequential scan in the payload dtype (integers wrap)."""
    out, acc = [], None
    with np.errstate(over="ignore"):
        for v in x:
            if exclusive:
                out.append(init if acc is None else acc)
                acc = fn(init, v) if acc is None else fn(acc, v)
            else:
                acc = v if acc is None else fn(acc, v)
                out.append(acc)
    return np.array(out).astype(dtype)


@pytest.mark.parametrize("algorithm", [None, "raking_memoize", "warp_scans"])
@pytest.mark.parametrize("form", ["exclusive_sum", "inclusive_sum", "exclusive_scan", "inclusive_scan"])
@pytest.mark.parametrize("k", [0, 1, 3, 4])
def test_block_scans(algorithm, form, k):
    dtype = DTYPES[(k + len(form)) % len(DTYPES)]
    op, initial = ("max", -7 if np.dtype(dtype).kind != "u" else 3) if form.endswith("_scan") else ("sum", None)
    check_scan(0, form, k, dtype, op, initial if form == "exclusive_scan" else None, algorithm,
               block=(128,) if k % 2 else (8, 4, 4))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("form", ["exclusive_sum", "inclusive_sum"])
def test_block_scan_dtypes(form, dtype):
    check_scan(0, form, 4, dtype)


WARP_SCAN_CASES = [(form, "sum") for form in ("exclusive_sum", "inclusive_sum")] + [
    (form, op) for form in ("exclusive_scan", "inclusive_scan") for op in ("sum", "max", my_max)]


@pytest.mark.parametrize("form,op", WARP_SCAN_CASES)
@pytest.mark.parametrize("width", [32, 16, 4])
def test_warp_scans(width, form, op):
    check_scan(width, form, 0, np.int32, op, 5 if form == "exclusive_scan" else None, block=(8, 4, 4))


def _exchange_kernel(width, kind, mode, k):
    @cuda.jit
    def kernel(src, out):
        block = coop.this_block()
        group = coop.this_block() if width == 0 else (coop.this_warp() if width == 32
                                                      else coop.this_warp().group_by(width))
        rank = np.int64(block.rank())
        base = np.int64(cuda.blockIdx.x) * block.count() * k
        items = coop.ThreadData(k)
        coop.load(block, src, items, offset=base)
        if kind == "exchange":
            r = coop.exchange(group, items, mode=mode)
        else:
            r = coop.shuffle(group, items, mode=mode)
        for i in range(k):
            out[base + rank * k + i] = r[i]

    return kernel


@pytest.mark.parametrize("mode", ["striped_to_blocked", "blocked_to_striped"])
@pytest.mark.parametrize("width,block,k", [(0, (128,), 4), (0, (8, 4, 4), 3), (32, (128,), 1), (8, (64,), 4),
                                           (16, (8, 4, 4), 3)])
def test_exchange(width, block, k, mode):
    threads = int(np.prod(block))
    g = threads if width == 0 else width
    src = data(GRID * threads * k, np.float64)
    out = poisoned(src.size, np.float64)
    run(_exchange_kernel(width, "exchange", mode, k), block, src, out)
    for start in range(0, src.size, g * k):
        x = src[start:start + g * k]
        t, i = np.meshgrid(np.arange(g), np.arange(k), indexing="ij")
        # input slot i of member t sits at blocked position t*k+i; the exchange reinterprets it
        if mode == "striped_to_blocked":  # input striped: slot i of t is tile position t + i*g
            tile = np.empty(g * k, x.dtype)
            tile[(t + i * g).ravel()] = x.reshape(g, k).ravel()
            want = tile.reshape(g, k)
        else:  # input blocked; output striped: slot i of t holds position t + i*g
            want = x[(t + i * g)]
        np.testing.assert_array_equal(out[start:start + g * k].reshape(g, k), want)


@pytest.mark.parametrize("mode", ["up", "down"])
@pytest.mark.parametrize("block,k,dtype", [((128,), 4, np.int32), ((8, 4, 4), 3, np.float32), ((64,), 1, np.uint64)])
def test_shuffle(block, k, mode, dtype):
    threads = int(np.prod(block))
    src = data(GRID * threads * k, dtype)
    out = poisoned(src.size, dtype)
    run(_exchange_kernel(0, "shuffle", mode, k), block, src, out)
    n = threads * k
    for start in range(0, src.size, n):
        x, got = src[start:start + n], out[start:start + n]
        if mode == "up":
            np.testing.assert_array_equal(got[1:], x[:-1])
        else:
            np.testing.assert_array_equal(got[:-1], x[1:])


def block_seed(aggregate):
    """A stateless block prefix: every tile starts at 1000 (the aggregate must still be passed)."""
    return aggregate * 0 + 1000


@pytest.mark.parametrize("k", [0, 4])
@pytest.mark.parametrize("form", ["exclusive_sum", "inclusive_sum", "exclusive_scan"])
def test_block_prefix_callback(form, k):
    import cuda.coop.numba_mlir as numba_coop

    @cuda.jit
    def kernel(src, out):
        block = coop.this_block()
        rank = np.int64(block.rank())
        base = np.int64(cuda.blockIdx.x) * block.count() * max(k, 1)
        if k == 0:
            value = src[base + rank]
            if form == "exclusive_sum":
                r = numba_coop.exclusive_sum(block, value, prefix_op=block_seed)
            elif form == "inclusive_sum":
                r = numba_coop.inclusive_sum(block, value, prefix_op=block_seed)
            else:
                r = numba_coop.exclusive_scan(block, value, scan_op="max", prefix_op=block_seed)
            out[base + rank] = r
        else:
            items = coop.ThreadData(k)
            coop.load(block, src, items, offset=base)
            if form == "exclusive_sum":
                r = numba_coop.exclusive_sum(block, items, prefix_op=block_seed)
            elif form == "inclusive_sum":
                r = numba_coop.inclusive_sum(block, items, prefix_op=block_seed)
            else:
                r = numba_coop.exclusive_scan(block, items, scan_op="max", prefix_op=block_seed)
            coop.store(block, out, r, offset=base)

    threads = 128
    src = rng.integers(-500, 2000, GRID * threads * max(k, 1)).astype(np.int32)
    out = poisoned(src.size, np.int32)
    run(kernel, (threads,), src, out)
    tile = threads * max(k, 1)
    seed = np.int32(1000)
    for start in range(0, src.size, tile):
        x = src[start:start + tile]
        fn = np.maximum if form == "exclusive_scan" else np.add
        want = scan_oracle(x, fn, form.startswith("exclusive"), seed, np.int32)
        if form == "inclusive_sum":
            want = (np.cumsum(x, dtype=np.int64) + 1000).astype(np.int32)
        np.testing.assert_array_equal(out[start:start + tile], want)
