"""sm_90 builds of reduce_batched without a GPU, and its compile-time errors (SPEC 8.6, 10.2 O4/S2/G3/G15/C1/C2)."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

from compile_helpers import build_kernel, expect_compile_error

I32 = np.zeros(1 << 14, np.int32)
F32 = np.zeros(1 << 14, np.float32)
WIDTHS = [1, 2, 4, 8, 16, 32]


def pick_max(a, b):
    return a if a > b else b


def _group(width):
    return coop.this_warp() if width == 32 else coop.this_warp().group_by(width)


@pytest.mark.parametrize("layout", ["striped", "blocked"])
@pytest.mark.parametrize("width", WIDTHS)
def test_builds_for_every_width_batch_count_and_layout(width, layout):
    b1, b2, b3, b4 = 1, 3, width, 2 * width + 1  # B in {1, 3, W, 2W+1}

    @cuda.jit
    def kernel(src, dst):
        g = coop.this_warp() if width == 32 else coop.this_warp().group_by(width)
        x1 = coop.ThreadData(b1)
        x2 = coop.ThreadData(b2)
        x3 = coop.ThreadData(b3)
        x4 = coop.ThreadData(b4)
        coop.load(g, src, x1)
        coop.load(g, src, x2)
        coop.load(g, src, x3)
        coop.load(g, src, x4)
        coop.store(g, dst, coop.reduce_batched(g, x1, output_layout=layout))
        coop.store(g, dst, coop.reduce_batched(g, x2, output_layout=layout))
        coop.store(g, dst, coop.reduce_batched(g, x3, output_layout=layout))
        coop.store(g, dst, coop.reduce_batched(g, x4, output_layout=layout))

    built = build_kernel(kernel, (I32, I32), block=(8, 4, 1))
    tree = "RecurseReductionTree<false," if layout == "striped" else "RecurseReductionTree<true,"
    for b in sorted({b1, b2, b3, b4}):
        m = -(-b // width)
        assert f"cub::detail::warp_reduce_batched_wspro<int, {b}, {width}, false>" in built.cpp_source
        assert f"int (&out)[{m}]" in built.cpp_source
    assert built.cpp_source.count(tree) == len({b1, b2, b3, b4})
    assert built.metadata["scratch_bytes"] == 0  # shuffle-based: no shared memory


@pytest.mark.parametrize("op, functor", [("max", "cuda_coop::maximum<float>"), ("  Bit-Xor ", None),
                                         (pick_max, "_op{}")])
def test_operator_strings_and_python_operator(op, functor):
    @cuda.jit
    def kernel(src, dst):
        g = coop.this_warp().group_by(8)
        items = coop.ThreadData(5)
        coop.load(g, src, items)
        coop.store(g, dst, coop.reduce_batched(g, items, binary_op=op, output_layout="Blocked"))

    if functor is None:  # bit_xor on int32
        built = build_kernel(kernel, (I32, I32))
        assert "cuda::std::bit_xor<int>" in built.cpp_source
        return
    built = build_kernel(kernel, (F32, F32))
    assert functor in built.cpp_source and "RecurseReductionTree<true," in built.cpp_source


def test_result_extent_and_dtype_follow_the_input():
    @cuda.jit
    def kernel(src, dst):
        g = coop.this_warp().group_by(4)
        items = coop.ThreadData(9, dtype=np.float32)
        coop.load(g, src, items)
        out = coop.reduce_batched(g, items)
        for i in range(len(out)):  # ceil(9 / 4) = 3 slots
            dst[cuda.threadIdx.x * 3 + i] = out[i]

    built = build_kernel(kernel, (F32, F32))
    assert "float (&out)[3]" in built.cpp_source and "warp_reduce_batched_wspro<float, 9, 4, false>" in built.cpp_source


def test_scalar_value_is_rejected():  # O4
    @cuda.jit
    def kernel(src, dst):
        g = coop.this_warp()
        out = coop.reduce_batched(g, src[cuda.threadIdx.x])
        coop.store(g, dst, out)

    err = expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                               "cuda.coop.reduce_batched requires a ThreadData payload")
    assert str(err).splitlines()[0].endswith("cuda.coop.reduce_batched requires a ThreadData payload")


def test_temp_storage_is_rejected():  # S2
    @cuda.jit
    def kernel(src, dst):
        g = coop.this_warp()
        ts = coop.TempStorage()
        items = coop.ThreadData(3)
        coop.load(g, src, items)
        coop.store(g, dst, coop.reduce_batched(g, items, temp_storage=ts))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.reduce_batched does not accept temp_storage for warp groups; their scratch "
                         "is always compiler-owned")


def test_block_group_is_rejected():  # G3
    @cuda.jit
    def kernel(src, dst):
        b = coop.this_block()
        items = coop.ThreadData(3)
        coop.load(b, src, items)
        coop.store(b, dst, coop.reduce_batched(b, items))

    expect_compile_error(kernel, (I32, I32), coop.CoopUnsupportedError,
                         "cuda.coop.reduce_batched does not support group kind 'block'; supported group kinds: "
                         "warp, threads_within_warp")


def test_non_power_of_two_width_is_rejected():  # G15
    @cuda.jit
    def kernel(src, dst):
        g = coop.this_warp().group_by(3, exhaustive=False)
        items = coop.ThreadData(3)
        if g.is_member():
            items[0] = src[0]
            items[1] = src[1]
            items[2] = src[2]
            out = coop.reduce_batched(g, items)
            dst[0] = out[0]

    expect_compile_error(kernel, (I32, I32), coop.CoopUnsupportedError,
                         "cuda.coop.reduce_batched supports logical-warp widths 1, 2, 4, 8, 16, 32; got 3")


def test_partial_warp_block_is_rejected():  # G5
    @cuda.jit
    def kernel(src, dst):
        g = coop.this_warp()
        items = coop.ThreadData(3)
        for i in range(3):
            items[i] = src[i]
        out = coop.reduce_batched(g, items)
        dst[0] = out[0]

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.reduce_batched on warp groups requires a block made of complete "
                         "warps; block has 48 threads", block=48)


def test_unknown_output_layout():  # C2
    @cuda.jit
    def kernel(src, dst):
        g = coop.this_warp()
        items = coop.ThreadData(3)
        coop.load(g, src, items)
        coop.store(g, dst, coop.reduce_batched(g, items, output_layout="warp_striped"))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.reduce_batched output_layout must be one of: striped, blocked; got 'warp_striped'")


def test_output_layout_must_be_a_string():  # C1
    @cuda.jit
    def kernel(src, dst):
        g = coop.this_warp()
        items = coop.ThreadData(3)
        coop.load(g, src, items)
        coop.store(g, dst, coop.reduce_batched(g, items, output_layout=0))

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.reduce_batched output_layout must be a string; got int")


def test_unknown_operator_and_bit_operator_on_floats():  # C2 (binary_op), P3
    @cuda.jit
    def unknown(src, dst):
        g = coop.this_warp()
        items = coop.ThreadData(3)
        coop.load(g, src, items)
        coop.store(g, dst, coop.reduce_batched(g, items, binary_op="avg"))

    expect_compile_error(unknown, (I32, I32), coop.CoopValueError,
                         "cuda.coop.reduce_batched binary_op must be one of: sum, multiplies, min, max, bit_and, "
                         "bit_or, bit_xor; got 'avg'")

    @cuda.jit
    def bits(src, dst):
        g = coop.this_warp()
        items = coop.ThreadData(3)
        coop.load(g, src, items)
        coop.store(g, dst, coop.reduce_batched(g, items, binary_op="bit_and"))

    expect_compile_error(bits, (F32, F32), coop.CoopTypeError,
                         "cuda.coop.reduce_batched binary_op 'bit_and' requires an integer dtype; got float32")


def test_options_are_keyword_only():  # C5
    @cuda.jit
    def kernel(src, dst):
        g = coop.this_warp()
        items = coop.ThreadData(3)
        coop.load(g, src, items)
        coop.store(g, dst, coop.reduce_batched(g, items, "max"))

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.reduce_batched takes 2 positional operands; pass options by keyword")


def test_qualified_name_builds():
    @cuda.jit
    def kernel(src, dst):
        g = coop.this_warp().group_by(16)
        items = coop.ThreadData(33)
        coop.load(g, src, items)
        coop.store(g, dst, numba_coop.reduce_batched(g, items, binary_op="min"))

    build_kernel(kernel, (I32, I32))


def test_local_array_payload_needs_the_qualified_namespace():  # P4
    @cuda.jit
    def kernel(src, dst):
        g = coop.this_warp()
        items = cuda.local.array(3, np.int32)
        for i in range(3):
            items[i] = src[i]
        out = coop.reduce_batched(g, items)
        coop.store(g, dst, out)

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.reduce_batched requires a fixed-size ThreadData value payload in the common API; "
                         "use cuda.coop.numba_mlir for local array payloads")


def test_uncompilable_python_operator():  # C14
    def concat(a, b):
        return str(a) + str(b)

    @cuda.jit
    def kernel(src, dst):
        g = coop.this_warp()
        items = coop.ThreadData(3)
        coop.load(g, src, items)
        coop.store(g, dst, coop.reduce_batched(g, items, binary_op=concat))

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError, "could not be compiled for (int32, int32)")
