// cuda-coop: the block-wide exclusive suffix scan of one value per thread, the core of the reverse scans
// (docs: operations/scan, "Reverse and segmented scans").
#pragma once

#include <cub/util_ptx.cuh>
#include <cub/util_type.cuh>

#include <cuda_coop/util_group.cuh>

namespace cuda_coop {

// folded[i]: a thread's items i .. K-1 folded right to left, op(in[i], op(in[i+1], ... in[K-1])): what a reverse
// scan folds of its own items before the suffix scan of one value per thread.
template <int K, typename T, typename Op>
__device__ __forceinline__ void fold_right(const T (&in)[K], T (&folded)[K], Op op) {
  folded[K - 1] = in[K - 1];
#pragma unroll
  for (int i = K - 2; i >= 0; --i) {
    folded[i] = op(in[i], folded[i + 1]);
  }
}

// Each thread gets the fold of the values of every later thread (higher linear rank), `op` applied with the
// earlier operand on the left: op(x[r+1], op(x[r+2], ...)); any associative `op` works, commutative or not.
//
// A warp scans towards lane 0 with shuffles (lane w-1 starts), lane 0 leaves its warp's aggregate in shared memory
// (one value per warp), and after one barrier every thread folds the aggregates of the warps after its own. Nothing
// is mirrored: a scan from the last position needs no reversed copy of the tile. A block of one warp needs no
// shared memory and no barrier. The caller owns the reuse barrier (docs: concepts, "Scratch memory and barriers").
template <typename T, int BX, int BY = 1, int BZ = 1>
class BlockSuffixScan {
  static constexpr unsigned THREADS = BX * BY * BZ;
  static constexpr unsigned WARPS = (THREADS + 31u) / 32u;
  static constexpr unsigned WARP_LANES = THREADS < 32u ? THREADS : 32u;  // lanes of every warp but the last
  static constexpr unsigned LAST_WARP_LANES = THREADS - 32u * (WARPS - 1u);

  struct _TempStorage {
    T warp_aggregates[WARPS];
  };

  _TempStorage& storage;
  const unsigned rank;

 public:
  struct TempStorage : cub::Uninitialized<_TempStorage> {};

  __device__ __forceinline__ explicit BlockSuffixScan(TempStorage& temp_storage)
      : storage(temp_storage.Alias()), rank(linear_rank<BX, BY, BZ>()) {}

  __device__ __forceinline__ unsigned Rank() const { return rank; }

  __device__ __forceinline__ bool IsLast() const { return rank == THREADS - 1u; }

  // `later`: the fold of the later threads' values (unspecified in the last thread); `aggregate`: the fold of every
  // thread's value, in every thread.
  template <typename Op>
  __device__ __forceinline__ void ExclusiveSuffix(const T& value, T& later, T& aggregate, Op op) {
    const unsigned lane = rank % 32u;
    const unsigned warp = rank / 32u;
    const unsigned lanes = warp == WARPS - 1u ? LAST_WARP_LANES : WARP_LANES;  // this warp's threads
    const unsigned mask = lanes == 32u ? 0xffffffffu : (1u << lanes) - 1u;
    // Kogge-Stone towards lane 0: after the step of `offset`, a lane holds the fold of its next 2*offset lanes
    // (fewer at the warp's end). The clamp keeps every source lane inside the warp's threads.
    T inclusive = value;
#pragma unroll
    for (unsigned offset = 1; offset < WARP_LANES; offset *= 2u) {
      const T from = cub::ShuffleDown<32>(inclusive, (int)offset, (int)lanes - 1, mask);
      if (lane + offset < lanes) {
        inclusive = op(inclusive, from);
      }
    }
    const T later_in_warp = cub::ShuffleDown<32>(inclusive, 1, (int)lanes - 1, mask);  // lane + 1's fold
    if constexpr (WARPS == 1u) {
      aggregate = cub::ShuffleIndex<32>(inclusive, 0, mask);
      later = later_in_warp;
    } else {
      if (lane == 0u) {
        storage.warp_aggregates[warp] = inclusive;
      }
      __syncthreads();
      // From the last warp down: `acc` is the fold of warps w+1.. when warp w takes it as its seed.
      T acc = storage.warp_aggregates[WARPS - 1u];
      T later_warps = acc;  // kept by the last warp, which has no later warp and never uses it
#pragma unroll
      for (int w = (int)WARPS - 2; w >= 0; --w) {
        if ((unsigned)w == warp) {
          later_warps = acc;
        }
        acc = op(storage.warp_aggregates[w], acc);
      }
      aggregate = acc;
      if (lane + 1u == lanes) {
        later = later_warps;
      } else {
        later = warp + 1u < WARPS ? op(later_in_warp, later_warps) : later_in_warp;
      }
    }
  }
};

}  // namespace cuda_coop
