// cuda-coop: the block-wide exclusive suffix scan of one value per thread, the core of the reverse scans
// (docs: operations/scan, "Reverse and segmented scans").
#pragma once

#include <cub/util_ptx.cuh>
#include <cub/util_type.cuh>

#include <cuda/std/type_traits>

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
// Scalars: a warp scans towards lane 0 with shuffles (lane w-1 starts), lane 0 leaves its warp's aggregate in
// shared memory (one value per warp), and after one barrier every thread folds the aggregates of the warps after
// its own. Anything else (the (flags, value) pairs of segmented scans, whose op takes several instructions), in
// blocks of whole warps: raking, as CUB's BlockScan does by default: every thread leaves its value in shared memory,
// after a barrier warp 0 alone folds THREADS/32 values a lane, scans the 32 folds and writes each thread's result
// back, and after a second barrier every thread reads its own. The pairs' kernels are issue bound (segment sums:
// ncu, H100), and raking applies about a fifth of the warp-scan form's operators per block at 256 threads.
// Nothing is mirrored either way: a scan from the last position needs no reversed copy of the tile. A block of one
// warp needs no shared memory and no barrier. The caller owns the reuse barrier (docs: concepts, "Scratch memory
// and barriers").
template <typename T, int BX, int BY = 1, int BZ = 1>
class BlockSuffixScan {
  static constexpr unsigned THREADS = BX * BY * BZ;
  static constexpr unsigned WARPS = (THREADS + 31u) / 32u;
  static constexpr unsigned WARP_LANES = THREADS < 32u ? THREADS : 32u;  // lanes of every warp but the last
  static constexpr unsigned LAST_WARP_LANES = THREADS - 32u * (WARPS - 1u);
  static constexpr bool RAKING = !::cuda::std::is_arithmetic<T>::value && WARPS > 1u && THREADS % 32u == 0u;
  static constexpr unsigned RAKE = THREADS / 32u;  // threads whose values one lane of warp 0 folds

  struct _WarpScanStorage {
    T warp_aggregates[WARPS];
  };
  // A slot per thread, and one left out after each lane's RAKE slots, so that warp 0's lanes read different banks.
  struct _RakingStorage {
    T slots[THREADS + 32u];
    T aggregate;
  };
  using _TempStorage = ::cuda::std::conditional_t<RAKING, _RakingStorage, _WarpScanStorage>;

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
    if constexpr (RAKING) {
      RakingSuffix(value, later, aggregate, op);
    } else {
      WarpScanSuffix(value, later, aggregate, op);
    }
  }

 private:
  // Where thread r's value lies in the raking slots: one slot left out after each lane's RAKE.
  __device__ __forceinline__ static unsigned Slot(unsigned r) { return r + r / RAKE; }

  // Kogge-Stone towards lane 0 over a warp's first `lanes` lanes (at most LANES): after the step of `offset`, a lane
  // holds the fold of its next 2*offset lanes (fewer at the end). The clamp keeps every source lane among them.
  template <unsigned LANES, typename Op>
  __device__ __forceinline__ static T WarpInclusiveSuffix(T inclusive, unsigned lane, unsigned lanes, unsigned mask,
                                                          Op op) {
#pragma unroll
    for (unsigned offset = 1; offset < LANES; offset *= 2u) {
      const T from = cub::ShuffleDown<32>(inclusive, (int)offset, (int)lanes - 1, mask);
      // Signed, and with the offset on the right: a constant bound where every warp is whole, which NVVM does
      // not derive from `lane + offset < lanes` (lane + offset might wrap, as far as it knows).
      if ((int)lane < (int)lanes - (int)offset) {
        inclusive = op(inclusive, from);
      }
    }
    return inclusive;
  }

  template <typename Op>
  __device__ __forceinline__ void RakingSuffix(const T& value, T& later, T& aggregate, Op op) {
    storage.slots[Slot(rank)] = value;
    __syncthreads();
    if (rank < 32u) {  // warp 0; lane `rank` owns threads rank*RAKE .. rank*RAKE + RAKE-1
      T* mine = storage.slots + Slot(rank * RAKE);
      // Each pass reads the slots again rather than keeping RAKE values in registers through the warp scan: the
      // rest of the block's warps run with warp 0's register count.
      T inclusive = mine[RAKE - 1u];  // this lane's threads folded, then the later lanes'
#pragma unroll
      for (int j = (int)RAKE - 2; j >= 0; --j) {
        inclusive = op(mine[j], inclusive);
      }
      inclusive = WarpInclusiveSuffix<32u>(inclusive, rank, 32u, 0xffffffffu, op);
      // Right to left through this lane's threads: each one's slot gets the fold of the threads after it (the
      // later lanes' for the last one). The last lane's last thread is the block's, whose result is unspecified.
      T acc = cub::ShuffleDown<32>(inclusive, 1, 31, 0xffffffffu);  // lanes rank+1 ..
#pragma unroll
      for (int j = (int)RAKE - 1; j >= 0; --j) {
        const T own = mine[j];
        mine[j] = acc;
        acc = (j == (int)RAKE - 1 && rank == 31u) ? own : op(own, acc);
      }
      if (rank == 0u) {
        storage.aggregate = inclusive;
      }
    }
    __syncthreads();
    later = storage.slots[Slot(rank)];
    aggregate = storage.aggregate;
  }

  template <typename Op>
  __device__ __forceinline__ void WarpScanSuffix(const T& value, T& later, T& aggregate, Op op) {
    const unsigned lane = rank % 32u;
    const unsigned warp = rank / 32u;
    const unsigned lanes = warp == WARPS - 1u ? LAST_WARP_LANES : WARP_LANES;  // this warp's threads
    const unsigned mask = lanes == 32u ? 0xffffffffu : (1u << lanes) - 1u;
    const T inclusive = WarpInclusiveSuffix<WARP_LANES>(value, lane, lanes, mask, op);
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
