"""numba-cuda-mlir builds around the compile-time values and conversions of SPEC 4 and 7.2 that a kernel with
cooperative calls must keep working: scalar kernel arguments and cooperative results convert into payloads of
another dtype, module-level ``__index__`` objects are compile-time integers, and objects numba-cuda-mlir types itself
(an enum member) keep their meaning. No GPU needed."""
from __future__ import annotations

import enum

import numpy as np

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

from compile_helpers import expect_compile_error

I32 = np.zeros(1024, np.int32)


class _Size:
    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


class Mode(enum.Enum):
    """An enum member with ``__index__``: numba-cuda-mlir types it, so it stays an enum member in the kernel."""
    FIRST = 1
    SECOND = 2

    def __index__(self):
        return self.value


ALIGN = _Size(16)
MODE = Mode.SECOND


def test_a_scalar_argument_fills_a_payload_of_another_dtype():
    """A Python int argument is int64 to numba-cuda-mlir; filling an int32 payload with it converts (an argument is
    no dtype evidence, SPEC 4 rule 3), with an explicit dtype and with a store's."""
    @cuda.jit
    def explicit(dst, fill):
        items = coop.ThreadData(4, np.int32)
        for i in range(4):
            items[i] = fill
        coop.store(coop.this_block(), dst, items)

    @cuda.jit
    def by_store(dst, fill):
        items = coop.ThreadData(4)
        for i in range(4):
            items[i] = fill
        coop.store(coop.this_block(), dst, items)

    for kernel in (explicit, by_store):
        built = numba_coop.compile_kernel(kernel, (I32, 7), block=128)
        assert built.cubin[:4] == b"\x7fELF" and built.local_memory_bytes == 0


def test_an_enum_member_with_index_keeps_its_meaning():
    @cuda.jit
    def kernel(src, dst):
        items = coop.ThreadData(4, np.int32)
        coop.load(coop.this_block(), src, items)
        if MODE.value == 2:
            items[0] = 7
        coop.store(coop.this_block(), dst, items)

    built = numba_coop.compile_kernel(kernel, (I32, I32), block=128)
    assert built.cubin[:4] == b"\x7fELF"


def test_an_index_object_aligns_a_shared_array_in_the_backing():
    @cuda.jit
    def kernel(src, dst):
        rows = numba_coop.shared.array((128, 4), np.int32, alignment=ALIGN)
        numba_coop.load(coop.this_block(), src, rows[cuda.threadIdx.x], algorithm="transpose")
        numba_coop.store(coop.this_block(), dst, rows[cuda.threadIdx.x])

    built = numba_coop.compile_kernel(kernel, (I32, I32), block=128)
    assert built.cubin[:4] == b"\x7fELF"


def test_an_array_element_against_the_explicit_dtype_is_p8():
    @cuda.jit
    def kernel(src, dst):
        items = coop.ThreadData(4, np.int64)
        for i in range(4):
            items[i] = src[i]  # P8 HERE
        coop.store(coop.this_block(), dst, items)

    expect_compile_error(kernel, (I32, np.zeros(1024, np.int64)), coop.CoopTypeError,
                         "ThreadData items has conflicting dtypes int64 (dtype= at line", site="prefix",
                         line_marker="P8 HERE")
