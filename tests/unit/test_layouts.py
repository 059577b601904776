"""The layout rules of cuda.coop._semantics.layouts (SPEC 5, 8) against NumPy oracles written from the SPEC."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from cuda.coop._semantics import layouts
from cuda.coop._semantics.exchange_shuffle import EXCHANGE_MODES, QUALIFIED_EXCHANGE_MODES
from cuda.coop._semantics.load_store import ALGORITHMS

SHAPES = [(1, 1, 1), (8, 4, 4), (8, 1, 4), (4, 3, 2), (64, 2, 32), (6, 5, 3)]  # (threads, items, warp_size)


def oracle(arrangement: str, threads: int, items: int, warp_size: int) -> np.ndarray:
    """[rank, slot] -> tile position, by reshaping the tile the way SPEC 5 draws it."""
    tile = np.arange(threads * items)
    if arrangement == "blocked":
        return tile.reshape(threads, items)
    if arrangement == "striped":
        return tile.reshape(items, threads).T
    # warp-striped: warp w owns a contiguous chunk of warp_size*items, striped over its lanes
    return tile.reshape(threads // warp_size, items, warp_size).transpose(0, 2, 1).reshape(threads, items)


def computed(arrangement: str, threads: int, items: int, warp_size: int) -> np.ndarray:
    return np.array([[layouts.position(arrangement, t, i, threads, items, warp_size=warp_size) for i in range(items)]
                     for t in range(threads)]).reshape(threads, items)


@pytest.mark.parametrize("threads, items, warp_size", SHAPES)
@pytest.mark.parametrize("arrangement", layouts.ARRANGEMENTS)
def test_positions_match_the_oracle_and_owner_inverts_them(arrangement, threads, items, warp_size):
    expected = oracle(arrangement, threads, items, warp_size)
    got = computed(arrangement, threads, items, warp_size)
    np.testing.assert_array_equal(got, expected)
    assert sorted(got.ravel()) == list(range(threads * items))  # every position has exactly one owner
    for t, i in itertools.product(range(threads), range(items)):
        assert layouts.owner(arrangement, int(got[t, i]), threads, items, warp_size) == (t, i)


def test_the_named_functions_agree_with_spec_5_formulas():
    assert layouts.blocked(3, 1, 8, 4) == 3 * 4 + 1
    assert layouts.striped(3, 1, 8, 4) == 3 + 1 * 8
    # SPEC 5 with hardware warps: 32*K*w + l + 32*i, w = t // 32, l = t % 32
    assert layouts.warp_striped(37, 2, 64, 4) == 32 * 4 * 1 + 5 + 32 * 2
    assert layouts.owner(layouts.WARP_STRIPED, 32 * 4 * 1 + 5 + 32 * 2, 64, 4) == (37, 2)


@pytest.mark.parametrize("call, message", [
    (lambda: layouts.blocked(8, 0, 8, 4), "rank must be in range(8)"),
    (lambda: layouts.striped(0, 4, 8, 4), "slot in range(4)"),
    (lambda: layouts.warp_striped(0, 0, 6, 1, 4), "multiple of warp_size"),
    (lambda: layouts.position("diagonal", 0, 0, 8, 4), "arrangement must be one of"),
    (lambda: layouts.owner(layouts.BLOCKED, 32, 8, 4), "tile_position must be in range(32)"),
    (lambda: layouts.load_store_movement("scatter"), "algorithm must be one of"),
    (lambda: layouts.exchange_arrangements("diagonal"), "mode must be one of"),
])
def test_bad_arguments_are_value_errors(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_grouped_positions_give_every_warp_its_own_tile():
    threads, items, width = 8, 3, 4
    tile = np.arange(threads * items).reshape(threads // width, width * items)  # one row per group
    for arrangement in ("blocked", "striped"):
        expected = np.concatenate([row[oracle(arrangement, width, items, width)] for row in tile])
        got = np.array([[layouts.grouped_position(arrangement, t, i, width, items) for i in range(items)]
                        for t in range(threads)])
        np.testing.assert_array_equal(got, expected)
    assert [layouts.group_origin(t, width, items) for t in range(threads)] == [0] * 4 + [12] * 4


def test_load_store_movements_follow_the_spec_table():
    """SPEC 8.1: payload order and memory access of every algorithm; the table covers every algorithm."""
    expected = {
        "direct": ("blocked", "blocked", False),
        "striped": ("striped", "striped", False),
        "vectorize": ("blocked", "blocked", False),
        "transpose": ("striped", "blocked", True),
        "warp_transpose": ("warp_striped", "blocked", True),
        "warp_transpose_timesliced": ("warp_striped", "blocked", True),
    }
    assert set(expected) == set(ALGORITHMS)
    for algorithm, (memory, registers, shared) in expected.items():
        movement = layouts.load_store_movement(algorithm)
        assert (movement.memory, movement.registers, movement.through_shared_memory) == (memory, registers, shared)


def test_exchange_modes_cover_common_and_qualified_modes():
    assert set(layouts.EXCHANGE_ALL_MODES) == set(EXCHANGE_MODES) | set(QUALIFIED_EXCHANGE_MODES)
    assert layouts.exchange_arrangements("striped_to_blocked") == ("striped", "blocked")
    assert layouts.exchange_arrangements("blocked_to_striped") == ("blocked", "striped")
    assert layouts.exchange_arrangements("warp_striped_to_blocked") == ("warp_striped", "blocked")
    assert layouts.exchange_arrangements("blocked_to_warp_striped") == ("blocked", "warp_striped")
    for mode in layouts.SCATTER_MODES:
        source, target = layouts.exchange_arrangements(mode)
        assert source is None and target == ("blocked" if mode == "scatter_to_blocked" else "striped")


@pytest.mark.parametrize("target", ["blocked", "striped"])
def test_scatter_puts_each_item_at_its_rank(target):
    threads, items = 4, 3
    rng = np.random.default_rng(5)
    ranks = rng.permutation(threads * items).reshape(threads, items)
    landed = layouts.scatter(ranks.tolist(), target, threads, items)
    values = np.arange(threads * items).reshape(threads, items) * 10  # the items, in their input slots
    out = np.array([[values[src] for src in row] for row in landed])
    # Oracle: position q of the output tile holds the value whose rank is q, laid out in `target`.
    by_position = np.empty(threads * items, int)
    by_position[ranks.ravel()] = values.ravel()
    np.testing.assert_array_equal(out, by_position[oracle(target, threads, items, 1)])


def test_guarded_and_flagged_scatters_leave_holes():
    # striped, 2 threads x 2 items: position q is slot q // 2 of member q % 2
    ranks = [[3, -1], [1, 0]]
    assert layouts.scatter(ranks, "striped", 2, 2, guarded=True) == [[(1, 1), None], [(1, 0), (0, 0)]]
    flags = [[1, 1], [0, 1]]
    ranks = [[3, 2], [1, 0]]
    assert layouts.scatter(ranks, "striped", 2, 2, flags=flags) == [[(1, 1), (0, 1)], [None, (0, 0)]]


def test_shuffles():
    tile = 8
    assert [layouts.shuffle_source(p, tile, "up") for p in range(tile)] == [None, 0, 1, 2, 3, 4, 5, 6]
    assert [layouts.shuffle_source(p, tile, "down") for p in range(tile)] == [1, 2, 3, 4, 5, 6, 7, None]
    assert [layouts.scalar_shuffle_source(t, 4, "offset", -1) for t in range(4)] == [None, 0, 1, 2]
    assert [layouts.scalar_shuffle_source(t, 4, "rotate", 3) for t in range(4)] == [3, 0, 1, 2]
    with pytest.raises(ValueError, match="rotate needs 1 <= distance < 4"):
        layouts.scalar_shuffle_source(0, 4, "rotate", 4)


def test_scan_inputs_reproduce_numpy_prefix_sums():
    x = np.random.default_rng(1).integers(-9, 9, 12)
    inclusive = [x[list(layouts.scan_inputs(p, "inclusive"))].sum() for p in range(12)]
    exclusive = [x[list(layouts.scan_inputs(p, "exclusive"))].sum() for p in range(12)]
    np.testing.assert_array_equal(inclusive, np.cumsum(x))
    np.testing.assert_array_equal(exclusive, np.concatenate([[0], np.cumsum(x)[:-1]]))
    # a logical warp starting at position 4 scans its own elements only
    assert layouts.scan_inputs(6, "inclusive", origin=4) == range(4, 7)


def test_reverse_and_segmented_scan_inputs_reproduce_numpy():
    x = np.random.default_rng(7).integers(-9, 9, 12)
    suffix = np.cumsum(x[::-1])[::-1]
    inclusive = [x[list(layouts.scan_inputs(p, "inclusive", 0, 12, reverse=True))].sum() for p in range(12)]
    exclusive = [x[list(layouts.scan_inputs(p, "exclusive", 0, 12, reverse=True))].sum() for p in range(12)]
    np.testing.assert_array_equal(inclusive, suffix)
    np.testing.assert_array_equal(exclusive, np.concatenate([suffix[1:], [0]]))
    with pytest.raises(ValueError, match="needs the end"):
        layouts.scan_inputs(3, "inclusive", reverse=True)
    flags = [0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0]
    assert [layouts.segment_bounds(p, flags, 0, 12) for p in (0, 1, 2, 5, 6, 7, 11)] == [
        (0, 2), (0, 2), (2, 6), (2, 6), (6, 7), (7, 12), (7, 12)]
    assert layouts.segment_bounds(9, flags, 8, 12) == (8, 12)  # a group's first position always starts one
    segmented = [x[list(layouts.scan_inputs(p, "inclusive", *layouts.segment_bounds(p, flags, 0, 12)))].sum()
                 for p in range(12)]
    np.testing.assert_array_equal(segmented, np.concatenate([np.cumsum(s) for s in np.split(x, [2, 6, 7])]))


def test_arg_extreme_is_numpys_first_occurrence():
    rng = np.random.default_rng(8)
    for _ in range(50):
        x = rng.integers(0, 4, rng.integers(1, 20)).tolist()
        assert layouts.arg_extreme(x, True) == int(np.argmax(x))
        assert layouts.arg_extreme(x, False) == int(np.argmin(x))
        valid = int(rng.integers(1, len(x) + 1))
        assert layouts.arg_extreme(x, True, valid) == int(np.argmax(x[:valid]))
    with pytest.raises(ValueError, match="valid_items"):
        layouts.arg_extreme([1, 2], True, 3)


def test_reduce_ownership():
    assert [layouts.reduce_result_defined(t, 4) for t in range(8)] == [True] * 8
    assert [layouts.reduce_result_defined(t, 4, broadcast=False) for t in range(8)] == [True, False, False, False] * 2
    assert [layouts.reduce_result_defined(t, 4, partial=True) for t in range(8)] == [True, False, False, False] * 2
    assert layouts.reduce_inputs(5, 4, 2) == range(8, 16)
    assert layouts.reduce_inputs(5, 4, 1, valid_items=3) == range(4, 7)


@pytest.mark.parametrize("width, batches", [(4, 10), (1, 3), (8, 8), (32, 70)])
@pytest.mark.parametrize("layout", ["striped", "blocked"])
def test_reduce_batched_batches(width, batches, layout):
    extent = -(-batches // width)
    padded = np.arange(width * extent)
    expected = padded.reshape(extent, width).T if layout == "striped" else padded.reshape(width, extent)
    expected = np.where(expected < batches, expected, -1)
    got = np.array([[layouts.reduce_batched_batch(r, i, width, batches, layout) for i in range(extent)]
                    for r in range(width)], dtype=object)
    np.testing.assert_array_equal(np.where(got == None, -1, got).astype(int), expected)  # noqa: E711


def test_histogram_counters_are_striped():
    threads, per_thread = 8, 3
    got = np.array([[layouts.histogram_bin(t, i, threads, per_thread) for i in range(per_thread)]
                    for t in range(threads)])
    np.testing.assert_array_equal(got, np.arange(threads * per_thread).reshape(per_thread, threads).T)


def test_run_length_decode_windows():
    lengths = [2, 3, 1, 0]  # zero padding after the positive lengths
    stream = np.repeat(np.arange(len(lengths)), lengths)  # run index of each decoded item
    threads, decoded, offset = 2, 2, 1
    for t, j in itertools.product(range(threads), range(decoded)):
        p = layouts.decoded_position(t, j, decoded, offset)
        assert p == offset + t * decoded + j
        assert layouts.run_of(p, lengths) == (stream[p] if p < len(stream) else None)


def test_sort_and_neighbour_rules():
    assert layouts.sort_output_arrangement() == "blocked"
    assert layouts.sort_output_arrangement(blocked_to_striped=True) == "striped"
    assert layouts.topk_defined_positions(5, 3) == range(3)
    assert [layouts.neighbour(p, 4, "left") for p in range(4)] == [None, 0, 1, 2]
    assert [layouts.neighbour(p, 4, "right") for p in range(4)] == [1, 2, 3, None]


def test_formulas_name_the_numbers_of_the_shape():
    assert layouts.formula("blocked", 8, 4) == "slot i of member t holds element t*4 + i"
    assert layouts.formula("striped", 8, 4, verb="reads") == "slot i of member t reads element t + i*8"
    assert "16*w + l + 4*i" in layouts.formula("warp_striped", 8, 4, 4)
