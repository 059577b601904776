// cuda-coop: argmax / argmin over a (logical) warp (docs: operations/argreduce).
#pragma once

#include <cub/util_ptx.cuh>
#include <cub/warp/warp_reduce.cuh>

#include <cuda_coop/util_arg.cuh>
#include <cuda_coop/util_group.cuh>

namespace cuda_coop {

// Each lane folds its items (arg_fold), then CUB's WarpReduce folds the lanes' pairs with arg_op; the winner is
// defined in lane 0, or with BROADCAST in every lane (one shuffle). Power-of-two widths shuffle: no shared memory.
template <typename T, typename I, bool LARGEST, bool IS_FLOAT, bool VALID, bool BROADCAST, int W, int BX, int BY = 1,
          int BZ = 1>
class WarpArgReduce {
  using Pair = arg_pair<T, I, VALID>;
  using CubReduce = cub::WarpReduce<Pair, W>;
  typename CubReduce::TempStorage unused;

 public:
  // indices: K per lane when INDICES, else unused (the positions in the group's tile are the indices).
  template <bool INDICES, int K>
  __device__ __forceinline__ void Reduce(const T (&items)[K], const I* indices, long long valid_items, T& value,
                                         I& index) {
    const unsigned rank = linear_rank<BX, BY, BZ>();
    const Pair best = arg_fold<LARGEST, IS_FLOAT, VALID, INDICES>(items, indices, rank % W, valid_items);
    Pair winner = CubReduce(unused).Reduce(best, arg_op<LARGEST, IS_FLOAT>{});  // in lane 0
    if constexpr (BROADCAST) {
      winner = cub::ShuffleIndex<W>(winner, 0, logical_warp_mask(rank, W));
    }
    value = winner.v;
    index = winner.i;
  }

  template <bool INDICES>
  __device__ __forceinline__ void Reduce(const T& item, const I* indices, long long valid_items, T& value, I& index) {
    const T items[1] = {item};
    Reduce<INDICES>(items, indices, valid_items, value, index);
  }
};

}  // namespace cuda_coop
