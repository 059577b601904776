// cuda-coop: stable stream compaction of a block's tile, for select and partition (SPEC 8.20; docs:
// operations/select) and the compacted totals of segmented reductions (SPEC 8.21). CUB has no block select.
#pragma once

#include <cub/block/block_exchange.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/util_type.cuh>

#include <cuda_coop/util_group.cuh>

namespace cuda_coop {

// The ranks of a stable compaction of a tile of K items per thread, at blocked positions p = rank * K + i. A
// position below valid_items whose flag is non-zero is kept and goes to the number of kept positions before it; a
// rejected valid position goes after every kept one, to count + p - (kept positions before it); a position from
// valid_items on stays at p. The ranks are therefore a permutation of the tile, kept items first and rejected
// ones next, each in tile order. One BlockScan<int>::ExclusiveSum of the kept bits gives every thread the kept
// positions before each of its items and, as its block aggregate, the count. The caller owns the barrier before
// the scan's storage is used again.
template <int K, int BX, int BY = 1, int BZ = 1>
class BlockSelectRanks {
  static constexpr bool WHOLE_WARPS = (BX * BY * BZ) % 32 == 0;  // warp scans where every warp is complete
  using Scan =
      cub::BlockScan<int, BX, WHOLE_WARPS ? cub::BLOCK_SCAN_WARP_SCANS : cub::BLOCK_SCAN_RAKING, BY, BZ>;
  typename Scan::TempStorage& storage;

 public:
  using TempStorage = typename Scan::TempStorage;

  __device__ __forceinline__ explicit BlockSelectRanks(TempStorage& temp_storage) : storage(temp_storage) {}

  // The caller's ranks; returns the number of kept positions, the same in every thread. valid_items: checked by
  // the caller to be in 0 ... BX*BY*BZ*K (docs: errors, "Device traps").
  template <typename Flag>
  __device__ __forceinline__ int Rank(const Flag (&flags)[K], long long valid_items, int (&ranks)[K]) {
    const int first = (int)linear_rank<BX, BY, BZ>() * K;
    int kept[K];
#pragma unroll
    for (int i = 0; i < K; ++i) {
      kept[i] = (first + i < valid_items && flags[i] != 0) ? 1 : 0;
    }
    int before[K];
    int count;
    Scan(storage).ExclusiveSum(kept, before, count);
#pragma unroll
    for (int i = 0; i < K; ++i) {
      const int p = first + i;
      ranks[i] = kept[i] ? before[i] : (p < valid_items ? count + p - before[i] : p);
    }
    return count;
  }
};

// The kept items of a tile to the front, in blocked order (the compacted totals of segmented reductions): each
// item whose `keep` is non-zero goes to its rank (the number of kept positions before it), one barrier, then each
// thread reads back its blocked positions below the number kept, `count`; the others keep the thread's own items
// (their values are unspecified), and a warp with none of them reads nothing. Unlike BlockSelectExchange only the
// kept items are written. With a power of two above 4 items per thread, one slot in every 32 is left out, so that
// a warp's blocked reads fall on different banks. The caller owns the barrier before the storage is used again.
template <typename T, int K, int BX, int BY = 1, int BZ = 1>
class BlockScatterKept {
  static constexpr int TILE = BX * BY * BZ * K;
  static constexpr bool PAD = K > 4 && (K & (K - 1)) == 0;

  struct _TempStorage {
    T slots[TILE + (PAD ? TILE / 32 : 0)];
  };

  _TempStorage& storage;

  __device__ __forceinline__ static int Slot(int p) { return PAD ? p + p / 32 : p; }

 public:
  struct TempStorage : cub::Uninitialized<_TempStorage> {};

  __device__ __forceinline__ explicit BlockScatterKept(TempStorage& temp_storage) : storage(temp_storage.Alias()) {}

  template <typename Keep>
  __device__ __forceinline__ void ScatterToBlocked(const T (&in)[K], T (&out)[K], const Keep (&keep)[K],
                                                   const int (&ranks)[K], int count) {
#pragma unroll
    for (int i = 0; i < K; ++i) {
      if (keep[i] != 0) {
        storage.slots[Slot(ranks[i])] = in[i];
      }
    }
    __syncthreads();
    // Slot(first + i) = Slot(first) + Slot(i): constant offsets from one address. Padded, K is a power of two, so
    // first = rank * K is a whole number of rows of 32 (K >= 32) or first % 32 + i < 32 (K < 32).
    const int first = (int)linear_rank<BX, BY, BZ>() * K;
    const T* mine = storage.slots + Slot(first);
#pragma unroll
    for (int i = 0; i < K; ++i) {
      out[i] = in[i];
    }
    if (first < count) {
#pragma unroll
      for (int i = 0; i < K; ++i) {
        if (first + i < count) {
          out[i] = mine[Slot(i)];
        }
      }
    }
  }
};

// Each item to its rank, the tile back in blocked order: CUB's BlockExchange::ScatterToBlocked (one barrier
// inside). The caller owns the barrier before its storage is used again.
template <typename T, int K, int BX, int BY = 1, int BZ = 1>
using BlockSelectExchange = cub::BlockExchange<T, BX, K, false, BY, BZ>;

}  // namespace cuda_coop
