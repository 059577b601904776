// cuda-coop: the (value, index) pair of argmax / argmin and its operator (docs: operations/argreduce).
#pragma once

namespace cuda_coop {

// VALID: the pair also says whether it holds an item (a position below valid_items).
template <typename T, typename I, bool VALID>
struct arg_pair {
  T v;
  I i;
};

template <typename T, typename I>
struct arg_pair<T, I, true> {
  T v;
  I i;
  int ok;
};

// The extreme value wins (LARGEST: the largest); for floats (IS_FLOAT) a NaN is the extreme, the first NaN winning
// (NumPy's rule); with VALID a pair without an item never wins. A tie keeps the first operand: every reduction
// applies the operator in blocked tile order (a member's items in slot order, then CUB's WarpReduce and BlockReduce
// warp reductions, which support non-commutative operators: their first operand always holds the earlier tile
// positions), so a tie goes to the smaller tile position without comparing positions, whatever the indices hold,
// and an item past valid_items is never followed by a valid one.
template <bool LARGEST, bool IS_FLOAT>
struct arg_op {
  // Bitwise & and |, not && and ||: no short circuit, so no branch per comparison (float argmax ran at 0.6x of the
  // CUB C++ twin when the NaN test was an early return).
  template <typename T, typename I, bool VALID>
  static __device__ __forceinline__ bool Wins(const arg_pair<T, I, VALID>& a, const arg_pair<T, I, VALID>& b) {
    bool wins;
    if constexpr (IS_FLOAT) {  // b wins where it is better or a NaN, unless a is a NaN (unordered: false both ways)
      wins = LARGEST ? (!(b.v <= a.v) & (a.v == a.v)) : (!(b.v >= a.v) & (a.v == a.v));
    } else {
      wins = LARGEST ? (b.v > a.v) : (b.v < a.v);
    }
    if constexpr (VALID) {
      return b.ok & wins;
    } else {
      return wins;
    }
  }

  // Field by field: a select of whole structs would make clang address them (local memory).
  template <typename T, typename I, bool VALID>
  __device__ __forceinline__ arg_pair<T, I, VALID> operator()(const arg_pair<T, I, VALID>& a,
                                                              const arg_pair<T, I, VALID>& b) const {
    const bool w = Wins(a, b);
    arg_pair<T, I, VALID> r;
    r.v = w ? b.v : a.v;
    r.i = w ? b.i : a.i;
    if constexpr (VALID) {
      r.ok = w ? b.ok : a.ok;
    }
    return r;
  }
};

// A member's items folded in slot order: item k of member `member` is tile position member * K + k, its index
// indices[k] (INDICES) or that position; with VALID, a position at or past valid_items holds no item.
template <bool LARGEST, bool IS_FLOAT, bool VALID, bool INDICES, typename T, typename I, int K>
__device__ __forceinline__ arg_pair<T, I, VALID> arg_fold(const T (&items)[K], const I* indices, unsigned member,
                                                          long long valid_items) {
  const long long first = (long long)member * K;  // this member's first tile position
  arg_pair<T, I, VALID> best;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    arg_pair<T, I, VALID> mine;
    mine.v = items[k];
    if constexpr (INDICES) {
      mine.i = indices[k];
    } else {
      mine.i = (I)(first + k);
    }
    if constexpr (VALID) {  // valid_items is a tile's count, range-checked: a 32-bit compare with the slot's constant
      mine.ok = k < (int)valid_items - (int)first ? 1 : 0;
    }
    best = k == 0 ? mine : arg_op<LARGEST, IS_FLOAT>{}(best, mine);
  }
  return best;
}

}  // namespace cuda_coop
