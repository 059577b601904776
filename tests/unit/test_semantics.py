"""Layer 2 (backend-free planning) without a compiler: selectors, groups, load/store plans, TempStorage layout."""
from __future__ import annotations

import numpy as np
import pytest

from cuda.coop._errors import CoopTypeError, CoopUnsupportedError, CoopValueError
from cuda.coop._semantics import groups
from cuda.coop._semantics.common import (
    BLOCK, CLUSTER, GRID, LOGICAL_WARP, THREAD, WARP, WARPS_IN_BLOCK, GroupSpec, LaunchShape, Runtime, ScratchNeed,
    Static, normalize_selector,
)
from cuda.coop._semantics.load_store import LoadStoreOptions, plan_load_store
from cuda.coop._semantics.shape import CallShape
from cuda.coop._semantics.targets import opt_in_shared_limit, parse_target
from cuda.coop._semantics.temp_storage import STATIC_LIMIT, ScratchUse, layout, make_descriptor

L128 = LaunchShape((128, 1, 1))
L48 = LaunchShape((48, 1, 1))
ALLOWED = ("direct", "striped", "warp_transpose")


# ------------------------------------------------------------------ selectors (SPEC 2.3, C1, C2)


@pytest.mark.parametrize("value, expected", [
    ("direct", "direct"),
    ("  Direct\t", "direct"),
    ("STRIPED", "striped"),
    ("warp-transpose", "warp_transpose"),
    (" Warp-Transpose\n", "warp_transpose"),
    ("WARP_TRANSPOSE", "warp_transpose"),
])
def test_normalize_selector_accepts(value, expected):
    assert normalize_selector("cuda.coop.load", "algorithm", value, ALLOWED) == expected


@pytest.mark.parametrize("value, type_name", [(0, "int"), (None, "NoneType"), (True, "bool"), (1.5, "float"),
                                              (b"direct", "bytes")])
def test_normalize_selector_c1(value, type_name):
    with pytest.raises(CoopTypeError) as info:
        normalize_selector("cuda.coop.load", "algorithm", value, ALLOWED)
    assert str(info.value) == f"cuda.coop.load algorithm must be a string; got {type_name}"


@pytest.mark.parametrize("value", ["", "bogus", "warp transpose", "direct_", "warp__transpose"])
def test_normalize_selector_c2(value):
    with pytest.raises(CoopValueError) as info:
        normalize_selector("cuda.coop.load", "algorithm", value, ALLOWED)
    assert str(info.value) == (
        f"cuda.coop.load algorithm must be one of: direct, striped, warp_transpose; got {value!r}"
    )


# ------------------------------------------------------------------ groups (SPEC 3, G6-G14)


def _warp(launch=L128):
    return groups.factory_group(WARP, launch)


def _block(launch=L128):
    return groups.factory_group(BLOCK, launch)


def test_factory_groups():
    assert _block() == GroupSpec(BLOCK, 128, 1)
    assert _warp() == GroupSpec(WARP, 32, 4)
    assert _warp(L48) == GroupSpec(WARP, 32, 2)  # a final partial warp is an instance too
    assert groups.factory_group(THREAD, L128) == GroupSpec(THREAD, 1, 128)
    assert groups.factory_group(BLOCK, LaunchShape((8, 4, 2))).size == 64


@pytest.mark.parametrize("parent, count, exhaustive, launch, expected", [
    ("warp", 8, True, L128, GroupSpec(LOGICAL_WARP, 8, 16, True)),
    ("warp", 32, True, L128, GroupSpec(LOGICAL_WARP, 32, 4, True)),
    ("warp", 1, True, LaunchShape((32, 1, 1)), GroupSpec(LOGICAL_WARP, 1, 32, True)),
    ("warp", 3, False, L128, GroupSpec(LOGICAL_WARP, 3, 40, False)),  # 10 complete groups per warp
    ("warp", 17, False, LaunchShape((64, 1, 1)), GroupSpec(LOGICAL_WARP, 17, 2, False)),
    ("block", 2, True, LaunchShape((256, 1, 1)), GroupSpec(WARPS_IN_BLOCK, 64, 4, True)),
    ("block", 4, True, L128, GroupSpec(WARPS_IN_BLOCK, 128, 1, True)),
    ("block", 3, False, LaunchShape((256, 1, 1)), GroupSpec(WARPS_IN_BLOCK, 96, 2, False)),
    ("block", 2, True, LaunchShape((16, 4, 2)), GroupSpec(WARPS_IN_BLOCK, 64, 2, True)),
    ("warp", np.int64(8), True, L128, GroupSpec(LOGICAL_WARP, 8, 16, True)),  # a NumPy global (SPEC 7.2)
])
def test_group_by_specs(parent, count, exhaustive, launch, expected):
    spec = groups.group_by(groups.factory_group(parent, launch), count, exhaustive, launch)
    assert spec == expected
    assert spec.is_warp_scope == (expected.kind == LOGICAL_WARP)


@pytest.mark.parametrize("count", [0, -1, -32])
def test_group_by_g7_count_positive(count):
    with pytest.raises(CoopValueError, match=r"^ThreadGroup\.group_by count must be positive$"):
        groups.group_by(_warp(), count, True, L128)


@pytest.mark.parametrize("count", [True, np.bool_(True), 2.0, "2", None])
def test_group_by_g6_count_type(count):
    with pytest.raises(CoopTypeError, match=r"^ThreadGroup\.group_by count must be a compile-time integer$"):
        groups.group_by(_warp(), count, True, L128)


@pytest.mark.parametrize("exhaustive", [1, 0, None, "yes"])
def test_group_by_g8_exhaustive_type(exhaustive):
    with pytest.raises(CoopTypeError, match=r"^ThreadGroup\.group_by exhaustive must be a compile-time bool$"):
        groups.group_by(_warp(), 4, exhaustive, L128)


@pytest.mark.parametrize("kind", [THREAD, CLUSTER, GRID])
def test_group_by_g9_parent(kind):
    with pytest.raises(CoopUnsupportedError) as info:
        groups.group_by(groups.factory_group(kind, L128), 2, True, L128)
    assert str(info.value) == "ThreadGroup.group_by supports only physical warp and block parents"


def test_group_by_g10_nested():
    logical = groups.group_by(_warp(), 8, True, L128)
    warps = groups.group_by(_block(), 2, True, L128)
    for parent in (logical, warps):
        with pytest.raises(CoopUnsupportedError) as info:
            groups.group_by(parent, 2, True, L128)
        assert str(info.value) == "nested ThreadGroup.group_by is not supported"


@pytest.mark.parametrize("count", [33, 64])
def test_group_by_g11_warp_count(count):
    with pytest.raises(CoopValueError) as info:
        groups.group_by(_warp(), count, False, L128)
    assert str(info.value) == "warp group_by count cannot exceed 32 threads"


def test_group_by_g12_block_count():
    with pytest.raises(CoopValueError) as info:
        groups.group_by(_block(), 5, False, L128)
    assert str(info.value) == "block group_by count cannot exceed the parent warp count (4)"


@pytest.mark.parametrize("parent", ["warp", "block"])
def test_group_by_g13_partial_warp(parent):
    with pytest.raises(CoopValueError) as info:
        groups.group_by(groups.factory_group(parent, L48), 1, True, L48)
    assert str(info.value) == "group_by requires an enclosing block composed of complete warps; block has 48 threads"


def test_group_by_g14_exhaustive_divides():
    with pytest.raises(CoopValueError) as info:
        groups.group_by(_warp(), 3, True, L128)
    assert str(info.value) == (
        "exhaustive ThreadGroup.group_by requires the count to divide the parent unit count (32)"
    )
    launch = LaunchShape((192, 1, 1))  # 6 warps
    with pytest.raises(CoopValueError, match=r"parent unit count \(6\)$"):
        groups.group_by(groups.factory_group(BLOCK, launch), 4, True, launch)
    assert groups.group_by(groups.factory_group(BLOCK, launch), 4, False, launch).instances == 1


# ------------------------------------------------------------------ load/store planning (SPEC 8.1, 8.2)


def _plan(group=None, *, op="load", launch=L128, array_dtype="int32", payload_dtype="int32", k=4,
          algorithm="direct", valid_items=None, oob_default=None, offset=None, descriptor=None):
    group = _block(launch) if group is None else group
    controls = {"valid_items": valid_items, "oob_default": oob_default, "offset": offset}
    shape = CallShape(name=f"cuda.coop.{op}", op=op, group=group, launch=launch, dtypes=(payload_dtype,),
                      items_per_thread=k, descriptor=descriptor, controls=controls)
    return plan_load_store(shape, LoadStoreOptions(array_dtype=array_dtype, algorithm=algorithm))


def test_plan_basic():
    spec = _plan(algorithm=" Transpose ", valid_items=Static(100), oob_default=Static(-1), offset=Static(8))
    assert spec.algorithm == "transpose"
    assert spec.tile_items == 512
    assert spec.uses_scratch and spec.barrier
    assert spec.has_valid_items and spec.has_oob_default
    assert not _plan(algorithm="striped").uses_scratch
    assert not _plan(algorithm="striped").barrier


def test_plan_barrier_follows_auto_sync():
    quiet = make_descriptor(0, None, None, False, "shared")
    loud = make_descriptor(1, None, None, True, "shared")
    assert not _plan(algorithm="transpose", descriptor=quiet).barrier
    assert _plan(algorithm="transpose", descriptor=loud).barrier
    assert _plan(algorithm="transpose").barrier


@pytest.mark.parametrize("kind", [GRID, THREAD, CLUSTER])
def test_plan_g3_unsupported_group_kinds(kind):
    with pytest.raises(CoopUnsupportedError) as info:
        _plan(groups.factory_group(kind, L128))
    assert str(info.value) == (
        f"cuda.coop.load does not support group kind '{kind}'; supported group kinds: "
        "block, warp, threads_within_warp"
    )


def test_plan_g3_warps_within_block():
    with pytest.raises(CoopUnsupportedError, match="does not support group kind 'warps_within_block'"):
        _plan(groups.group_by(_block(), 2, True, L128), op="store")


def test_plan_g15_logical_width_3():
    width3 = groups.group_by(_warp(), 3, False, L128)
    with pytest.raises(CoopUnsupportedError) as info:
        _plan(width3)
    assert str(info.value) == "cuda.coop.load supports logical-warp widths 1, 2, 4, 8, 16, 32; got 3"


@pytest.mark.parametrize("width", [8, 16])
def test_plan_non_exhaustive_supported_width(width):
    assert _plan(groups.group_by(_warp(), width, False, L128)).tile_items == width * 4


@pytest.mark.parametrize("width", [1, 2, 4, 8, 16, 32])
def test_plan_supported_logical_widths(width):
    spec = _plan(groups.group_by(_warp(), width, True, L128), algorithm="transpose")
    assert spec.tile_items == width * 4


def test_plan_g5_warp_in_partial_block():
    with pytest.raises(CoopValueError) as info:
        _plan(_warp(L48), launch=L48)
    assert str(info.value) == ("cuda.coop.load on warp groups requires a block made of complete warps; block has 48 "
                               "threads")


def test_plan_block_partial_warp_allowed_except_warp_transpose():
    assert _plan(launch=L48, algorithm="transpose").tile_items == 192
    with pytest.raises(CoopValueError, match="requires a block made of complete warps; block has 48 threads"):
        _plan(launch=L48, algorithm="warp_transpose")


@pytest.mark.parametrize("algorithm", ["warp_transpose", "warp-transpose-timesliced"])
def test_plan_warp_transpose_on_warp_group(algorithm):
    with pytest.raises(CoopValueError) as info:
        _plan(_warp(), algorithm=algorithm)
    canonical = algorithm.replace("-", "_")
    assert str(info.value) == (
        f"cuda.coop.load algorithm must be one of: direct, striped, vectorize, transpose for warp groups; "
        f"got {canonical!r}"
    )


def test_plan_c1_c2_algorithm():
    with pytest.raises(CoopTypeError, match=r"^cuda\.coop\.store algorithm must be a string; got int$"):
        _plan(op="store", algorithm=3)
    with pytest.raises(CoopValueError, match=r"^cuda\.coop\.load algorithm must be one of: direct, striped, "):
        _plan(algorithm="blocked")


@pytest.mark.parametrize("offset", [-1, -1000])
def test_plan_c8_negative_static_offset(offset):
    with pytest.raises(CoopValueError) as info:
        _plan(offset=Static(offset))
    assert str(info.value) == f"cuda.coop.load static offset must be nonnegative; got {offset}"
    assert _plan(offset=Static(0)).algorithm == "direct"


@pytest.mark.parametrize("valid_items", [-1, 513, 10**6])
def test_plan_c7_static_valid_items(valid_items):
    with pytest.raises(CoopValueError) as info:
        _plan(valid_items=Static(valid_items))
    assert str(info.value) == f"cuda.coop.load static valid_items must be between 0 and 512; got {valid_items}"


def test_plan_valid_items_bounds_inclusive():
    assert _plan(valid_items=Static(0)).has_valid_items
    assert _plan(valid_items=Static(512)).has_valid_items
    # warp groups: each group's own count, relative to its own tile (SPEC 8.1): 0 <= valid_items <= 32*K
    assert _plan(_warp(), valid_items=Static(128)).has_valid_items
    with pytest.raises(CoopValueError) as info:
        _plan(_warp(), valid_items=Static(129))
    assert str(info.value) == "cuda.coop.load static valid_items must be between 0 and 128; got 129"


def test_plan_c6_runtime_controls():
    assert _plan(valid_items=Runtime("int64"), offset=Runtime("uint32")).has_valid_items
    with pytest.raises(CoopTypeError, match="valid_items must be a signed integer of at most 64 bits .* got uint64"):
        _plan(valid_items=Runtime("uint64"))
    with pytest.raises(CoopTypeError, match="offset must be a signed integer .* got float32"):
        _plan(offset=Runtime("float32"))
    with pytest.raises(CoopTypeError, match="valid_items must be a signed integer .* got float"):
        _plan(valid_items=Static(2.0))


def test_plan_c11_oob_default_requires_valid_items():
    with pytest.raises(CoopValueError) as info:
        _plan(oob_default=Static(0))
    assert str(info.value) == "cuda.coop.load oob_default requires valid_items"


def test_plan_c9_c10_oob_default():
    with pytest.raises(CoopTypeError, match=r"oob_default must have the payload dtype int32; got float64; cast it$"):
        _plan(valid_items=Runtime("int32"), oob_default=Runtime("float64"))
    with pytest.raises(CoopValueError, match=r"oob_default literal 300 is not representable as int8$"):
        _plan(array_dtype="int8", payload_dtype="int8", valid_items=Static(1), oob_default=Static(300))
    with pytest.raises(CoopValueError, match=r"oob_default literal 1.5 is not representable as int32$"):
        _plan(valid_items=Static(1), oob_default=Static(1.5))
    assert _plan(array_dtype="float32", payload_dtype="float32", valid_items=Static(1), oob_default=Static(1))


@pytest.mark.parametrize("group_factory", [_warp, lambda: groups.group_by(_warp(), 8, True, L128)])
def test_plan_s2_descriptor_on_warp_scope(group_factory):
    desc = make_descriptor(0, None, None, False, "shared")
    group = group_factory()
    with pytest.raises(CoopValueError) as info:
        _plan(group, algorithm="direct", descriptor=desc)
    assert str(info.value) == (
        f"cuda.coop.load does not accept temp_storage for {group.kind} groups; "
        "their scratch is always compiler-owned"
    )


def test_plan_p10_dtype_mismatch():
    with pytest.raises(CoopTypeError) as info:
        _plan(array_dtype="int32", payload_dtype="float32")
    assert str(info.value) == "cuda.coop.load source dtype int32 does not match payload dtype float32"
    with pytest.raises(CoopTypeError) as info:
        _plan(op="store", array_dtype="float64", payload_dtype="float32")
    assert str(info.value) == (
        "cuda.coop.store destination dtype float64 does not match payload dtype float32; cast the value"
    )


def test_plan_p2_unsupported_array_dtype():
    with pytest.raises(CoopTypeError, match=r"^cuda\.coop\.load does not support source dtype complex64; supported"):
        _plan(array_dtype="complex64", payload_dtype="complex64")


# ------------------------------------------------------------------ TempStorage descriptors (SPEC 6.1, S5)


class _Index:
    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


def test_make_descriptor_defaults_and_normalisation():
    desc = make_descriptor(3, _Index(256), 8, True, " Exclusive ")
    assert ((desc.index, desc.size_in_bytes, desc.alignment, desc.auto_sync, desc.sharing)
            == (3, 256, 8, True, "exclusive"))
    desc = make_descriptor(0, None, None, False, "shared")
    assert (desc.size_in_bytes, desc.alignment, desc.sharing) == (None, None, "shared")
    # NumPy integers and __index__ objects are compile-time integers for the alignment too, as plain ints
    desc = make_descriptor(1, np.int64(512), np.int32(16), False, "shared")
    assert (desc.size_in_bytes, desc.alignment) == (512, 16)
    assert type(desc.size_in_bytes) is int and type(desc.alignment) is int
    assert make_descriptor(2, None, _Index(32), False, "shared").alignment == 32


def test_compile_time_int_accepts_index_objects_and_refuses_bools():
    from cuda.coop._semantics.common import compile_time_int
    assert [compile_time_int(v) for v in (7, np.int8(-3), np.uint64(9), _Index(5))] == [7, -3, 9, 5]
    assert [compile_time_int(v) for v in (True, np.bool_(True), 2.0, "3", None)] == [None] * 5

    class Boolean:  # a compiler's truth value that answers __index__ (the CuTe DSL's)
        def __index__(self):
            return 1

    class Float32:  # a compiler's float whose __index__ returns a float
        def __index__(self):
            return 2.5

    class Dynamic:  # a run-time value that refuses
        def __index__(self):
            raise RuntimeError("not known until the kernel runs")

    assert [compile_time_int(v) for v in (Boolean(), Float32(), Dynamic())] == [None] * 3


@pytest.mark.parametrize("size, exc, fragment", [
    (True, CoopTypeError, "TempStorage size_in_bytes must be a compile-time positive integer; got True"),
    (16.0, CoopTypeError, "TempStorage size_in_bytes must be a compile-time positive integer; got 16.0"),
    ("16", CoopTypeError, "TempStorage size_in_bytes must be a compile-time positive integer; got '16'"),
    (0, CoopValueError, "TempStorage size_in_bytes must be a compile-time positive integer; got 0"),
    (-8, CoopValueError, "TempStorage size_in_bytes must be a compile-time positive integer; got -8"),
])
def test_make_descriptor_s5_size(size, exc, fragment):
    with pytest.raises(exc) as info:
        make_descriptor(0, size, None, False, "shared")
    assert str(info.value) == fragment


@pytest.mark.parametrize("alignment, exc", [(3, CoopValueError), (0, CoopValueError), (-4, CoopValueError),
                                            (24, CoopValueError), (True, CoopTypeError), (4.0, CoopTypeError),
                                            ("4", CoopTypeError)])
def test_make_descriptor_s5_alignment(alignment, exc):
    with pytest.raises(exc, match=r"^TempStorage alignment must be a (compile-time )?positive power of two; got "):
        make_descriptor(0, None, alignment, False, "shared")


@pytest.mark.parametrize("auto_sync", [1, 0, None, "True"])
def test_make_descriptor_s5_auto_sync(auto_sync):
    with pytest.raises(CoopTypeError, match=r"^TempStorage auto_sync must be a compile-time bool; got "):
        make_descriptor(0, None, None, auto_sync, "shared")


@pytest.mark.parametrize("sharing, exc", [(5, CoopTypeError), (None, CoopTypeError), ("private", CoopValueError),
                                          ("", CoopValueError)])
def test_make_descriptor_s5_sharing(sharing, exc):
    with pytest.raises(exc) as info:
        make_descriptor(0, None, None, False, sharing)
    assert str(info.value) == f"TempStorage sharing must be 'shared' or 'exclusive'; got {sharing!r}"


# ------------------------------------------------------------------ scratch layout (SPEC 6.2, 6.5-6.7)


def _use(site, size, alignment=16, descriptor=None, **kw):
    return ScratchUse(site, ScratchNeed(size, alignment), descriptor, label=f"call{site}", **kw)


def _desc(index=0, size=None, alignment=None, sharing="shared"):
    return make_descriptor(index, size, alignment, False, sharing)


def test_layout_empty():
    plan = layout([], [], 0, None, "k")
    assert (plan.size, plan.dynamic) == (0, False)
    # a user dynamic array is fine when there is no cooperative scratch
    assert layout([], [], 1000, "dyn", "k").size == 0


def test_layout_shared_descriptor_overlaps_uses():
    d = _desc()
    uses = [_use(0, 100, descriptor=d), _use(1, 200, descriptor=d)]
    plan = layout(uses, [d], 0, None, "k")
    assert [u.offset for u in uses] == [0, 0]
    assert plan.size == 208
    assert not plan.dynamic


def test_layout_exclusive_descriptor_gives_each_site_a_slice():
    d = _desc(sharing="exclusive")
    uses = [_use(0, 100, descriptor=d), _use(1, 200, descriptor=d), _use(0, 100, descriptor=d)]
    plan = layout(uses, [d], 0, None, "k")
    assert [u.offset for u in uses] == [0, 112, 0]  # one slice per distinct site, aligned to 16
    assert plan.size == 320


def test_layout_descriptors_in_constructor_order_then_compiler_owned():
    d0, d1 = _desc(0, size=64), _desc(1, alignment=64)
    owned_block = _use(3, 40, alignment=8)
    owned_warp = _use(4, 24, alignment=8, domain=("warp", 32), instances=4)
    first_d1, first_d0 = _use(1, 10, alignment=4, descriptor=d1), _use(2, 50, alignment=4, descriptor=d0)
    uses = [owned_block, first_d1, first_d0, owned_warp]
    plan = layout(uses, [d0, d1], 0, None, "k")
    assert first_d0.offset == 0  # d0 first although its use comes later
    assert first_d1.offset == 64  # after d0's 64 bytes, aligned to d1's 64
    assert owned_block.offset == 80  # compiler-owned regions after all descriptors
    assert (owned_warp.offset, owned_warp.stride) == (120, 24)
    assert plan.size == 224  # 120 + 4 * 24 = 216 -> 224
    assert plan.alignment == 64


def test_layout_descriptor_alignment_raised_by_uses():
    d = _desc(alignment=4)
    other = _desc(1)
    a, b = _use(0, 3, alignment=1, descriptor=other), _use(1, 8, alignment=32, descriptor=d)
    plan = layout([a, b], [other, d], 0, None, "k")
    assert (a.offset, b.offset) == (0, 32)
    assert plan.alignment == 32


def test_layout_compiler_owned_domains_share_within_and_split_across():
    a, b = _use(0, 100), _use(1, 300)
    w = _use(2, 64, domain=("warp", 32), instances=4)
    plan = layout([a, b, w], [], 0, None, "k")
    assert (a.offset, b.offset) == (0, 0)
    assert (w.offset, w.stride) == (304, 64)
    assert plan.size == 304 + 256


def test_layout_s6_descriptor_too_small():
    d = _desc(size=16)
    with pytest.raises(CoopValueError) as info:
        layout([_use(0, 100, descriptor=d), _use(1, 60, descriptor=d)], [d], 0, None, "k")
    assert str(info.value) == (
        "TempStorage size_in_bytes=16 is too small: its uses need 100 bytes (call0 needs 100, call1 needs 60)"
    )
    d = _desc(size=200, sharing="exclusive")
    with pytest.raises(CoopValueError, match=r"size_in_bytes=200 is too small: its uses need 212 bytes"):
        layout([_use(0, 100, descriptor=d), _use(1, 100, descriptor=d)], [d], 0, None, "k")


def test_layout_explicit_capacity_reserved_in_full():
    d = _desc(size=1000)
    u = _use(0, 100, descriptor=d)
    owned = _use(1, 16)
    plan = layout([u, owned], [d], 0, None, "k")
    assert owned.offset == 1008
    assert plan.size == 1024


def test_layout_unused_descriptor_reserves_nothing():
    unused, used = _desc(0, size=4096), _desc(1)
    u = _use(0, 100, descriptor=used)
    plan = layout([u], [unused, used], 0, None, "k")
    assert u.offset == 0
    assert plan.size == 112
    assert layout([], [unused], 0, None, "k").size == 0


def test_layout_static_limit_and_dynamic():
    assert not layout([_use(0, STATIC_LIMIT)], [], 0, None, "k").dynamic
    plan = layout([_use(0, STATIC_LIMIT + 1)], [], 0, None, "k")
    assert plan.dynamic and plan.size == STATIC_LIMIT + 16
    d = _desc(size=64 * 1024)  # an explicit capacity above 48 KiB
    plan = layout([_use(0, 100, descriptor=d)], [d], 0, None, "k")
    assert plan.dynamic and plan.size == 64 * 1024


def test_layout_user_static_counts_toward_static_limit():
    assert not layout([_use(0, 1024)], [], STATIC_LIMIT - 1024, None, "k").dynamic
    with pytest.raises(CoopValueError) as info:
        layout([_use(0, 1024)], [], STATIC_LIMIT - 1023, None, "kern")
    message = str(info.value)
    assert message.startswith(f"kernel kern: user shared array ({STATIC_LIMIT - 1023} bytes, static) cannot coexist "
                              "with dynamic cooperative scratch of 1024 bytes")


def test_layout_user_static_with_dynamic_scratch_s9():
    with pytest.raises(CoopValueError, match=r"static\) cannot coexist with dynamic cooperative scratch"):
        layout([_use(0, STATIC_LIMIT + 1)], [], 4, None, "k")


@pytest.mark.parametrize("size, mode", [(64, "static"), (STATIC_LIMIT + 1, "dynamic")])
def test_layout_user_dynamic_array_s9(size, mode):
    with pytest.raises(CoopValueError) as info:
        layout([_use(0, size)], [], 0, "smem", "kern")
    assert str(info.value).startswith(
        f"kernel kern: user shared array smem (dynamic) cannot coexist with {mode} cooperative scratch; "
    )


@pytest.mark.parametrize("cc,limit_kib", [(90, 227), (100, 227), (80, 163), (86, 99), (89, 99), (75, 64),
                                          (120, 99)])
def test_layout_s7_device_limit_per_architecture(cc, limit_kib):
    limit = opt_in_shared_limit(cc)
    assert limit == limit_kib * 1024
    assert layout([_use(0, limit)], [], 0, None, "k", cc=cc).dynamic
    with pytest.raises(CoopValueError) as info:
        layout([_use(0, limit + 1)], [], 0, None, "kern", cc=cc)
    assert str(info.value) == (
        f"cooperative scratch for kernel kern needs {limit + 16} bytes of shared memory per block; "
        f"the device allows at most {limit}"
    )


@pytest.mark.parametrize("target,cc", [("sm_90", 90), ("sm_90a", 90), ("sm_80", 80), ("sm_100f", 100)])
def test_parse_target(target, cc):
    assert parse_target(target) == (target, cc)


@pytest.mark.parametrize("bad", ["sm90", "compute_90", "", "sm_bogus", "sm_35", "SM_90", " sm_90", 90, None])
def test_parse_target_c15(bad):
    with pytest.raises(CoopValueError) as info:
        parse_target(bad)
    assert str(info.value).startswith("target must look like 'sm_90' or 'sm_90a' with a supported architecture (")
    assert str(info.value).endswith(f"; got {bad!r}")


def test_layout_s8_dynamic_alignment():
    assert layout([_use(0, 100, alignment=128)], [], 0, None, "k").alignment == 128  # static: fine
    with pytest.raises(CoopValueError) as info:
        layout([_use(0, STATIC_LIMIT + 1, alignment=32)], [], 0, None, "k")
    assert str(info.value) == "shared-memory alignment 32 exceeds the 16-byte limit of dynamic shared memory"
    d = _desc(size=STATIC_LIMIT * 2, alignment=64)
    with pytest.raises(CoopValueError, match="alignment 64 exceeds the 16-byte limit"):
        layout([_use(0, 8, alignment=4, descriptor=d)], [d], 0, None, "k")


# ---------------------------------------------------------------- aggregate member plans (SPEC 9.2)
def test_member_plan_gives_each_field_its_own_word_and_fills_padding_with_aligned_words():
    from cuda.coop._semantics.aggregates import member_plan

    assert member_plan([(0, 8), (8, 4)], 16) == (8, 4, 4)  # int64, int32, 4 bytes of padding
    assert member_plan([(0, 8), (8, 1), (9, 1)], 16) == (8, 1, 1, 2, 4)  # int64, int8, bool
    assert member_plan([(0, 1), (4, 4)], 8) == (1, 1, 2, 4)  # padding before an aligned field
    assert member_plan([(0, 1), (1, 2), (3, 1)], 4) == ()  # a packed record: unaligned field, uniform words


def test_aggregate_c_type_names_a_non_uniform_plan_and_abi_renders_it():
    from cuda.coop._cub.abi import aggregate_definitions
    from cuda.coop._semantics.aggregates import Aggregate

    padded = Aggregate("padded", 16, 8, (8, 4, 4))
    uniform = Aggregate("pair", 8, 4, (4, 4))
    assert padded.c_type == "cuda_coop_agg_16_8_844"
    assert uniform.c_type == "cuda_coop_agg_8_4"  # the plan equals uniform words: the short name
    assert aggregate_definitions(f"{padded.c_type} a; {uniform.c_type} b;") == [
        "struct alignas(8) cuda_coop_agg_16_8_844 { unsigned long long m0; unsigned int m1; unsigned int m2; };",
        "struct alignas(4) cuda_coop_agg_8_4 { unsigned int words[2]; };",
    ]


def test_a_numpy_integer_constant_is_a_runtime_integer_control_of_its_dtype():
    """SPEC 2.5: np.int32(5) as valid_items is a signed integer of at most 64 bits (it was refused as 'int32'); a
    NumPy uint64 or float constant is C6 naming its dtype."""
    from cuda.coop._semantics.common import Static, check_runtime_int

    for value in (np.int8(1), np.int32(5), np.int64(7), np.uint32(3), 5):
        check_runtime_int("cuda.coop.load", "valid_items", Static(value))
    for value, named in ((np.uint64(5), "uint64"), (np.float32(5), "float32"), (True, "bool"), (5.0, "float")):
        with pytest.raises(CoopTypeError, match=f"valid_items must be a signed integer .*; got {named}$"):
            check_runtime_int("cuda.coop.load", "valid_items", Static(value))


def test_p2_names_the_operand_and_lists_what_it_takes():
    """A bool payload as run lengths lists the integer dtypes (it listed the floats too); a payload constructor's own
    ``dtype=`` is named once ("does not support dtype dtype bool" before)."""
    from cuda.coop._semantics.common import INTEGER_DTYPES, check_payload_dtype
    with pytest.raises(CoopTypeError) as info:
        check_payload_dtype("cuda.coop.run_length_decode", "run_lengths", "bool", qualified=False)
    assert str(info.value) == ("cuda.coop.run_length_decode does not support run_lengths dtype bool; supported: "
                               + ", ".join(INTEGER_DTYPES))
    with pytest.raises(CoopTypeError) as info:
        check_payload_dtype("cuda.coop.ThreadData", "dtype", "bool", qualified=True)
    assert str(info.value).startswith("cuda.coop.ThreadData does not support dtype bool; supported: int8")
