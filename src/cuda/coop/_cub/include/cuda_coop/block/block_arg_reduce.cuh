// cuda-coop: block-wide argmax / argmin (docs: operations/argreduce).
#pragma once

#include <cub/block/block_reduce.cuh>

#include <cuda/std/type_traits>

#include <cuda_coop/util_arg.cuh>
#include <cuda_coop/util_group.cuh>

namespace cuda_coop {

// Each thread folds its items (arg_fold), then CUB's BlockReduce (warp reductions) folds the threads' pairs with
// arg_op; the winner is defined in thread 0, or with BROADCAST in every thread (through shared memory: one barrier).
template <typename T, typename I, bool LARGEST, bool IS_FLOAT, bool VALID, bool BROADCAST, int BX, int BY = 1,
          int BZ = 1>
class BlockArgReduce {
  using Pair = arg_pair<T, I, VALID>;
  using CubReduce = cub::BlockReduce<Pair, BX, cub::BLOCK_REDUCE_WARP_REDUCTIONS, BY, BZ>;

  struct Reduced {
    typename CubReduce::TempStorage reduce;
  };
  struct Broadcast {
    typename CubReduce::TempStorage reduce;
    Pair result;
  };

 public:
  using TempStorage = typename ::cuda::std::conditional<BROADCAST, Broadcast, Reduced>::type;

 private:
  TempStorage& storage;

 public:
  __device__ __forceinline__ explicit BlockArgReduce(TempStorage& temp_storage) : storage(temp_storage) {}

  // indices: K per thread when INDICES, else unused (the tile positions are the indices).
  template <bool INDICES, int K>
  __device__ __forceinline__ void Reduce(const T (&items)[K], const I* indices, long long valid_items, T& value,
                                         I& index) {
    const unsigned rank = linear_rank<BX, BY, BZ>();
    const Pair best = arg_fold<LARGEST, IS_FLOAT, VALID, INDICES>(items, indices, rank, valid_items);
    Pair winner = CubReduce(storage.reduce).Reduce(best, arg_op<LARGEST, IS_FLOAT>{});  // in thread 0
    if constexpr (BROADCAST) {
      if (rank == 0) {
        storage.result = winner;
      }
      __syncthreads();
      winner = storage.result;
    }
    value = winner.v;
    index = winner.i;
  }

  // One value (and index) per thread.
  template <bool INDICES>
  __device__ __forceinline__ void Reduce(const T& item, const I* indices, long long valid_items, T& value, I& index) {
    const T items[1] = {item};
    Reduce<INDICES>(items, indices, valid_items, value, index);
  }
};

}  // namespace cuda_coop
