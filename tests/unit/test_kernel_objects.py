"""The kernel objects every backend makes through the call layer (``cuda.coop._calls.objects``): constructor arguments
with the documented defaults, the ThreadData checks (P6, P12, P13), TempStorage descriptors (S5), the group factories
and the group queries (G17, G18), with no compiler."""
from __future__ import annotations

import numpy as np
import pytest

from cuda import coop
from cuda.coop._calls.objects import (
    FACTORIES, bind_constructor, bind_method, factory_group, group_by, plan_query, temp_storage, thread_data,
    with_defaults,
)
from cuda.coop._markers.groups import ThreadGroup
from cuda.coop._semantics.common import LaunchShape, Runtime

LAUNCH = LaunchShape((128, 1, 1))


def _dtype_of(value):
    return {np.int32: "int32", np.uint8: "uint8", np.float32: "float32", int: "int32"}.get(value)


def _thread_data(*args, **kwargs):
    values = bind_constructor("cuda.coop.ThreadData", coop.ThreadData, args, kwargs, namespace="cuda.coop.toy",
                              backend="toy")
    return thread_data(values, dtype_of_object=_dtype_of, dtype_words="a toy dtype")


def test_constructor_defaults_are_the_documented_signatures():
    """TempStorage() has auto_sync=False and sharing="shared" on every backend (one copy of the defaults)."""
    values = bind_constructor("cuda.coop.TempStorage", coop.TempStorage, (), {}, namespace="cuda.coop.toy",
                              backend="toy")
    assert values == {"size_in_bytes": None, "alignment": None, "auto_sync": False, "sharing": "shared"}
    descriptor = temp_storage(3, values)
    assert (descriptor.index, descriptor.size_in_bytes, descriptor.alignment, descriptor.auto_sync,
            descriptor.sharing) == (3, None, None, False, "shared")
    assert with_defaults(ThreadGroup.rank_as, {"level": "warp"}) == {"dtype": None, "level": "warp"}
    assert with_defaults(ThreadGroup.group_by, {"count": 8}) == {"count": 8, "exhaustive": True}


def test_temp_storage_arguments_are_checked():
    values = {"size_in_bytes": 1024, "alignment": 64, "auto_sync": True, "sharing": "exclusive"}
    assert temp_storage(0, values).alignment == 64
    with pytest.raises(coop.CoopValueError, match=r"^TempStorage alignment must be a positive power of two; got 48$"):
        temp_storage(0, {**values, "alignment": 48})
    with pytest.raises(coop.CoopTypeError, match=r"^TempStorage auto_sync must be a compile-time bool; got 1$"):
        temp_storage(0, {**values, "auto_sync": 1})


def test_a_constructor_call_the_signature_refuses_is_c5():
    with pytest.raises(coop.CoopTypeError, match=r"^cuda\.coop\.ThreadData takes 2 positional operands; pass "
                                                 r"options by keyword$"):
        _thread_data(4, np.int32, 16)


def test_thread_data_is_checked_in_the_documented_order():
    spec = _thread_data(np.int64(6), np.uint8, alignment=32)
    assert (spec.items_per_thread, spec.dtype, spec.alignment) == (6, "uint8", 32)
    assert type(spec.items_per_thread) is int
    assert _thread_data(4).dtype is None  # inferred later
    with pytest.raises(coop.CoopTypeError, match=r"^ThreadData items_per_thread must be a compile-time integer$"):
        _thread_data(True, "int32")  # P6 before the dtype
    with pytest.raises(coop.CoopValueError, match=r"^ThreadData items_per_thread must be positive$"):
        _thread_data(0, "int32")
    with pytest.raises(coop.CoopTypeError, match=r"^ThreadData dtype must be a toy dtype; got 'int32'$"):
        _thread_data(4, "int32", alignment=3)  # P12 (a string names no dtype) before P13
    with pytest.raises(coop.CoopTypeError, match=r"^ThreadData alignment must be a compile-time integer; got 8\.0$"):
        _thread_data(4, np.int32, alignment=8.0)
    with pytest.raises(coop.CoopValueError, match=r"^ThreadData alignment must be a positive power of two; got 24$"):
        _thread_data(4, np.int32, alignment=24)


def test_group_factories_and_queries():
    assert set(FACTORIES) == {"this_thread", "this_warp", "this_block", "this_cluster", "this_grid"}
    warp = factory_group("this_warp", LAUNCH)
    assert (warp.kind, warp.size, warp.instances) == ("warp", 32, 4)
    query = plan_query("rank_as", warp, LAUNCH, level="block", dtype=np.uint8, dtype_of_object=_dtype_of,
                       target_cc=90)
    assert (query.method, query.level, query.result_dtype) == ("rank_as", "block", "uint8")
    assert plan_query("count", warp, LAUNCH, level="thread", dtype=None, dtype_of_object=_dtype_of,
                      target_cc=90).result_dtype == "uint32"
    for dtype in (np.float32, "int32", object()):  # G18 names the method called
        with pytest.raises(coop.CoopTypeError, match=r"^ThreadGroup\.count_as dtype must be one of int8, "):
            plan_query("count_as", warp, LAUNCH, level="thread", dtype=dtype, dtype_of_object=_dtype_of,
                       target_cc=90)
    with pytest.raises(coop.CoopValueError, match=r"^ThreadGroup\.rank_as level must be one of"):
        plan_query("rank_as", warp, LAUNCH, level="lane", dtype=None, dtype_of_object=_dtype_of, target_cc=90)


def test_group_methods_bind_to_the_marker_signatures():
    """A group method's arguments are bound to cuda.coop.ThreadGroup's signature, with its defaults (every backend)."""
    def bind(method, *args, **kwargs):
        return bind_method(method, args, kwargs, namespace="cuda.coop.toy", backend="toy")

    assert bind("rank") == {"level": "thread"}
    assert bind("count_as", np.int32, "warp") == {"dtype": np.int32, "level": "warp"}
    assert bind("group_by", 8) == {"count": 8, "exhaustive": True}
    assert bind("sync") == {}
    with pytest.raises(coop.CoopTypeError, match=r"^ThreadGroup\.rank got an unexpected keyword argument 'lvl'$"):
        bind("rank", lvl="warp")
    with pytest.raises(coop.CoopTypeError, match=r"^ThreadGroup\.group_by takes 1 positional operands; pass options "
                                                 r"by keyword$"):
        bind("group_by", 8, False)
    with pytest.raises(coop.CoopTypeError, match=r"^ThreadGroup\.is_member takes 0 positional operands"):
        bind("is_member", 1)


def test_group_by_checks_the_parent_then_count_then_exhaustive():
    """One order on every backend (SPEC 10.1): the parent (G10, G9), count (G6, G7), exhaustive (G8), then the launch
    (G13 before G11/G12/G14); a backend's run-time value is G6 / G8 where the checks reach it."""
    warp, thread = factory_group("this_warp", LAUNCH), factory_group("this_thread", LAUNCH)
    nested = group_by(factory_group("this_block", LAUNCH), {"count": 2, "exhaustive": True}, LAUNCH)
    assert (nested.kind, nested.size) == ("warps_within_block", 64)
    with pytest.raises(coop.CoopUnsupportedError, match=r"^nested ThreadGroup\.group_by is not supported$"):
        group_by(nested, {"count": 2, "exhaustive": Runtime()}, LAUNCH)
    with pytest.raises(coop.CoopUnsupportedError, match=r"^ThreadGroup\.group_by supports only physical warp"):
        group_by(thread, {"count": Runtime("int32"), "exhaustive": True}, LAUNCH)
    with pytest.raises(coop.CoopTypeError, match=r"^ThreadGroup\.group_by count must be a compile-time integer$"):
        group_by(warp, {"count": Runtime("int32"), "exhaustive": Runtime()}, LAUNCH)
    with pytest.raises(coop.CoopValueError, match=r"^ThreadGroup\.group_by count must be positive$"):
        group_by(warp, {"count": 0, "exhaustive": 1}, LAUNCH)
    with pytest.raises(coop.CoopTypeError, match=r"^ThreadGroup\.group_by exhaustive must be a compile-time bool$"):
        group_by(warp, {"count": 64, "exhaustive": Runtime()}, LAUNCH)
    partial = LaunchShape((48, 1, 1))
    with pytest.raises(coop.CoopValueError, match=r"^group_by requires an enclosing block composed of complete warps"):
        group_by(factory_group("this_warp", partial), {"count": 64, "exhaustive": True}, partial)
