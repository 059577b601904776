// cuda-coop: block-wide reverse scans (SPEC 8.17; docs: operations/scan, "Reverse and segmented scans").
#pragma once

#include <cuda/std/functional>

#include <cuda_coop/block/block_single_item.cuh>
#include <cuda_coop/block/block_suffix_scan.cuh>

namespace cuda_coop {

// A scan from the tile's last position to its first over a blocked tile (thread r holds positions r*K .. r*K+K-1):
// position p's inclusive result is x[p] op (x[p+1] op ... x[P-1]); its exclusive result folds p+1 .. P-1, then
// initial_value, on the right; the last position's is initial_value. The aggregate folds the whole tile without
// initial_value. Each thread folds its own items right to left, and a suffix scan of those folds gives each thread
// the fold of every later thread (BlockSuffixScan: for scalars one barrier and one value per warp in shared memory;
// tuples and other structs rake through warp 0, two barriers).
//
// The methods follow CUB's BlockScan: the *Sum forms add, ExclusiveSum starting from T{}. A single value per
// thread is a tile of one item per thread.
template <typename T, int BX, int BY = 1, int BZ = 1>
class BlockReverseScan : public BlockSingleItemScans<BlockReverseScan<T, BX, BY, BZ>, T> {
  using Items = BlockSingleItemScans<BlockReverseScan, T>;
  using Suffix = BlockSuffixScan<T, BX, BY, BZ>;
  Suffix suffix;

 public:
  using TempStorage = typename Suffix::TempStorage;

  __device__ __forceinline__ explicit BlockReverseScan(TempStorage& temp_storage) : suffix(temp_storage) {}

  template <int K, typename Op>
  __device__ __forceinline__ void InclusiveScan(const T (&in)[K], T (&out)[K], Op op, T& aggregate) {
    T folded[K];
    fold_right(in, folded, op);
    T later;
    suffix.ExclusiveSuffix(folded[0], later, aggregate, op);
    const bool last = suffix.IsLast();  // no later thread
#pragma unroll
    for (int i = 0; i < K; ++i) {
      out[i] = last ? folded[i] : op(folded[i], later);
    }
  }

  template <int K, typename Op>
  __device__ __forceinline__ void ExclusiveScan(const T (&in)[K], T (&out)[K], const T& initial_value, Op op,
                                                T& aggregate) {
    T folded[K];
    fold_right(in, folded, op);
    T later;
    suffix.ExclusiveSuffix(folded[0], later, aggregate, op);
    const T seed = suffix.IsLast() ? initial_value : op(later, initial_value);  // what follows this thread's items
#pragma unroll
    for (int i = 0; i < K; ++i) {
      out[i] = i + 1 < K ? op(folded[i + 1], seed) : seed;
    }
  }

  template <int K, typename Op>
  __device__ __forceinline__ void InclusiveScan(const T (&in)[K], T (&out)[K], Op op) {
    T aggregate;
    InclusiveScan(in, out, op, aggregate);
  }

  template <int K, typename Op>
  __device__ __forceinline__ void ExclusiveScan(const T (&in)[K], T (&out)[K], const T& initial_value, Op op) {
    T aggregate;
    ExclusiveScan(in, out, initial_value, op, aggregate);
  }

  template <int K>
  __device__ __forceinline__ void InclusiveSum(const T (&in)[K], T (&out)[K]) {
    InclusiveScan(in, out, ::cuda::std::plus<T>{});
  }

  template <int K>
  __device__ __forceinline__ void InclusiveSum(const T (&in)[K], T (&out)[K], T& aggregate) {
    InclusiveScan(in, out, ::cuda::std::plus<T>{}, aggregate);
  }

  template <int K>
  __device__ __forceinline__ void ExclusiveSum(const T (&in)[K], T (&out)[K]) {
    ExclusiveScan(in, out, T{}, ::cuda::std::plus<T>{});
  }

  template <int K>
  __device__ __forceinline__ void ExclusiveSum(const T (&in)[K], T (&out)[K], T& aggregate) {
    ExclusiveScan(in, out, T{}, ::cuda::std::plus<T>{}, aggregate);
  }

  // The forms over one value per thread (block_single_item.cuh).
  using Items::InclusiveScan;
  using Items::ExclusiveScan;
  using Items::InclusiveSum;
  using Items::ExclusiveSum;
};

}  // namespace cuda_coop
