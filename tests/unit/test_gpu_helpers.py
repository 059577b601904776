"""The GPU tests' own machinery, without a GPU (issue 38): the poison per dtype and inputs that never hold it
(``tests/poison.py``), per-test generators, the exact float sum and scan checks (a dropped or repeated item fails),
and the check that a child process died of a device trap and of nothing else (``tests/gpu/gpu_helpers.py``)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

GPU_TESTS = Path(__file__).resolve().parents[1] / "gpu"
if str(GPU_TESTS) not in sys.path:
    sys.path.insert(0, str(GPU_TESTS))

import gpu_helpers as h  # noqa: E402
import poison as p  # noqa: E402  (tests/poison.py: tests/ is on the path, as for every test module)

INTEGERS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
FLOATS = (np.float16, np.float32, np.float64)


# ------------------------------------------------------------------ poison


@pytest.mark.parametrize("dtype", INTEGERS)
def test_an_integer_poison_is_outside_the_bounded_input_ranges_and_not_an_extreme(dtype):
    info, poison = np.iinfo(dtype), p.poison_value(dtype)
    assert poison.dtype == np.dtype(dtype)
    assert poison not in (info.min, info.max)  # extremes are identities, oob defaults, max-scan seeds
    for lo, hi in ((-100, 100), (0, 100), (-(10**6), 10**6), (-(2**30), 2**30), (0, 2**30)):  # bounded draws
        if info.min <= lo and hi <= info.max:  # a range the dtype holds (wider ones are full_range draws)
            assert not lo <= int(poison) <= hi
    assert (p.poisoned(5, dtype) == poison).all()


def test_the_old_poison_was_a_legal_int8_input():
    """Why the poison changed: the 0x5A byte is 90, inside small()'s -100..100 draws."""
    assert np.frombuffer(b"\x5a", np.int8)[0] == 90
    assert p.poison_value(np.int8) == -127


@pytest.mark.parametrize("dtype", INTEGERS)
def test_full_range_inputs_draw_every_value_but_the_poison(dtype):
    rng = np.random.default_rng(1)
    x = p.full_range(rng, 200_000, dtype)
    info, poison = np.iinfo(dtype), p.poison_value(dtype)
    assert x.dtype == np.dtype(dtype) and not (x == poison).any()
    if info.bits <= 8:  # every other value appears
        assert set(x.tolist()) == set(range(info.min, info.max + 1)) - {int(poison)}
    else:  # the whole range, not a slice of it
        quarter = (int(info.max) - int(info.min)) // 4
        assert int(x.min()) < int(info.min) + quarter and int(x.max()) > int(info.max) - quarter


@pytest.mark.parametrize("dtype", FLOATS)
def test_a_float_poison_is_a_quiet_nan_no_computation_produces(dtype):
    poison = p.poison_value(dtype)
    bits = np.dtype(f"u{np.dtype(dtype).itemsize}")
    assert np.isnan(poison) and poison.dtype == np.dtype(dtype)
    word = int(np.array(poison).view(bits))
    mantissa_bits = np.finfo(dtype).nmant
    assert word >> (mantissa_bits - 1) & 1  # quiet: copies and casts keep it a NaN without a signal
    numpy_nan = int(np.array(np.nan, dtype).view(bits))
    canonical_gpu_nan = (1 << (8 * np.dtype(dtype).itemsize - 1)) - 1  # 0x7fff..., what device arithmetic yields
    assert word not in (numpy_nan, canonical_gpu_nan)
    assert (p.poisoned(3, dtype).view(bits) == word).all()


def test_a_record_is_poisoned_field_by_field():
    record = np.dtype([("key", np.int32), ("value", np.float64), ("flags", np.uint8, (3,))], align=True)
    out = p.poisoned(4, record)
    assert (out["key"] == p.poison_value(np.int32)).all()
    assert (out["value"].view(np.uint64) == int(np.array(p.poison_value(np.float64)).view(np.uint64))).all()
    assert (out["flags"] == p.poison_value(np.uint8)).all()
    padding = out.view(np.uint8).reshape(4, record.itemsize)[:, 4:8]  # between key and the aligned value
    assert (padding == 0x5A).all()


def test_same_values_sees_signed_zeros_and_poison_but_not_nan_payloads():
    poison = p.poison_value(np.float32)
    canonical = np.array(0x7FFFFFFF, np.uint32).view(np.float32)[()]
    want = np.array([0.0, -0.0, np.nan, 1.5, poison], np.float32)
    assert p.same_values(want.copy(), want).all()
    got = want.copy()
    got[0], got[1] = -0.0, 0.0
    assert p.same_values(got, want).tolist() == [False, False, True, True, True]
    got = want.copy()
    got[2] = canonical  # another NaN: a NaN result is a NaN whatever its payload
    assert p.same_values(got, want).all()
    got[2] = poison  # a slot left poisoned is not the NaN result
    assert not p.same_values(got, want)[2]
    got = want.copy()
    got[4] = canonical  # a written NaN where the slot must stay poisoned
    assert not p.same_values(got, want)[4]
    with pytest.raises(AssertionError, match="1 of 5 slots differ"):
        p.assert_same(np.array([0.0, -0.0, np.nan, 1.5, poison], np.float32)[[1, 1, 2, 3, 4]], want, "x")
    assert p.same_values(np.array([3, -127], np.int8), np.array([3, -127], np.int8)).all()


# ------------------------------------------------------------------ generators per test


def test_a_test_generator_depends_on_its_node_id_only():
    a = h.generator_for("tests/gpu/test_x.py::test_y[int8]").integers(0, 2**31, 8)
    b = h.generator_for("tests/gpu/test_x.py::test_y[int8]").integers(0, 2**31, 8)
    c = h.generator_for("tests/gpu/test_x.py::test_y[int16]").integers(0, 2**31, 8)
    assert (a == b).all() and not (a == c).all()


def test_a_module_rng_outside_a_test_refuses_to_draw():
    with pytest.raises(RuntimeError, match="seeded per test"):
        h.SEEDED_PER_TEST.integers(0, 10, 3)


def test_every_gpu_module_draws_from_the_per_test_generator():
    """No GPU test module keeps a generator of its own at module level (the CuTe module's is replaced per test by
    tests/gpu/conftest.py all the same)."""
    for path in sorted(GPU_TESTS.glob("test_*.py")):
        text = path.read_text()
        if path.name == "test_cutlass_gpu.py":
            continue
        assert "\nrng = np.random.default_rng(" not in text, path.name


# ------------------------------------------------------------------ exact float sums and scans

# The tile sizes of test_collectives_gpu.py's float sums and scans: warps of 4 and 32 (one item each), blocks of 128
# threads with 1 (or the scalar form), 3 and 4 items.
TILES = (4, 32, 128, 384, 512)


def scan_in_order(x, order, exclusive):
    """The inclusive (or exclusive) sum scan of ``x`` in ``x``'s dtype, each prefix summed in ``order`` of items."""
    out = []
    for end in range(len(x)):
        stop = end if exclusive else end + 1
        total = x.dtype.type(0)
        for i in order:
            if i < stop:
                total = x.dtype.type(total + x[i])
        out.append(total)
    return np.array(out, x.dtype)


def faulty_inputs(x, rng):
    """One-item faults at the first, last, smallest and a few random positions: the item dropped (added as 0), the
    item counted twice, its predecessor counted twice."""
    n = len(x)
    positions = sorted({0, n - 1, n // 2, int(np.argmin(np.abs(x)))} | set(rng.integers(0, n, 4).tolist()))
    for i in positions:
        for fault, value in (("dropped", 0), ("repeated", 2 * x[i]), ("predecessor repeated", x[i] + x[i - 1])):
            if fault == "predecessor repeated" and i == 0:
                continue
            y = x.copy()
            y[i] = value
            yield i, f"item {i} {fault}", y


@pytest.mark.parametrize("dtype", (np.float32, np.float64))
@pytest.mark.parametrize("n", TILES)
def test_a_float_sum_or_scan_with_one_item_dropped_or_repeated_fails(dtype, n):
    rng = np.random.default_rng(n)
    x = h.exact_float_items(rng, n, dtype)
    assert x.dtype == np.dtype(dtype) and (x != 0).all() and h.exact_in_any_order(x, dtype)
    for exclusive in (False, True):
        h.check_float_scan(np.cumsum(x, dtype=dtype) - (x if exclusive else 0), x, exclusive=exclusive)
    h.check_float_sum(x.sum(dtype=dtype), x)
    h.check_float_sum(np.full(7, x[::-1].sum(dtype=dtype)), x)  # every member's copy; another order, the same sum
    for i, what, y in faulty_inputs(x, rng):
        for exclusive in (False, True) if i < n - 1 else (False,):  # no exclusive prefix holds the last item
            inclusive = np.cumsum(y, dtype=dtype)
            with pytest.raises(AssertionError):
                h.check_float_scan(inclusive - (y if exclusive else 0), x, exclusive=exclusive, what=what)
        with pytest.raises(AssertionError):
            h.check_float_sum(y.sum(dtype=dtype), x, what=what)


@pytest.mark.parametrize("dtype", (np.float32, np.float64))
def test_any_summation_order_gives_the_exact_scan(dtype):
    rng = np.random.default_rng(3)
    x = h.exact_float_items(rng, 64, dtype)
    for order in (range(64), range(63, -1, -1), rng.permutation(64)):
        for exclusive in (False, True):
            h.check_float_scan(scan_in_order(x, list(order), exclusive), x, exclusive=exclusive)


def test_the_old_tolerance_missed_a_dropped_item():
    """Issue 38: the tolerance the exact check replaces accepted a dropped item of a 512-item float32 tile."""
    rng = np.random.default_rng(512)
    x = h.exact_float_items(rng, 512, np.float32)
    small = int(np.argmin(np.abs(x)))
    y = x.copy()
    y[small] = 0
    got = np.cumsum(y, dtype=np.float32)
    old_atol = 1e-3 * (1 + np.abs(x).sum())
    np.testing.assert_allclose(got, np.cumsum(x.astype(np.float64)), rtol=1e-4, atol=old_atol)  # passed before
    with pytest.raises(AssertionError):
        h.check_float_scan(got, x, exclusive=False)


def test_inputs_whose_sums_round_are_refused():
    """The exact check needs exact sums; normal draws would make it compare against the wrong value."""
    x = (np.random.default_rng(4).standard_normal(512) * 10).astype(np.float32)
    assert not h.exact_in_any_order(x, np.float32)
    with pytest.raises(AssertionError, match="do not sum exactly"):
        h.check_float_scan(np.cumsum(x), x, exclusive=False)
    big = np.full(3, 2.0**23, np.float32)  # integers, but 3 * 2**23 does not fit float32's 24 bits with 2**-0 steps
    assert h.exact_in_any_order(big[:2], np.float32) and not h.exact_in_any_order(np.append(big, 1), np.float32)


# ------------------------------------------------------------------ device traps

NUMBA_TRAP = """Traceback (most recent call last):
  File "<string>", line 24, in <module>
  File ".../numba_cuda/cudadrv/driver.py", line 361, in _check_cuda_python_error
    raise CudaAPIError(retcode, msg)
numba_cuda_mlir.numba_cuda.cudadrv.driver.CudaAPIError: [CUresult.CUDA_ERROR_{}] Call to cuCtxSynchronize results \
in CUDA_ERROR_{}
"""


def numba_error(name):
    return NUMBA_TRAP.format(name, name)


def test_a_trap_is_recognised():
    assert h.trap_failure(1, "IN_RANGE_OK\n", numba_error("LAUNCH_FAILED")) is None
    torch = "RuntimeError: CUDA error: unspecified launch failure\nCUDA kernel errors might be asynchronously reported"
    assert h.trap_failure(1, "IN_RANGE_OK\n", torch) is None
    teardown = numba_error("LAUNCH_FAILED") + "Exception ignored in: <finalize>\n... CUDA_ERROR_DEINITIALIZED\n"
    assert h.trap_failure(1, "IN_RANGE_OK\n", teardown) is None  # errors after the trap's


@pytest.mark.parametrize("stderr, reason", [
    (numba_error("ILLEGAL_ADDRESS"), "CUDA_ERROR_ILLEGAL_ADDRESS, not the trap's"),
    (numba_error("ASSERT"), "CUDA_ERROR_ASSERT, not the trap's"),
    (numba_error("MISALIGNED_ADDRESS"), "CUDA_ERROR_MISALIGNED_ADDRESS, not the trap's"),
    (numba_error("INVALID_VALUE"), "CUDA_ERROR_INVALID_VALUE, not the trap's"),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "ILLEGAL_ADDRESS, not the trap's"),
    ("RuntimeError: CUDA error: device-side assert triggered", "CUDA_ERROR_ASSERT, not the trap's"),
    (numba_error("LAUNCH_FAILED") + numba_error("ILLEGAL_ADDRESS"), "besides the trap the child reports"),
    ("TypeError: an unrelated failure", "without a CUDA error"),
])
def test_another_failure_is_not_a_trap(stderr, reason):
    assert reason in h.trap_failure(1, "IN_RANGE_OK\n", stderr)


def test_the_child_must_run_in_range_then_die():
    assert "in-range launch" in h.trap_failure(1, "", numba_error("LAUNCH_FAILED"))
    assert "nothing trapped" in h.trap_failure(1, "IN_RANGE_OK\nNO_TRAP\n", numba_error("LAUNCH_FAILED"))
    assert "status 0" in h.trap_failure(0, "IN_RANGE_OK\n", numba_error("LAUNCH_FAILED"))


def test_cuda_errors_are_read_in_order_by_driver_names():
    text = "cudaErrorIllegalAddress then [CUresult.CUDA_ERROR_LAUNCH_FAILED] then unspecified launch failure"
    assert h.cuda_errors(text) == ["CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_LAUNCH_FAILED"]


@pytest.mark.parametrize("name, traps", [("LAUNCH_FAILED", True), ("ILLEGAL_ADDRESS", False)])
def test_assert_traps_runs_the_child_and_classifies_it(name, traps):
    child = ("import sys\nprint('IN_RANGE_OK', flush=True)\n"
             f"sys.exit('CudaAPIError: [CUresult.CUDA_ERROR_{name}] Call to cuCtxSynchronize results in "
             f"CUDA_ERROR_{name}')\n")
    if traps:
        h.assert_traps(child)
    else:
        with pytest.raises(AssertionError, match="not the trap's"):
            h.assert_traps(child)


def test_the_generated_range_checks_trap():
    """TRAP_ERROR is what ``trap`` yields: the range checks must stay ``__trap()`` (not ``assert``, which fails with
    CUDA_ERROR_ASSERT)."""
    from cuda.coop._cub import toolchain

    check = toolchain.OWN_INCLUDE / "cuda_coop" / "util_check.cuh"
    assert "if (value < lo || value > hi) __trap();" in check.read_text()
    run_length = toolchain.OWN_INCLUDE / "cuda_coop" / "block" / "block_run_length_decode.cuh"
    assert run_length.read_text().count("__trap();") == 2  # a malformed stream, a short destination
    assert h.TRAP_ERROR == "CUDA_ERROR_LAUNCH_FAILED"
