"""MoE align in the CuTe DSL with cuda.coop: vLLM's ``moe_align_block_size``, stable, checked against NumPy.

The kernels are in ``moe_align_cute.py`` (those of ``moe_align_numba.py`` for ``cuda.coop.cutlass``); the oracle and
the check are ``moe_align_reference.py``'s. Every kernel is built for sm_90a without a GPU
(``cute_coop.compile_kernel`` on fake tensors); with a GPU and torch (to hand CuTe the device arrays) the one-launch
path runs on the given shape, the small path on 16 tokens and the two-launch path on a large one, each checked exactly,
and without one the script says that it could not launch.

    python examples/workloads/cute_moe_align.py [--tokens 1024] [--experts 64] [--k 6] [--block-size 64]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

try:
    import torch  # before cutlass: the other order once broke torch's operator registry
except ImportError:
    torch = None
import cutlass  # noqa: E402
from cutlass.cute.runtime import make_fake_tensor  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import moe_align_cute as kernels  # noqa: E402
import moe_align_reference as ref  # noqa: E402
from sampling_reference import built_line  # noqa: E402  (the workloads' build report)
import cuda.coop.cutlass as cute_coop  # noqa: E402

SCALARS = {np.dtype(np.int32): cutlass.Int32, np.dtype(np.int64): cutlass.Int64}


def steps(topk_ids: np.ndarray, num_experts: int, block_size: int, plan: tuple[int, int] | None = None):
    """(name, launcher, host arguments, blocks) of the launches of one call, in order, on shared host arrays, and
    the three output arrays: the small kernel's launcher where ``small_path`` says so, else ``launch_count`` then
    ``launch_place`` (``plan``: (blocks, span), default ``launch_plan``, and then never the small path;
    ``plan=(0, 0)`` forces the small path, ``plan=(1, span)`` the one-block kernel, ``launch_align``)."""
    flat = np.ascontiguousarray(topk_ids).reshape(-1)
    numel = flat.size
    kernels.check_arguments(numel, num_experts, block_size)
    outputs = ref.poisoned_outputs(numel, num_experts, block_size)
    blocks, span = plan or kernels.launch_plan(numel)
    n, e, bits = np.int64(numel), np.int32(num_experts), np.int32(kernels.key_bits(num_experts))
    bs, size = np.int32(block_size), np.int64(outputs[0].size)
    if (plan is None and kernels.small_path(numel)) or blocks == 0:
        items, threads = kernels.small_items(max(numel, 1)), kernels.small_threads(numel)
        return [(f"moe_align (small, {items} entries a thread of {threads})", kernels.small_launcher(items, threads),
                 (flat, *outputs, n, e, bs, size),
                 kernels.small_blocks(numel, num_experts, outputs[0].size, threads))], outputs
    if blocks == 1:
        return [("moe_align (one block)", kernels.launch_align, (flat, *outputs, n, e, bits, bs, size), 1)], outputs
    counts = np.full(blocks * kernels.MAX_EXPERTS, -7, np.int32)
    return [("moe_align count", kernels.launch_count, (flat, counts, n, e, np.int64(span)), blocks),
            ("moe_align place", kernels.launch_place, (flat, counts, *outputs, n, e, bits, bs, size, np.int64(span)),
             blocks)], outputs


def fake(a):
    """A launcher argument for a build without a GPU: a fake 1-D tensor for an array, a CuTe numeric for a scalar."""
    if isinstance(a, np.ndarray):
        return make_fake_tensor(SCALARS[a.dtype], a.shape, stride=(1,))
    return SCALARS[a.dtype](a.item())


def run_steps(launches, outputs):
    """Launch ``launches`` in order on device copies of their host arrays (one per host array: the launches share
    them) and return the device copies of ``outputs``."""
    if torch is None or not torch.cuda.is_available():
        raise RuntimeError("no CUDA device (or no torch to hand the arrays to CuTe)")
    from cutlass.cute.runtime import from_dlpack

    arrays = {id(a): torch.from_numpy(a).cuda() for _, _, host, _ in launches for a in host
              if isinstance(a, np.ndarray)}
    for _, launcher, host, blocks in launches:
        launcher(*(from_dlpack(arrays[id(a)]) if isinstance(a, np.ndarray) else SCALARS[a.dtype](a.item())
                   for a in host), cutlass.Int32(blocks))
    torch.cuda.synchronize()
    return [arrays[id(a)].cpu().numpy() for a in outputs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1024)
    parser.add_argument("--experts", type=int, default=64)
    parser.add_argument("--k", type=int, default=6)
    parser.add_argument("--block-size", type=int, default=64)
    parser.add_argument("--large-tokens", type=int, default=65536, help="tokens of the two-launch check")
    args = parser.parse_args()
    small = ref.problem(args.tokens, args.experts, args.k, seed=args.tokens)
    three_tiles = (1 + 2 * kernels.TILE // small.size) if small.size else 1
    smallest = ref.problem(16, args.experts, args.k, seed=16)[: kernels.THREADS // args.k]
    for topk_ids, plan in ((smallest, (0, 0)), (small, (1, kernels.TILE)), (np.tile(small, (three_tiles, 1)), None)):
        for name, launcher, host, blocks in steps(topk_ids, args.experts, args.block_size, plan)[0]:
            start = time.perf_counter()
            built = cute_coop.compile_kernel(launcher, *(fake(a) for a in host), cutlass.Int32(blocks))
            print(built_line(name, built, "sm_90a", time.perf_counter() - start, kernels.THREADS))
    for tokens, invalid in ((args.tokens, 0.0), (args.tokens, 0.01), (16, 0.05), (args.large_tokens, 0.0)):
        topk_ids = ref.problem(tokens, args.experts, args.k, seed=tokens, invalid=invalid)
        launches, outputs = steps(topk_ids, args.experts, args.block_size)
        try:
            got = run_steps(launches, outputs)
        except Exception as exc:  # no driver or no GPU on this machine
            print(f"  could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:100]})")
            return
        want = ref.moe_align_block_size(topk_ids, args.experts, args.block_size)
        print(f"OK: {tokens} tokens x k={args.k}, {args.experts} experts, block_size {args.block_size}, "
              f"{invalid:.0%} ids outside the experts, {len(launches)} launch(es): {ref.check(got, want)}")


if __name__ == "__main__":
    main()
