"""Corpus: TempStorage and shared-memory mistakes (SPEC 6, 10.2 S1-S9, P13)."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

I32 = np.zeros(1024, np.int32)

# ------------------------------------------------------------------ S1: not a descriptor


@cuda.jit
def k_s1_payload_as_storage(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = coop.exchange(block, items, temp_storage=items)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_s1_array_as_storage(src, dst):
    dst[0] = coop.sum(coop.this_block(), src[cuda.threadIdx.x], temp_storage=dst)  # HERE


# ------------------------------------------------------------------ S2: descriptor on warp-scope groups


@cuda.jit
def k_s2_warp_sum(src, dst):
    ts = coop.TempStorage()
    dst[0] = coop.sum(coop.this_warp(), src[cuda.threadIdx.x], temp_storage=ts)  # HERE


@cuda.jit
def k_s2_logical_warp_exchange(src, dst):
    lw = coop.this_warp().group_by(4)
    ts = coop.TempStorage(1024)
    items = coop.ThreadData(2)
    coop.load(lw, src, items)
    out = coop.exchange(lw, items, temp_storage=ts)  # HERE
    coop.store(lw, dst, out)


@cuda.jit
def k_s2_warp_merge_sort(src, dst):
    warp = coop.this_warp()
    ts = coop.TempStorage()
    keys = coop.ThreadData(2)
    coop.load(warp, src, keys)
    out = numba_coop.merge_sort_keys(warp, keys, temp_storage=ts)  # HERE
    coop.store(warp, dst, out)


# ------------------------------------------------------------------ S3: descriptor resolution


@cuda.jit
def k_s3_branch_merge(src, dst, flag):
    block = coop.this_block()
    if flag > 0:
        ts = coop.TempStorage()
    else:
        ts = coop.TempStorage()
    dst[0] = coop.sum(block, src[cuda.threadIdx.x], temp_storage=ts)  # HERE


# ------------------------------------------------------------------ S5, P13: constructor arguments


@cuda.jit
def k_s5_negative_size(src, dst):
    ts = coop.TempStorage(-64)  # HERE
    dst[0] = coop.sum(coop.this_block(), src[cuda.threadIdx.x], temp_storage=ts)


@cuda.jit
def k_c5_storage_alignment_positional(src, dst):
    ts = coop.TempStorage(1024, 16)  # HERE
    dst[0] = coop.sum(coop.this_block(), src[cuda.threadIdx.x], temp_storage=ts)


@cuda.jit
def k_s5_auto_sync_int(src, dst):
    ts = coop.TempStorage(auto_sync=1)  # HERE
    dst[0] = coop.sum(coop.this_block(), src[cuda.threadIdx.x], temp_storage=ts)


@cuda.jit
def k_s5_float_size(src, dst):
    ts = coop.TempStorage(1024.0)  # HERE
    dst[0] = coop.sum(coop.this_block(), src[cuda.threadIdx.x], temp_storage=ts)


@cuda.jit
def k_p13_storage_alignment(src, dst):
    ts = coop.TempStorage(alignment=12)  # HERE
    dst[0] = coop.sum(coop.this_block(), src[cuda.threadIdx.x], temp_storage=ts)


# ------------------------------------------------------------------ S6-S9: capacity, limits, coexistence


@cuda.jit
def k_s6_exchange_too_small(src, dst):
    block = coop.this_block()
    ts = coop.TempStorage(64)
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    out = coop.exchange(block, items, temp_storage=ts)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_s7_above_device_limit(src, dst):
    ts = coop.TempStorage(400000)
    dst[0] = coop.sum(coop.this_block(), src[cuda.threadIdx.x], temp_storage=ts)  # HERE


@cuda.jit
def k_s8_dynamic_alignment(src, dst):
    ts = coop.TempStorage(60000, alignment=32)
    dst[0] = coop.sum(coop.this_block(), src[cuda.threadIdx.x], temp_storage=ts)  # HERE


@cuda.jit
def k_s9_dynamic_user_array(src, dst):
    block = coop.this_block()
    extra = cuda.shared.array(0, np.int32)
    extra[cuda.threadIdx.x] = src[cuda.threadIdx.x]
    cuda.syncthreads()
    dst[0] = coop.sum(block, np.int32(extra[cuda.threadIdx.x]))  # HERE



# S4: a descriptor that did not come from a TempStorage() call in the kernel (TempStorage() outside any kernel is R1,
# so one is made without its constructor, as a descriptor kept from elsewhere would reach the call)
OUTSIDE_STORAGE = object.__new__(coop.TempStorage)


@cuda.jit
def k_s4_outside_storage(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items)
    out = coop.exclusive_sum(block, items, temp_storage=OUTSIDE_STORAGE)  # HERE
    coop.store(block, dst, out)


@cuda.jit
def k_s9_static_user_array(src, dst):
    block = coop.this_block()
    mine = cuda.shared.array(256, np.int32)
    mine[cuda.threadIdx.x] = src[cuda.threadIdx.x]
    cuda.syncthreads()
    ts = coop.TempStorage(60000)
    dst[0] = coop.sum(block, np.int32(mine[cuda.threadIdx.x]), temp_storage=ts)  # HERE


CASES = {
    "s4_outside_storage": (k_s4_outside_storage, (I32, I32), coop.CoopTypeError,
                           "TempStorage descriptors must be constructed inside the kernel or an inlined helper; "
                           "OUTSIDE_STORAGE is not"),
    "s1_payload_as_storage": (k_s1_payload_as_storage, (I32, I32), coop.CoopTypeError,
                              "cuda.coop.exchange temp_storage must be a TempStorage descriptor constructed in the "
                              "kernel with cuda.coop.TempStorage()"),
    "s1_array_as_storage": (k_s1_array_as_storage, (I32, I32), coop.CoopTypeError,
                            "cuda.coop.sum temp_storage must be a TempStorage descriptor constructed in the kernel "
                            "with cuda.coop.TempStorage()"),
    "s2_warp_sum": (k_s2_warp_sum, (I32, I32), coop.CoopValueError,
                    "cuda.coop.sum does not accept temp_storage for warp groups; their scratch is always "
                    "compiler-owned"),
    "s2_logical_warp_exchange": (k_s2_logical_warp_exchange, (I32, I32), coop.CoopValueError,
                                 "cuda.coop.exchange does not accept temp_storage for threads_within_warp groups; "
                                 "their scratch is always compiler-owned"),
    "s2_warp_merge_sort": (k_s2_warp_merge_sort, (I32, I32), coop.CoopValueError,
                           "cuda.coop.numba_mlir.merge_sort_keys does not accept temp_storage for warp groups"),
    "s3_branch_merge": (k_s3_branch_merge, (I32, I32, 1), coop.CoopTypeError,
                        "cuda.coop.sum temp_storage must resolve to exactly one TempStorage constructor in this "
                        "kernel"),
    "c5_storage_alignment_positional": (k_c5_storage_alignment_positional, (I32, I32), coop.CoopTypeError,
                                        "cuda.coop.TempStorage takes 1 positional operands; pass options by keyword"),
    "s5_negative_size": (k_s5_negative_size, (I32, I32), coop.CoopValueError,
                         "TempStorage size_in_bytes must be "),
    "s5_auto_sync_int": (k_s5_auto_sync_int, (I32, I32), coop.CoopTypeError,
                         "TempStorage auto_sync must be "),
    "s5_float_size": (k_s5_float_size, (I32, I32), coop.CoopTypeError,
                      "TempStorage size_in_bytes must be "),
    "p13_storage_alignment": (k_p13_storage_alignment, (I32, I32), coop.CoopValueError,
                              "TempStorage alignment must be a positive power of two; got 12"),
    "s6_exchange_too_small": (k_s6_exchange_too_small, (I32, I32), coop.CoopValueError,
                              "TempStorage size_in_bytes=64 is too small: its uses need "),
    "s7_above_device_limit": (k_s7_above_device_limit, (I32, I32), coop.CoopValueError,
                              "cooperative scratch for kernel k_s7_above_device_limit needs "),
    "s8_dynamic_alignment": (k_s8_dynamic_alignment, (I32, I32), coop.CoopValueError,
                             "shared-memory alignment 32 exceeds the 16-byte limit of dynamic shared memory"),
    "s9_dynamic_user_array": (k_s9_dynamic_user_array, (I32, I32), coop.CoopValueError,
                              "kernel k_s9_dynamic_user_array: user shared array extra ("),
    "s9_static_user_array": (k_s9_static_user_array, (I32, I32), coop.CoopValueError,
                             "kernel k_s9_static_user_array: user shared array mine (1024 bytes, static) cannot "
                             "coexist with dynamic cooperative scratch of 60000 bytes; "),
}


@pytest.mark.parametrize("case", list(CASES))
def test_storage_mistake(case, expect):
    kernel, args, cls, fragment, *rest = CASES[case]
    expect(kernel, args, cls, fragment, **(rest[0] if rest else {}))
