"""The sampling workload's numba-cuda-mlir top-k and sampler kernels (examples/workloads/sampling_numba.py) built for
sm_90 on the CPU, one block per row of 32000 items, their SASS held to what closed the gap to the CuTe build of the
same code (sampling_cute.py): numba-cuda-mlir computes 32-bit integer arithmetic in 64 bits, divides int64s through
a called routine, gives its arrays a run-time stride (a 64-bit multiply per index) and kept ``at_or_above``'s early
returns as branches around every item of the mask pass. So: no CALL (the slice plan's divisions are uint32), the mask
pass one float compare an item with no branch, no 64-bit multiply by a stride in a loop over the row, no local
memory, and a static instruction count within a margin of the CuTe kernel's."""
from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "workloads"))
import sampling_reference as ref  # noqa: E402

VOCAB = 32000
INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")


@functools.lru_cache(maxsize=None)
def _numba(name: str):
    pytest.importorskip("numba_cuda_mlir")
    import llm_sampling

    import cuda.coop.numba_mlir as numba_coop

    (kernel, host), = [(k, h) for n, k, h, _, _ in llm_sampling.launches_for(*ref.problem(2, VOCAB)) if n == name]
    return numba_coop.compile_kernel(kernel, host, block=1024, grid=2)


@functools.lru_cache(maxsize=None)
def _cute(name: str):
    pytest.importorskip("cutlass")
    import cute_llm_sampling
    import cutlass

    import cuda.coop.cutlass as cute_coop

    (launcher, host), = [(k, h) for n, k, h, _, _ in cute_llm_sampling.launches_for(*ref.problem(2, VOCAB))
                         if n == name]
    return cute_coop.compile_kernel(launcher, *(cute_llm_sampling.fake(a) for a in host), cutlass.Int32(2))


def _instructions(sass: str):
    return [(int(m.group(1), 16), m.group(2), m.group(3)) for m in INSTRUCTION.finditer(sass)]


def _loops(sass: str):
    """The instructions of each loop: from a backward branch's target to the branch."""
    code = _instructions(sass)
    at = {address: i for i, (address, _, _) in enumerate(code)}
    loops = []
    for i, (address, op, rest) in enumerate(code):
        target = re.search(r"0x([0-9a-f]+)", rest)
        if op.startswith("BRA") and target and int(target.group(1), 16) <= address and int(target.group(1), 16) in at:
            loops.append(code[at[int(target.group(1), 16)]:i + 1])
    return loops


def _ops(body, prefix: str) -> int:
    return sum(1 for _, op, _ in body if op.startswith(prefix))


def _stride_multiplies(body) -> int:
    """64-bit multiplies by a run-time value (a register or a kernel parameter: an array's stride); those by an
    immediate scale an index to an address (a warp load's lane x 4 bytes)."""
    return sum(1 for _, op, rest in body
               if op.startswith("IMAD.WIDE") and not re.match(r"\s*\w+, [-\w.|]+, -?0x[0-9a-f]+,", rest))


NAMES = ["top_k_mask_logits", "top_k_renorm_probs", "sampling_from_probs"]
SAMPLERS = ["sampling_from_probs", "min_p_sampling_from_probs", "top_k_top_p_sampling_from_probs"]


@pytest.mark.parametrize("name", NAMES + ["top_k_top_p_sampling_from_probs"])
def test_no_local_memory_no_called_division_no_stride_multiply_in_row_loops(name):
    built = _numba(name)
    assert built.local_memory_bytes == 0, f"{built.local_memory_bytes} B of local memory"
    sass = built.sass()
    if name == "top_k_mask_logits":  # (the renormalisation's one CALL is its float division)
        assert not re.search(r"\bCALL\b", sass), "a called routine (the slice plan's int64 divisions) is back"
    for body in _loops(sass):  # the passes over the row and the candidates' reads: global loads, no barrier
        if _ops(body, "LDG.E") and not _ops(body, "BAR") and not _ops(body, "LDG.E.STRONG"):
            assert not _stride_multiplies(body), f"a 64-bit multiply (an array's stride) in a loop of {len(body)}"


def test_mask_pass_is_one_float_compare_an_item():
    """The masking pass (the loop that loads and stores the row): no branch around an item, only the two
    convergence regions of ``load_wide``'s whole and partial tiles (before: 18 BSSY/BSYNC regions, 636 instructions
    for the loop's two load paths; after: 2 and 213), at most 240 instructions in all."""
    masks = [b for b in _loops(_numba("top_k_mask_logits").sass()) if _ops(b, "STG.E") and not _ops(b, "BAR")]
    assert masks, "no masking loop found"
    for body in masks:
        assert _ops(body, "BSSY") <= 2, "the mask pass branches around its items"
        assert _ops(body, "FSETP") >= 16, "the items are no longer compared as floats"
        assert len(body) <= 240, f"{len(body)} instructions in the mask pass"


@pytest.mark.parametrize("name, margin", [("top_k_mask_logits", 1.10), ("top_k_renorm_probs", 1.20),
                                          ("sampling_from_probs", 1.0), ("min_p_sampling_from_probs", 1.05),
                                          ("top_k_top_p_sampling_from_probs", 1.20)])
def test_static_instructions_within_a_margin_of_cutes(name, margin):
    """Before: 2880 / 1888 (1.53x), 3448 / 2600 (1.33x), 2824 / 1976 (1.43x), 2760 / 2472 (1.12x) and 2368 / 1672
    (1.42x) instructions, numba / CuTe. The joint sampler's margin is wider since its walk lost CuTe's 72 B of spill
    code (1584 / 1672 before, 1328 / 1120 after): numba's excess is integer arithmetic on the uniform datapath
    (30 UIMAD and 30 more UIADD3: 64-bit products of indices by the arrays' strides, which numba's arrays carry as
    run-time kernel parameters)."""
    ours, theirs = len(_instructions(_numba(name).sass())), len(_instructions(_cute(name).sass()))
    assert ours <= margin * theirs, f"numba {ours} against CuTe {theirs} instructions"


@pytest.mark.parametrize("backend", ["numba", "cute"])
@pytest.mark.parametrize("name", SAMPLERS)
def test_samplers_keep_nothing_in_local_memory(name, backend):
    """Before: numba's min-p sampler 48 B (the block's ``part``, ``u``, the row's slice bounds and the crossing
    reduce's triples spilled at the 64 registers of 1024 threads), then 8 B; CuTe's samplers 56, 64 and 72 B. After
    the walk by warp scans (one block barrier a tile, the crossing part found by every warp alike) and float maxima
    as one FMNMX (not NaN tests around every combination): none on either backend."""
    built = (_numba if backend == "numba" else _cute)(name)
    assert built.local_memory_bytes == 0, f"{built.local_memory_bytes} B of local memory"


@pytest.mark.parametrize("backend", ["numba", "cute"])
def test_plain_sampler_walks_whole_tiles_in_16_byte_loads(backend):
    """Rows walked whole (batch >= 264) load each whole tile as one 16-byte load a thread where the row is aligned
    (``vectorize``; the guarded 4-byte loads otherwise): 5-7% on the H100 for CuTe's batch-512 rows, 1-2% for
    numba's, the same samples. The joint sampler's one-chunk walk keeps the guarded loads (no extra code)."""
    plain = (_numba if backend == "numba" else _cute)("sampling_from_probs").sass()
    joint = (_numba if backend == "numba" else _cute)("top_k_top_p_sampling_from_probs").sass()
    assert re.search(r"\bLDG\.E\.128\b", plain), "the walk's whole tiles lost their vector loads"
    assert not re.search(r"\bLDG\.E\.128\b", joint)


@pytest.mark.parametrize("name", SAMPLERS)
def test_samplers_walk_with_one_block_barrier_a_tile(name):
    """The crossing part is found by warp scans in every warp alike (``warp_crossing``: no block barrier), and the
    walk takes one barrier a tile (``sample_kept``): before, the crossing's block scan and two block reductions and
    the walk's four block collectives made 24-34 barriers in each sampler's code (12-14 on the path a batch-1 row of
    32000 takes); after, at most 17 in all (the min-p sampler's largest-probability reductions and grid barrier)."""
    sass = _numba(name).sass()
    assert len(re.findall(r"\bBAR\.SYNC\b", sass)) <= 17, "a block barrier came back into the sampler's walk"


@pytest.mark.parametrize("name", SAMPLERS)
def test_samplers_keep_warp_shuffles_off_the_divergent_slow_path(name):
    """A run-time ``valid_items`` check in a loop over tiles (a trap branch: a second exit of the loop) left ptxas
    unsure the warps reconverged after it: every later warp shuffle got a divergence test (BRA.DIV) and a slow path
    of WARPSYNC.COLLECTIVE shuffles (before: 5 tests and 81 of them, 544 instructions, in the joint sampler; 3 in
    the others). Only the two raking block scans' (in the first warp) keep theirs, and no load checks at run time."""
    sass = _numba(name).sass()
    assert len(re.findall(r"\bBRA\.DIV\b", sass)) <= 2, "a warp shuffle behind a divergence test is back"
    assert not re.search(r"\bBPT\.TRAP\b", sass), "a load's run-time range check (a trap branch) is back"
