// cuda-coop: warp-wide segmented scans, forward and reverse (SPEC 8.17; docs: operations/scan, "Reverse and
// segmented scans").
#pragma once

#include <cub/util_ptx.cuh>
#include <cub/warp/warp_scan.cuh>

#include <cuda_coop/util_group.cuh>
#include <cuda_coop/util_operators.cuh>
#include <cuda_coop/util_segment.cuh>

namespace cuda_coop {

namespace detail {

// CUB's warp scan of pairs, with its aggregate overload only where the caller asked for the aggregate's value.
template <bool INCLUSIVE, typename Scan, typename Pair, typename ScanOp, typename... Aggregate>
__device__ __forceinline__ void scan_pairs(Scan scan, const Pair& in, Pair& out, ScanOp op, Aggregate&... aggregate) {
  if constexpr (sizeof...(Aggregate) == 0) {
    if constexpr (INCLUSIVE) {
      scan.InclusiveScan(in, out, op);
    } else {
      scan.ExclusiveScan(in, out, op);
    }
  } else {
    Pair total;
    if constexpr (INCLUSIVE) {
      scan.InclusiveScan(in, out, op, total);
    } else {
      scan.ExclusiveScan(in, out, op, total);
    }
    ((aggregate = total.v), ...);
  }
}

}  // namespace detail

// One value and one head flag per lane of a logical warp of W lanes: a non-zero flag starts a segment at its lane
// (lane 0 always starts one). Forward: CUB's WarpScan over (head, value) pairs with the segmented operator;
// exclusive forms give initial_value where a segment begins, on the left of the fold elsewhere. The aggregate is
// the last segment's fold.
template <typename T, int W, int BX, int BY = 1, int BZ = 1>
class WarpSegmentedScan {
  using Pair = segment_pair<T>;
  using Scan = cub::WarpScan<Pair, W>;
  typename Scan::TempStorage unused;  // the shuffle-based WarpScan reads none
  unsigned lane;

 public:
  __device__ __forceinline__ WarpSegmentedScan() : lane(linear_rank<BX, BY, BZ>() % W) {}

  template <typename Flag, typename Op, typename... Aggregate>
  __device__ __forceinline__ void InclusiveScan(const T& in, T& out, const Flag& head, Op op,
                                                Aggregate&... aggregate) {
    const Pair mine = {(head != 0 || lane == 0) ? 1 : 0, in};
    Pair r;
    detail::scan_pairs<true>(Scan(unused), mine, r, segment_op<Op>{op}, aggregate...);
    out = r.v;
  }

  template <typename Flag, typename Op, typename... Aggregate>
  __device__ __forceinline__ void ExclusiveScan(const T& in, T& out, const Flag& head, const T& initial_value, Op op,
                                                Aggregate&... aggregate) {
    const Pair mine = {(head != 0 || lane == 0) ? 1 : 0, in};
    Pair r;
    detail::scan_pairs<false>(Scan(unused), mine, r, segment_op<Op>{op}, aggregate...);
    out = mine.f ? initial_value : op(initial_value, r.v);
  }
};

// Reverse: each segment from its last lane to its first (lane p's inclusive result is x[p] op (... op x[e]), e the
// segment's last lane; exclusive forms give initial_value at e, on the right of the fold elsewhere). The aggregate
// is the fold of lane 0's segment, the last one scanned. Lanes are mirrored (lane p <-> W-1-p) around CUB's forward
// WarpScan with the operands swapped, segment ends becoming the mirrored order's starts.
template <typename T, int W, int BX, int BY = 1, int BZ = 1>
class WarpSegmentedReverseScan {
  using Pair = segment_pair<T>;
  using Scan = cub::WarpScan<Pair, W>;
  typename Scan::TempStorage unused;  // the shuffle-based WarpScan reads none
  unsigned lane;
  unsigned mask;

  template <typename Flag>
  __device__ __forceinline__ int Tail(const Flag& head) const {  // this lane ends its segment
    const int next_head = cub::ShuffleDown<W>(head != 0 ? 1 : 0, 1, W - 1, mask);
    return (lane == W - 1u || next_head) ? 1 : 0;
  }

  __device__ __forceinline__ Pair Mirror(const Pair& value) const {
    return cub::ShuffleIndex<W>(value, W - 1u - lane, mask);
  }

 public:
  __device__ __forceinline__ WarpSegmentedReverseScan() {
    const unsigned rank = linear_rank<BX, BY, BZ>();
    lane = rank % W;
    mask = logical_warp_mask(rank, W);
  }

  template <typename Flag, typename Op, typename... Aggregate>
  __device__ __forceinline__ void InclusiveScan(const T& in, T& out, const Flag& head, Op op,
                                                Aggregate&... aggregate) {
    const int tail = Tail(head);
    Pair r;
    detail::scan_pairs<true>(Scan(unused), Mirror(Pair{tail, in}), r,
                             segment_op<swapped_op<Op>>{swap_operands(op)}, aggregate...);
    out = Mirror(r).v;
  }

  template <typename Flag, typename Op, typename... Aggregate>
  __device__ __forceinline__ void ExclusiveScan(const T& in, T& out, const Flag& head, const T& initial_value, Op op,
                                                Aggregate&... aggregate) {
    const int tail = Tail(head);
    Pair r;
    detail::scan_pairs<false>(Scan(unused), Mirror(Pair{tail, in}), r,
                              segment_op<swapped_op<Op>>{swap_operands(op)}, aggregate...);
    const Pair back = Mirror(r);  // every lane shuffles: a shuffle under the branch below would read lanes that skip it
    out = tail ? initial_value : op(back.v, initial_value);
  }
};

}  // namespace cuda_coop
