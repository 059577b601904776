// cuda-coop: stable stream compaction of a warp's or a logical warp's tile, for select and partition (SPEC 8.20;
// docs: operations/select) and the compacted totals of segmented reductions (SPEC 8.21).
#pragma once

#include <cub/warp/warp_exchange.cuh>
#include <cub/warp/warp_scan.cuh>

#include <cuda_coop/util_group.cuh>

namespace cuda_coop {

// The ranks of BlockSelectRanks (include/cuda_coop/block/block_select.cuh) over the tile of one logical warp of W
// lanes (W a power of two), positions p = lane * K + i: each lane folds its kept bits, and CUB's shuffle-based
// WarpScan<int, W>::ExclusiveSum gives the kept positions before the lane's first item and the count. No shared
// memory.
template <int K, int W, int BX, int BY = 1, int BZ = 1>
class WarpSelectRanks {
  using Scan = cub::WarpScan<int, W>;

 public:
  template <typename Flag>
  __device__ __forceinline__ int Rank(const Flag (&flags)[K], long long valid_items, int (&ranks)[K]) const {
    const int first = (int)(linear_rank<BX, BY, BZ>() % W) * K;
    const int in_range = (int)valid_items - first;  // slot i lies before valid_items while i < in_range (32 bits)
    int kept[K];
    int mine = 0;
#pragma unroll
    for (int i = 0; i < K; ++i) {
      kept[i] = (i < in_range && flags[i] != 0) ? 1 : 0;
      mine += kept[i];
    }
    int before = 0;
    int count = mine;
    if constexpr (W > 1) {
      typename Scan::TempStorage unused;  // the shuffle-based WarpScan reads none
      Scan(unused).ExclusiveSum(mine, before, count);
    }
#pragma unroll
    for (int i = 0; i < K; ++i) {
      const int p = first + i;
      ranks[i] = kept[i] ? before : (i < in_range ? count + p - before : p);
      before += kept[i];
    }
    return count;
  }
};

// Each item to its rank: CUB's WarpExchange<T, K, W> ScatterToStriped, then StripedToBlocked (one shared-memory tile
// per logical warp; a lane's striped slots are the places it wrote last, but with CUB's padding they are not, so
// the lanes meet at __syncwarp in between). CUB pads the ranks in place: each call scatters a copy.
template <typename T, int K, int W>
class WarpSelectExchange {
  using Exchange = cub::WarpExchange<T, K, W>;
  typename Exchange::TempStorage& storage;
  const unsigned mask;

 public:
  using TempStorage = typename Exchange::TempStorage;

  __device__ __forceinline__ WarpSelectExchange(TempStorage& temp_storage, unsigned lanes)
      : storage(temp_storage), mask(lanes) {}

  __device__ __forceinline__ void Scatter(const T (&in)[K], T (&out)[K], const int (&ranks)[K]) {
    int scatter[K];
#pragma unroll
    for (int i = 0; i < K; ++i) {
      scatter[i] = ranks[i];
    }
    if constexpr (K == 1) {  // one item per lane: striped is blocked
      Exchange(storage).ScatterToStriped(in, out, scatter);
    } else {
      T striped[K];
      Exchange(storage).ScatterToStriped(in, striped, scatter);
      __syncwarp(mask);
      Exchange(storage).StripedToBlocked(striped, out);
    }
  }
};

}  // namespace cuda_coop
