// cuda-coop: a reduction over groups of whole warps within a block (docs: operations/reduce, "More groups in the
// qualified namespace").
#pragma once

#include <cub/util_ptx.cuh>
#include <cub/warp/warp_reduce.cuh>

#include <cuda/std/functional>

#include <cuda_coop/util_group.cuh>
#include <cuda_coop/util_sync.cuh>

namespace cuda_coop {

// Groups of WARPS consecutive warps, MEMBERS threads in all groups. Each warp reduces with shuffles, its lane 0 puts
// the warp's partial in shared memory, then every member folds its group's partials in warp order. Members
// synchronise on named barrier 1 with exactly the member warps' threads: non-members (group_by(n,
// exhaustive=False)) never arrive, so the block barrier could not be used. A group of one warp needs no storage.
template <typename T, int WARPS, int MEMBERS, int BX, int BY = 1, int BZ = 1>
class BlockWarpsReduce {
  using WarpReduce = cub::WarpReduce<T>;

 public:
  struct TempStorage {
    T partials[MEMBERS / 32];
  };

 private:
  TempStorage* storage;
  unsigned rank;

  template <bool SUM, typename Op>
  __device__ __forceinline__ T Fold(const T& partial, Op op) {
    typename WarpReduce::TempStorage unused;  // 32 lanes: shuffles only
    T warp_total;  // defined in lane 0
    if constexpr (SUM) {
      warp_total = WarpReduce(unused).Sum(partial);
    } else {
      warp_total = WarpReduce(unused).Reduce(partial, op);
    }
    if constexpr (WARPS == 1) {
      return cub::ShuffleIndex<32>(warp_total, 0, 0xffffffffu);
    } else {
      T* partials = storage->partials;
      if (rank % 32 == 0) partials[rank / 32] = warp_total;
      sync_named<1, MEMBERS>();  // the group's partials are in
      const unsigned first = rank / 32 / WARPS * WARPS;
      T result = partials[first];
      for (unsigned i = 1; i < WARPS; ++i) result = op(result, partials[first + i]);
      return result;
    }
  }

 public:
  __device__ __forceinline__ explicit BlockWarpsReduce(TempStorage& temp_storage)
      : storage(&temp_storage), rank(linear_rank<BX, BY, BZ>()) {}

  // A group of one warp: no storage.
  __device__ __forceinline__ BlockWarpsReduce() : storage(nullptr), rank(linear_rank<BX, BY, BZ>()) {
    static_assert(WARPS == 1, "groups of several warps fold their partials in shared memory");
  }

  // The group's reduction of every member's `partial`, defined in every member.
  template <typename Op>
  __device__ __forceinline__ T Reduce(const T& partial, Op op) {
    return Fold<false>(partial, op);
  }

  __device__ __forceinline__ T Sum(const T& partial) { return Fold<true>(partial, ::cuda::std::plus<T>{}); }
};

}  // namespace cuda_coop
