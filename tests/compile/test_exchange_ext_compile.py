"""sm_90 builds of the qualified exchange modes and scalar shuffles without a GPU, and their compile-time errors
(SPEC 9.4, 9.5; O1, O15, C1-C4, C6, C7, C11, C12, G3, P2, P4, P5, P7); the planning agrees with the explainers'
layouts.py."""
from __future__ import annotations

import numpy as np
import pytest
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from cuda.coop._backend_context import BackendContext, active
from cuda.coop._semantics import exchange_shuffle as xs
from cuda.coop._semantics import layouts
from cuda.coop._semantics.common import (
    BLOCK,
    WARP,
    GroupSpec,
    LaunchShape,
    Runtime,
    Static,
)
from cuda.coop._semantics.shape import CallShape

from compile_helpers import build_kernel, expect_compile_error

I32 = np.zeros(1024, np.int32)
F64 = np.zeros(1024, np.float64)
U8 = np.zeros(1024, np.uint8)
F32 = np.zeros(1024, np.float32)


# ---------------------------------------------------------------------------- planning agrees with layouts.py


def _exchange(group, launch, mode, qualified, **extras):
    shape = CallShape(name="x", op="exchange", group=group, launch=launch, dtypes=("int32",), items_per_thread=2,
                      qualified=qualified)
    return xs.plan_exchange(shape, xs.ExchangeOptions(mode=mode, **extras))


def _scalar_shuffle(group, launch, mode, distance):
    shape = CallShape(name="s", op="shuffle", group=group, launch=launch, dtypes=("int32",), items_per_thread=0,
                      qualified=True, controls={"distance": distance})
    return xs.plan_scalar_shuffle(shape, xs.ShuffleOptions(mode=mode))


def test_planning_accepts_exactly_the_modes_layouts_lists():
    launch, block = LaunchShape((64, 1, 1)), GroupSpec(BLOCK, 64, 1)
    extra = xs.Operand("int32", 2)
    for mode in layouts.EXCHANGE_ALL_MODES:
        ranks = extra if mode in layouts.SCATTER_MODES else None
        flags = extra if mode == "scatter_to_striped_flagged" else None
        spec = _exchange(block, launch, mode, True, ranks=ranks, valid_flags=flags)
        assert spec.mode == mode
        source, target = layouts.exchange_arrangements(mode)
        assert (source is None) == (mode in xs.SCATTER_MODES)
        assert target in layouts.ARRANGEMENTS
    assert set(xs.EXCHANGE_MODES + xs.QUALIFIED_EXCHANGE_MODES) == set(layouts.EXCHANGE_ALL_MODES)
    assert set(xs.SCATTER_MODES) == set(layouts.SCATTER_MODES)
    for mode in ("striped", "scatter", "warp_striped", "scatter_to_warp_striped"):
        with pytest.raises(coop.CoopValueError, match="mode must be one of"):
            _exchange(block, launch, mode, True, ranks=extra)
    # the common namespace accepts exactly the two common modes; the others are C3
    for mode in layouts.EXCHANGE_ALL_MODES:
        if mode in xs.EXCHANGE_MODES:
            _exchange(block, launch, mode, False)
        else:
            with active(BackendContext("numba-cuda-mlir", "cuda.coop.numba_mlir")):  # as its planner sets it
                with pytest.raises(coop.CoopValueError, match="requires cuda.coop.numba_mlir"):
                    _exchange(block, launch, mode, False)
    # warp groups: the two common modes only
    warp = GroupSpec(WARP, 32, 2)
    for mode in layouts.EXCHANGE_ALL_MODES:
        if mode in xs.EXCHANGE_MODES:
            _exchange(warp, launch, mode, True)
        else:
            with pytest.raises(coop.CoopUnsupportedError, match="supported group kinds: block"):
                _exchange(warp, launch, mode, True, ranks=extra)


def test_scalar_shuffle_planning_matches_layouts():
    launch, block = LaunchShape((8, 1, 1)), GroupSpec(BLOCK, 8, 1)
    assert set(xs.SCALAR_SHUFFLE_MODES) == set(layouts.SCALAR_SHUFFLE_MODES)
    assert set(xs.SHUFFLE_MODES) == {"up", "down"}
    for mode in layouts.SCALAR_SHUFFLE_MODES:
        for distance in range(-9, 10):
            try:
                layouts.scalar_shuffle_source(0, 8, mode, distance)
                accepted = True
            except ValueError:
                accepted = False
            if accepted:
                spec = _scalar_shuffle(block, launch, mode, Static(distance))
                assert spec.distance == distance and spec.mode == mode
            else:
                with pytest.raises(coop.CoopValueError, match="static distance must be between 1 and 7"):
                    _scalar_shuffle(block, launch, mode, Static(distance))
        assert _scalar_shuffle(block, launch, mode, Runtime("int32")).distance is None


# ---------------------------------------------------------------------------- exchange builds


def _plain_kernel(mode, slicing):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        coop.load(block, src, items)
        out = numba_coop.exchange(block, items, mode=mode, warp_time_slicing=slicing)
        coop.store(block, dst, out)

    return kernel


def _scatter_kernel(mode, slicing):
    @cuda.jit
    def kernel(src, rk, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        ranks = coop.ThreadData(4)
        coop.load(block, src, items)
        coop.load(block, rk, ranks)
        out = numba_coop.exchange(block, items, mode=mode, ranks=ranks, warp_time_slicing=slicing)
        coop.store(block, dst, out)

    return kernel


def _flagged_kernel():
    @cuda.jit
    def kernel(src, rk, fl, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        ranks = coop.ThreadData(4)
        flags = coop.ThreadData(4)
        coop.load(block, src, items)
        coop.load(block, rk, ranks)
        coop.load(block, fl, flags)
        out = numba_coop.exchange(block, items, mode="scatter_to_striped_flagged", ranks=ranks, valid_flags=flags)
        coop.store(block, dst, out)

    return kernel


@pytest.mark.parametrize("mode, method", [("warp_striped_to_blocked", "WarpStripedToBlocked(in, out)"),
                                          ("Blocked-To-Warp-Striped", "BlockedToWarpStriped(in, out)"),
                                          ("striped_to_blocked", "StripedToBlocked(in, out)")])
@pytest.mark.parametrize("slicing", [False, True])
@pytest.mark.parametrize("block", [(32,), (8, 4, 1)])
def test_warp_striped_modes_build(mode, method, slicing, block):
    built = build_kernel(_plain_kernel(mode, slicing), (F64, F64), block=block, check_scratch=True)
    bx = block[0]
    assert f"BlockExchange<double, {bx}, 4, {'true' if slicing else 'false'}," in built.cpp_source
    assert method in built.cpp_source


@pytest.mark.parametrize("mode, method", [("scatter_to_blocked", "ScatterToBlocked"),
                                          ("scatter_to_striped", "ScatterToStriped"),
                                          ("scatter_to_striped_guarded", "ScatterToStripedGuarded")])
@pytest.mark.parametrize("rank_dtype, c_rank", [(np.int32, "int"), (np.int16, "short"), (np.int64, "long long")])
def test_scatter_modes_build(mode, method, rank_dtype, c_rank):
    slicing = mode != "scatter_to_striped_guarded"
    built = build_kernel(_scatter_kernel(mode, slicing), (I32, I32.astype(rank_dtype), I32), check_scratch=True)
    assert f"{method}(in, out, ranks);" in built.cpp_source
    assert f"{c_rank} (&ranks)[4]" in built.cpp_source
    assert f"BlockExchange<int, 128, 4, {'true' if slicing else 'false'}, 1, 1>" in built.cpp_source


@pytest.mark.parametrize("flag_dtype, c_flag", [(np.uint8, "unsigned char"), (np.int32, "int"),
                                                (np.uint64, "unsigned long long")])
def test_flagged_scatter_builds(flag_dtype, c_flag):
    built = build_kernel(_flagged_kernel(), (F32, I32, I32.astype(flag_dtype), F32), check_scratch=True)
    assert "ScatterToStripedFlagged(in, out, ranks, flags);" in built.cpp_source
    assert f"{c_flag} (&flags)[4]" in built.cpp_source


def test_common_modes_unchanged_through_the_qualified_namespace():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        a = numba_coop.exchange(block, items, warp_time_slicing=False)
        b = coop.exchange(block, items)
        coop.store(block, dst, a)
        coop.store(block, dst, b)

    built = build_kernel(kernel, (I32, I32), check_scratch=True)
    assert built.cpp_source.count("BlockExchange<int, 128, 2, false, 1, 1>") >= 2
    assert built.cpp_source.count("StripedToBlocked(in, out)") == 2  # the first one with its reuse barrier


def test_warp_exchange_with_qualified_namespace_common_mode():
    @cuda.jit
    def kernel(src, dst):
        warp = coop.this_warp()
        items = coop.ThreadData(2)
        coop.load(warp, src, items)
        out = numba_coop.exchange(warp, items, mode="blocked_to_striped", warp_time_slicing=False)
        coop.store(warp, dst, out)

    assert "WarpExchange<int, 2, 32>" in build_kernel(kernel, (I32, I32), check_scratch=True).cpp_source


# ---------------------------------------------------------------------------- exchange errors


def test_o15_scatter_without_ranks():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.store(block, dst, numba_coop.exchange(block, items, mode="scatter_to_striped"))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.exchange mode='scatter_to_striped' requires ranks")


def test_o15_flagged_without_valid_flags():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        ranks = coop.ThreadData(2, dtype=np.int32)
        coop.load(block, src, items)
        coop.load(block, src, ranks)
        coop.store(block, dst, numba_coop.exchange(block, items, mode="scatter_to_striped_flagged", ranks=ranks))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.exchange mode='scatter_to_striped_flagged' requires valid_flags")


@pytest.mark.parametrize("mode", ["scatter_to_striped_guarded", "scatter_to_striped_flagged"])
def test_o15_time_slicing_with_guarded_or_flagged(mode):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        ranks = coop.ThreadData(2, dtype=np.int32)
        coop.load(block, src, items)
        coop.load(block, src, ranks)
        coop.store(block, dst, numba_coop.exchange(block, items, mode=mode, ranks=ranks, valid_flags=ranks,
                                                   warp_time_slicing=True))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         f"cuda.coop.numba_mlir.exchange mode={mode!r} does not support warp_time_slicing")


def test_ranks_with_a_non_scatter_mode():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        ranks = coop.ThreadData(2, dtype=np.int32)
        coop.load(block, src, items)
        coop.load(block, src, ranks)
        coop.store(block, dst, numba_coop.exchange(block, items, ranks=ranks))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.exchange ranks requires a scatter mode")


def test_valid_flags_with_another_scatter_mode():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        ranks = coop.ThreadData(2, dtype=np.int32)
        coop.load(block, src, items)
        coop.load(block, src, ranks)
        coop.store(block, dst, numba_coop.exchange(block, items, mode="scatter_to_striped", ranks=ranks,
                                                   valid_flags=ranks))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.exchange valid_flags requires mode='scatter_to_striped_flagged'")


@pytest.mark.parametrize("dtype", [np.uint32, np.float32])
def test_p2_ranks_dtype(dtype):
    @cuda.jit
    def kernel(src, rk, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        ranks = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.load(block, rk, ranks)
        coop.store(block, dst, numba_coop.exchange(block, items, mode="scatter_to_blocked", ranks=ranks))

    expect_compile_error(kernel, (I32, I32.astype(dtype), I32), coop.CoopTypeError,
                         f"cuda.coop.numba_mlir.exchange does not support ranks dtype {np.dtype(dtype).name}; "
                         "supported: int8, int16, int32, int64")


def test_p2_valid_flags_dtype():
    @cuda.jit
    def kernel(src, fl, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        ranks = coop.ThreadData(2)
        flags = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.load(block, src, ranks)
        coop.load(block, fl, flags)
        coop.store(block, dst, numba_coop.exchange(block, items, mode="scatter_to_striped_flagged", ranks=ranks,
                                                   valid_flags=flags))

    expect_compile_error(kernel, (I32, F64, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.exchange does not support valid_flags dtype float64; supported: int8")


def test_p7_ranks_extent():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        ranks = coop.ThreadData(2, dtype=np.int32)
        coop.load(block, src, items)
        coop.load(block, src, ranks)
        coop.store(block, dst, numba_coop.exchange(block, items, mode="scatter_to_blocked", ranks=ranks))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.exchange value and ranks must have the same items_per_thread (4 != 2)")


def test_p7_valid_flags_extent():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        ranks = coop.ThreadData(4, dtype=np.int32)
        flags = coop.ThreadData(1, dtype=np.int32)
        coop.load(block, src, items)
        coop.load(block, src, ranks)
        coop.load(block, src, flags)
        coop.store(block, dst, numba_coop.exchange(block, items, mode="scatter_to_striped_flagged", ranks=ranks,
                                                   valid_flags=flags))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.exchange value and valid_flags must have the same "
                         "items_per_thread (4 != 1)")


def test_ranks_must_be_a_payload():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.store(block, dst, numba_coop.exchange(block, items, mode="scatter_to_blocked", ranks=src[0]))

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.exchange ranks must be a ThreadData payload; got a scalar")


def test_warp_striped_needs_complete_warps():
    expect_compile_error(_plain_kernel("blocked_to_warp_striped", False), (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.exchange mode 'blocked_to_warp_striped' requires a block made of "
                         "complete warps; block has 48 threads", block=(48,))


def test_scatter_builds_with_a_partial_warp():
    build_kernel(_scatter_kernel("scatter_to_striped", True), (I32, I32, I32), block=(48,), check_scratch=True)


@pytest.mark.parametrize("mode", ["warp_striped_to_blocked", "scatter_to_blocked"])
def test_g3_warp_group_with_a_qualified_mode(mode):
    @cuda.jit
    def kernel(src, dst):
        warp = coop.this_warp()
        items = coop.ThreadData(2)
        ranks = coop.ThreadData(2, dtype=np.int32)
        coop.load(warp, src, items)
        coop.load(warp, src, ranks)
        coop.store(warp, dst, numba_coop.exchange(warp, items, mode=mode, ranks=ranks))

    expect_compile_error(kernel, (I32, I32), coop.CoopUnsupportedError,
                         f"cuda.coop.numba_mlir.exchange does not support group kind 'warp' with mode {mode!r}; "
                         "supported group kinds: block")


def test_c12_time_slicing_on_a_warp_group():
    @cuda.jit
    def kernel(src, dst):
        warp = coop.this_warp()
        items = coop.ThreadData(2)
        coop.load(warp, src, items)
        coop.store(warp, dst, numba_coop.exchange(warp, items, warp_time_slicing=True))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.exchange warp_time_slicing is supported only for block groups")


def test_c4_time_slicing_not_compile_time():
    @cuda.jit
    def kernel(src, dst, flag):
        block = coop.this_block()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.store(block, dst, numba_coop.exchange(block, items, warp_time_slicing=flag))

    expect_compile_error(kernel, (I32, I32, True), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.exchange warp_time_slicing must be a compile-time bool")


def test_c4_time_slicing_not_a_bool():
    expect_compile_error(_plain_kernel("striped_to_blocked", 1), (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.exchange warp_time_slicing must be a compile-time bool")


@pytest.mark.parametrize("mode, cls, fragment", [
    (0, coop.CoopTypeError, "cuda.coop.numba_mlir.exchange mode must be a string; got int"),
    ("scatter", coop.CoopValueError, ("cuda.coop.numba_mlir.exchange mode must be one of: striped_to_blocked, "
                                      "blocked_to_striped, warp_striped_to_blocked, blocked_to_warp_striped, "
                                      "scatter_to_blocked, scatter_to_striped, scatter_to_striped_guarded, "
                                      "scatter_to_striped_flagged; got 'scatter'")),
])
def test_c1_c2_mode(mode, cls, fragment):
    expect_compile_error(_plain_kernel(mode, False), (I32, I32), cls, fragment)


@pytest.mark.parametrize("option, shown", [("ranks", "ranks"), ("valid_flags", "valid_flags"),
                                           ("warp_time_slicing", "warp_time_slicing True")])
def test_c3_options_in_a_common_call(option, shown):
    if option == "warp_time_slicing":
        @cuda.jit
        def kernel(src, dst):
            block = coop.this_block()
            items = coop.ThreadData(2)
            coop.load(block, src, items)
            coop.store(block, dst, coop.exchange(block, items, warp_time_slicing=True))
    elif option == "ranks":
        @cuda.jit
        def kernel(src, dst):
            block = coop.this_block()
            items = coop.ThreadData(2)
            coop.load(block, src, items)
            coop.store(block, dst, coop.exchange(block, items, mode="striped_to_blocked", ranks=items))
    else:
        @cuda.jit
        def kernel(src, dst):
            block = coop.this_block()
            items = coop.ThreadData(2)
            coop.load(block, src, items)
            coop.store(block, dst, coop.exchange(block, items, valid_flags=items))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError, f"cuda.coop.exchange {shown}")
    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "requires cuda.coop.numba_mlir; the common API accepts: mode, temp_storage")


@pytest.mark.parametrize("mode", ["scatter_to_striped_guarded", "blocked_to_warp_striped"])
def test_c3_modes_in_a_common_call(mode):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.store(block, dst, coop.exchange(block, items, mode=mode))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         f"cuda.coop.exchange mode {mode!r} requires cuda.coop.numba_mlir; the common API accepts: "
                         "striped_to_blocked, blocked_to_striped")


def test_s2_descriptor_on_a_warp_exchange():
    @cuda.jit
    def kernel(src, dst):
        warp = coop.this_warp()
        ts = coop.TempStorage()
        items = coop.ThreadData(2)
        coop.load(warp, src, items)
        coop.store(warp, dst, numba_coop.exchange(warp, items, temp_storage=ts))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError, "does not accept temp_storage for warp groups")


def test_explicit_descriptor_for_a_scatter():
    @cuda.jit
    def kernel(src, rk, dst):
        block = coop.this_block()
        ts = coop.TempStorage(auto_sync=True)
        items = coop.ThreadData(4)
        ranks = coop.ThreadData(4)
        coop.load(block, src, items)
        coop.load(block, rk, ranks)
        out = numba_coop.exchange(block, items, mode="scatter_to_blocked", ranks=ranks, temp_storage=ts)
        out2 = numba_coop.exchange(block, out, mode="blocked_to_warp_striped", temp_storage=ts)
        coop.store(block, dst, out2)

    built = build_kernel(kernel, (I32, I32, I32), check_scratch=True)
    assert built.cpp_source.count("reuse barrier") == 2  # auto_sync: after every use (SPEC 6.3)


# ---------------------------------------------------------------------------- scalar shuffle builds


def test_scalar_shuffles_build():
    @cuda.jit
    def kernel(src, dst, d):
        block = coop.this_block()
        t = cuda.threadIdx.x
        x = src[t]
        a = numba_coop.shuffle(block, x, mode="offset", distance=d[t])  # runtime, per thread
        b = numba_coop.shuffle(block, a, mode="rotate", distance=d[0])  # runtime, trap when out of range
        c = numba_coop.shuffle(block, b, mode="Offset", distance=-3)  # static negative
        e = numba_coop.shuffle(block, c, mode="rotate", distance=127)  # static
        f = numba_coop.shuffle(block, e, mode="offset")  # default distance 1
        dst[t] = f

    built = build_kernel(kernel, (F64, F64, I32), check_scratch=True)
    src = built.cpp_source
    assert src.count("Offset(value, result, d)") == 2  # offset by -3 and by 1 share the runtime-distance provider
    assert src.count("Rotate(value, result, (unsigned)distance)") == 2
    assert src.count("cuda_coop::check_range(distance, 1, 127);") == 1  # only the runtime rotate traps
    assert "double @" not in src and "double result = value;" in src


def test_scalar_shuffle_int32_3d_block():
    @cuda.jit
    def kernel(src, dst, d):
        block = coop.this_block()
        t = block.rank()
        x = src[t]
        dst[t] = numba_coop.shuffle(block, x, mode="rotate", distance=d)

    built = build_kernel(kernel, (I32, I32, np.int64(3)), block=(8, 4, 1), check_scratch=True)
    assert "cub::BlockShuffle<int, 8, 4, 1>" in built.cpp_source
    assert "cuda_coop::check_range(distance, 1, 31);" in built.cpp_source


def test_c7_static_rotate_distance():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        dst[cuda.threadIdx.x] = numba_coop.shuffle(block, src[cuda.threadIdx.x], mode="rotate", distance=128)

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.numba_mlir.shuffle static distance must be between 1 and 127; got 128")


def test_c6_distance_dtype():
    @cuda.jit
    def kernel(src, dst, d):
        block = coop.this_block()
        dst[cuda.threadIdx.x] = numba_coop.shuffle(block, src[cuda.threadIdx.x], mode="offset", distance=d[0])

    expect_compile_error(kernel, (I32, I32, F32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.shuffle distance must be a signed integer of at most 64 bits or an "
                         "unsigned integer of at most 32 bits; got float32")


def test_p5_scalar_with_a_payload_mode():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        dst[cuda.threadIdx.x] = numba_coop.shuffle(block, src[cuda.threadIdx.x])

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.shuffle value must be a ThreadData payload for mode 'down'; got a "
                         "scalar (scalar values take mode='offset' or mode='rotate')")


def test_p5_payload_with_a_scalar_mode():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.store(block, dst, numba_coop.shuffle(block, items, mode="rotate", distance=3))

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.numba_mlir.shuffle value must be a scalar for mode 'rotate'; "
                         "got a ThreadData payload")


def test_qualified_payload_shuffle_distance_says_what_is_wrong():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.store(block, dst, numba_coop.shuffle(block, items, distance=2))

    error = expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                                 "cuda.coop.numba_mlir.shuffle mode 'down' moves a ThreadData payload by exactly one "
                                 "position, so distance must be 1; got 2 (scalar values shuffle any distance with "
                                 "mode='offset' or mode='rotate')")
    assert "use cuda.coop.numba_mlir" not in str(error)


def test_qualified_payload_shuffle_runtime_distance():
    @cuda.jit
    def kernel(src, dst, d):
        block = coop.this_block()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.store(block, dst, numba_coop.shuffle(block, items, mode="up", distance=d[0]))

    expect_compile_error(kernel, (I32, I32, I32), coop.CoopValueError, "so distance must be 1; got a runtime value")


def test_qualified_payload_shuffle_distance_one_builds():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.store(block, dst, numba_coop.shuffle(block, items, mode="up", distance=1))

    assert "BlockShuffle<int, 128, 1, 1>" in build_kernel(kernel, (I32, I32), check_scratch=True).cpp_source


@pytest.mark.parametrize("mode", ["offset", "Rotate"])
def test_c3_scalar_mode_in_a_common_call(mode):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.store(block, dst, coop.shuffle(block, items, mode=mode))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         f"cuda.coop.shuffle mode {mode!r} requires cuda.coop.numba_mlir; the "
                         "common API accepts: up, down")


def test_p4_scalar_in_a_common_call():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        dst[cuda.threadIdx.x] = coop.shuffle(block, src[cuda.threadIdx.x], mode="offset", distance=2)

    expect_compile_error(kernel, (I32, I32), coop.CoopTypeError,
                         "cuda.coop.shuffle requires a fixed-size ThreadData value payload in the common API; use "
                         "cuda.coop.numba_mlir for scalar payloads")


def test_o1_common_distance_unchanged():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.store(block, dst, coop.shuffle(block, items, distance=2))

    expect_compile_error(kernel, (I32, I32), coop.CoopValueError,
                         "cuda.coop.shuffle distance must be exactly 1 in the common API; use cuda.coop.numba_mlir "
                         "for scalar offset and rotate shuffles")


def test_g3_scalar_shuffle_on_a_warp():
    @cuda.jit
    def kernel(src, dst):
        warp = coop.this_warp()
        dst[cuda.threadIdx.x] = numba_coop.shuffle(warp, src[cuda.threadIdx.x], mode="offset", distance=1)

    expect_compile_error(kernel, (I32, I32), coop.CoopUnsupportedError,
                         "cuda.coop.numba_mlir.shuffle does not support group kind 'warp'; "
                         "supported group kinds: block")


def test_qualified_payload_shuffle_specialises_on_an_integer_argument():
    """As in the common call (SPEC 7.2): an integer kernel argument becomes a compile-time distance."""
    @cuda.jit
    def kernel(src, dst, d):
        block = coop.this_block()
        items = coop.ThreadData(2)
        coop.load(block, src, items)
        coop.store(block, dst, numba_coop.shuffle(block, items, mode="down", distance=d))

    assert "Down(in, out)" in build_kernel(kernel, (I32, I32, 1), check_scratch=True).cpp_source
    expect_compile_error(kernel, (I32, I32, 3), coop.CoopValueError, "so distance must be 1; got 3")
