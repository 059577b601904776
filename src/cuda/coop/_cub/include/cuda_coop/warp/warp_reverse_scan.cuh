// cuda-coop: warp-wide reverse scans (SPEC 8.17; docs: operations/scan, "Reverse and segmented scans").
#pragma once

#include <cub/util_ptx.cuh>
#include <cub/warp/warp_scan.cuh>

#include <cuda_coop/util_group.cuh>
#include <cuda_coop/util_operators.cuh>

namespace cuda_coop {

// A scan of one value per lane from the logical warp's last lane to its first: lane p's inclusive result is
// x[p] op (x[p+1] op ... x[W-1]), its exclusive result folds p+1 .. W-1 then initial_value; the aggregate folds
// every lane without initial_value. CUB's WarpScan runs forward with the operands swapped over the lanes mirrored
// (lane p <-> W-1-p) by one shuffle, and a second shuffle brings each result back. Shuffles only: no shared memory.
template <typename T, int W, int BX, int BY = 1, int BZ = 1>
class WarpReverseScan {
  using Scan = cub::WarpScan<T, W>;
  typename Scan::TempStorage unused;  // the shuffle-based WarpScan reads none
  unsigned mask;
  unsigned mirror;

  __device__ __forceinline__ T Mirror(const T& value) const {
    return cub::ShuffleIndex<W>(value, mirror, mask);
  }

 public:
  __device__ __forceinline__ WarpReverseScan() {
    const unsigned rank = linear_rank<BX, BY, BZ>();
    mask = logical_warp_mask(rank, W);
    mirror = W - 1u - rank % W;
  }

  template <typename... Aggregate>
  __device__ __forceinline__ void InclusiveSum(const T& in, T& out, Aggregate&... aggregate) {
    T r;
    Scan(unused).InclusiveSum(Mirror(in), r, aggregate...);
    out = Mirror(r);
  }

  template <typename... Aggregate>
  __device__ __forceinline__ void ExclusiveSum(const T& in, T& out, Aggregate&... aggregate) {
    T r;
    Scan(unused).ExclusiveSum(Mirror(in), r, aggregate...);
    out = Mirror(r);
  }

  template <typename Op, typename... Aggregate>
  __device__ __forceinline__ void InclusiveScan(const T& in, T& out, Op op, Aggregate&... aggregate) {
    T r;
    Scan(unused).InclusiveScan(Mirror(in), r, swap_operands(op), aggregate...);
    out = Mirror(r);
  }

  template <typename Op, typename... Aggregate>
  __device__ __forceinline__ void ExclusiveScan(const T& in, T& out, const T& initial_value, Op op,
                                                Aggregate&... aggregate) {
    T r;
    Scan(unused).ExclusiveScan(Mirror(in), r, initial_value, swap_operands(op), aggregate...);
    out = Mirror(r);
  }
};

}  // namespace cuda_coop
