"""Compile-time errors raised through compile_kernel (SPEC 10.2); no GPU needed.

Every error must carry its class, its catalogue message and the kernel source
location of the offending call (``test_errors.py:<line>``).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

from compile_helpers import expect_compile_error, line_of

I32 = np.zeros(1024, np.int32)
F32 = np.zeros(1024, np.float32)


# ------------------------------------------------------------------ R9


@cuda.jit
def k_r9_sum(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    out = coop.run_length_decode(coop.this_block(), items, items, decoded_items_per_thread=2)  # R9 HERE
    coop.store(coop.this_block(), dst, out)


@pytest.fixture
def run_length_decode_unimplemented(monkeypatch):
    """Every operation of this release is implemented: R9 is exercised by hiding one family from the backend."""
    from cuda.coop.numba_mlir import _planner

    monkeypatch.delitem(_planner.FAMILIES, "run_length_decode")


def test_r9_unimplemented_operation(run_length_decode_unimplemented):
    exc = expect_compile_error(k_r9_sum, (I32, I32), coop.CoopUnsupportedError,
                               "cuda.coop.run_length_decode is not implemented by the numba-cuda-mlir backend in "
                               f"cuda-coop {coop.__version__}", line_marker="R9 HERE")
    assert isinstance(exc, NotImplementedError)


@cuda.jit
def k_r9_qualified(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    out = numba_coop.run_length_decode(coop.this_block(), items, items, decoded_items_per_thread=2)
    coop.store(coop.this_block(), dst, out)


def test_r9_unimplemented_qualified_operation(run_length_decode_unimplemented):
    expect_compile_error(k_r9_qualified, (I32, I32), coop.CoopUnsupportedError,
                         "cuda.coop.numba_mlir.run_length_decode is not implemented by the numba-cuda-mlir backend",
                         site_has_line=True)


# ------------------------------------------------------------------ G1, G5


@cuda.jit
def k_g1_array_as_group(src, dst):
    items = coop.ThreadData(4)
    coop.load(src, src, items)  # G1 HERE
    coop.store(coop.this_block(), dst, items)


def test_g1_non_group_operand():
    expect_compile_error(k_g1_array_as_group, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.load requires a compile-time ThreadGroup created by this_*() or "
                         "group_by() in this kernel", line_marker="G1 HERE")


@cuda.jit
def k_g1_literal_group(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    coop.store(7, dst, items)


def test_g1_literal_group():
    expect_compile_error(k_g1_literal_group, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.store requires a compile-time ThreadGroup", site_has_line=True)


@cuda.jit
def k_g5_warp_load(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_warp(), src, items)  # G5 HERE
    coop.store(coop.this_warp(), dst, items)


def test_g5_warp_load_partial_warp_block():
    expect_compile_error(k_g5_warp_load, (I32, I32), coop.CoopValueError,
                         "cuda.coop.load on warp groups requires a block made of complete warps; block has 48 threads",
                         block=(48,), line_marker="G5 HERE")


@cuda.jit
def k_g14_group_by(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_warp().group_by(3), src, items)  # G14 HERE
    coop.store(coop.this_block(), dst, items)


def test_g14_group_by_through_compile():
    expect_compile_error(k_g14_group_by, (I32, I32), coop.CoopValueError,
                         "exhaustive ThreadGroup.group_by requires the count to divide the parent unit count (32)",
                         line_marker="G14 HERE")


# ------------------------------------------------------------------ C1, C2, C5


@cuda.jit
def k_c1_algorithm_int(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, algorithm=5)  # C1 HERE
    coop.store(coop.this_block(), dst, items)


def test_c1_algorithm_not_a_string():
    expect_compile_error(k_c1_algorithm_int, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.load algorithm must be a string; got int", line_marker="C1 HERE")


@cuda.jit
def k_c2_algorithm_unknown(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items, algorithm="blocked")  # C2 HERE


def test_c2_unknown_algorithm():
    expect_compile_error(k_c2_algorithm_unknown, (I32, I32), coop.CoopValueError,
                         "cuda.coop.store algorithm must be one of: direct, striped, vectorize, transpose, "
                         "warp_transpose, warp_transpose_timesliced; got 'blocked'", line_marker="C2 HERE")


@cuda.jit
def k_c2_warp_transpose_on_warp(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_warp(), src, items, algorithm="warp_transpose")
    coop.store(coop.this_warp(), dst, items)


def test_c2_warp_transpose_on_warp_group():
    expect_compile_error(k_c2_warp_transpose_on_warp, (I32, I32), coop.CoopValueError,
                         "cuda.coop.load algorithm must be one of: direct, striped, vectorize, "
                         "transpose for warp groups", site_has_line=True)


@cuda.jit
def k_c5_unknown_keyword(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, bogus=1)  # C5 HERE
    coop.store(coop.this_block(), dst, items)


def test_c5_unknown_keyword():
    expect_compile_error(k_c5_unknown_keyword, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.load got an unexpected keyword argument 'bogus'", line_marker="C5 HERE")


@cuda.jit
def k_c5_store_oob_default(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items, valid_items=3, oob_default=0)


def test_c5_store_has_no_oob_default():
    expect_compile_error(k_c5_store_oob_default, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.store got an unexpected keyword argument 'oob_default'", site_has_line=True)


@cuda.jit
def k_c5_positional_option(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, "direct")
    coop.store(coop.this_block(), dst, items)


def test_c5_option_passed_positionally():
    expect_compile_error(k_c5_positional_option, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.load takes 3 positional operands; pass options by keyword", site_has_line=True)


@cuda.jit
def k_c8_negative_offset(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, offset=-4)
    coop.store(coop.this_block(), dst, items)


def test_c8_negative_static_offset():
    expect_compile_error(k_c8_negative_offset, (I32, I32), coop.CoopValueError,
                         "cuda.coop.load static offset must be nonnegative; got -4", site_has_line=True)


@cuda.jit
def k_c11_oob_without_valid_items(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, oob_default=0)
    coop.store(coop.this_block(), dst, items)


def test_c11_oob_default_requires_valid_items():
    expect_compile_error(k_c11_oob_without_valid_items, (I32, I32), coop.CoopValueError,
                         "cuda.coop.load oob_default requires valid_items", site_has_line=True)


# ------------------------------------------------------------------ P6, P8, P9, P10


@cuda.jit
def k_p9_uninferable(src, dst):
    items = coop.ThreadData(4)  # P9 HERE
    dst[0] = items[0]


def test_p9_dtype_cannot_be_inferred():
    expect_compile_error(k_p9_uninferable, (I32, I32), coop.CoopTypeError,
                         "could not infer the dtype of ThreadData items; pass dtype= or assign values of known type "
                         "(cast helper results, e.g. numpy.int32(x))", line_marker="P9 HERE")


@cuda.jit
def k_p8_conflict(src, dst):
    items = coop.ThreadData(4)  # P8 HERE
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


def test_p8_conflicting_evidence():
    exc = expect_compile_error(k_p8_conflict, (I32, F32), coop.CoopTypeError,
                               "ThreadData items has conflicting dtypes int32 (cuda.coop.load at line ",
                               line_marker="P8 HERE")
    assert "and float32 (cuda.coop.store at line " in str(exc)


@cuda.jit
def k_p10_explicit_mismatch(src, dst):
    items = coop.ThreadData(4, dtype=np.float32)
    coop.load(coop.this_block(), src, items)  # P10 HERE
    coop.store(coop.this_block(), dst, items)


def test_p10_explicit_dtype_mismatch():
    expect_compile_error(k_p10_explicit_mismatch, (I32, F32), coop.CoopTypeError,
                         "cuda.coop.load source dtype int32 does not match payload dtype float32",
                         line_marker="P10 HERE")


@cuda.jit
def k_p10_store_mismatch(src, dst):
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)  # P10 STORE


def test_p10_store_dtype_mismatch():
    expect_compile_error(k_p10_store_mismatch, (I32, F32), coop.CoopTypeError,
                         "cuda.coop.store destination dtype float32 does not match payload dtype int32; cast the value",
                         line_marker="P10 STORE")


@cuda.jit
def k_p6_zero_items(src, dst):
    items = coop.ThreadData(0)  # P6 HERE
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


def test_p6_items_per_thread_zero():
    expect_compile_error(k_p6_zero_items, (I32, I32), coop.CoopValueError,
                         "ThreadData items_per_thread must be positive", line_marker="P6 HERE")


@cuda.jit
def k_p6_float_items(src, dst):
    items = coop.ThreadData(2.5)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


def test_p6_items_per_thread_not_integer():
    expect_compile_error(k_p6_float_items, (I32, I32), coop.CoopTypeError,
                         "ThreadData items_per_thread must be a compile-time integer", site_has_line=True)


# ------------------------------------------------------------------ S2, S6


@cuda.jit
def k_s2_warp_temp_storage(src, dst):
    ts = coop.TempStorage()
    items = coop.ThreadData(4)
    coop.load(coop.this_warp(), src, items, temp_storage=ts)  # S2 HERE
    coop.store(coop.this_warp(), dst, items)


def test_s2_temp_storage_on_warp_load():
    expect_compile_error(k_s2_warp_temp_storage, (I32, I32), coop.CoopValueError,
                         "cuda.coop.load does not accept temp_storage for warp groups; their scratch "
                         "is always compiler-owned", line_marker="S2 HERE")


@cuda.jit
def k_s6_too_small(src, dst):
    ts = coop.TempStorage(size_in_bytes=16)
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, algorithm="transpose", temp_storage=ts)  # S6 HERE
    coop.store(coop.this_block(), dst, items)


def test_s6_temp_storage_too_small():
    exc = expect_compile_error(k_s6_too_small, (I32, I32), coop.CoopValueError,
                               "TempStorage size_in_bytes=16 is too small: its uses need ", line_marker="S6 HERE")
    # BlockLoad<int, 128, 4, TRANSPOSE> exchanges 128 * 4 ints through shared memory
    needed = int(re.search(r"its uses need (\d+) bytes", str(exc)).group(1))
    assert needed >= 128 * 4 * 4


# ------------------------------------------------------------------ H1


@cuda.jit(device=True, inline="never")
def never_inlined_copy(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


@cuda.jit
def k_h1_not_inlined(src, dst):
    never_inlined_copy(src, dst)


def test_h1_non_inlined_helper():
    with pytest.raises(coop.CoopTypeError) as info:
        numba_coop.compile_kernel(k_h1_not_inlined, (I32, I32), block=128, target="sm_90")
    message = str(info.value)
    assert ("device function never_inlined_copy contains cuda.coop operations but is not inlined into the kernel; "
            'declare it with @cuda.jit(device=True, inline="always")') in message, message


def test_h1_names_source_location():
    with pytest.raises(coop.CoopTypeError) as info:
        numba_coop.compile_kernel(k_h1_not_inlined, (I32, I32), block=128, target="sm_90")
    assert "test_errors.py:" in str(info.value)


# ------------------------------------------------------------------ ordering (SPEC 10.1)


@cuda.jit
def k_error_after_valid_call(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, algorithm="transpose")
    coop.store(coop.this_block(), dst, items, algorithm="transpose", offset=-1)


def test_planning_errors_come_before_any_nvrtc_run(monkeypatch):
    from cuda.coop._cub import nvrtc

    def no_build(*args, **kwargs):
        raise AssertionError("NVRTC must not run before planning errors are reported")

    monkeypatch.setattr(nvrtc, "build", no_build)
    expect_compile_error(k_error_after_valid_call, (I32, I32), coop.CoopValueError,
                         "cuda.coop.store static offset must be nonnegative; got -1", site_has_line=True)


# ------------------------------------------------------------------ more catalogue entries (C4, G2, P12, S1, S5)


@cuda.jit
def k_c4_runtime_algorithm(src, dst, algorithm):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, algorithm=algorithm)  # C4 HERE
    coop.store(coop.this_block(), dst, items)


def test_c4_algorithm_from_runtime_string():
    expect_compile_error(k_c4_runtime_algorithm, (I32, I32, "direct"), coop.CoopTypeError,
                         "cuda.coop.load algorithm must be a compile-time string", line_marker="C4 HERE")


@cuda.jit
def k_g2_escape(src, dst):
    g = coop.this_block()
    pair = (g, 1)  # G2 HERE  # noqa: F841 (the kernel under test lets the group escape into a tuple)
    items = coop.ThreadData(4)
    coop.load(g, src, items)
    coop.store(g, dst, items)


def test_g2_group_escapes():
    expect_compile_error(k_g2_escape, (I32, I32), coop.CoopTypeError, "ThreadGroup g escapes to runtime through",
                         line_marker="G2 HERE")


@cuda.jit
def k_p12_string_dtype(src, dst):
    items = coop.ThreadData(4, dtype="int32")  # P12 HERE
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


def test_p12_string_dtype():
    expect_compile_error(k_p12_string_dtype, (I32, I32), coop.CoopTypeError,
                         "ThreadData dtype must be a NumPy or Numba scalar type; got 'int32'", line_marker="P12 HERE")


@cuda.jit
def k_s1_not_a_descriptor(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, algorithm="transpose", temp_storage=5)  # S1 HERE
    coop.store(coop.this_block(), dst, items)


def test_s1_temp_storage_not_a_descriptor():
    expect_compile_error(k_s1_not_a_descriptor, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.load temp_storage must be a TempStorage descriptor constructed in the kernel with "
                         "cuda.coop.TempStorage()", line_marker="S1 HERE")


@cuda.jit
def k_s5_bool_size(src, dst):
    ts = coop.TempStorage(True)  # S5 HERE
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, algorithm="transpose", temp_storage=ts)
    coop.store(coop.this_block(), dst, items)


def test_s5_bad_constructor_argument():
    expect_compile_error(k_s5_bool_size, (I32, I32), coop.CoopTypeError,
                         "TempStorage size_in_bytes must be a compile-time positive integer; got True",
                         line_marker="S5 HERE")


# ------------------------------------------------------------------ errors only typing can see (P10, P11, C6)


@cuda.jit
def k_typed_copy(src, dst):
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(coop.this_block(), src, items)  # TYPED LOAD
    coop.store(coop.this_block(), dst, items)


@cuda.jit
def k_runtime_valid_items(src, dst, n):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, valid_items=n > 3, oob_default=0)  # TYPED LOAD
    coop.store(coop.this_block(), dst, items)


@cuda.jit
def k_scalar_store(src, dst):
    coop.store(coop.this_block(), dst, src[0] + 1)  # TYPED STORE


TYPING_TIME = {
    "p11_2d_source": (k_typed_copy, (np.zeros((4, 256), np.int32), I32), "TYPED LOAD",
                      "cuda.coop.load source must be a one-dimensional contiguous array; got a 2-D contiguous int32 "
                      "array: it has 2 dimensions"),
    "p11_strided_source": (k_typed_copy, (I32[::2], I32), "TYPED LOAD",
                           "cuda.coop.load source must be a one-dimensional contiguous array; got a 1-D "
                           "non-contiguous int32 array: its elements are not adjacent (a stride other than 1)"),
    "c6_bool_valid_items": (k_runtime_valid_items, (I32, I32, 5), "TYPED LOAD",
                            "cuda.coop.load valid_items must be a signed integer of at most 64 bits or an unsigned "
                            "integer of at most 32 bits; got bool"),
    "p10_scalar_store": (k_scalar_store, (np.zeros(8, np.int64), I32), "TYPED STORE",
                         "cuda.coop.store destination dtype int32 does not match payload dtype int64; cast the value"),
}


@pytest.mark.parametrize("case", list(TYPING_TIME))
def test_typing_time_errors(case):
    kernel, args, _, fragment = TYPING_TIME[case]
    with pytest.raises(coop.CoopTypeError) as info:
        numba_coop.compile_kernel(kernel, args, block=128, target="sm_90")
    assert fragment in str(info.value)


@pytest.mark.parametrize("case", list(TYPING_TIME))
def test_typing_time_errors_name_source_location(case):
    kernel, args, marker, _ = TYPING_TIME[case]
    with pytest.raises(coop.CoopTypeError) as info:
        numba_coop.compile_kernel(kernel, args, block=128, target="sm_90")
    assert f"test_errors.py:{line_of(kernel, marker)}" in str(info.value)


# ------------------------------------------------------------------ compile_kernel with a typed integer argument


@cuda.jit
def k_items_from_argument(src, dst, k):
    items = coop.ThreadData(k)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


def test_items_per_thread_argument_value_is_specialised():
    expect_compile_error(k_items_from_argument, (I32, I32, 0), coop.CoopValueError,
                         "ThreadData items_per_thread must be positive", site_has_line=True)


def test_items_per_thread_argument_given_as_type():
    """H4: the kernel cannot be specialised on an argument given as a type; the message has H4's shape, names the
    parameter, the argument, its type and the call's line."""
    from numba_cuda_mlir.numba_cuda import types

    with pytest.raises(coop.CoopTypeError) as info:
        numba_coop.compile_kernel(k_items_from_argument, (I32, I32, types.int32), block=128, target="sm_90")
    message = str(info.value)
    assert message.startswith(f"{__file__}:{line_of(k_items_from_argument, 'ThreadData')}: cuda.coop.ThreadData "
                              "items_per_thread comes from kernel argument 'k', which the explicit signature types as "
                              "int32; pass a literal or constant, or remove the signature"), message


# ------------------------------------------------------------------ R8


def test_r8_explicit_signature_needs_a_launch(monkeypatch):
    """R8: a cooperative kernel compiled without a launch configuration (here eagerly, from an explicit
    signature) reports numba-cuda-mlir's own RuntimeError."""
    from numba_cuda_mlir import tools

    if tools._cached_cc is None:  # without a driver, numba-cuda-mlir needs to be told a compute capability
        monkeypatch.setattr(tools, "_cached_cc", (9, 0))
    with pytest.raises(RuntimeError, match="whole-function planner requires") as info:
        @cuda.jit("void(int32[::1], int32[::1])")
        def k_signed(src, dst):
            items = coop.ThreadData(4)
            coop.load(coop.this_block(), src, items)
            coop.store(coop.this_block(), dst, items)
    assert not isinstance(info.value, coop.CoopError)


# ------------------------------------------------------------------ configuration read at a build


@cuda.jit
def k_config_flag(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, algorithm="transpose")  # CONFIG HERE
    coop.store(coop.this_block(), dst, items)


def test_a_bad_cache_flag_is_located_at_the_kernel(monkeypatch):
    """A CUDA_COOP_* flag with an unknown spelling stops the build (SPEC 1.5) at the kernel's first call, as every
    compile-time message is located (the CuTe backend's twin: tests/cute_dsl/test_cutlass_compile.py)."""
    monkeypatch.setenv("CUDA_COOP_DISABLE_CACHE", "bogus")
    expect_compile_error(k_config_flag, (I32, I32), coop.CoopValueError,
                         "CUDA_COOP_DISABLE_CACHE='bogus' is not a boolean; accepted spellings:", site="prefix",
                         line_marker="CONFIG HERE")
