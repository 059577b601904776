"""CuTe backend features launched against NumPy oracles (issue 38, item 4): radix_rank (SPEC 8.10), reduce_batched
(8.6), group queries of every kind and level with the signed types of 12.3 (3.4), fragment interop (12.3) and the
every-family kernel. Random inputs, outputs poisoned with a value outside the inputs' range, exact comparisons, a
generator seeded per test. The kernels live in tests/cute_dsl (CuTe reads their source), where
test_cutlass_features_compile.py builds each launch below without a GPU."""
from __future__ import annotations

import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # before cutlass (the other order once broke torch's schema parser)
cutlass = pytest.importorskip("cutlass")
from cutlass.cute.runtime import from_dlpack  # noqa: E402

import cuda.coop.cutlass  # noqa: E402, F401  (registers the backend)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cute_dsl"))
import cute_feature_kernels as fk  # noqa: E402
import cute_kernels as ck  # noqa: E402
from gpu_helpers import reduce_batched_expected  # noqa: E402

pytestmark = pytest.mark.gpu
THREADS, K = fk.THREADS, fk.K
assert (ck.THREADS, ck.K) == (THREADS, K)


@pytest.fixture
def generator(request):
    """A generator of this test's own (its name, parameters included), so that -k reproduces a failure."""
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


def _device(host):
    return torch.from_numpy(np.ascontiguousarray(host).copy()).cuda()


def _filled(n, dtype, poison):
    return _device(np.full(n, poison, dtype))


def _host(tensor):
    return tensor.cpu().numpy()


def _launch(launcher, *args):
    launcher(*(from_dlpack(a) if isinstance(a, torch.Tensor) else a for a in args))
    torch.cuda.synchronize()


# ---------------------------------------------------------------------------------------------- radix_rank
def ordered_digits(keys, begin, end):
    """The digit [begin, end) of SPEC 8.9's ordered representation (signed integers: sign bit inverted)."""
    bits = keys.dtype.itemsize * 8
    ordered = keys.view(f"uint{bits}").astype(np.uint64)
    if keys.dtype.kind == "i":
        ordered ^= np.uint64(1 << (bits - 1))
    return ((ordered >> np.uint64(begin)) & np.uint64((1 << (end - begin)) - 1)).astype(np.int64)


@pytest.mark.parametrize("begin, end, radix_bits, descending", fk.RADIX_RANK_DIGITS)
@pytest.mark.parametrize("dtype, k, shape", fk.RADIX_RANK_TILES)
def test_radix_rank(generator, dtype, k, shape, begin, end, radix_bits, descending):
    tile, n = fk.radix_rank_sizes(dtype, k, shape)
    info = np.iinfo(dtype)
    keys = generator.integers(info.min + 1, info.max, n, dtype=dtype, endpoint=True)  # info.min: the kept poison
    ranks, kept = _filled(n, np.int32, -1), _filled(n, dtype, info.min)
    src = _device(keys)
    _launch(fk.radix_rank_launch, src, ranks, kept, fk.RADIX_RANK_BLOCKS, shape, k, begin, end, radix_bits,
            descending)

    # NumPy oracle: in each block's tile (blocked order = tile order), a key's rank is its position in the stable
    # order of the digits (descending: larger digits first, ties still in tile order)
    width = radix_bits if radix_bits is not None else (4 if end is None else end - begin)
    want = np.empty(n, np.int32)
    for b in range(fk.RADIX_RANK_BLOCKS):
        digits = ordered_digits(keys[b * tile:(b + 1) * tile], begin, begin + width)
        order = np.argsort(-digits if descending else digits, kind="stable")
        want[b * tile + order] = np.arange(tile, dtype=np.int32)
    np.testing.assert_array_equal(_host(ranks), want)
    np.testing.assert_array_equal(_host(kept), keys)
    np.testing.assert_array_equal(_host(src), keys)


# ---------------------------------------------------------------------------------------------- reduce_batched
ORACLES = {"sum": np.add, "max": np.maximum, "larger": np.maximum}
BATCHED_POISON = {"int32": np.iinfo(np.int32).min, "float32": np.float32(-1e30)}


def batched_data(generator, n, dtype, op):
    if dtype == "float32":  # integer-valued, so that float sums are exact in any order
        return generator.integers(-100, 101, n).astype(np.float32)
    if op == "sum":  # the whole range: int32 sums wrap as on the device (the poison, int32 min, left out)
        return generator.integers(np.iinfo(np.int32).min + 1, np.iinfo(np.int32).max, n, dtype=np.int32,
                                  endpoint=True)
    return generator.integers(-10 ** 6, 10 ** 6, n).astype(np.int32)


@pytest.mark.parametrize("op, dtype", fk.REDUCE_BATCHED_OPERATORS)
@pytest.mark.parametrize("width", fk.REDUCE_BATCHED_WIDTHS)
def test_reduce_batched(generator, width, op, dtype):
    payloads, threads = fk.reduce_batched_sizes(width)
    poison = BATCHED_POISON[dtype]
    sources = [batched_data(generator, threads * b, dtype, op) for b, _ in payloads]
    outputs = [_filled(threads * m, dtype, poison) for _, m in payloads for _layout in ("striped", "blocked")]
    kept = _filled(threads * payloads[-1][0], dtype, poison)
    devices = [_device(s) for s in sources]
    _launch(fk.reduce_batched_launch, *devices, *outputs, kept, fk.REDUCE_BATCHED_BLOCKS, width, op)

    for device, source in zip(devices, sources):
        np.testing.assert_array_equal(_host(device), source)
    np.testing.assert_array_equal(_host(kept), sources[-1])
    for index, (batches, m) in enumerate(payloads):
        for j, layout in enumerate(("striped", "blocked")):
            got = _host(outputs[2 * index + j]).reshape(-1, m)
            want, defined = reduce_batched_expected(sources[index], width, batches, layout, ORACLES[op], dtype)
            assert defined.sum() == threads // width * batches  # each batch result in exactly one lane
            np.testing.assert_array_equal(got[defined], want[defined], err_msg=f"W={width} B={batches} {layout}")


# ---------------------------------------------------------------------------------------------- group queries
def queries_expected(grid, block, cluster):
    """Each thread's row of columns (fk.QUERIES, CONVERSIONS, MEMBERS, SIGNED), by SPEC 3.3 and 3.4, as int64."""
    gx, gy, gz = grid
    cx, cy, cz = cluster or (1, 1, 1)
    threads = int(np.prod(block))
    nw, nblk, ncta = threads // 32, gx * gy * gz, cx * cy * cz
    nclu = nblk // ncta
    rows = np.zeros((nblk * threads, fk.COLUMNS), np.int64)
    for bz in range(gz):
        for by in range(gy):
            for bx in range(gx):
                blk = bx + gx * (by + gy * bz)
                cta = bx % cx + cx * (by % cy + cy * (bz % cz))  # the block's rank in its cluster, x-major
                clu = bx // cx + gx // cx * (by // cy + gy // cy * (bz // cz))
                lin = np.arange(threads, dtype=np.int64)  # SPEC 3.3's x-major linear rank
                lane, w = lin % 32, lin // 32
                row = blk * threads + lin
                one = np.ones_like(lin)
                table = {  # (group, level): (rank, count)
                    ("thread", "thread"): (0 * lin, one), ("thread", "warp"): (lane, 32 * one),
                    ("thread", "block"): (lin, threads * one), ("thread", "cluster"): (cta * threads + lin,
                                                                                     ncta * threads * one),
                    ("thread", "grid"): (row, nblk * threads * one),
                    ("warp", "thread"): (lane, 32 * one), ("warp", "warp"): (0 * lin, one),
                    ("warp", "block"): (w, nw * one), ("warp", "cluster"): (cta * nw + w, ncta * nw * one),
                    ("warp", "grid"): (blk * nw + w, nblk * nw * one),
                    ("lanes8", "thread"): (lane % 8, 8 * one), ("lanes8", "warp"): (lane // 8, 4 * one),
                    ("warp_pair", "thread"): (lin % 64, 64 * one), ("warp_pair", "warp"): (w % 2, 2 * one),
                    ("warp_pair", "block"): (w // 2, nw // 2 * one),
                    ("block", "thread"): (lin, threads * one), ("block", "warp"): (w, nw * one),
                    ("block", "block"): (0 * lin, one), ("block", "cluster"): (cta * one, ncta * one),
                    ("block", "grid"): (blk * one, nblk * one),
                    ("cluster", "thread"): (cta * threads + lin, ncta * threads * one),
                    ("cluster", "warp"): (cta * nw + w, ncta * nw * one), ("cluster", "block"): (cta * one, ncta * one),
                    ("cluster", "cluster"): (0 * lin, one), ("cluster", "grid"): (clu * one, nclu * one),
                    ("grid", "thread"): (row, nblk * threads * one), ("grid", "warp"): (blk * nw + w, nblk * nw * one),
                    ("grid", "block"): (blk * one, nblk * one), ("grid", "cluster"): (clu * one, nclu * one),
                    ("grid", "grid"): (0 * lin, one),
                }
                columns = [table[group, level][method == "count"] for group, method, level in fk.QUERIES]
                columns += [lin.astype(np.int8), row.astype(np.int8), (nblk * one).astype(np.uint16),
                            lin.astype(np.uint32), nw * one, row.astype(np.int16), (lane // 8).astype(np.uint8), lin]
                columns += [one, (lane < 24).astype(np.int64), one, (w < 3).astype(np.int64), one]
                columns += [w * 32 - threads, lane % 8 - 8, blk - nblk * one, row - nblk * threads]
                rows[row] = np.stack([np.asarray(c, np.int64) for c in columns], axis=1)
    return rows


@pytest.mark.parametrize("grid, block, cluster", fk.QUERY_LAUNCHES)
def test_group_queries_every_kind_and_level(grid, block, cluster):
    """rank/count of every kind at every level it answers, rank_as/count_as (narrowing wraps), is_member, and
    arithmetic on the results that goes negative: CuTe's results are signed (Int32, Int64 at grid level)."""
    rows = fk.query_rows(grid, block)
    out = _filled(rows * fk.COLUMNS, np.int64, np.int64(0x5A5A5A5A5A5A5A5A))  # no query's value
    _launch(fk.queries_launch, out, grid, block, cluster)
    got = _host(out).reshape(rows, fk.COLUMNS)
    want = queries_expected(grid, block, cluster)
    names = ([f"{g}.{m}(level={lv!r})" for g, m, lv in fk.QUERIES]
             + [f"{g}.{m}({np.dtype(d).name if d else None}, level={lv!r})" for g, m, d, lv in fk.CONVERSIONS]
             + [f"{g}.is_member()" for g in fk.MEMBERS] + list(fk.SIGNED))
    assert len(names) == fk.COLUMNS
    for column, name in enumerate(names):
        np.testing.assert_array_equal(got[:, column], want[:, column], err_msg=name)
    assert (want[:, -len(fk.SIGNED):] < 0).any(axis=0).all()  # every signed column goes negative somewhere


# ---------------------------------------------------------------------------------------------- fragment interop
def test_fragment_interop(generator):
    """A register tensor as load output, scan and sum operand and store value; from_fragment aliases its tensor
    both ways; items.fragment read and written."""
    blocks, tile = fk.FRAGMENT_BLOCKS, THREADS * K
    host = generator.integers(-1000, 1000, blocks * tile).astype(np.int32)
    poison = np.iinfo(np.int32).min
    outs = [_filled(host.size, np.int32, poison) for _ in range(5)]
    totals = _filled(blocks, np.int32, poison)
    src = _device(host)
    _launch(fk.fragment_interop_launch, src, outs[0], totals, *outs[1:], blocks)

    tiles = host.reshape(blocks, tile)
    prefix = np.cumsum(tiles, axis=1, dtype=np.int32).ravel()
    scanned, aliased, through, doubled, tripled = (_host(o) for o in outs)
    np.testing.assert_array_equal(scanned, prefix)
    np.testing.assert_array_equal(_host(totals), tiles.sum(axis=1, dtype=np.int32))
    np.testing.assert_array_equal(aliased, host + 1)  # frag[i] += 1, read through items
    np.testing.assert_array_equal(through, (host + 1) * 5 - 7)  # items[i] *= 5, read through frag
    np.testing.assert_array_equal(doubled, prefix * 2)
    np.testing.assert_array_equal(tripled, prefix * 3)
    np.testing.assert_array_equal(_host(src), host)


def test_the_fragment_kernel_of_the_cpu_tests(generator):
    """tests/cute_dsl/cute_kernels.fragment_kernel: load into a register tensor, scan its from_fragment wrapper,
    write twice the scan through a ThreadData's fragment."""
    host = generator.integers(-1000, 1000, THREADS * K).astype(np.int32)
    dst = _filled(host.size, np.int32, np.iinfo(np.int32).min)
    _launch(ck.fragment_launch, _device(host), dst)
    np.testing.assert_array_equal(_host(dst), np.cumsum(host, dtype=np.int32) * 2)


# ---------------------------------------------------------------------------------------------- every family
def test_every_family_in_one_kernel(generator):
    """tests/cute_dsl/cute_kernels.everything_kernel: every stage's output against NumPy (blocked order = tile
    order; one block)."""
    tile, count, window = THREADS * K, fk.EVERYTHING_COUNT, fk.EVERYTHING_WINDOW
    x = generator.integers(-40, 40, tile).astype(np.int32)  # few values: equal keys, digits and neighbours occur
    poison = np.iinfo(np.int32).min
    src, dst = _device(x), _filled(tile, np.int32, poison)
    stages = _filled(len(ck.EVERYTHING_STAGES) * tile, np.int32, poison)
    decoded = _filled(ck.EVERYTHING_DECODED, np.int32, poison)
    scalars = _filled(len(ck.EVERYTHING_SCALARS), np.int32, poison)
    _launch(ck.everything_launch, src, dst, count, stages, decoded, scalars, window)
    got = dict(zip(ck.EVERYTHING_STAGES, _host(stages).reshape(-1, tile)))
    unwritten = np.full(tile, poison, np.int32)

    exclusive = (np.cumsum(x, dtype=np.int32) - x).astype(np.int32)
    np.testing.assert_array_equal(_host(dst), np.concatenate([exclusive[:count], unwritten[count:]]))
    np.testing.assert_array_equal(got["loaded"], x)
    np.testing.assert_array_equal(got["exclusive_sum"], exclusive)
    np.testing.assert_array_equal(got["radix_sort_keys"], np.sort(x))
    # merge sort is not stable (SPEC 8.8): the keys are sorted, the values a permutation carrying each key's position
    np.testing.assert_array_equal(got["merge_sort_keys"], np.sort(x))
    values = got["merge_sort_values"]
    np.testing.assert_array_equal(np.sort(values), np.arange(tile))
    np.testing.assert_array_equal(x[values], got["merge_sort_keys"])
    counts = np.bincount(x & 255, minlength=256).astype(np.int32)
    np.testing.assert_array_equal(got["histogram"], np.concatenate([counts, unwritten[256:]]))
    np.testing.assert_array_equal(got["adjacent_difference"], np.concatenate([x[:1], x[1:] - x[:-1]]))
    np.testing.assert_array_equal(got["discontinuity"], np.concatenate([[1], x[1:] != x[:-1]]).astype(np.int32))
    np.testing.assert_array_equal(got["exchange"], x.reshape(K, THREADS).T.ravel())  # striped, stored blocked
    np.testing.assert_array_equal(got["shuffle"][1:], x[:-1])  # position 0 is unspecified (SPEC 8.4)
    digits = ordered_digits(x, 2, 7)
    ranks = np.empty(tile, np.int32)
    ranks[np.argsort(digits, kind="stable")] = np.arange(tile)
    np.testing.assert_array_equal(got["radix_rank"], ranks)
    batched = x.reshape(THREADS // K, K, K).max(axis=1).ravel()  # logical warps of K lanes, K batches: lane r has r
    np.testing.assert_array_equal(got["reduce_batched"], np.concatenate([batched, unwritten[THREADS:]]))
    stream = np.repeat(x, (x & 3) + 1)
    np.testing.assert_array_equal(_host(decoded), np.concatenate(
        [stream, np.full(ck.EVERYTHING_DECODED - stream.size, poison, np.int32)]))
    windowed = np.zeros(tile, np.int32)
    part = stream[window:window + tile]
    windowed[:part.size] = part
    np.testing.assert_array_equal(got["run_length_decode"], windowed)
    np.testing.assert_array_equal(np.sort(got["topk_max_keys"][:5]), np.sort(x)[-5:])
    first = int(np.argmax(x))
    want = [x[:K * count:K].sum(dtype=np.int32), x.max(), x[first], first, stream.size]
    np.testing.assert_array_equal(_host(scalars), np.array(want, np.int32))
    np.testing.assert_array_equal(_host(src), x)


# ---------------------------------------------------------------------------------------------- partial tiles
def _float_ordered(keys):
    """SPEC 8.9's ordered representation of float32 keys: negatives with all bits inverted, others the sign bit."""
    raw = keys.view(np.uint32).astype(np.uint64)
    return np.where(raw & 0x80000000, ~raw & 0xFFFFFFFF, raw ^ 0x80000000)


@pytest.mark.parametrize("descending, striped", fk.PARTIAL_SORTS)
def test_qualified_radix_sort_partial_tile(generator, descending, striped):
    """SPEC 8.23: valid keys sorted stably first, oob_default after them; the values of the invalid positions follow
    in input order; blocked_to_striped puts sorted position p in member p % T, slot p // T."""
    k, blocks = fk.PARTIAL_K, fk.PARTIAL_BLOCKS
    tile = THREADS * k
    n = blocks * tile
    keys = generator.integers(-30, 30, n).astype(np.float32)  # repeated keys: stability shows
    keys[keys == 0] = 31  # no signed zeros: they tie (SPEC 8.26), which the oracle below does not model
    values = generator.integers(1, 10 ** 9, n).astype(np.int64)
    oob = np.float32(-7.25)
    for valid in (0, 1, 211, tile):
        garbage = generator.integers(1, 2 ** 32 - 1, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
        src = np.where((np.arange(n) % tile) < valid, keys, garbage)  # past valid_items: any bits, NaNs included
        keys_out, values_out = _filled(n, np.float32, np.nan), _filled(n, np.int64, -1)
        _launch(fk.radix_partial_launch, _device(src), _device(values), keys_out, values_out, cutlass.Int32(valid),
                cutlass.Float32(float(oob)), k, descending, striped)  # the DSL converts no NumPy scalar
        want_keys, want_values = [], []
        for b in range(blocks):
            chunk, vals = src[b * tile:(b + 1) * tile], values[b * tile:(b + 1) * tile]
            digits = _float_ordered(chunk[:valid]).astype(np.int64)
            order = np.argsort(-digits if descending else digits, kind="stable")
            sorted_keys = np.concatenate([chunk[:valid][order], np.full(tile - valid, oob, np.float32)])
            sorted_values = np.concatenate([vals[:valid][order], vals[valid:]])
            if striped:  # member t slot i holds sorted position t + i*T; a direct store writes them as t*k + i
                sorted_keys, sorted_values = (x.reshape(k, THREADS).T.reshape(-1) for x in (sorted_keys, sorted_values))
            want_keys.append(sorted_keys)
            want_values.append(sorted_values)
        np.testing.assert_array_equal(_host(keys_out).view(np.uint32), np.concatenate(want_keys).view(np.uint32))
        np.testing.assert_array_equal(_host(values_out), np.concatenate(want_values))


@pytest.mark.parametrize("algorithm", ["atomic", "sort"])
def test_scalar_histogram_partial_tile(generator, algorithm):
    """One uint8 sample per thread, every byte a bin (256 bins): only the first valid members' samples count."""
    n = fk.PARTIAL_BLOCKS * THREADS
    samples = generator.integers(0, 256, n).astype(np.uint8)
    for valid in (0, 1, 77, THREADS):
        counts = _filled(2 * n, np.int32, -1)
        _launch(fk.histogram_partial_launch, _device(samples), counts, cutlass.Int32(valid), algorithm)
        want = np.concatenate([np.bincount(t[:valid], minlength=2 * THREADS) for t in samples.reshape(-1, THREADS)])
        np.testing.assert_array_equal(_host(counts), want.astype(np.int32))
