// cuda-coop: broadcast over a warp or a logical warp of W lanes (docs: operations/broadcast).
#pragma once

#include <cub/util_ptx.cuh>

#include <cuda_coop/util_group.cuh>

namespace cuda_coop {

// Member src_rank's items reach every lane of its (logical) warp by CUB's ShuffleIndex, one item at a time (a type
// wider than 32 bits as several words): no shared memory, no barrier. A power-of-two width shuffles within its own
// segment of W lanes, where src_rank is the source's lane; another width (a group of group_by(W, exhaustive=False),
// whose groups start at lanes 0, W, 2W, ...) shuffles over the whole warp from the group's first lane plus src_rank.
// The mask is the group's lanes. Items are moved as bits: NaN payloads and -0.0 arrive unchanged.
template <int W, int BX, int BY = 1, int BZ = 1>
class WarpBroadcast {
  static constexpr bool POWER_OF_TWO = (W & (W - 1)) == 0;
  static constexpr int WIDTH = POWER_OF_TWO ? W : 32;
  unsigned mask;
  int lane;

 public:
  // src_rank: checked by the caller to be in 0 ... W-1 (docs: errors, "Device traps").
  __device__ __forceinline__ explicit WarpBroadcast(long long src_rank) {
    const unsigned rank = linear_rank<BX, BY, BZ>();
    mask = logical_warp_mask(rank, W);
    lane = POWER_OF_TWO ? (int)src_rank : (int)((rank % 32u) / W * W + (unsigned)src_rank);
  }

  // The source's K items into every lane's fresh result.
  template <int K, typename T>
  __device__ __forceinline__ void Broadcast(T* items, const T* source) const {
#pragma unroll
    for (int k = 0; k < K; ++k) items[k] = cub::ShuffleIndex<WIDTH>(source[k], lane, mask);
  }
};

}  // namespace cuda_coop
