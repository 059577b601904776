"""The MoE-align workload (examples/workloads/moe_align_*.py) on the GPU against its NumPy oracle, exactly: random
routers over the issue's (experts, k) pairs, every launch path (the small kernel at 1 to 8 entries a lane; count +
place over many blocks; the one-block kernel the small one replaced, forced), ragged last tiles and warp runs, fewer
entries than experts, block size 1, every entry on one expert, and ids outside the experts (which every
implementation skips) at 256 experts, where they share the sort's top key range. Outputs are poisoned before each
launch."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "workloads"))
import moe_align_plan as plan  # noqa: E402
import moe_align_reference as ref  # noqa: E402
from gpu_helpers import SEEDED_PER_TEST  # noqa: E402

pytestmark = pytest.mark.gpu
rng = SEEDED_PER_TEST  # each test's own generator (tests/gpu/conftest.py)

CASES = [  # tokens, experts, k, block_size, fraction of ids outside the experts
    (1, 8, 2, 16, 0.0), (16, 64, 6, 64, 0.0), (128, 128, 8, 128, 0.0), (1024, 256, 8, 16, 0.0),
    (1000, 64, 6, 64, 0.02),  # 6000 entries: the small kernel at 8 a lane, its last warps' runs ragged or empty
    (2049, 8, 2, 64, 0.0),  # 4098 entries: 8 a lane, two past 4 a lane
    (8192, 8, 2, 128, 0.0), (8192, 256, 8, 64, 0.01),  # two launches
    (65536, 256, 8, 128, 0.0), (65536, 8, 2, 16, 0.0), (50001, 128, 8, 64, 0.03),
    (5, 256, 8, 128, 0.0),  # fewer entries than experts: vLLM's shorter buffers
    (3000, 256, 8, 1, 0.05), (777, 255, 3, 7, 0.1),
    # no ids outside (the one-block plan sorted by one bit fewer where the experts are a power of two): now the
    # small kernel at 2, 1, 2 and 2 entries a lane
    (160, 256, 8, 128, 0.0), (300, 16, 4, 32, 0.0), (1100, 1, 1, 16, 0.0), (600, 8, 2, 128, 0.0),
    # the small path (plan.small_path: up to 8192 entries, 1-8 a lane; issue 43): the grid's 1, 16, 128 and 1024
    # tokens, the bounds between its slot counts and one past them
    (16, 128, 8, 16, 0.0), (16, 64, 6, 128, 0.05), (16, 256, 8, 64, 0.1), (16, 8, 2, 16, 0.2),
    (32, 256, 8, 64, 0.0), (32, 256, 8, 16, 0.02), (51, 64, 5, 7, 0.0), (33, 256, 8, 64, 0.0),
    (128, 8, 2, 1, 0.03), (3, 255, 3, 32, 0.5), (2, 3, 1, 4096, 0.0), (128, 256, 8, 16, 0.0),
    (128, 64, 6, 128, 0.01), (129, 256, 8, 64, 0.0), (1, 256, 8, 128, 0.0),
    (1024, 128, 8, 64, 0.0), (1024, 64, 6, 16, 0.02), (512, 256, 8, 128, 0.0), (257, 256, 8, 16, 0.01),
    (1025, 256, 8, 64, 0.0), (1024, 8, 2, 128, 0.0), (4097, 1, 1, 16, 0.0),
]


@pytest.mark.parametrize("backend", ["numba", "cute"])
@pytest.mark.parametrize("numel", [1, 7, 31, 32, 33, 100, 255, 256, 640, 1023, 1024, 1025, 2048, 2049, 3333, 4096,
                                   4097, 6000, 8191, 8192])
def test_the_small_path_on_arbitrary_ids(backend, numel):
    """Up to 8192 entries (1 to 8 a lane) of any ids (repeats within a token, a slot and a warp's run, negatives, ids
    at and far past the experts), every expert count from 1 to 256, block sizes 1 to 256: the stable oracle."""
    assert plan.small_path(numel)
    run = _numba if backend == "numba" else _cute
    for experts in (1, 5, 8, 64, 200, 256):
        block_size = int(rng.choice([1, 3, 16, 64, 256]))
        topk_ids = rng.integers(-2, experts + 2, numel).astype(np.int32).reshape(numel, 1)
        topk_ids[rng.random(topk_ids.shape) < 0.05] = 2**31 - 1
        ref.check(run(topk_ids, experts, block_size), ref.moe_align_block_size(topk_ids, experts, block_size))


def _ids(tokens, experts, k, invalid):
    return ref.problem(tokens, experts, k, seed=int(rng.integers(2**31)), invalid=invalid)


def _numba(topk_ids, experts, block_size):
    pytest.importorskip("numba_cuda_mlir")
    import moe_align_numba as kernels
    from numba_cuda_mlir import cuda

    outputs = [cuda.to_device(a) for a in ref.poisoned_outputs(topk_ids.size, experts, block_size)]
    got = kernels.moe_align_block_size(cuda.to_device(topk_ids), experts, block_size, *outputs)
    assert all(g is o for g, o in zip(got, outputs))
    return [a.copy_to_host() for a in outputs]


def _cute(topk_ids, experts, block_size):
    pytest.importorskip("cutlass")
    pytest.importorskip("torch")
    import cute_moe_align

    return cute_moe_align.run_steps(*cute_moe_align.steps(topk_ids, experts, block_size))


@pytest.mark.parametrize("backend", ["numba", "cute"])
@pytest.mark.parametrize("tokens, experts, k, block_size, invalid", CASES)
def test_matches_the_stable_oracle(backend, tokens, experts, k, block_size, invalid):
    topk_ids = _ids(tokens, experts, k, invalid)
    got = (_numba if backend == "numba" else _cute)(topk_ids, experts, block_size)
    ref.check(got, ref.moe_align_block_size(topk_ids, experts, block_size))


@pytest.mark.parametrize("backend", ["numba", "cute"])
@pytest.mark.parametrize("tokens", [16, 100, 20000])
def test_every_entry_on_one_expert_and_the_last_expert(backend, tokens):
    """Skew: every entry routed to expert 255 of 256 (one run spanning every tile and block), then to expert 0."""
    run = _numba if backend == "numba" else _cute
    for expert in (255, 0):
        topk_ids = np.full((tokens, 8), expert, np.int32)
        topk_ids[rng.random(topk_ids.shape) < 0.05] = 256  # outside: skipped
        ref.check(run(topk_ids, 256, 64), ref.moe_align_block_size(topk_ids, 256, 64))


@pytest.mark.parametrize("backend", ["numba", "cute"])
def test_both_paths_agree_on_the_same_input(backend):
    """The same entries through the one-block kernel and through count + place over several blocks (the plan
    forced), both equal to the oracle."""
    topk_ids = _ids(1000, 64, 6, 0.01)
    want = ref.moe_align_block_size(topk_ids, 64, 32)
    if backend == "numba":
        pytest.importorskip("numba_cuda_mlir")
        import moe_align_numba as kernels
        from numba_cuda_mlir import cuda

        flat = cuda.to_device(topk_ids.reshape(-1))
        for blocks, span in ((1, 2 * plan.TILE), (3, plan.TILE)):
            outputs = [cuda.to_device(a) for a in ref.poisoned_outputs(topk_ids.size, 64, 32)]
            n, e, bits, bs = np.int64(topk_ids.size), np.int32(64), np.int32(plan.key_bits(64)), np.int32(32)
            size = np.int64(outputs[0].shape[0])
            if blocks == 1:
                kernels.align_kernel[1, plan.THREADS](flat, *outputs, n, e, bits, bs, size)
            else:
                span = np.int64(-(-topk_ids.size // 3))
                counts = cuda.to_device(np.full(blocks * plan.MAX_EXPERTS, -7, np.int32))
                kernels.count_kernel[blocks, plan.THREADS](flat, counts, n, e, span)
                kernels.place_kernel[blocks, plan.THREADS](flat, counts, *outputs, n, e, bits, bs, size, span)
            ref.check([a.copy_to_host() for a in outputs], want)
    else:
        pytest.importorskip("cutlass")
        pytest.importorskip("torch")
        import cute_moe_align

        for forced in ((1, 2 * plan.TILE), (3, -(-topk_ids.size // 3))):
            ref.check(cute_moe_align.run_steps(*cute_moe_align.steps(topk_ids, 64, 32, forced)), want)


@pytest.mark.parametrize("backend", ["numba", "cute"])
def test_the_small_kernel_and_the_one_block_kernel_agree(backend):
    """16 and 1000 tokens (128 and 8000 entries) through the small kernel (``small_path``: 1 and 8 entries a lane)
    and through the 1024-thread one-block kernel it replaced (forced), both equal to the oracle."""
    for tokens in (16, 1000):
        _small_and_one_block(backend, _ids(tokens, 256, 8, 0.03))


def _small_and_one_block(backend, topk_ids):
    want = ref.moe_align_block_size(topk_ids, 256, 16)
    if backend == "numba":
        pytest.importorskip("numba_cuda_mlir")
        import moe_align_numba as kernels
        from numba_cuda_mlir import cuda

        flat = cuda.to_device(topk_ids.reshape(-1))
        n, e, bits, bs = np.int64(topk_ids.size), np.int32(256), np.int32(plan.key_bits(256)), np.int32(16)
        for small in (True, False):
            outputs = [cuda.to_device(a) for a in ref.poisoned_outputs(topk_ids.size, 256, 16)]
            size = np.int64(outputs[0].shape[0])
            if small:
                kernels.small_kernel_for(plan.small_items(topk_ids.size))[1, plan.THREADS](flat, *outputs, n, e, bs,
                                                                                          size)
            else:
                kernels.align_kernel[1, plan.THREADS](flat, *outputs, n, e, bits, bs, size)
            ref.check([a.copy_to_host() for a in outputs], want)
    else:
        pytest.importorskip("cutlass")
        pytest.importorskip("torch")
        import cute_moe_align

        for forced in ((0, 0), (1, 2 * plan.TILE)):
            launches, outputs = cute_moe_align.steps(topk_ids, 256, 16, forced)
            assert ("a thread" in launches[0][0]) == (forced[0] == 0)
            ref.check(cute_moe_align.run_steps(launches, outputs), want)


@pytest.mark.parametrize("backend", ["numba", "cute"])
@pytest.mark.parametrize("tokens, experts, k, block_size", [(16, 256, 8, 128), (1000, 256, 8, 16), (3, 8, 2, 64),
                                                            (700, 64, 6, 1), (32, 64, 8, 16)])
def test_the_small_kernel_shares_its_writes_over_any_number_of_blocks(backend, tokens, experts, k, block_size):
    """The small kernel at 1, 2, 3, 8 and 13 blocks (``plan.small_blocks`` picks 1 to 8; every block
    ranks every entry and writes its share of entries, padding, tail and expert_ids), in blocks of 256 threads
    (``plan.small_threads``: up to 256 entries) and of 1024: the same stable oracle."""
    topk_ids = _ids(tokens, experts, k, 0.02)
    want = ref.moe_align_block_size(topk_ids, experts, block_size)
    items = plan.small_items(topk_ids.size)
    for threads in sorted({plan.small_threads(topk_ids.size), plan.THREADS}):
        for blocks in (1, 2, 3, 8, 13):
            if backend == "numba":
                pytest.importorskip("numba_cuda_mlir")
                import moe_align_numba as kernels
                from numba_cuda_mlir import cuda

                outputs = [cuda.to_device(a) for a in ref.poisoned_outputs(topk_ids.size, experts, block_size)]
                kernels.small_kernel_for(items, threads)[blocks, threads](
                    cuda.to_device(topk_ids.reshape(-1)), *outputs, np.int64(topk_ids.size), np.int32(experts),
                    np.int32(block_size), np.int64(outputs[0].shape[0]))
                got = [a.copy_to_host() for a in outputs]
            else:
                pytest.importorskip("cutlass")
                pytest.importorskip("torch")
                import cute_moe_align

                (launch,), outputs = cute_moe_align.steps(topk_ids, experts, block_size, (0, 0))
                launcher = cute_moe_align.kernels.small_launcher(items, threads)
                got = cute_moe_align.run_steps([(launch[0], launcher, launch[2], blocks)], outputs)
            ref.check(got, want)
