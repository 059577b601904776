"""The conformance suite's own checks, without a GPU or a compiler (issue 38): no case's inputs hold the poison of
their dtype, and ``check`` compares floats bit for bit (a ``-0.0`` for a ``0.0`` fails, as argmax/argmin's signed
zeros need) while a poisoned slot never passes for a NaN result."""
from __future__ import annotations

import numpy as np
import pytest

from poison import poison_value, poisoned, same_values

from . import cases
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


# ---- top-k on warp groups: the verify accepts every result the contract allows and nothing else (SPEC 8.22, 8.26)

def _ordered(keys: np.ndarray) -> np.ndarray:
    """SPEC 8.9's ordered representation, written apart from the cases' oracle: the route the backends take."""
    bits = keys.view(f"u{keys.itemsize}").astype(np.uint64)
    width = 8 * keys.itemsize
    sign, ones = np.uint64(1 << (width - 1)), np.uint64((1 << width) - 1)
    if keys.dtype.kind == "u":
        return bits
    if keys.dtype.kind == "i":
        return bits ^ sign
    return np.where(bits & sign, ~bits & ones, bits ^ sign)


def _as_the_device_selects(case, before):
    """What the conforming route gives: each group's valid keys sorted by their ordered representation (NaNs at the
    ends), the first min(k, valid_items) written; other slots keep the poison."""
    after = {name: (value.copy() if isinstance(value, np.ndarray) else value) for name, value in before.items()}
    for name in ("dst", "vdst"):
        if name in after:
            after[name] = poisoned(after[name].size, after[name].dtype)
    tile = case.threads * int(case.id.rsplit("-k", 1)[1].split("-")[0])
    K = tile // case.threads
    for s, sel, b, start, valid, m, keys in cases._topk_groups(case.threads, K, case.verify.selections,
                                                               before["src"]):
        order = np.argsort(_ordered(keys), kind="stable")
        if sel.largest:
            order = np.argsort(~_ordered(keys), kind="stable")
        at = (s * cases.GRID + b) * tile + (start - b * tile)
        after["dst"][at:at + m] = keys[order[:m]]
        if sel.pairs:
            after["vdst"][at:at + m] = before["vals"][start + order[:m]]
    return after


TOPK_CASES = ["topk-lw_max_pairs_partial-float32-k2-128x1x1", "topk-warp_dtypes-float64-k1-64x1x1",
              "topk-warp_min_keys_k-int32-k3-4x4x4", "topk-moe_routing-float32-k1-32x1x1",
              "topk-warp_dtypes-uint8-k2-64x1x1", "topk-warp_max_keys_valid-float32-k1-32x1x1"]


@pytest.mark.parametrize("case_id", TOPK_CASES)
def test_topk_verify_takes_the_device_route_and_any_order(case_id):
    case = cases.BY_ID[case_id]
    before = case.inputs()
    src = before["src"]
    if src.dtype.kind == "f":  # the data hold what the contract leaves open: NaNs, signed zeros, ties
        assert np.isnan(src).any() and (np.signbit(src) & (src == 0)).any() and (src == 0).any()
    after = _as_the_device_selects(case, before)
    check(case, before, after)
    tile = len(src) // cases.GRID
    for s, sel, b, start, valid, m, keys in cases._topk_groups(case.threads, tile // case.threads,
                                                               case.verify.selections, src):
        at = (s * cases.GRID + b) * tile + (start - b * tile)
        for name in ("dst", "vdst") if sel.pairs else ("dst",):  # each selection in another order: still right
            after[name][at:at + m] = after[name][at:at + m][::-1].copy()
    check(case, before, after)


def _a_selected_slot(case, before, after, want_pairs):
    """(first output slot, group start, valid keys, m) of a selection of at least 2 keys, without NaNs, from a group
    that leaves a larger non-NaN key out."""
    src = before["src"]
    tile = len(src) // cases.GRID
    for s, sel, b, start, valid, m, keys in cases._topk_groups(case.threads, tile // case.threads,
                                                               case.verify.selections, src):
        at = (s * cases.GRID + b) * tile + (start - b * tile)
        chosen = after["dst"][at:at + m]
        numbers = keys[~np.isnan(keys)] if keys.dtype.kind == "f" else keys
        if (m >= 2 and sel.pairs == want_pairs and not sel.largest and not np.isnan(chosen.astype(float)).any()
                and numbers.max() > chosen.max() and len(set(chosen.tolist())) > 1):
            return at, start, valid, m
    raise AssertionError("no such group")


def _a_number_left_out(case, before, after):
    """(output slot, group start, valid keys) of a smallest-keys selection whose slot holds a non-NaN key below the
    group's largest valid one (NaNs elsewhere in the selection allowed)."""
    src = before["src"]
    tile = len(src) // cases.GRID
    for s, sel, b, start, valid, m, keys in cases._topk_groups(case.threads, tile // case.threads,
                                                               case.verify.selections, src):
        at = (s * cases.GRID + b) * tile + (start - b * tile)
        numbers = keys[~np.isnan(keys)] if keys.dtype.kind == "f" else keys
        for slot in range(at, at + m):
            if not sel.largest and after["dst"][slot] < numbers.max():
                return slot, start, valid
    raise AssertionError("no such group")


@pytest.mark.parametrize("case_id", ["topk-lw_min_pairs-int32-k2-128x1x1", "topk-warp_dtypes-float32-k1-64x1x1"])
def test_topk_verify_rejects_a_value_off_its_key(case_id):
    case = cases.BY_ID[case_id]
    before = case.inputs()
    after = _as_the_device_selects(case, before)
    at, start, valid, m = _a_selected_slot(case, before, after, True)
    keys = after["dst"][at:at + m]
    i, j = next((i, j) for i in range(m) for j in range(m) if keys[i] != keys[j])
    after["vdst"][at + i], after["vdst"][at + j] = after["vdst"][at + j], after["vdst"][at + i]
    with pytest.raises(AssertionError, match="a value left its key"):
        check(case, before, after)


@pytest.mark.parametrize("case_id", ["topk-warp_min_keys_k-int32-k2-128x1x1", "topk-warp_min_keys_k-float32-k1-32x1x1"])
def test_topk_verify_rejects_a_key_that_is_not_among_the_selected(case_id):
    case = cases.BY_ID[case_id]
    before = case.inputs()
    after = _as_the_device_selects(case, before)
    at, start, valid = _a_number_left_out(case, before, after)
    group = before["src"][start:start + valid]
    worst = np.max(group[~np.isnan(group)] if group.dtype.kind == "f" else group)  # valid, yet not among the m
    after["dst"][at] = worst
    with pytest.raises(AssertionError, match="expected the keys"):
        check(case, before, after)
    after["dst"][at] = 100  # no key of the group
    with pytest.raises(AssertionError, match="are not valid keys of the group"):
        check(case, before, after)


def test_topk_verify_rejects_a_key_past_valid_items_and_a_key_taken_twice():
    case = cases.BY_ID["topk-warp_dtypes-int32-k2-64x1x1"]  # the warp's selection leaves the last 5 keys out
    before = case.inputs()
    after = _as_the_device_selects(case, before)
    at, start, valid, m = _a_selected_slot(case, before, after, True)
    past = start + valid  # the first invalid position: its value and key
    after["vdst"][at] = before["vals"][past]
    after["dst"][at] = before["src"][past]
    with pytest.raises(AssertionError, match="not valid"):
        check(case, before, after)
    after = _as_the_device_selects(case, before)
    after["vdst"][at + 1] = after["vdst"][at]
    after["dst"][at + 1] = after["dst"][at]
    with pytest.raises(AssertionError, match="a value selected twice"):
        check(case, before, after)
