"""Element-type inference (SPEC 4: evidence read after helper inlining; rule 3: an element of a kernel array
argument) where issue 39's kernels met "could not infer the dtype": ``cuda.ldcg(a, i)`` reads an element of ``a`` and
``cuda.atomic.add(a, i, v)`` returns one, so a scalar or payload slot computed from them has ``a``'s dtype; and scalars
unpacked from an inlined helper's ``return a, b`` keep the dtypes they had in the helper. Builds without a GPU; the
CUB instantiations show the dtypes."""
from __future__ import annotations

import re

import numpy as np
import pytest
from numba_cuda_mlir import cuda

from cuda import coop

from compile_helpers import build_kernel

CUB_TYPES = {np.int32: "int", np.int64: "long long", np.float32: "float", np.float64: "double"}


def reduced_types(built) -> list[str]:
    """The value types of the kernel's BlockReduce instantiations, in source order, once each."""
    return list(dict.fromkeys(re.findall(r"BlockReduce<([^,]+),", built.cpp_source)))


@pytest.mark.parametrize("load", ["ldcg", "ldca", "ldcs", "ldlu", "ldcv"])
@pytest.mark.parametrize("dtype", [np.int64, np.float32])
def test_a_cache_hinted_load_is_an_element_of_its_array(load, dtype):
    read = getattr(cuda, load)

    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        x = read(src, cuda.threadIdx.x)
        largest = coop.reduce(block, x, binary_op="max")
        if block.rank() == 0:
            dst[0] = largest

    built = build_kernel(kernel, (np.zeros(128, dtype), np.zeros(1, dtype)))
    assert reduced_types(built) == [CUB_TYPES[dtype]]


@cuda.jit
def atomic_add_kernel(counts, dst):
    block = coop.this_block()
    total = coop.sum(block, cuda.atomic.add(counts, 0, np.int64(1)))
    if block.rank() == 0:
        dst[0] = total


@cuda.jit
def atomic_max_kernel(counts, dst):
    block = coop.this_block()
    old = cuda.atomic.max(counts, 1, np.int64(cuda.threadIdx.x))
    total = coop.sum(block, old)
    if block.rank() == 0:
        dst[0] = total


@cuda.jit
def atomic_exch_kernel(counts, dst):
    block = coop.this_block()
    old = cuda.atomic.exch(counts, 2, np.int64(7))
    total = coop.sum(block, old)
    if block.rank() == 0:
        dst[0] = total


@pytest.mark.parametrize("kernel", [atomic_add_kernel, atomic_max_kernel, atomic_exch_kernel],
                         ids=["add", "max", "exch"])
def test_an_atomic_returns_an_element_of_its_array(kernel):
    built = build_kernel(kernel, (np.zeros(4, np.int64), np.zeros(1, np.int64)))
    assert reduced_types(built) == ["long long"]


def test_a_payload_slot_assigned_from_a_load_takes_its_dtype():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        items[0] = cuda.ldcg(src, 2 * cuda.threadIdx.x)
        items[1] = cuda.ldcg(src, 2 * cuda.threadIdx.x + 1)
        total = coop.sum(block, items)
        if block.rank() == 0:
            dst[0] = total

    built = build_kernel(kernel, (np.zeros(256, np.float64), np.zeros(1, np.float64)))
    assert reduced_types(built) == ["double"]


def sum_and_max(a, b):
    return a[0] + b[0], max(a[1], b[1])


@cuda.jit(device=True, inline="always")
def warp_pair(src):
    """An inlined helper returning two scalars: a warp's (sum, largest index) in lane 0, (0, -1) elsewhere."""
    mass = src[cuda.threadIdx.x]
    last = np.int32(cuda.threadIdx.x)
    mass, last = coop.reduce(coop.this_warp(), (mass, last), binary_op=sum_and_max, broadcast=False)
    if cuda.threadIdx.x % 32 != 0:
        mass = np.float32(0)
        last = np.int32(-1)
    return mass, last


@cuda.jit
def unpacks_a_helpers_tuple(src, dst):
    block = coop.this_block()
    mass, last = warp_pair(src)  # evidence is read after inlining (SPEC 4): through the helper's ``return a, b``
    total, top = coop.reduce(block, (mass, last), binary_op=sum_and_max)
    if block.rank() == 0:
        dst[0] = total + top


def test_scalars_unpacked_from_an_inlined_helpers_tuple_keep_their_dtypes():
    built = build_kernel(unpacks_a_helpers_tuple, (np.zeros(128, np.float64), np.zeros(1, np.float64)))
    assert re.findall(r"BlockReduce<(\w+),", built.cpp_source) == ["cuda_coop_tuple_float64_int32"] * 2
