// cuda-coop: block-wide segmented scans from the tile's last position (SPEC 8.17; docs: operations/scan,
// "Reverse and segmented scans").
#pragma once

#include <cuda_coop/block/block_single_item.cuh>
#include <cuda_coop/block/block_suffix_scan.cuh>
#include <cuda_coop/util_segment.cuh>

namespace cuda_coop {

// A non-zero head flag starts a segment at its tile position; each segment is folded from its last position to
// its first: position p's inclusive result is x[p] op (... op x[e]), e the last position of p's segment, and its
// exclusive result folds p+1 .. e then initial_value (initial_value where p = e). The aggregate is the fold of the
// segment holding position 0, the last one scanned.
//
// Each thread folds its own items within their segments, right to left, and a suffix scan (BlockSuffixScan) of
// one (flags, fold) pair per thread, with suffix_segment_op, gives each thread the fold of the later threads' part
// of its last segment, and whether the next thread's first item starts a segment.
template <typename T, int BX, int BY = 1, int BZ = 1>
class BlockSegmentedReverseScan : public BlockSingleItemSegmentedScans<BlockSegmentedReverseScan<T, BX, BY, BZ>, T> {
  using Items = BlockSingleItemSegmentedScans<BlockSegmentedReverseScan, T>;
  using Pair = segment_pair<T>;
  using Suffix = BlockSuffixScan<Pair, BX, BY, BZ>;
  Suffix suffix;

  template <bool EXCLUSIVE, int K, typename Flag, typename Op>
  __device__ __forceinline__ void Scan(const T (&in)[K], T (&out)[K], const Flag (&flags)[K], const T& initial_value,
                                       Op op, T& aggregate) {
    bool heads[K];
#pragma unroll
    for (int i = 0; i < K; ++i) {
      heads[i] = flags[i] != 0;
    }
    T folded[K];  // folded[i]: items i.. of this thread's segment of i, right to left
    folded[K - 1] = in[K - 1];
#pragma unroll
    for (int i = K - 2; i >= 0; --i) {
      folded[i] = heads[i + 1] ? in[i] : op(in[i], folded[i + 1]);
    }
    bool cut = false;  // a segment starts after this thread's first item
#pragma unroll
    for (int i = 1; i < K; ++i) {
      cut |= heads[i];
    }
    const Pair mine = {(heads[0] ? 1 : 0) | (cut ? 2 : 0), folded[0]};
    Pair later, total;
    suffix.ExclusiveSuffix(mine, later, total, suffix_segment_op<Op>{op});
    aggregate = total.v;
    const bool next_head = suffix.IsLast() || (later.f & 1) != 0;  // the next thread's first item starts one
    const T seed = later.v;  // later threads' part of this thread's last segment, when it goes on
    bool open[K];  // item i's segment runs past this thread's last item
    open[K - 1] = !next_head;
#pragma unroll
    for (int i = K - 2; i >= 0; --i) {
      open[i] = open[i + 1] && !heads[i + 1];
    }
    T full[K];
#pragma unroll
    for (int i = 0; i < K; ++i) {
      full[i] = open[i] ? op(folded[i], seed) : folded[i];
    }
#pragma unroll
    for (int i = 0; i < K; ++i) {
      if constexpr (EXCLUSIVE) {
        const bool end = i + 1 < K ? heads[i + 1] : next_head;
        out[i] = end ? initial_value : op(i + 1 < K ? full[i + 1] : seed, initial_value);
      } else {
        out[i] = full[i];
      }
    }
  }

 public:
  using TempStorage = typename Suffix::TempStorage;

  __device__ __forceinline__ explicit BlockSegmentedReverseScan(TempStorage& temp_storage) : suffix(temp_storage) {}

  template <int K, typename Flag, typename Op>
  __device__ __forceinline__ void InclusiveScan(const T (&in)[K], T (&out)[K], const Flag (&heads)[K], Op op,
                                                T& aggregate) {
    Scan<false>(in, out, heads, in[0], op, aggregate);  // initial_value is not read
  }

  template <int K, typename Flag, typename Op>
  __device__ __forceinline__ void InclusiveScan(const T (&in)[K], T (&out)[K], const Flag (&heads)[K], Op op) {
    T aggregate;
    Scan<false>(in, out, heads, in[0], op, aggregate);
  }

  template <int K, typename Flag, typename Op>
  __device__ __forceinline__ void ExclusiveScan(const T (&in)[K], T (&out)[K], const Flag (&heads)[K],
                                                const T& initial_value, Op op, T& aggregate) {
    Scan<true>(in, out, heads, initial_value, op, aggregate);
  }

  template <int K, typename Flag, typename Op>
  __device__ __forceinline__ void ExclusiveScan(const T (&in)[K], T (&out)[K], const Flag (&heads)[K],
                                                const T& initial_value, Op op) {
    T aggregate;
    Scan<true>(in, out, heads, initial_value, op, aggregate);
  }

  // The forms over one value and one head flag per thread (block_single_item.cuh).
  using Items::InclusiveScan;
  using Items::ExclusiveScan;
};

}  // namespace cuda_coop
