// cuda-coop: copies of a thread's items between payloads, arrays and the fields of multi-operand structs.
#pragma once

namespace cuda_coop {

// N items of `in` into `out`: a fresh payload for an algorithm that works in place (CUB's transposing stores, its
// sorts), so that the caller's input stays as it was; also an entry point's by-value payload into its items.
template <typename T, int N>
__device__ __forceinline__ void copy_items(T (&out)[N], const T* in) {
  for (int i = 0; i < N; ++i) out[i] = in[i];
}

// Field `field` of N structs from N values of that field's operand (an operand passed apart into its tuples).
template <typename Tuple, typename F, int N, typename In>
__device__ __forceinline__ void gather_field(Tuple (&out)[N], F Tuple::*field, const In* in) {
  for (int e = 0; e < N; ++e) out[e].*field = in[e];
}

// Field `field` of N structs out to N values of that field's operand (a tuple result handed back apart).
template <typename Out, typename Tuple, int N, typename F>
__device__ __forceinline__ void scatter_field(Out* out, const Tuple (&in)[N], F Tuple::*field) {
  for (int e = 0; e < N; ++e) out[e] = in[e].*field;
}

// `padding` in every blocked slot of member `rank` (slot i holding tile position rank*K + i) at or past
// `valid_items`: a tile's missing items made the key that sorts last, or the tail of a partial tile's output.
// `valid_items` is a tile's count, checked to lie in [0, the tile's items] first, so it fits 32 bits: each slot's
// test is one compare of a constant with one difference (a 64-bit position per slot took two compares and its own
// arithmetic).
template <typename T, int K>
__device__ __forceinline__ void pad_blocked(T (&items)[K], unsigned rank, long long valid_items, T padding) {
  const int kept = (int)valid_items - (int)(rank * K);  // slots of this member before valid_items (may be < 0)
  for (int i = 0; i < K; ++i)
    if (i >= kept) items[i] = padding;
}

// `value` in every striped slot of member `rank` (slot i holding tile position rank + i*threads) at or past
// `valid_items` (checked, as above): the tail of a partial tile's striped output.
template <typename T, int K>
__device__ __forceinline__ void pad_striped(T (&items)[K], unsigned rank, unsigned threads, long long valid_items,
                                            T value) {
  const int room = (int)valid_items - (int)rank;  // slot i lies before valid_items while i * threads < room
  for (int i = 0; i < K; ++i)
    if (i * (int)threads >= room) items[i] = value;
}

}  // namespace cuda_coop
