// cuda-coop: block-wide reverse scans that run across tiles, a prefix callback carrying the fold of the tiles after
// this one (SPEC 8.24; docs: operations/scan, "Reverse running scans").
#pragma once

#include <cub/util_ptx.cuh>
#include <cub/util_type.cuh>

#include <cuda_coop/block/block_single_item.cuh>
#include <cuda_coop/block/block_suffix_scan.cuh>

namespace cuda_coop {

// BlockReverseScan with a prefix on the right of every position: inclusive x[p] op ... op x[P-1] op prefix;
// exclusive x[p+1] op ... op x[P-1] op prefix, and the prefix at the last position. The callback runs in every
// lane of the block's first warp with the tile's right fold x[0] op (... op x[P-1]), as CUB's prefix callbacks do,
// and lane 0's result reaches every thread: by a shuffle in a block of one warp, else through one more slot in
// shared memory and one more barrier. Tiles scanned from last to first thus make a suffix scan, the callback
// carrying aggregate op prefix (the aggregate on the left) into the earlier tile.
template <typename T, int BX, int BY = 1, int BZ = 1>
class BlockRunningReverseScan : public BlockSingleItemScans<BlockRunningReverseScan<T, BX, BY, BZ>, T> {
  using Items = BlockSingleItemScans<BlockRunningReverseScan, T>;
  using Suffix = BlockSuffixScan<T, BX, BY, BZ>;
  static constexpr unsigned THREADS = BX * BY * BZ;
  static constexpr unsigned WARPS = (THREADS + 31u) / 32u;

  struct _TempStorage {
    typename Suffix::TempStorage suffix;
    T prefix;
  };

  _TempStorage& storage;
  Suffix suffix;

  // What follows this thread's items: the later threads' fold, then the prefix.
  template <int K, typename Op, typename Callback>
  __device__ __forceinline__ T Seed(const T (&folded)[K], Op op, Callback& callback) {
    T later, aggregate;
    suffix.ExclusiveSuffix(folded[0], later, aggregate, op);
    T prefix;
    if constexpr (WARPS == 1u) {
      constexpr unsigned mask = THREADS == 32u ? 0xffffffffu : (1u << THREADS) - 1u;
      prefix = cub::ShuffleIndex<32>(callback(aggregate), 0, mask);
    } else {
      if (suffix.Rank() < 32u) {
        const T mine = callback(aggregate);
        if (suffix.Rank() == 0u) {
          storage.prefix = mine;
        }
      }
      __syncthreads();
      prefix = storage.prefix;
    }
    return suffix.IsLast() ? prefix : op(later, prefix);
  }

 public:
  struct TempStorage : cub::Uninitialized<_TempStorage> {};

  __device__ __forceinline__ explicit BlockRunningReverseScan(TempStorage& temp_storage)
      : storage(temp_storage.Alias()), suffix(storage.suffix) {}

  template <int K, typename Op, typename Callback>
  __device__ __forceinline__ void InclusiveScan(const T (&in)[K], T (&out)[K], Op op, Callback& callback) {
    T folded[K];
    fold_right(in, folded, op);
    const T seed = Seed(folded, op, callback);
#pragma unroll
    for (int i = 0; i < K; ++i) {
      out[i] = op(folded[i], seed);
    }
  }

  template <int K, typename Op, typename Callback>
  __device__ __forceinline__ void ExclusiveScan(const T (&in)[K], T (&out)[K], Op op, Callback& callback) {
    T folded[K];
    fold_right(in, folded, op);
    const T seed = Seed(folded, op, callback);
#pragma unroll
    for (int i = 0; i < K; ++i) {
      out[i] = i + 1 < K ? op(folded[i + 1], seed) : seed;
    }
  }

  // The forms over one value per thread (block_single_item.cuh).
  using Items::InclusiveScan;
  using Items::ExclusiveScan;
};

}  // namespace cuda_coop
