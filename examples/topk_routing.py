"""Top-k on warps: the routing of a mixture of experts, each token to its k highest-scoring experts.

Each token has one score per expert, 32 experts: one warp holds a token's row, one score per lane
(items_per_thread = 1). ``topk_max_pairs`` on the warp leaves the ``k`` largest scores, each with
its expert number, in the first ``k`` blocked positions, in no particular order: with one item
per lane, position ``p`` is lane ``p``, so lanes 0 ... k-1 write the token's choice. ``k`` is a
runtime value, the same in the whole warp. One key per lane sorts by warp shuffles alone: no
shared memory.

A second call routes tokens of a smaller model, 8 experts each, through logical warps of 8 lanes:
four tokens per warp, each group selecting from its own 8 scores.

With a GPU this launches the kernel and checks it against NumPy; without one it builds the kernel
for sm_90 (through NVRTC, libNVVM and nvJitLink, no driver needed) and says that it could not
launch.
"""
import time

import numpy as np
from numba_cuda_mlir import cuda  # noqa: I001  (the compiler first, then cuda.coop)
import cuda.coop.numba_mlir as numba_coop  # the backend; `as` keeps the name `cuda` bound to numba-cuda-mlir's
from cuda import coop  # the common API used inside kernels

EXPERTS, SMALL = 32, 8  # experts per token: one warp, or one logical warp of 8 lanes


@cuda.jit
def route(scores, small_scores, chosen, weights, small_chosen, small_weights, k):
    block = coop.this_block()
    lane = block.rank() % EXPERTS
    token = (np.int64(cuda.blockIdx.x) * cuda.blockDim.x + block.rank()) // EXPERTS
    score = coop.ThreadData(1)  # float32, from scores
    expert = coop.ThreadData(1, dtype=np.int32)
    coop.load(block, scores, score, offset=np.int64(cuda.blockIdx.x) * cuda.blockDim.x)
    expert[0] = lane
    best, experts = coop.topk_max_pairs(coop.this_warp(), score, expert, k=k)
    if lane < k:
        weights[token * k + lane] = best[0]
        chosen[token * k + lane] = experts[0]

    small_lane = block.rank() % SMALL
    small_token = (np.int64(cuda.blockIdx.x) * cuda.blockDim.x + block.rank()) // SMALL
    coop.load(block, small_scores, score, offset=np.int64(cuda.blockIdx.x) * cuda.blockDim.x)
    expert[0] = small_lane
    best, experts = coop.topk_max_pairs(coop.this_warp().group_by(SMALL), score, expert, k=2)
    if small_lane < 2:
        small_weights[small_token * 2 + small_lane] = best[0]
        small_chosen[small_token * 2 + small_lane] = experts[0]


def main() -> None:
    threads, blocks, k = 128, 64, 4
    tokens, small_tokens = threads * blocks // EXPERTS, threads * blocks // SMALL
    rng = np.random.default_rng(0)
    scores = np.stack([rng.permutation(EXPERTS) for _ in range(tokens)]).astype(np.float32) / 8  # distinct per row
    small_scores = np.stack([rng.permutation(SMALL) for _ in range(small_tokens)]).astype(np.float32) - 4
    chosen, weights = np.full(tokens * k, -1, np.int32), np.full(tokens * k, np.nan, np.float32)
    small_chosen, small_weights = np.full(small_tokens * 2, -1, np.int32), np.full(small_tokens * 2, np.nan, np.float32)
    args = (scores.reshape(-1), small_scores.reshape(-1), chosen, weights, small_chosen, small_weights, np.int32(k))
    start = time.perf_counter()
    built = numba_coop.compile_kernel(route, args, block=threads, grid=blocks)
    print(f"built route for sm_90 in {time.perf_counter() - start:.2f} s: {built.registers} registers, "
          f"{built.shared_memory_bytes} B shared, {built.local_memory_bytes} B local, {len(built.cubin)} B cubin")
    try:
        route[blocks, threads](*args)
        cuda.synchronize()
    except Exception as exc:  # no driver or no GPU on this machine
        print(f"could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:120]}); "
              "the kernel was built but not run")
        return
    for rows, picked, got, top in ((scores, chosen, weights, k), (small_scores, small_chosen, small_weights, 2)):
        picked, got = picked.reshape(len(rows), top), got.reshape(len(rows), top)
        want = np.sort(np.argsort(rows, axis=1)[:, -top:], axis=1)  # NumPy's top experts of each token
        assert np.array_equal(np.sort(picked, axis=1), want), "a token was routed to other experts"
        assert np.array_equal(np.take_along_axis(rows, picked.astype(np.int64), axis=1), got), \
            "a weight is not its expert's score"
    print(f"OK: {tokens} tokens routed to their {k} best of {EXPERTS} experts, {small_tokens} to their 2 best of "
          f"{SMALL}")


if __name__ == "__main__":
    main()
