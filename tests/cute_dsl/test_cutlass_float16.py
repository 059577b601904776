"""The CuTe DSL backend builds no float16 (SPEC 12.3; docs: cutlass): a float16 scalar where a call takes a value, in
the qualified namespace as in the common one and as a member of a tuple (SPEC 8.18), is a CoopTypeError at the
call's line that lists the dtypes this backend builds, never a KeyError from inside the emitter. The kernels live
here because CuTe reads their source."""
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


def add_both(a, b):
    return (a[0] + b[0], a[1] + b[1])


@cute.kernel
def argmax_kernel(src: cute.Tensor, dst: cute.Tensor):
    tid, _, _ = cute.arch.thread_idx()
    value, index = cute_coop.argmax(coop.this_block(), cutlass.Float16(src[tid]))  # HERE
    dst[tid] = cutlass.Float32(value)


@cute.kernel
def argmin_common_kernel(src: cute.Tensor, dst: cute.Tensor):
    tid, _, _ = cute.arch.thread_idx()
    value, index = coop.argmin(coop.this_warp(), cutlass.Float16(src[tid]))  # HERE
    dst[tid] = cutlass.Float32(value)


@cute.kernel
def tuple_scan_kernel(src: cute.Tensor, dst: cute.Tensor):
    tid, _, _ = cute.arch.thread_idx()
    x, y = cute_coop.inclusive_scan(coop.this_block(), (cutlass.Int32(src[tid]), cutlass.Float16(src[tid])),  # HERE
                                    scan_op=add_both)
    dst[tid] = cutlass.Float32(x)


@cute.kernel
def tuple_reduce_kernel(src: cute.Tensor, dst: cute.Tensor):
    tid, _, _ = cute.arch.thread_idx()
    x, y = cute_coop.reduce(coop.this_block(), (cutlass.Float16(src[tid]), cutlass.Int32(src[tid])),  # HERE
                            binary_op=add_both)
    dst[tid] = cutlass.Float32(y)


@pytest.mark.parametrize("kernel, words", [
    (argmax_kernel, "cuda.coop.cutlass.argmax items is a float16 scalar"),
    (argmin_common_kernel, "cuda.coop.argmin items is a float16 scalar"),
    (tuple_scan_kernel, "cuda.coop.cutlass.inclusive_scan value[1] is a float16 scalar"),
    (tuple_reduce_kernel, "cuda.coop.cutlass.reduce value[0] is a float16 scalar"),
], ids=["argmax", "common-argmin", "tuple-scan", "tuple-reduce"])
def test_float16_scalars_are_a_coop_error_at_the_line(kernel, words):
    tensor = make_fake_tensor(cutlass.Float32, (THREADS,), stride=(1,))
    with pytest.raises(coop.CoopTypeError) as info:
        cute_coop.compile_kernel(ck.one_block_launcher(kernel), tensor, tensor)
    line = ck.marked_line(kernel)
    assert str(info.value) == f"{__file__}:{line}: {words}; cuda.coop.cutlass supports dtypes {DTYPES}"


@cute.kernel
def float16_fragment_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    keys = cute_coop.ThreadData.from_fragment(cute.make_rmem_tensor(4, cutlass.Float16))  # HERE
    cute_coop.load(block, src, keys)
    cute_coop.store(block, dst, cute_coop.radix_sort_keys(block, keys))


@cute.kernel
def float16_register_operand_kernel(src: cute.Tensor, dst: cute.Tensor):
    block = coop.this_block()
    keys = cute.make_rmem_tensor(4, cutlass.Float16)
    cute_coop.load(block, src, keys)  # HERE
    cute_coop.store(block, dst, keys)


@cute.kernel
def float16_filled_in_a_loop_kernel(src: cute.Tensor, dst: cute.Tensor):
    items = coop.ThreadData(4, np.float16)  # HERE
    for i in range(4):  # a traced loop carries the payload, which makes its register tensor before any call
        items[i] = cutlass.Float16(1)
    out = coop.exchange(coop.this_block(), items)
    dst[0] = cutlass.Float32(out[0])


@pytest.mark.parametrize("kernel", [float16_fragment_kernel, float16_register_operand_kernel,
                                    float16_filled_in_a_loop_kernel],
                         ids=["from_fragment", "register-operand", "filled-in-a-loop"])
def test_float16_register_tensors_are_a_coop_error_at_the_line(kernel):
    """A float16 register tensor as a payload (SPEC 12.3 interop) is the payload dtype error, at the line that
    wraps or passes it, never a KeyError from the emitter."""
    tensor = make_fake_tensor(cutlass.Float16, (4 * THREADS,), stride=(1,))
    with pytest.raises(coop.CoopTypeError) as info:
        cute_coop.compile_kernel(ck.one_block_launcher(kernel), tensor, tensor)
    assert str(info.value) == (f"{__file__}:{ck.marked_line(kernel)}: cuda.coop.cutlass payloads support dtypes "
                               f"{DTYPES}; got float16")
