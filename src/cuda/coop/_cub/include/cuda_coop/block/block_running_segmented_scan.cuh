// cuda-coop: block-wide segmented scans that run across tiles, a prefix callback carrying the segment left open at
// the end of one call into the next (SPEC 8.24; docs: operations/scan, "Running segmented scans").
#pragma once

#include <cub/block/block_scan.cuh>
#include <cuda/std/functional>

#include <cuda_coop/block/block_single_item.cuh>
#include <cuda_coop/util_segment.cuh>

namespace cuda_coop {

// CUB's block prefix callback over (flag, value) pairs, around the user's callback: it receives the tile's pair
// aggregate as (aggregate, has_head) and returns the running value of the segment open before the tile. The pair
// (0, prefix) it gives CUB combines with the positions before the tile's first flag only: the segmented operator
// drops a left operand wherever a flag starts a segment.
template <typename T, typename Callback>
struct segment_prefix_callback {
  Callback& callback;
  __device__ __forceinline__ segment_pair<T> operator()(const segment_pair<T>& aggregate) {
    return {0, callback(aggregate.v, aggregate.f)};
  }
};

// CUB's BlockScan of (head flag, value) pairs with the segmented operator and the callback above. Unlike
// BlockSegmentedScan, position 0 starts a segment only where it is flagged: the positions before the first flag
// continue the segment of the previous call, seeded by the prefix (inclusive: prefix op x[0] op ... op x[p];
// exclusive: the prefix at position 0). After the first flag each segment is scanned on its own, exclusive forms
// giving initial_value (sums without one: zero) at its first position.
//
// The callback's aggregate is the carry of the tile's last segment: the fold from the last flagged position (with
// initial_value on its left for an exclusive scan that has one), or of the whole tile when none is flagged; its
// has_head is 1 when any position is flagged. Every thread passes its callback; CUB calls those of the first warp.
template <typename T, int BX, cub::BlockScanAlgorithm ALGORITHM = cub::BLOCK_SCAN_RAKING, int BY = 1, int BZ = 1>
class BlockRunningSegmentedScan
    : public BlockSingleItemSegmentedScans<BlockRunningSegmentedScan<T, BX, ALGORITHM, BY, BZ>, T> {
  using Items = BlockSingleItemSegmentedScans<BlockRunningSegmentedScan, T>;
  using Pair = segment_pair<T>;
  using Scan = cub::BlockScan<Pair, BX, ALGORITHM, BY, BZ>;
  Scan scan;

  template <int K, typename Flag>
  static __device__ __forceinline__ void Pairs(const T (&in)[K], const Flag (&heads)[K], Pair (&pairs)[K]) {
#pragma unroll
    for (int i = 0; i < K; ++i) {
      pairs[i] = {heads[i] != 0 ? 1 : 0, in[i]};
    }
  }

  // The exclusive scan of pairs; a flagged position gets `start`.
  template <int K, typename Op, typename Callback>
  __device__ __forceinline__ void Exclusive(Pair (&pin)[K], T (&out)[K], const T& start, Op op, Callback& callback) {
    Pair pout[K];
    segment_prefix_callback<T, Callback> pairs_callback{callback};
    scan.ExclusiveScan(pin, pout, segment_op<Op>{op}, pairs_callback);
#pragma unroll
    for (int i = 0; i < K; ++i) {
      out[i] = pin[i].f ? start : pout[i].v;
    }
  }

 public:
  using TempStorage = typename Scan::TempStorage;

  __device__ __forceinline__ explicit BlockRunningSegmentedScan(TempStorage& temp_storage) : scan(temp_storage) {}

  template <int K, typename Flag, typename Op, typename Callback>
  __device__ __forceinline__ void InclusiveScan(const T (&in)[K], T (&out)[K], const Flag (&heads)[K], Op op,
                                                Callback& callback) {
    Pair pin[K], pout[K];
    Pairs(in, heads, pin);
    segment_prefix_callback<T, Callback> pairs_callback{callback};
    scan.InclusiveScan(pin, pout, segment_op<Op>{op}, pairs_callback);
#pragma unroll
    for (int i = 0; i < K; ++i) {
      out[i] = pout[i].v;
    }
  }

  // A flagged position's value is seeded with initial_value op x[s] before the scan, so the segment's later
  // positions and the pair aggregate carry initial_value on the left; the position itself gets initial_value.
  template <int K, typename Flag, typename Op, typename Callback>
  __device__ __forceinline__ void ExclusiveScan(const T (&in)[K], T (&out)[K], const Flag (&heads)[K],
                                                const T& initial_value, Op op, Callback& callback) {
    Pair pin[K];
#pragma unroll
    for (int i = 0; i < K; ++i) {
      const bool head = heads[i] != 0;
      pin[i] = {head ? 1 : 0, head ? op(initial_value, in[i]) : in[i]};
    }
    Exclusive(pin, out, initial_value, op, callback);
  }

  // Zero at each flagged position, with nothing seeded (zero added to -0.0 would give +0.0).
  template <int K, typename Flag, typename Callback>
  __device__ __forceinline__ void ExclusiveSum(const T (&in)[K], T (&out)[K], const Flag (&heads)[K],
                                               Callback& callback) {
    Pair pin[K];
    Pairs(in, heads, pin);
    Exclusive(pin, out, T{}, ::cuda::std::plus<T>{}, callback);
  }

  // The forms over one value and one head flag per thread (block_single_item.cuh).
  using Items::InclusiveScan;
  using Items::ExclusiveScan;
  using Items::ExclusiveSum;
};

}  // namespace cuda_coop
