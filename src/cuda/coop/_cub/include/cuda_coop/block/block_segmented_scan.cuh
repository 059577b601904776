// cuda-coop: block-wide segmented scans from the tile's first position (SPEC 8.17; docs: operations/scan,
// "Reverse and segmented scans").
#pragma once

#include <cub/block/block_scan.cuh>

#include <cuda_coop/block/block_single_item.cuh>
#include <cuda_coop/util_group.cuh>
#include <cuda_coop/util_segment.cuh>

namespace cuda_coop {

// CUB's BlockScan over (head flag, value) pairs with the segmented operator. A non-zero head flag starts a segment
// at its tile position, and position 0 always starts one; exclusive forms give initial_value where a segment
// begins (on the left of the segment's fold elsewhere). The aggregate is the last segment's fold.
template <typename T, int BX, cub::BlockScanAlgorithm ALGORITHM = cub::BLOCK_SCAN_RAKING, int BY = 1, int BZ = 1>
class BlockSegmentedScan : public BlockSingleItemSegmentedScans<BlockSegmentedScan<T, BX, ALGORITHM, BY, BZ>, T> {
  using Items = BlockSingleItemSegmentedScans<BlockSegmentedScan, T>;
  using Pair = segment_pair<T>;
  using Scan = cub::BlockScan<Pair, BX, ALGORITHM, BY, BZ>;
  Scan scan;
  const unsigned rank;

  template <int K, typename Flag>
  __device__ __forceinline__ void Pairs(const T (&in)[K], const Flag (&heads)[K], Pair (&pairs)[K]) const {
#pragma unroll
    for (int i = 0; i < K; ++i) {
      pairs[i] = {(heads[i] != 0 || (rank == 0 && i == 0)) ? 1 : 0, in[i]};
    }
  }

 public:
  using TempStorage = typename Scan::TempStorage;

  __device__ __forceinline__ explicit BlockSegmentedScan(TempStorage& temp_storage)
      : scan(temp_storage), rank(linear_rank<BX, BY, BZ>()) {}

  template <int K, typename Flag, typename Op>
  __device__ __forceinline__ void InclusiveScan(const T (&in)[K], T (&out)[K], const Flag (&heads)[K], Op op) {
    Pair pin[K], pout[K];
    Pairs(in, heads, pin);
    scan.InclusiveScan(pin, pout, segment_op<Op>{op});
#pragma unroll
    for (int i = 0; i < K; ++i) {
      out[i] = pout[i].v;
    }
  }

  template <int K, typename Flag, typename Op>
  __device__ __forceinline__ void InclusiveScan(const T (&in)[K], T (&out)[K], const Flag (&heads)[K], Op op,
                                                T& aggregate) {
    Pair pin[K], pout[K], total;
    Pairs(in, heads, pin);
    scan.InclusiveScan(pin, pout, segment_op<Op>{op}, total);
#pragma unroll
    for (int i = 0; i < K; ++i) {
      out[i] = pout[i].v;
    }
    aggregate = total.v;
  }

  template <int K, typename Flag, typename Op>
  __device__ __forceinline__ void ExclusiveScan(const T (&in)[K], T (&out)[K], const Flag (&heads)[K],
                                                const T& initial_value, Op op) {
    Pair pin[K], pout[K];
    Pairs(in, heads, pin);
    scan.ExclusiveScan(pin, pout, segment_op<Op>{op});  // position 0 starts a segment: its result is not read
#pragma unroll
    for (int i = 0; i < K; ++i) {
      out[i] = pin[i].f ? initial_value : op(initial_value, pout[i].v);
    }
  }

  template <int K, typename Flag, typename Op>
  __device__ __forceinline__ void ExclusiveScan(const T (&in)[K], T (&out)[K], const Flag (&heads)[K],
                                                const T& initial_value, Op op, T& aggregate) {
    Pair pin[K], pout[K], total;
    Pairs(in, heads, pin);
    scan.ExclusiveScan(pin, pout, segment_op<Op>{op}, total);
#pragma unroll
    for (int i = 0; i < K; ++i) {
      out[i] = pin[i].f ? initial_value : op(initial_value, pout[i].v);
    }
    aggregate = total.v;
  }

  // The forms over one value and one head flag per thread (block_single_item.cuh).
  using Items::InclusiveScan;
  using Items::ExclusiveScan;
};

}  // namespace cuda_coop
