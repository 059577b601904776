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
// of its last segment, and whether the next thread's first item starts a segment. The counting form
// (InclusiveScanCounting) carries a count of marked positions in the pair's flag word (suffix_segment_count_op):
// the same suffix scan, and no second one, then ranks them.
template <typename T, int BX, int BY = 1, int BZ = 1>
class BlockSegmentedReverseScan : public BlockSingleItemSegmentedScans<BlockSegmentedReverseScan<T, BX, BY, BZ>, T> {
  using Items = BlockSingleItemSegmentedScans<BlockSegmentedReverseScan, T>;
  using Pair = segment_pair<T>;
  using Suffix = BlockSuffixScan<Pair, BX, BY, BZ>;
  Suffix suffix;

  // COUNT: `marks` comes in as this thread's number of marked positions and goes out as the later threads' number;
  // `total_marks`: the whole tile's. Without COUNT both are left alone.
  template <bool EXCLUSIVE, bool COUNT, int K, typename Flag, typename Op>
  __device__ __forceinline__ void Scan(const T (&in)[K], T (&out)[K], const Flag (&flags)[K], const T& initial_value,
                                       Op op, T& aggregate, int& marks, int& total_marks) {
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
    const int bits = (heads[0] ? 1 : 0) | (cut ? 2 : 0);
    Pair later, total;
    if constexpr (COUNT) {
      suffix.ExclusiveSuffix(Pair{bits | (marks << 2), folded[0]}, later, total, suffix_segment_count_op<Op>{op});
      marks = suffix.IsLast() ? 0 : later.f >> 2;  // the last thread's `later` is unspecified
      total_marks = total.f >> 2;
    } else {
      suffix.ExclusiveSuffix(Pair{bits, folded[0]}, later, total, suffix_segment_op<Op>{op});
    }
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
    int unused = 0;
    Scan<false, false>(in, out, heads, in[0], op, aggregate, unused, unused);  // initial_value is not read
  }

  template <int K, typename Flag, typename Op>
  __device__ __forceinline__ void InclusiveScan(const T (&in)[K], T (&out)[K], const Flag (&heads)[K], Op op) {
    T aggregate;
    InclusiveScan(in, out, heads, op, aggregate);
  }

  template <int K, typename Flag, typename Op>
  __device__ __forceinline__ void ExclusiveScan(const T (&in)[K], T (&out)[K], const Flag (&heads)[K],
                                                const T& initial_value, Op op, T& aggregate) {
    int unused = 0;
    Scan<true, false>(in, out, heads, initial_value, op, aggregate, unused, unused);
  }

  template <int K, typename Flag, typename Op>
  __device__ __forceinline__ void ExclusiveScan(const T (&in)[K], T (&out)[K], const Flag (&heads)[K],
                                                const T& initial_value, Op op) {
    T aggregate;
    ExclusiveScan(in, out, heads, initial_value, op, aggregate);
  }

  // InclusiveScan's results, bit for bit, and from the same suffix scan the ranks of the marked positions: `marks`
  // is 0 or 1 at each of this thread's items, `before[i]` gets the number of marked positions before item i in
  // tile order (the thread's rank * K + i). Returns the number of marked positions in the tile, in every thread.
  // The caller owns the reuse barrier, as for the other forms.
  template <int K, typename Flag, typename Op>
  __device__ __forceinline__ int InclusiveScanCounting(const T (&in)[K], T (&out)[K], const Flag (&heads)[K],
                                                       const int (&marks)[K], Op op, int (&before)[K]) {
    int after = 0;  // this thread's marks, then the later threads'
#pragma unroll
    for (int i = 0; i < K; ++i) {
      after += marks[i];
    }
    int total = 0;
    T aggregate;
    Scan<false, true>(in, out, heads, in[0], op, aggregate, after, total);
#pragma unroll
    for (int i = K - 1; i >= 0; --i) {
      after += marks[i];  // now the marks at positions from item i on
      before[i] = total - after;
    }
    return total;
  }

  // The forms over one value and one head flag per thread (block_single_item.cuh).
  using Items::InclusiveScan;
  using Items::ExclusiveScan;
};

}  // namespace cuda_coop
