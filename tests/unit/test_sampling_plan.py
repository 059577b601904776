"""The sampling workload's launch plan (examples/workloads/sampling_plan.py), checked on the CPU: the properties the
kernels rely on (a sliced launch's blocks co-resident for its grid barriers, every slice non-empty, rows cut into
16-byte-aligned lengths) over the benchmark grid and ragged shapes."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "workloads"))
import sampling_plan as plan  # noqa: E402

SHAPES = [(batch, vocab) for batch in (1, 2, 3, 8, 32, 128, 131, 132, 133, 512)
          for vocab in (1, 4099, 8192, 32000, 50001, 65535, 65536, 128256, 151936, 256000)]


@pytest.mark.parametrize("batch, vocab", SHAPES)
def test_a_sliced_launch_fits_one_wave_and_no_slice_is_empty(batch, vocab):
    slices, length = plan.slice_plan(batch, vocab)
    assert 1 <= slices <= plan.THREADS  # a row's pairs or counts are merged one thread per slice
    if slices > 1:
        assert batch * slices <= plan.SLICE_BLOCKS  # every block resident: the grid barrier can be met
        assert length % 4 == 0 and length >= plan.TILE
        assert (slices - 1) * length < vocab <= slices * length  # the last slice holds items, none is left out
    else:
        assert length >= vocab


@pytest.mark.parametrize("batch, vocab", SHAPES)
def test_the_selects_and_samplers_keep_short_rows_whole(batch, vocab):
    slices, length = plan.select_plan(batch, vocab)
    if vocab < plan.SELECT_MIN_VOCAB:
        assert (slices, length) == (1, vocab)
    else:
        assert (slices, length) == plan.slice_plan(batch, vocab)


@pytest.mark.parametrize("batch, vocab", SHAPES)
def test_the_softmax_keeps_rows_a_block_holds_whole(batch, vocab):
    slices, length = plan.softmax_plan(batch, vocab)
    if vocab <= plan.HELD_TILE:
        assert (slices, length) == (1, vocab)
    else:
        assert (slices, length) == plan.slice_plan(batch, vocab)
        assert plan.HELD_TILE == plan.HELD * plan.THREADS


@pytest.mark.parametrize("vocab", [1, 255, 256, 257, 4096, 4099, 8192, 32000, 50001, 128256, 151936, 256000])
def test_warp_chunks_cover_the_row_from_each_warps_own_tile_origin(vocab):
    """The samplers' whole-row pass (``warp_chunk_kept``): warp w sums items [w x chunk, (w + 1) x chunk) with warp
    loads, which add the warp's own tile origin (w x WARP_TILE) to ``offset`` themselves; so chunks must be whole warp
    tiles (offset = start - origin >= 0), and the WARPS chunks must cover the row. The device helper is read through
    its Python function (numba-cuda-mlir alone suffices; the CuTe helper is the same formula)."""
    pytest.importorskip("numba_cuda_mlir")
    import sampling_numba

    chunk = int(sampling_numba.chunk_length.py_func(vocab))
    assert chunk % plan.WARP_TILE == 0 and chunk >= plan.WARP_TILE
    assert vocab <= plan.WARPS * chunk < vocab + plan.WARPS * plan.WARP_TILE  # covered, no longer than it must be
    assert all(w * chunk - w * plan.WARP_TILE >= 0 for w in range(plan.WARPS))
    assert plan.WARP_TILE == 32 * plan.NARROW and plan.WARPS * 32 == plan.THREADS  # the warps' loads' tile


def test_plain_sampling_walks_rows_whole_from_two_waves_of_one_block_an_sm():
    """``walks_whole_rows``: from two waves of the 1024-thread blocks (one an SM of an H100/H200) the rows are walked
    from their start up to the sample; below, read at once by warp chunks. Only rows a block takes whole are walked:
    a sliced launch never has more blocks than SLICE_BLOCKS."""
    assert plan.WHOLE_ROW_BLOCKS == 2 * plan.SLICE_BLOCKS
    assert not plan.walks_whole_rows(256) and plan.walks_whole_rows(264) and plan.walks_whole_rows(512)
    for batch in (1, 8, 32, 64, 128):
        for vocab in (65536, 128256, 256000):
            slices, _ = plan.select_plan(batch, vocab)
            assert batch * slices <= plan.SLICE_BLOCKS < plan.WHOLE_ROW_BLOCKS


@pytest.mark.parametrize("batch", [1, 2, 3, 8, 32, 64, 128, 512])
@pytest.mark.parametrize("vocab", [4096, 32000, 65536, 128256, 151936, 256000, 1 << 22])
def test_one_warp_holds_every_part_of_a_row(batch, vocab):
    """``warp_crossing``: every warp reads all of a row's parts, PARTS_PER_LANE a lane: a sliced row's slices
    (``select_plan``) and a whole row's warp chunks (WARPS) must fit in 32 lanes."""
    slices, length = plan.select_plan(batch, vocab)
    assert slices <= 32 * plan.PARTS_PER_LANE and plan.WARPS <= 32 * plan.PARTS_PER_LANE
    assert slices * length >= vocab and (slices - 1) * length < vocab
