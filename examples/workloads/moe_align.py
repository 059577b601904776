"""MoE align in Python with cuda.coop (numba-cuda-mlir): vLLM's ``moe_align_block_size`` (group a router's top-k
expert ids by expert, each expert's run padded to a multiple of ``block_size``), stable, checked against NumPy.

The kernels are in ``moe_align_numba.py``; the NumPy oracle, which defines the exact output, is in
``moe_align_reference.py``. With a GPU this runs the one-launch path on the given shape, the small path on 16 tokens
and the two-launch path on a large one (65536 tokens by default) and checks each exactly, ids outside the expert
range included; without one it builds every kernel for sm_90 and says that it could not launch.

    python examples/workloads/moe_align.py [--tokens 1024] [--experts 64] [--k 6] [--block-size 64]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import moe_align_numba as kernels  # noqa: E402
import moe_align_reference as ref  # noqa: E402
from sampling_reference import built_line  # noqa: E402  (the workloads' build report)
from numba_cuda_mlir import cuda  # noqa: E402
import cuda.coop.numba_mlir as numba_coop  # noqa: E402


def builds(numel: int, num_experts: int, block_size: int):
    """(name, kernel, host arguments, blocks, threads) of the four kernels at this size, whatever ``small_path`` and
    ``launch_plan`` say (the small kernel on the first 8192 entries at most, ``small_items`` of them a lane, in a
    block of ``small_threads``)."""
    topk_ids = np.zeros(numel, np.int32)
    sorted_ids, expert_ids, post_pad = ref.poisoned_outputs(numel, num_experts, block_size)
    blocks, span = kernels.launch_plan(max(numel, 3 * kernels.TILE))
    counts = np.zeros(blocks * kernels.MAX_EXPERTS, np.int32)
    n, e, bits = np.int64(numel), np.int32(num_experts), np.int32(kernels.key_bits(num_experts))
    bs, size = np.int32(block_size), np.int64(sorted_ids.size)
    small = min(numel, kernels.THREADS * kernels.SMALL_ITEMS[-1])
    items, threads = kernels.small_items(max(small, 1)), kernels.small_threads(small)
    return [("moe_align (one block)", kernels.align_kernel,
             (topk_ids, sorted_ids, expert_ids, post_pad, n, e, bits, bs, size), 1, kernels.THREADS),
            ("moe_align count", kernels.count_kernel, (topk_ids, counts, n, e, np.int64(span)), blocks,
             kernels.THREADS),
            ("moe_align place", kernels.place_kernel,
             (topk_ids, counts, sorted_ids, expert_ids, post_pad, n, e, bits, bs, size, np.int64(span)), blocks,
             kernels.THREADS),
            (f"moe_align (small, {items} entries a thread of {threads})", kernels.small_kernel_for(items, threads),
             (topk_ids, sorted_ids, expert_ids, post_pad, np.int64(small), e, bs, size),
             kernels.small_blocks(small, num_experts, int(size), threads), threads)]


def run(topk_ids: np.ndarray, num_experts: int, block_size: int):
    """The three outputs of ``moe_align_numba.moe_align_block_size`` on the GPU, into poisoned buffers."""
    outputs = [cuda.to_device(a) for a in ref.poisoned_outputs(topk_ids.size, num_experts, block_size)]
    kernels.moe_align_block_size(cuda.to_device(topk_ids), num_experts, block_size, *outputs)
    return [a.copy_to_host() for a in outputs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1024)
    parser.add_argument("--experts", type=int, default=64)
    parser.add_argument("--k", type=int, default=6)
    parser.add_argument("--block-size", type=int, default=64)
    parser.add_argument("--large-tokens", type=int, default=65536, help="tokens of the two-launch check")
    args = parser.parse_args()
    for name, kernel, host, blocks, threads in builds(args.tokens * args.k, args.experts, args.block_size):
        start = time.perf_counter()
        built = numba_coop.compile_kernel(kernel, host, block=threads, grid=blocks)
        print(built_line(name, built, "sm_90", time.perf_counter() - start, threads))
    for tokens, invalid in ((args.tokens, 0.0), (args.tokens, 0.01), (16, 0.05), (args.large_tokens, 0.0)):
        topk_ids = ref.problem(tokens, args.experts, args.k, seed=tokens, invalid=invalid)
        blocks = 0 if kernels.small_path(topk_ids.size) else kernels.launch_plan(topk_ids.size)[0]
        try:
            got = run(topk_ids, args.experts, args.block_size)
        except Exception as exc:  # no driver or no GPU on this machine
            print(f"  could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:100]})")
            return
        want = ref.moe_align_block_size(topk_ids, args.experts, args.block_size)
        print(f"OK: {tokens} tokens x k={args.k}, {args.experts} experts, block_size {args.block_size}, "
              f"{invalid:.0%} ids outside the experts, {f'{blocks} block(s)' if blocks else 'small path'}: "
              f"{ref.check(got, want)}")


if __name__ == "__main__":
    main()
