"""Conformance fixes that need no GPU: per-call targets, warp-relative valid_items, compile-time payload
extents in helpers, payload variables across branches and loops (P15), cluster ranks, public error names."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

from compile_helpers import line_of

I32 = np.zeros(4096, np.int32)
F32 = np.zeros(4096, np.float32)


def _sm_of(cubin: bytes) -> int:
    """The SASS architecture a cubin was linked for (ELF e_flags, bits 8-15 in CUDA 12.8+ cubins)."""
    flags = struct.unpack_from("<I", cubin, 0x30)[0]
    return (flags >> 8) & 0xFF


@cuda.jit
def k_copy(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items, algorithm="transpose")
    coop.store(block, dst, items)


def test_target_is_per_call():
    """After a build for sm_90, a build for sm_80 links for sm_80 (and back)."""
    for target, sm in (("sm_90", 90), ("sm_80", 80), ("sm_90", 90), ("sm_86", 86)):
        built = numba_coop.compile_kernel(k_copy, (I32, I32), block=128, target=target)
        assert _sm_of(built.cubin) == sm, target
        assert f"code for {target}" in built.sass()


@pytest.mark.parametrize("bad", ["sm90", "compute_90", "", "sm_bogus", "sm_35", 90])
def test_c15_bad_target(bad):
    with pytest.raises(coop.CoopValueError) as info:
        numba_coop.compile_kernel(k_copy, (I32, I32), block=128, target=bad)
    message = str(info.value)
    assert message.startswith("target must look like 'sm_90' or 'sm_90a' with a supported architecture (sm_")
    assert message.endswith(f"; got {bad!r}")


def test_compiled_kernel_repr_is_one_short_line():
    built = numba_coop.compile_kernel(k_copy, (I32, I32), block=128)
    text = repr(built)
    assert "\n" not in text and len(text) < 200 and "registers" in text, text


def test_errors_print_under_the_public_module():
    for cls in (coop.CoopError, coop.CoopTypeError, coop.CoopValueError, coop.CoopUnsupportedError,
                coop.CoopIndexError, coop.CoopBuildError, coop.CoopCompilerContextRequiredError):
        assert f"{cls.__module__}.{cls.__qualname__}" == f"cuda.coop.{cls.__name__}"
    import traceback

    try:
        raise coop.CoopTypeError("x")
    except coop.CoopTypeError as exc:
        assert traceback.format_exception_only(exc)[0].startswith("cuda.coop.CoopTypeError: x")


# ------------------------------------------------------------ warp valid_items (SPEC 8.1)


def _warp_load(width, valid):
    @cuda.jit
    def kernel(src, dst):
        group = coop.this_warp() if width == 32 else coop.this_warp().group_by(width)
        items = coop.ThreadData(4)
        coop.load(group, src, items, valid_items=valid, oob_default=0)  # LOAD
        coop.store(group, dst, items)

    return kernel


@pytest.mark.parametrize("width", [32, 8, 1])
def test_warp_valid_items_is_relative_to_the_group_tile(width):
    tile = width * 4
    built = numba_coop.compile_kernel(_warp_load(width, tile), (I32, I32), block=128)
    assert f"check_range(valid_items, 0, {tile})" in built.cpp_source
    assert "instance * " in built.cpp_source  # the group's own tile origin is still added to the pointer
    assert "mine" not in built.cpp_source  # nothing subtracted from the caller's count
    kernel = _warp_load(width, tile + 1)
    with pytest.raises(coop.CoopValueError) as info:
        numba_coop.compile_kernel(kernel, (I32, I32), block=128)
    assert f"cuda.coop.load static valid_items must be between 0 and {tile}; got {tile + 1}" in str(info.value)
    assert f"test_conformance_compile.py:{line_of(kernel, '# LOAD')}" in str(info.value)


# ------------------------------------------------ items_per_thread and len() (SPEC 4, 7.2)


@cuda.jit(device=True, inline="always")
def _doubled(items):
    out = coop.ThreadData(items.items_per_thread, dtype=np.int32)
    for i in range(items.items_per_thread):
        out[i] = items[i] * 2
    return out


@cuda.jit
def k_extents(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    for i in range(len(items)):
        items[i] += 1
    wide = coop.ThreadData(items.items_per_thread * 2, dtype=np.int32)
    for i in range(len(wide)):
        wide[i] = i
    coop.store(block, dst, _doubled(items))


def test_items_per_thread_and_len_are_compile_time_in_kernels_and_helpers():
    built = numba_coop.compile_kernel(k_extents, (I32, I32), block=128)
    assert built.local_memory_bytes == 0


# ------------------------------------------------------------ P15


@cuda.jit
def k_loop_carried(src, dst, rounds):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    for _ in range(rounds):
        items = coop.inclusive_sum(block, items)
    coop.store(block, dst, items)


@cuda.jit
def k_branch_merged(src, dst, flag):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    if flag > 0:
        out = coop.inclusive_sum(block, items)
    else:
        out = coop.ThreadData(4)
        for i in range(4):
            out[i] = items[i] - 1
    coop.store(block, dst, out)


@pytest.mark.parametrize("kernel", [k_loop_carried, k_branch_merged])
def test_p15_payloads_of_one_shape_may_share_a_variable(kernel):
    built = numba_coop.compile_kernel(kernel, (I32, I32, np.int32(2)), block=128)
    assert built.cpp_source
    assert built.local_memory_bytes == 0  # one array per merged variable: its items stay in registers


@cuda.jit
def k_loop_over_argument(src, dst, k):
    block = coop.this_block()
    items = coop.ThreadData(k)
    coop.load(block, src, items)
    for i in range(k):
        items[i] += 1
    coop.store(block, dst, items)


def test_specialised_argument_is_a_constant():
    """A loop over the specialised items_per_thread argument unrolls: no local memory."""
    built = numba_coop.compile_kernel(k_loop_over_argument, (I32, I32, 2), block=96)
    assert built.local_memory_bytes == 0


@cuda.jit
def k_arithmetic_over_arguments(src, dst, k, scale):
    block = coop.this_block()
    temp = coop.TempStorage(max(k, 2) * scale * 1024, alignment=-(-scale * 16))
    items = coop.ThreadData(k + 0)  # the arguments appear bare nowhere
    coop.load(block, src, items, algorithm="transpose", temp_storage=temp)
    coop.store(block, dst, items)


def test_arithmetic_over_integer_arguments_is_compile_time():
    """SPEC 7.2: integer arithmetic (and min/max) over plain integer kernel arguments is a compile-time value: the
    kernel is specialised on the arguments it uses, not only on ones passed bare to a call."""
    built = numba_coop.compile_kernel(k_arithmetic_over_arguments, (I32, I32, 4, 2), block=128)
    assert "BlockLoad<int, 128, 4, cub::BLOCK_LOAD_TRANSPOSE" in built.cpp_source
    assert built.shared_memory_bytes >= 4 * 2 * 1024 and built.local_memory_bytes == 0  # the descriptor's size


@cuda.jit
def k_p15_extents_differ(src, dst, flag):
    block = coop.this_block()
    if flag > 0:
        items = coop.ThreadData(4)
    else:
        items = coop.ThreadData(2)
    coop.load(block, src, items)  # P15


@cuda.jit
def k_p15_dtypes_differ(src, dst, flag):
    block = coop.this_block()
    if flag > 0:
        items = coop.ThreadData(4, dtype=np.int32)
    else:
        items = coop.ThreadData(4, dtype=np.float32)
    coop.load(block, src, items)


@pytest.mark.parametrize("kernel,shapes", [
    (k_p15_extents_differ, "(items_per_thread=2; items_per_thread=4)"),
    (k_p15_dtypes_differ, "(items_per_thread=4, dtype=int32; items_per_thread=4, dtype=float32)"),
])
def test_p15_payloads_of_different_shapes(kernel, shapes):
    with pytest.raises(coop.CoopTypeError) as info:
        numba_coop.compile_kernel(kernel, (I32, I32, np.int32(1)), block=128)
    message = str(info.value)
    assert "variable items may refer to payloads with different extents or dtypes (" in message, message
    assert shapes in message, message
    assert "test_conformance_compile.py:" in message


@cuda.jit
def k_p15_copies_of_two_dtypes(src, dst, flag):
    block = coop.this_block()
    a = coop.ThreadData(4, dtype=np.int32)
    b = coop.ThreadData(4, dtype=np.float32)
    items = a if flag > 0 else b  # the merge is a compiler temporary, copied into items
    coop.store(block, dst, items)


@cuda.jit
def k_p15_indexed_only(src, dst, flag):
    a = coop.ThreadData(4, dtype=np.int32)
    b = coop.ThreadData(2, dtype=np.int32)
    if flag > 0:
        items = a
    else:
        items = b
    items[0] = src[0]
    dst[0] = items[0]


@pytest.mark.parametrize("kernel,shapes,marker", [
    (k_p15_copies_of_two_dtypes, "(items_per_thread=4, dtype=int32; items_per_thread=4, dtype=float32)",
     "np.float32)"),
    (k_p15_indexed_only, "(items_per_thread=2, dtype=int32; items_per_thread=4, dtype=int32)", "items = b"),
])
def test_p15_payloads_merged_through_copies(kernel, shapes, marker):
    """P15 sees payloads that reach a variable by copies (a ternary, ``items = a`` in each branch), whether or not
    the variable reaches a cooperative call: a Python error at the line, never numba's typing error."""
    with pytest.raises(coop.CoopTypeError) as info:
        numba_coop.compile_kernel(kernel, (I32, I32, np.int32(1)), block=128)
    message = str(info.value)
    assert message.startswith(f"{__file__}:{line_of(kernel, marker)}: variable items may refer to payloads with "
                              f"different extents or dtypes {shapes}"), message


# ------------------------------------------------------------ cluster rank


@cuda.jit
def k_cluster_rank(out):
    cluster = coop.this_cluster()
    out[cuda.blockIdx.x] = cluster.rank(level="grid")


def test_cluster_rank_reads_the_cluster_id_registers():
    built = numba_coop.compile_kernel(k_cluster_rank, (np.zeros(64, np.uint64),), block=128)
    # the cluster-id registers, read in include/cuda_coop/util_cluster.cuh
    assert "cuda_coop::cluster_position(cta, ncta, clu, nclu);" in built.cpp_source
    assert "blk / ncta" not in built.cpp_source


# ------------------------------------------------------------ P17, H1 before inference, short tracebacks


@cuda.jit
def k_radix_tile_too_big(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(128)
    coop.load(block, src, items)
    coop.store(block, dst, coop.radix_sort_keys(block, items))  # TILE


def test_p17_radix_tile_above_cubs_counter_limit():
    with pytest.raises(coop.CoopValueError) as info:
        numba_coop.compile_kernel(k_radix_tile_too_big, (I32, I32), block=1024)
    message = str(info.value)
    assert "cuda.coop.radix_sort_keys tile of 131072 items exceeds CUB's limit of 65535 for this algorithm" in message
    assert f"test_conformance_compile.py:{line_of(k_radix_tile_too_big, '# TILE')}" in message


@cuda.jit(device=True, inline="never")
def _not_inlined_helper(block, src, items):
    coop.load(block, src, items)


@cuda.jit
def k_payload_to_non_inlined_helper(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    _not_inlined_helper(block, src, items)  # HELPER
    coop.store(block, dst, items)


def test_h1_payload_passed_to_a_non_inlined_coop_helper():
    """Named as H1 (the root cause), not as an escape or a failed dtype inference."""
    with pytest.raises(coop.CoopTypeError) as info:
        numba_coop.compile_kernel(k_payload_to_non_inlined_helper, (I32, I32), block=128)
    message = str(info.value)
    assert "device function _not_inlined_helper contains cuda.coop operations but is not inlined into the kernel; " \
           'declare it with @cuda.jit(device=True, inline="always")' in message, message
    assert f"test_conformance_compile.py:{line_of(k_payload_to_non_inlined_helper, '# HELPER')}" in message


@cuda.jit
def k_bad_selector(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items, algorithm="bogus")


def test_planner_errors_carry_no_cuda_coop_frames():
    import traceback

    with pytest.raises(coop.CoopValueError) as info:
        numba_coop.compile_kernel(k_bad_selector, (I32, I32), block=128)
    frames = traceback.extract_tb(info.value.__traceback__)
    planner = [f for f in frames if f.filename.replace("\\", "/").endswith("/cuda/coop/numba_mlir/_planner.py")]
    assert len(planner) == 1, planner  # only the planner's re-raise: no family or semantics frames
    assert not [f for f in frames if "/_semantics/" in f.filename or "/_lowering/" in f.filename]


@cuda.jit
def k_group_before_array(src2d, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.shuffle(coop.this_warp(), items)  # GROUP
    coop.load(block, src2d, items)


def test_check_order_group_before_operands():
    """SPEC 10.1: the group (G3) is reported before operand checks of later calls and before inference."""
    with pytest.raises(coop.CoopUnsupportedError) as info:
        numba_coop.compile_kernel(k_group_before_array, (np.zeros((4, 4), np.int32), I32), block=128)
    message = str(info.value)
    assert "cuda.coop.shuffle does not support group kind 'warp'; supported group kinds: block" in message, message
    assert f"test_conformance_compile.py:{line_of(k_group_before_array, '# GROUP')}" in message
