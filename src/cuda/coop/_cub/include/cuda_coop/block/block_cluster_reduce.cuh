// cuda-coop: a reduction over a thread block cluster (sm_90; docs: operations/reduce, "More groups in the qualified
// namespace").
#pragma once

#include <cub/block/block_reduce.cuh>

#include <cuda/std/functional>

#include <cuda_coop/util_cluster.cuh>
#include <cuda_coop/util_group.cuh>
#include <cuda_coop/util_sync.cuh>

namespace cuda_coop {

// Each block reduces (CUB's BlockReduce, warp reductions), thread 0 leaves the block's partial in its shared
// memory, and after a cluster barrier the readers fold every block's partial through distributed shared memory, in
// block-rank order: every member if BROADCAST, else thread 0 of block 0, the only one whose result is defined then.
// The closing cluster barrier keeps each block's shared memory alive until every read is done: it is required even
// after the last call, so it is not a removable reuse barrier. WORD: the width of the words a partial is read in.
template <typename T, bool BROADCAST, int WORD, int BX, int BY = 1, int BZ = 1>
class BlockClusterReduce {
  using BlockReduce = cub::BlockReduce<T, BX, cub::BLOCK_REDUCE_WARP_REDUCTIONS, BY, BZ>;

 public:
  struct TempStorage {
    typename BlockReduce::TempStorage reduce;
    T partial;
  };

 private:
  TempStorage& storage;

  template <typename Op>
  __device__ __forceinline__ T Fold(const T& block_total, Op op) {
    const unsigned rank = linear_rank<BX, BY, BZ>();
    if (rank == 0) storage.partial = block_total;
    const unsigned cta = cluster_block_rank();
    const unsigned ncta = cluster_block_count();
    sync_cluster_release_acquire();  // every block's partial is in
    T result = block_total;
    if (BROADCAST || (cta == 0 && rank == 0)) {
      const unsigned local = (unsigned)__cvta_generic_to_shared(&storage.partial);
      for (unsigned c = 0; c < ncta; ++c) {
        const T v = load_cluster_shared<T, WORD>(map_cluster_shared(local, c));
        result = c == 0 ? v : op(result, v);
      }
    }
    sync_cluster_release_acquire();  // no block leaves or reuses its partial while others read it
    return result;
  }

 public:
  __device__ __forceinline__ explicit BlockClusterReduce(TempStorage& temp_storage) : storage(temp_storage) {}

  // The cluster's reduction of every member's items (or `input`, one value), defined in every member if BROADCAST,
  // else in thread 0 of block 0.
  template <typename Input, typename Op>
  __device__ __forceinline__ T Reduce(Input& input, Op op) {
    return Fold(BlockReduce(storage.reduce).Reduce(input, op), op);  // the block's total is defined in thread 0
  }

  template <typename Input>
  __device__ __forceinline__ T Sum(Input& input) {
    return Fold(BlockReduce(storage.reduce).Sum(input), ::cuda::std::plus<T>{});
  }
};

}  // namespace cuda_coop
