"""The MoE-align workload's kernels (examples/workloads/moe_align_numba.py, moe_align_cute.py) built for sm_90 on
the CPU, at the issue's largest shape (65536 tokens x 8 of 256 experts, block size 128): every kernel fits a
1024-thread block (registers), keeps nothing in local memory, and its shared memory (the cooperative scratch and
the three per-expert arrays) fits an SM. The example scripts run in test_examples_compile.py."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "workloads"))
import moe_align_plan as plan  # noqa: E402
import moe_align_reference as ref  # noqa: E402

NUMEL, EXPERTS, BLOCK_SIZE = 65536 * 8, 256, 128


def _check(name, built, threads=plan.THREADS):
    assert built.registers * threads <= 65536, f"{name}: {built.registers} registers cannot launch {threads} threads"
    assert built.local_memory_bytes == 0, f"{name}: {built.local_memory_bytes} B of local memory"
    assert built.shared_memory_bytes <= 227 * 1024, f"{name}: {built.shared_memory_bytes} B shared"
    if "count" not in name:  # the per-expert offsets, bases and starts (small path: the warps' counts) are there
        assert built.shared_memory_bytes >= 4 * (3 * plan.MAX_EXPERTS + 1)
    if "small" in name:  # every warp's counts (the kernel's own shared arrays count on both backends: SPEC 9.11)
        assert built.shared_memory_bytes >= 4 * (threads // 32) * plan.MAX_EXPERTS, built.shared_memory_bytes


def _block_barriers(built) -> int:
    return len(re.findall(r"\bBAR\.SYNC\b", built.sass()))


def _instructions(sass: str) -> list[str]:
    """The SASS's instructions in order, less the NOPs (alignment padding)."""
    return [i for i in re.findall(r"/\*[0-9a-f]{4,}\*/\s+([^;]*?)\s*;", sass) if i != "NOP"]


@pytest.mark.parametrize("which", [0, 1, 2, 3], ids=["one_block", "count", "place", "small"])
def test_numba_kernels_build_within_one_block_of_1024_threads(which):
    pytest.importorskip("numba_cuda_mlir")
    import moe_align

    import cuda.coop.numba_mlir as numba_coop

    name, kernel, host, blocks, threads = moe_align.builds(NUMEL, EXPERTS, BLOCK_SIZE)[which]
    _check(name, numba_coop.compile_kernel(kernel, host, block=threads, grid=blocks))


def test_the_one_block_kernel_sorts_keys_alone_and_pads_by_warps():
    """The one-block plan (issue 43; the small kernel runs its inputs now): the placing sort carries each entry's
    place in its key's low bits, so it is a keys-only sort (no value exchange: 7 barriers a 4-bit pass, not 9), and
    no coop.sum beside the exclusive sum: at most 32 block barriers in the kernel's code (39 before), 24 on the path
    of one tile of 256 experts."""
    pytest.importorskip("numba_cuda_mlir")
    import moe_align

    import cuda.coop.numba_mlir as numba_coop

    name, kernel, host, blocks, _ = moe_align.builds(128, EXPERTS, BLOCK_SIZE)[0]
    built = numba_coop.compile_kernel(kernel, host, block=plan.THREADS, grid=blocks)
    sorts = re.findall(r"cub::BlockRadixSort<([^>]*)>", built.cpp_source)
    assert sorts and all("cub::NullType" in s.split(",")[3] for s in sorts), sorts
    assert "BlockReduce" not in built.cpp_source
    assert _block_barriers(built) <= 32


# 1 entry a lane of 256 threads, 2 and 8 a lane of 1024 at k = 8 (16 tokens at k = 2: 1 of 256; 1024: 2 of 1024)
@pytest.mark.parametrize("tokens", [16, 256, 1024])
@pytest.mark.parametrize("experts, k", [(256, 8), (8, 2)])
@pytest.mark.parametrize("backend", ["numba", "cute"])
def test_the_small_kernel_ranks_without_a_sort(backend, experts, k, tokens):
    """Inputs of up to 8192 entries (issue 43: ``small_path``, ``small_items`` entries a lane): each warp ranks its
    entries slot after slot by nine ballots of their experts' bits (nine votes a slot in the SASS, and no MATCH,
    whose time grows with the distinct experts among the lanes; no sort, no histogram), one block exclusive sum
    gives the offsets; at most 4 block barriers in the kernel (the two around the per-warp counts
    and the scan's), and nothing in local memory at 8 slots either. The 1024-thread one-block kernel it replaced
    has up to 32 in its code, 17-24 on the path of 16 tokens."""
    topk_ids = ref.problem(tokens, experts, k, seed=3)
    items = plan.small_items(topk_ids.size)
    assert plan.small_path(topk_ids.size) and not plan.small_path(plan.THREADS * plan.SMALL_ITEMS[-1] + 1)
    if backend == "numba":
        pytest.importorskip("numba_cuda_mlir")
        import moe_align

        import cuda.coop.numba_mlir as numba_coop

        name, kernel, host, blocks, threads = moe_align.builds(topk_ids.size, experts, 64)[3]
        built = numba_coop.compile_kernel(kernel, host, block=threads, grid=blocks)
    else:
        pytest.importorskip("cutlass")
        import cute_moe_align
        import cutlass

        import cuda.coop.cutlass as cute_coop

        (launch,), _ = cute_moe_align.steps(topk_ids, experts, 64)
        name, launcher, host, blocks = launch
        built = cute_coop.compile_kernel(launcher, *(cute_moe_align.fake(a) for a in host), cutlass.Int32(blocks))
    threads = plan.small_threads(topk_ids.size)
    assert f"{items} entries a thread of {threads}" in name, name
    _check(name, built, threads)
    sass = built.sass()
    assert "BlockScan" in built.cpp_source and len(re.findall(r"\bVOTE\.ANY\b", sass)) >= 9 * items
    assert "MATCH" not in sass
    # numba-cuda-mlir divides 64-bit ints through a called routine (a grid-stride loop's trip count, a division by
    # block_size of a signed int): the kernel's arithmetic is 32-bit unsigned where it divides
    assert not re.search(r"\bCALL\b", sass), "a called routine (64-bit division) in the small kernel"
    assert not re.search(r"Sort|BlockHistogram", built.cpp_source)
    assert _block_barriers(built) <= 4
    if backend == "numba":
        # numba-cuda-mlir computes int32 and uint32 arithmetic in 64 bits, runs range() on 64-bit counters and
        # multiplies each index of a kernel's array by its run-time stride: the kernel's arithmetic is uint32 (each
        # result wrapped back), its grid-stride loops are while loops and its stores go through ravel's unit-stride
        # views. Before, 64-bit shifts and compares filled the ballots (1993 instructions at 8 slots, 813 of them
        # before the first barrier: the ranking; CuTe's 1244 and 644), and every store multiplied by the stride.
        assert not re.search(r"\.EX\b|\bSHF\.[LR]\.[SU]64\b|\bIADD3\.X\b|\bIMAD\.X\b", sass), "64-bit arithmetic"
        assert not re.search(r"\bIMAD\.WIDE(\.U32)? R\d+, R\d+, (UR\d+|c\[)", sass), "an index times a stride"
        code = _instructions(sass)
        ranking = next(i for i, op in enumerate(code) if op.startswith("BAR.SYNC"))
        assert ranking <= 60 + 62 * items, f"{ranking} instructions rank {items} slots"  # CuTe: 120, 194, 644
        assert len(code) <= 800 + 60 * items, f"{len(code)} instructions"  # before: 1179 to 1993


@pytest.mark.parametrize("path", ["one_block", "two_launches"])
def test_cute_kernels_build_within_one_block_of_1024_threads(path):
    pytest.importorskip("cutlass")
    import cute_moe_align
    import cutlass

    import cuda.coop.cutlass as cute_coop

    topk_ids = ref.problem(NUMEL // 8 if path == "two_launches" else 200, EXPERTS, 8, seed=1)  # 1600: one block
    one_block = (1, plan.SINGLE_BLOCK_TILES * plan.TILE)  # the plan the small kernel replaced (kept to compare)
    launches, _ = cute_moe_align.steps(topk_ids, EXPERTS, BLOCK_SIZE, one_block if path == "one_block" else None)
    assert len(launches) == (1 if path == "one_block" else 2)
    for name, launcher, host, blocks in launches:
        built = cute_coop.compile_kernel(launcher, *(cute_moe_align.fake(a) for a in host), cutlass.Int32(blocks))
        _check(name, built)
