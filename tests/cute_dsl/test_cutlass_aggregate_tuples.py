"""The CuTe DSL backend builds no user-defined aggregates (SPEC 9.2, 12.3; docs: cutlass): a ThreadData of a NumPy
structured dtype as a member of a tuple operand (SPEC 8.18) is a CoopTypeError at the call's line that lists the
dtypes this backend builds, as it is alone, never a KeyError from inside the emitter. The kernels live here because
CuTe reads their source."""
from __future__ import annotations

import numpy as np
import pytest

cutlass = pytest.importorskip("cutlass")
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.runtime import make_fake_tensor  # noqa: E402

import cuda.coop.cutlass as cute_coop  # noqa: E402
from cuda import coop  # noqa: E402

import cute_kernels as ck  # noqa: E402

THREADS = ck.THREADS
DTYPES = "int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64"
PAIR = np.dtype([("key", np.int32), ("val", np.float32)], align=True)


def first_and_sum(a, b):
    return (a[0], a[1] + b[1])


def sum_and_first(a, b):
    return (a[0] + b[0], a[1])


@cute.kernel
def tuple_scan_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    records = coop.ThreadData(2, dtype=PAIR)
    counts = coop.ThreadData(2, dtype=np.int32)
    cute_coop.load(block, src, counts)
    best, total = cute_coop.inclusive_scan(block, (records, counts), scan_op=first_and_sum)  # HERE
    cute_coop.store(block, dst, total)


@cute.kernel
def tuple_reduce_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    records = coop.ThreadData(2, dtype=PAIR)
    counts = coop.ThreadData(2, dtype=np.int32)
    cute_coop.load(block, src, counts)
    total, best = cute_coop.reduce(block, (counts, records), binary_op=sum_and_first)  # HERE
    dst[0] = total


@pytest.mark.parametrize("kernel, words", [
    (tuple_scan_kernel, "cuda.coop.cutlass.inclusive_scan does not support value[0] dtype "),
    (tuple_reduce_kernel, "cuda.coop.cutlass.reduce does not support value[1] dtype "),
], ids=["tuple-scan", "tuple-reduce"])
def test_a_structured_dtype_member_is_a_coop_error_at_the_line(kernel, words):
    tensor = make_fake_tensor(cutlass.Int32, (2 * THREADS,), stride=(1,))
    with pytest.raises(coop.CoopTypeError) as info:
        cute_coop.compile_kernel(ck.one_block_launcher(kernel), tensor, tensor)
    line = ck.marked_line(kernel)
    message = str(info.value)
    assert message.startswith(f"{__file__}:{line}: {words}"), message
    assert message.endswith(f"; supported: {DTYPES}"), message
