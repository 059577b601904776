// cuda-coop: (flag, value) pairs and the operators of segmented scans (SPEC 8.17).
#pragma once

namespace cuda_coop {

// A value and its segment flags; what `f` means is the operator's.
template <typename T>
struct segment_pair {
  int f;
  T v;
};

// Forward segmented scans: `f` is a head flag; a flagged right operand starts a new segment, so the left one's
// value is dropped.
template <typename Op>
struct segment_op {
  Op op;
  template <typename T>
  __device__ __forceinline__ segment_pair<T> operator()(const segment_pair<T>& a, const segment_pair<T>& b) const {
    return {a.f | b.f, b.f ? b.v : op(a.v, b.v)};
  }
};

// Suffix (right-to-left) segmented folds, `a` before `b` in tile order. Bit 0 of `f`: a segment starts at the
// span's first position; bit 1: one starts after it, so the span's value already stopped at its first segment's
// end. `a`'s value takes in `b`'s unless `a` stopped or `b` starts a segment.
template <typename Op>
struct suffix_segment_op {
  Op op;
  template <typename T>
  __device__ __forceinline__ segment_pair<T> operator()(const segment_pair<T>& a, const segment_pair<T>& b) const {
    const bool stop = (a.f & 2) != 0 || (b.f & 1) != 0;
    return {a.f | (b.f != 0 ? 2 : 0), stop ? a.v : op(a.v, b.v)};
  }
};

// suffix_segment_op over spans that also count marked positions: bits 0 and 1 of `f` as there, the bits from 2 on
// the span's number of marked positions, which add up. The values fold exactly as suffix_segment_op folds them, so
// a scan that counts gives the same results, bit for bit, as one that does not.
template <typename Op>
struct suffix_segment_count_op {
  Op op;
  template <typename T>
  __device__ __forceinline__ segment_pair<T> operator()(const segment_pair<T>& a, const segment_pair<T>& b) const {
    const bool stop = (a.f & 2) != 0 || (b.f & 1) != 0;
    return {(a.f + (b.f & ~3)) | ((b.f & 3) != 0 ? 2 : 0), stop ? a.v : op(a.v, b.v)};
  }
};

// A segmented reduction's segment starts for its reverse scan (SPEC 8.21): a thread's K items at tile positions
// first ... first+K-1 are cut where their head flag is non-zero, and at every position from valid_items on, which
// is then a segment of its own and cannot join the last valid segment. Tile positions and valid_items fit an int
// (at most 1024 threads of 4096 items).
template <typename Flag, int K>
__device__ __forceinline__ void isolated_starts(const Flag (&heads)[K], int first, int valid_items, int (&cut)[K]) {
#pragma unroll
  for (int i = 0; i < K; ++i) {
    cut[i] = (heads[i] != 0 || first + i >= valid_items) ? 1 : 0;
  }
}

// The same over a whole tile (no valid_items): the flagged positions.
template <typename Flag, int K>
__device__ __forceinline__ void isolated_starts(const Flag (&heads)[K], int (&cut)[K]) {
#pragma unroll
  for (int i = 0; i < K; ++i) {
    cut[i] = heads[i] != 0 ? 1 : 0;
  }
}

// The positions that start a segment: position 0 of the tile always, then the flagged ones (over a whole tile, or
// for a compaction that applies valid_items itself).
template <typename Flag, int K>
__device__ __forceinline__ void segment_starts(const Flag (&heads)[K], int first, int (&starts)[K]) {
#pragma unroll
  for (int i = 0; i < K; ++i) {
    starts[i] = (first + i == 0 || heads[i] != 0) ? 1 : 0;
  }
}

// The positions below valid_items that start a segment (the totals a compaction keeps).
template <typename Flag, int K>
__device__ __forceinline__ void segment_starts(const Flag (&heads)[K], int first, int valid_items, int (&starts)[K]) {
#pragma unroll
  for (int i = 0; i < K; ++i) {
    starts[i] = (first + i < valid_items && (first + i == 0 || heads[i] != 0)) ? 1 : 0;
  }
}

}  // namespace cuda_coop
