"""sm_90 builds of reduce/scan/exchange/shuffle without a GPU, and their compile-time errors (SPEC 8.3-8.7)."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

from compile_helpers import expect_compile_error

X32 = np.zeros(1024, np.int32)
F64 = np.zeros(1024, np.float64)


def larger(a, b):
    return a if a > b else b


@cuda.jit(device=True)
def device_larger(a, b):
    return a if a > b else b


def reduce_kernel(width, algorithm, op, payload):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        group = coop.this_block() if width == 0 else (coop.this_warp() if width == 32
                                                      else coop.this_warp().group_by(width))
        if payload:
            items = coop.ThreadData(3)
            coop.load(block, src, items)
            r = coop.reduce(group, items, binary_op=op, algorithm=algorithm)
        else:
            r = coop.reduce(group, src[block.rank()], binary_op=op, algorithm=algorithm)
        dst[block.rank()] = r

    return kernel


def scan_kernel(width, algorithm, op, payload):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        group = coop.this_block() if width == 0 else (coop.this_warp() if width == 32
                                                      else coop.this_warp().group_by(width))
        if payload:
            items = coop.ThreadData(3)
            coop.load(block, src, items)
            r = coop.inclusive_scan(group, items, scan_op=op, algorithm=algorithm)
            coop.store(block, dst, r)
        else:
            dst[block.rank()] = coop.exclusive_scan(group, src[block.rank()], scan_op=op, initial_value=1,
                                                    algorithm=algorithm)

    return kernel


CASES = [(0, alg, op, payload) for alg in (None, "raking") for op in ("max", larger) for payload in (False, True)]
CASES += [(0, "raking_commutative_only", "sum", True), (32, None, "sum", False), (16, None, device_larger, False),
          (8, None, "bit_or", False)]


@pytest.mark.parametrize("width,algorithm,op,payload", CASES)
def test_reduce_builds_inline(width, algorithm, op, payload):
    built = numba_coop.compile_kernel(reduce_kernel(width, algorithm, op, payload), (X32, X32), block=128)
    sass = built.sass()
    assert "CALL" not in sass and built.local_memory_bytes == 0


SCAN_CASES = [(0, alg, op, payload) for alg in (None, "raking_memoize", "warp_scans") for op in ("sum", larger)
              for payload in (False, True)]
SCAN_CASES += [(32, None, "max", False), (4, None, larger, False)]


@pytest.mark.parametrize("width,algorithm,op,payload", SCAN_CASES)
def test_scan_builds_inline(width, algorithm, op, payload):
    built = numba_coop.compile_kernel(scan_kernel(width, algorithm, op, payload), (X32, X32), block=128)
    assert "CALL" not in built.sass() and built.local_memory_bytes == 0


@pytest.mark.parametrize("width", [0, 32, 8])
def test_exchange_and_shuffle_build(width):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        group = coop.this_block() if width == 0 else (coop.this_warp() if width == 32
                                                      else coop.this_warp().group_by(width))
        items = coop.ThreadData(4)
        coop.load(block, src, items, algorithm="striped")
        blocked = coop.exchange(group, items)
        shifted = coop.shuffle(block, blocked, mode="up")
        coop.store(block, dst, shifted)

    built = numba_coop.compile_kernel(kernel, (F64, F64), block=128)
    assert "CALL" not in built.sass() and built.local_memory_bytes == 0
    assert built.metadata["scratch_bytes"] > 0


def test_scratch_uses_32_bit_shared_addresses():
    """Kernels with cuda.coop calls get NVRTC's 32-bit shared pointers (numba_mlir/_patches.py): CUB's shared
    indexing then folds each item's constant offset into the STS/LDS, as in nvcc-built CUB (40 registers for
    this round trip with CUDA 13.0 and 13.5; 56 with numba-cuda-mlir's default 64-bit shared pointers)."""
    @cuda.jit
    def round_trip(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(16)
        base = np.int64(cuda.blockIdx.x) * 4096
        coop.load(block, src, items, algorithm="striped", offset=base)
        blocked = coop.exchange(block, items, mode="striped_to_blocked")
        striped = coop.exchange(block, blocked, mode="blocked_to_striped")
        coop.store(block, dst, striped, algorithm="striped", offset=base)

    built = numba_coop.compile_kernel(round_trip, (X32, X32), block=256)
    assert built.registers <= 44, built.registers
    sass = built.sass()
    folded = [line for line in sass.splitlines() if "STS [R" in line and "+0x" in line]
    assert len(folded) >= 8, sass  # immediate offsets: one address register serves many items


def test_grid_reduce_is_rejected():
    @cuda.jit
    def kernel(src, dst):
        dst[0] = coop.sum(coop.this_grid(), src[0])

    expect_compile_error(kernel, (X32, X32), coop.CoopUnsupportedError,
                         "cuda.coop.sum does not support grid groups because grid reduction requires "
                         "hidden per-launch workspace")


def test_valid_items_with_payload_is_rejected():
    @cuda.jit
    def kernel(src, dst):
        items = coop.ThreadData(2)
        coop.load(coop.this_block(), src, items)
        dst[0] = coop.sum(coop.this_block(), items, valid_items=3)

    expect_compile_error(kernel, (X32, X32), coop.CoopTypeError,
                         "cuda.coop.sum valid_items supports scalar values only")


def test_commutative_only_needs_builtin_operator():
    expect_compile_error(reduce_kernel(0, "raking_commutative_only", larger, False), (X32, X32), coop.CoopValueError,
                         "algorithm 'raking_commutative_only' requires a built-in commutative operator")


def test_algorithm_on_warp_is_rejected():
    expect_compile_error(reduce_kernel(32, "raking", "sum", False), (X32, X32), coop.CoopValueError,
                         "cuda.coop.reduce algorithm is supported only for block groups")


def test_bit_operator_on_floats_is_rejected():
    expect_compile_error(reduce_kernel(0, None, "bit_and", False), (F64, F64), coop.CoopTypeError,
                         "cuda.coop.reduce binary_op 'bit_and' requires an integer dtype; got float64")


def test_warp_scan_with_payload_is_rejected():
    expect_compile_error(scan_kernel(32, None, "sum", True), (X32, X32), coop.CoopTypeError,
                         "cuda.coop.inclusive_scan on warp groups accepts one scalar per lane")


def test_exclusive_scan_needs_initial_value():
    @cuda.jit
    def kernel(src, dst):
        dst[0] = coop.exclusive_scan(coop.this_block(), src[0], scan_op="max")

    expect_compile_error(kernel, (X32, X32), coop.CoopValueError,
                         "cuda.coop.exclusive_scan non-sum exclusive scans require initial_value")


def test_inclusive_scan_rejects_initial_value():
    @cuda.jit
    def kernel(src, dst):
        dst[0] = coop.scan(coop.this_block(), src[0], mode="inclusive", initial_value=0)

    expect_compile_error(kernel, (X32, X32), coop.CoopValueError,
                         "cuda.coop.scan initial_value is not supported for inclusive scans")


def test_shuffle_distance_must_be_one():
    @cuda.jit
    def kernel(src, dst):
        items = coop.ThreadData(2)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, coop.shuffle(coop.this_block(), items, distance=2))

    expect_compile_error(kernel, (X32, X32), coop.CoopValueError,
                         "cuda.coop.shuffle distance must be exactly 1 in the common API")


def test_qualified_exchange_mode_in_common_call():
    @cuda.jit
    def kernel(src, dst):
        items = coop.ThreadData(2)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, coop.exchange(coop.this_block(), items, mode="scatter_to_blocked"))

    expect_compile_error(kernel, (X32, X32), coop.CoopValueError,
                         "cuda.coop.exchange mode 'scatter_to_blocked' requires cuda.coop.numba_mlir")


def test_operator_that_does_not_compile():
    def broken(a, b):
        return a.no_such_attribute

    expect_compile_error(reduce_kernel(0, None, broken, False), (X32, X32), coop.CoopTypeError,
                         "cuda.coop.reduce binary_op test_operator_that_does_not_compile.<locals>.broken could not be "
                         "compiled for (int32, int32)")


def test_non_string_operator_object():
    expect_compile_error(reduce_kernel(0, None, 3, False), (X32, X32), coop.CoopTypeError,
                         "cuda.coop.reduce binary_op must be an operator string or a Python/device function; got 3")


def seed_of(aggregate):
    return aggregate * 0 + 7


def test_prefix_op_is_qualified_only():
    @cuda.jit
    def kernel(src, dst):
        dst[0] = coop.exclusive_sum(coop.this_block(), src[0], prefix_op=seed_of)

    expect_compile_error(kernel, (X32, X32), coop.CoopValueError,
                         "cuda.coop.exclusive_sum prefix_op seed_of requires cuda.coop.numba_mlir; the common API "
                         "accepts: algorithm, reverse, head_flags, temp_storage")


def test_prefix_op_on_warp_groups_is_rejected():
    @cuda.jit
    def kernel(src, dst):
        dst[0] = numba_coop.inclusive_sum(coop.this_warp(), src[0], prefix_op=seed_of)

    expect_compile_error(kernel, (X32, X32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.inclusive_sum prefix_op is supported only for block groups")


def test_prefix_op_with_initial_value_is_rejected():
    @cuda.jit
    def kernel(src, dst):
        dst[0] = numba_coop.exclusive_scan(coop.this_block(), src[0], scan_op="max", initial_value=1,
                                           prefix_op=seed_of)

    expect_compile_error(kernel, (X32, X32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.exclusive_scan prefix_op cannot be combined with initial_value")


def test_prefix_op_builds_inline():
    @cuda.jit
    def kernel(src, dst):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, numba_coop.exclusive_scan(coop.this_block(), items, scan_op="max",
                                                                      prefix_op=seed_of))

    built = numba_coop.compile_kernel(kernel, (X32, X32), block=128)
    assert "CALL" not in built.sass() and built.local_memory_bytes == 0
    assert "seed_of" not in built.cpp_source and "_prefix" in built.cpp_source
