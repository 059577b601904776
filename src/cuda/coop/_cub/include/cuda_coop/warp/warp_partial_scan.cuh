// cuda-coop: warp scans over the first valid_items lanes with their aggregate (docs: operations/scan, "Qualified
// options: valid_items and aggregate_output").
#pragma once

#include <cub/util_ptx.cuh>
#include <cub/warp/warp_scan.cuh>

#include <cuda/std/functional>
#include <cuda/std/type_traits>

#include <cuda_coop/util_group.cuh>

namespace cuda_coop {

// CUB's WarpScan has no partial overloads, and user operators have no identity to pad with. What holds for every
// associative operator instead: a scan result at lane p combines only lanes 0..p, so the full-warp scan is already
// right in every lane below valid_items whatever the other lanes hold (their results are unspecified). Only the
// aggregate must leave them out: it is the inclusive scan (without initial_value) at lane valid_items - 1,
// broadcast with one shuffle. An exclusive scan shifts the inclusive one up a lane, as CUB itself does.
template <typename T, int W, int BX, int BY = 1, int BZ = 1>
class WarpPartialScan {
  using Scan = cub::WarpScan<T, W>;
  typename Scan::TempStorage unused;  // the shuffle-based WarpScan reads none
  unsigned lane;
  unsigned mask;

  template <typename Op>
  __device__ __forceinline__ T Inclusive(const T& in, Op op, int valid_items, T& aggregate) {
    T inclusive;
    if constexpr (::cuda::std::is_same<Op, ::cuda::std::plus<T>>::value) {
      Scan(unused).InclusiveSum(in, inclusive);
    } else {
      Scan(unused).InclusiveScan(in, inclusive, op);
    }
    aggregate = cub::ShuffleIndex<W>(inclusive, valid_items - 1, mask);
    return inclusive;
  }

 public:
  __device__ __forceinline__ WarpPartialScan() {
    const unsigned rank = linear_rank<BX, BY, BZ>();
    lane = rank % W;
    mask = logical_warp_mask(rank, W);
  }

  template <typename Op>
  __device__ __forceinline__ void InclusiveScan(const T& in, T& out, Op op, int valid_items, T& aggregate) {
    out = Inclusive(in, op, valid_items, aggregate);
  }

  // initial_value: a sum without one passes zero.
  template <typename Op>
  __device__ __forceinline__ void ExclusiveScan(const T& in, T& out, const T& initial_value, Op op, int valid_items,
                                                T& aggregate) {
    const T inclusive = Inclusive(in, op, valid_items, aggregate);
    const T before = cub::ShuffleUp<W>(inclusive, 1, 0, mask);
    out = lane == 0 ? initial_value : op(initial_value, before);
  }
};

}  // namespace cuda_coop
