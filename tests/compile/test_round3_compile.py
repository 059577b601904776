"""Issue 18 (conformance round 3) without a GPU: negated and converted literals as typed controls, uint64
sentinels at or above 2**63, aggregate_output typed by its scan, enum members as selectors, Python containers as
operands. The GPU twins (results) are in tests/gpu/test_round3_gpu.py."""
from __future__ import annotations

import enum
import math

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda
from numba_cuda_mlir.numba_cuda.misc.literal import literal_unroll

from compile_helpers import build_kernel, line_of

F32 = np.zeros(4096, np.float32)
F64 = np.zeros(4096, np.float64)
I32 = np.zeros(4096, np.int32)
U64 = np.zeros(4096, np.uint64)
LIMIT = 2.5  # a module constant a kernel negates


# ------------------------------------------------------------ 1: a sign or a conversion of a compile-time number


@cuda.jit
def pad_minus_math_inf(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items, valid_items=n, oob_default=-math.inf)
    coop.store(block, dst, items)


@cuda.jit
def pad_minus_np_inf(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items, valid_items=n, oob_default=-np.inf)
    coop.store(block, dst, items)


@cuda.jit
def pad_float_of_string(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items, valid_items=n, oob_default=float("-inf"))
    coop.store(block, dst, items)


@pytest.mark.parametrize("kernel", [pad_minus_math_inf, pad_minus_np_inf, pad_float_of_string],
                         ids=["-math.inf", "-np.inf", "float('-inf')"])
def test_negative_infinity_pads_a_float32_load(kernel):
    sass = build_kernel(kernel, (F32, F32, 5), check_inlined=False, check_no_local_memory=False).sass()
    assert "0xff800000" in sass  # float32 -inf, converted at compile time (SPEC 2.6), not a float64 control


@cuda.jit
def controls_minus_constants(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items, valid_items=n, oob_default=-LIMIT)
    low = coop.exclusive_scan(block, items, scan_op="max", initial_value=-math.inf)
    keys = coop.merge_sort_keys(block, low, valid_items=n, oob_default=+math.inf)
    diff = coop.adjacent_difference(block, keys, tile_predecessor_item=-(LIMIT))
    flags = coop.discontinuity(block, diff, tile_predecessor_item=-math.inf)
    coop.store(block, dst, diff)
    dst[0] = flags[0]


def test_every_typed_control_takes_a_negated_constant():
    build_kernel(controls_minus_constants, (F32, F32, 5), check_inlined=False, check_no_local_memory=False)


@cuda.jit
def pad_with_runtime_negation(src, dst, pad):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items, valid_items=3, oob_default=-pad)  # a runtime float64: still C9
    coop.store(block, dst, items)


def test_a_negated_runtime_value_keeps_its_type():
    with pytest.raises(coop.CoopTypeError, match="oob_default must have the payload dtype float32; got float64"):
        build_kernel(pad_with_runtime_negation, (F32, F32, 1.5))


# ------------------------------------------------------------ 2: uint64 literals at or above 2**63


@cuda.jit
def pad_uint64_max(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items, valid_items=n, oob_default=18446744073709551615)
    keys = coop.merge_sort_keys(block, items, valid_items=n, oob_default=2**64 - 1)
    coop.store(block, dst, keys)


@cuda.jit
def pad_uint64_top_bit(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items, valid_items=n, oob_default=2**63)
    coop.store(block, dst, items)


@pytest.mark.parametrize("kernel", [pad_uint64_max, pad_uint64_top_bit], ids=["2**64-1", "2**63"])
def test_uint64_literals_with_the_top_bit_set_build(kernel):
    build_kernel(kernel, (U64, U64, 5), check_inlined=False, check_no_local_memory=False)


@cuda.jit
def pad_uint64_too_big(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items, valid_items=n, oob_default=2**64)
    coop.store(block, dst, items)


def test_a_uint64_literal_beyond_the_range_is_c10():
    with pytest.raises(coop.CoopValueError, match=r"oob_default literal 18446744073709551616 is not representable"):
        build_kernel(pad_uint64_too_big, (U64, U64, 5))


# ------------------------------------------------------------ 3: aggregate_output typed by its scan


@cuda.jit
def scan_with_untyped_aggregate(src, dst, totals):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)  # types items: the aggregate follows it, though this line is the evidence
    total = numba_coop.ThreadData(1)
    items = numba_coop.exclusive_sum(block, items, aggregate_output=total)
    coop.store(block, dst, items)
    totals[cuda.blockIdx.x] = total[0]


@pytest.mark.parametrize("array", [I32, F64, U64], ids=["int32", "float64", "uint64"])
def test_aggregate_output_without_a_dtype_takes_the_scans(array):
    build_kernel(scan_with_untyped_aggregate, (array, array, array), check_inlined=False, check_no_local_memory=False)


@cuda.jit
def scan_with_mistyped_aggregate(src, dst, totals):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    total = numba_coop.ThreadData(1, np.int64)
    items = numba_coop.inclusive_sum(block, items, aggregate_output=total)  # mistyped aggregate
    coop.store(block, dst, items)
    totals[0] = total[0]


def test_an_explicit_aggregate_dtype_must_match_the_scan():
    with pytest.raises(coop.CoopTypeError,
                       match="inclusive_sum aggregate_output dtype int64 does not match value dtype int32") as info:
        build_kernel(scan_with_mistyped_aggregate, (I32, I32, I32))
    assert f"test_round3_compile.py:{line_of(scan_with_mistyped_aggregate, 'mistyped aggregate')}" in str(info.value)


# ------------------------------------------------------------ 4: enum members are never selectors


class Layout(str, enum.Enum):
    TRANSPOSE = "transpose"


class Combine(str, enum.Enum):
    MAX = "max"


class PlainLayout(enum.Enum):
    TRANSPOSE = "transpose"


@cuda.jit
def load_with_str_enum(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items, algorithm=Layout.TRANSPOSE)
    coop.store(block, dst, items)


@cuda.jit
def load_with_plain_enum(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items, algorithm=PlainLayout.TRANSPOSE)
    coop.store(block, dst, items)


@cuda.jit
def exchange_with_str_enum(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    items = coop.exchange(block, items, mode=Layout.TRANSPOSE)
    coop.store(block, dst, items)


@cuda.jit
def reduce_with_str_enum(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    dst[0] = coop.reduce(block, items, binary_op=Combine.MAX)


@pytest.mark.parametrize("kernel, fragment", [
    (load_with_str_enum, "cuda.coop.load algorithm must be a string; got Layout (an enum member: pass its string, "
                         "Layout.TRANSPOSE.value)"),
    (load_with_plain_enum, "cuda.coop.load algorithm must be a string; got PlainLayout"),
    (exchange_with_str_enum, "cuda.coop.exchange mode must be a string; got Layout"),
    (reduce_with_str_enum, "cuda.coop.reduce binary_op must be an operator string or a Python/device function; got "
                           "Combine"),
], ids=["str-enum-algorithm", "plain-enum-algorithm", "str-enum-mode", "str-enum-operator"])
def test_c1_enum_members_are_rejected_whatever_their_mixin(kernel, fragment):
    with pytest.raises(coop.CoopTypeError) as info:
        build_kernel(kernel, (I32, I32))
    assert fragment in str(info.value)
    assert "test_round3_compile.py:" in str(info.value)


# ------------------------------------------------------------ 6: a Python container is not a payload


@cuda.jit
def sum_of_a_list(src, dst):
    block = coop.this_block()
    dst[0] = coop.sum(block, [src[0], src[1]])


@cuda.jit
def sort_a_tuple(src, dst):
    block = coop.this_block()
    keys = numba_coop.merge_sort_keys(block, (src[0], src[1]))
    dst[0] = keys[0]


def test_a_list_operand_names_threaddata():
    with pytest.raises(coop.CoopTypeError) as info:
        build_kernel(sum_of_a_list, (I32, I32))
    message = str(info.value)
    assert "cuda.coop.sum value must be a ThreadData payload; got a Python list, which is not a payload" in message
    assert "coop.ThreadData(n, dtype)" in message and "could not infer" not in message


def test_a_qualified_tuple_operand_also_names_local_arrays():
    with pytest.raises(coop.CoopTypeError) as info:
        build_kernel(sort_a_tuple, (I32, I32))
    message = str(info.value)
    assert "keys must be a ThreadData payload or a local array (numba_coop.local.array(n, dtype)); got a " \
           "Python tuple" in message


# ------------------------------------------------------------ 10: errors that escaped or spoke compiler


@cuda.jit
def cluster_sum(src, dst):
    cluster = coop.this_cluster()
    dst[0] = numba_coop.sum(cluster, src[cuda.threadIdx.x])  # CLUSTER


@cuda.jit
def cluster_reduce(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    dst[0] = numba_coop.reduce(coop.this_cluster(), items, binary_op="max")  # CLUSTER


@pytest.mark.parametrize("kernel", [cluster_sum, cluster_reduce], ids=["sum", "reduce"])
def test_g20_a_cluster_operation_below_sm_90_is_refused_before_any_build(kernel, monkeypatch):
    from cuda.coop._cub import nvrtc

    def no_build(*args, **kwargs):
        raise AssertionError("a build ran before G20 was reported")

    monkeypatch.setattr(nvrtc, "build", no_build)
    with pytest.raises(coop.CoopUnsupportedError) as info:
        numba_coop.compile_kernel(kernel, (I32, I32), block=128, target="sm_80")
    message = str(info.value)
    assert "cluster groups require compute capability 9.0 or newer; target is sm_80" in message
    assert f"test_round3_compile.py:{line_of(kernel, '# CLUSTER')}" in message


@cuda.jit
def local_array_badly_aligned(src, dst):
    items = numba_coop.local.array(4, np.int32, alignment=6)  # ALIGN
    numba_coop.load(coop.this_block(), src, items)
    numba_coop.store(coop.this_block(), dst, items)


def test_p13_a_local_array_alignment_that_is_not_a_power_of_two():
    with pytest.raises(coop.CoopValueError) as info:
        build_kernel(local_array_badly_aligned, (I32, I32))
    message = str(info.value)
    assert "local.array alignment must be a positive power of two; got 6" in message
    assert f"test_round3_compile.py:{line_of(local_array_badly_aligned, '# ALIGN')}" in message


@cuda.jit
def extent_from_literal_unroll(src, dst):
    for n in literal_unroll((2, 4)):
        items = coop.ThreadData(n)  # EXTENT
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, items)


def test_h3_a_literal_unroll_value_as_an_extent():
    with pytest.raises(coop.CoopTypeError) as info:
        build_kernel(extent_from_literal_unroll, (I32, I32))
    message = str(info.value)
    assert "cuda.coop.ThreadData items_per_thread depends on a literal_unroll value; write separate explicit " \
           "calls" in message
    assert f"test_round3_compile.py:{line_of(extent_from_literal_unroll, '# EXTENT')}" in message


@cuda.jit
def algorithm_from_literal_unroll(src, dst):
    items = coop.ThreadData(4, np.int32)
    for algorithm in literal_unroll(("direct", "striped")):
        coop.load(coop.this_block(), src, items, algorithm=algorithm)  # SELECTOR
        coop.store(coop.this_block(), dst, items)


@cuda.jit
def operator_from_literal_unroll(src, dst):
    block = coop.this_block()
    for op in literal_unroll(("min", "max")):
        dst[block.rank()] = coop.reduce(block, src[block.rank()], binary_op=op)  # OPERATOR


@pytest.mark.parametrize("kernel, words, mark", [
    (algorithm_from_literal_unroll, "cuda.coop.load algorithm", "# SELECTOR"),
    (operator_from_literal_unroll, "cuda.coop.reduce binary_op", "# OPERATOR"),
], ids=["selector", "operator"])
def test_h3_a_literal_unroll_value_as_a_selector_or_operator(kernel, words, mark):
    """SPEC 7.4: a literal_unroll value must not pick a selector or an operator (H3), at the call's line."""
    with pytest.raises(coop.CoopTypeError) as info:
        build_kernel(kernel, (I32, I32))
    message = str(info.value)
    assert f"{words} depends on a literal_unroll value; write separate explicit calls" in message
    assert f"test_round3_compile.py:{line_of(kernel, mark)}" in message.splitlines()[0]


def test_r1_backing_shared_array_on_the_host():
    with pytest.raises(coop.CoopCompilerContextRequiredError) as info:
        numba_coop.shared.array(4, np.int32)
    assert str(info.value) == "cuda.coop.numba_mlir.shared.array must be called from a supported GPU kernel."


RECORD = np.dtype([("key", np.int32), ("val", np.float32)], align=True)


@cuda.jit
def record_load_in_the_common_api(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)


@cuda.jit
def record_and_int_evidence(src, dst):
    items = numba_coop.ThreadData(4)
    numba_coop.load(coop.this_block(), src, items)
    numba_coop.store(coop.this_block(), dst, items)


@pytest.mark.parametrize("kernel, args, fragment", [
    (record_load_in_the_common_api, (np.zeros(512, RECORD), np.zeros(512, RECORD)),
     "use cuda.coop.numba_mlir for dtype([('key', '<i4'), ('val', '<f4')], align=True)"),
    (record_and_int_evidence, (np.zeros(512, RECORD), I32),
     "ThreadData items has conflicting dtypes dtype([('key', '<i4'), ('val', '<f4')], align=True) "),
], ids=["p1", "p8"])
def test_structured_dtypes_are_named_as_numpy_writes_them(kernel, args, fragment):
    with pytest.raises(coop.CoopTypeError) as info:
        build_kernel(kernel, args)
    first_line = str(info.value).splitlines()[0]
    assert fragment in first_line and "Record(" not in first_line
