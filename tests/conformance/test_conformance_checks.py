"""The conformance suite's own checks, without a GPU or a compiler (issue 38): no case's inputs hold the poison of
their dtype, and ``check`` compares floats bit for bit (a ``-0.0`` for a ``0.0`` fails, as argmax/argmin's signed
zeros need) while a poisoned slot never passes for a NaN result."""
from __future__ import annotations

import numpy as np
import pytest

from poison import poison_value, poisoned, same_values

from .cases import CASES, Array, Case, check


def test_no_case_input_holds_the_poison_of_its_dtype():
    for case in CASES:
        values = case.inputs()
        for op in case.operands:
            if isinstance(op, Array) and op.role == "in":
                holds = same_values(values[op.name], poisoned(op.size, op.dtype))  # floats: by bits
                assert not holds.any(), (case.id, op.name, poison_value(op.dtype))


def copy_case(dtype):
    """A case whose oracle copies its input: ``check`` against hand-made results."""
    return Case("unit-copy", "unit", lambda bid, src, dst: None, (32, 1, 1), 1,
                (Array("src", dtype, 6, "in", lambda rng: None), Array("dst", dtype, 6, "out")),
                lambda v: {"dst": v["src"].copy()})


def test_check_compares_floats_bit_for_bit():
    case = copy_case(np.float32)
    src = np.array([0.0, -0.0, np.nan, 1.5, -2.0, 0.0], np.float32)
    check(case, {"src": src}, {"src": src.copy(), "dst": src.copy()})
    swapped = src.copy()
    swapped[[0, 1]] = swapped[[1, 0]]  # +0.0 and -0.0 trade places: equal values, not the same result
    with pytest.raises(AssertionError, match="2 of 6 slots differ"):
        check(case, {"src": src}, {"src": src.copy(), "dst": swapped})
    with pytest.raises(AssertionError, match="input src changed"):
        check(case, {"src": src}, {"src": swapped, "dst": src.copy()})
    other_nan = src.copy()
    other_nan[2] = np.array(0x7FFFFFFF, np.uint32).view(np.float32)  # the device's NaN: still the NaN result
    check(case, {"src": src}, {"src": src.copy(), "dst": other_nan})


def test_check_never_takes_a_poisoned_slot_for_a_nan_result():
    case = copy_case(np.float64)
    src = np.array([np.nan, 1.0, 2.0, 3.0, 4.0, 5.0])
    unwritten = src.copy()
    unwritten[0] = poisoned(1, np.float64)[0]
    with pytest.raises(AssertionError, match="1 of 6 slots differ"):
        check(case, {"src": src}, {"src": src.copy(), "dst": unwritten})


def test_check_sees_an_unwritten_integer_slot():
    case = copy_case(np.int8)
    src = np.array([90, -100, 99, 0, 1, -1], np.int8)  # 90 was the old poison byte: now a plain input value
    unwritten = src.copy()
    unwritten[0] = poisoned(1, np.int8)[0]
    check(case, {"src": src}, {"src": src.copy(), "dst": src.copy()})
    with pytest.raises(AssertionError, match="1 of 6 slots differ"):
        check(case, {"src": src}, {"src": src.copy(), "dst": unwritten})
