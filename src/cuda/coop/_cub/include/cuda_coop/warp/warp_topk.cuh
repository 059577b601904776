// cuda-coop: top-k selection on a warp or a logical warp of W lanes (docs: operations/topk, "Warps and logical
// warps").
#pragma once

#include <cub/warp/warp_bitonic_sort.cuh>
#include <cub/warp/warp_merge_sort.cuh>

#include <cuda/std/bit>
#include <cuda/std/functional>
#include <cuda/std/type_traits>

namespace cuda_coop {

// How a key's bits are ordered: as an unsigned integer, a two's-complement integer or an IEEE floating value.
enum class KeyKind { UNSIGNED, SIGNED, FLOATING };

template <int BYTES>
struct unsigned_bits;
template <>
struct unsigned_bits<1> { using type = unsigned char; };
template <>
struct unsigned_bits<2> { using type = unsigned short; };
template <>
struct unsigned_bits<4> { using type = unsigned int; };
template <>
struct unsigned_bits<8> { using type = unsigned long long; };

// The ordered representation of a key (docs: operations/radix_sort, "Radix sort"): an unsigned integer of the key's
// width whose unsigned order is the keys' order. Signed integers have their sign bit inverted; floating keys have
// every bit inverted when the sign is set and the sign bit inverted otherwise, so that NaNs take part in one total
// order (positive NaNs above +inf, negative ones below -inf) and -0.0 sits just below +0.0. The map is a bijection:
// From(To(key)) has exactly the key's bits, NaN payloads and signed zeros included.
template <KeyKind KIND, typename Key>
struct OrderedKey {
  using Bits = typename unsigned_bits<sizeof(Key)>::type;
  static constexpr Bits SIGN = (Bits)((Bits)1 << (sizeof(Bits) * 8 - 1));

  // Floating keys flip by a mask made arithmetically from the sign bit (all ones, or the sign bit alone): written
  // as a choice between two flips, the bitcode route's optimiser turns the sign-bit flip of a float into
  // llvm.fabs, which libNVVM rejects for double.
  static __device__ __forceinline__ Bits To(Key key) {
    const Bits bits = ::cuda::std::bit_cast<Bits>(key);
    if constexpr (KIND == KeyKind::UNSIGNED) {
      return bits;
    } else if constexpr (KIND == KeyKind::SIGNED) {
      return (Bits)(bits ^ SIGN);
    } else {
      return (Bits)(bits ^ ((Bits)(0 - (bits >> (sizeof(Bits) * 8 - 1))) | SIGN));
    }
  }

  static __device__ __forceinline__ Key From(Bits bits) {
    if constexpr (KIND == KeyKind::UNSIGNED) {
      return ::cuda::std::bit_cast<Key>(bits);
    } else if constexpr (KIND == KeyKind::SIGNED) {
      return ::cuda::std::bit_cast<Key>((Bits)(bits ^ SIGN));
    } else {
      return ::cuda::std::bit_cast<Key>((Bits)(bits ^ ((Bits)((bits >> (sizeof(Bits) * 8 - 1)) - 1) | SIGN)));
    }
  }
};

// The k smallest (LARGEST: largest) keys of a group's tile of W*K keys held in blocked order, K per lane: the tile
// is sorted by the keys' ordered representation, ascending (descending), with positions >= valid_items after every
// valid key, and the keys are mapped back. The first min(k, valid_items) blocked positions then hold the selection
// (sorted; the contract leaves their order unspecified) and each value moves with its key; the caller checks k and
// valid_items against the tile.
//
// BITONIC (one key per lane, where striped and blocked order coincide): CUB's WarpBitonicSort, a network of
// shuffles with no shared memory; its valid_items overload leaves the positions past the bound out of every
// exchange, so no pad competes with a valid key. Otherwise CUB's WarpMergeSort in the group's scratch, with the
// extreme of the representation as the pad: CUB bounds its merges by valid_items, so a valid key equal to the pad
// still comes first.
template <typename Key, KeyKind KIND, int K, int W, typename Value, bool LARGEST, bool BITONIC>
class WarpTopK {
  using Ordered = OrderedKey<KIND, Key>;
  using Bits = typename Ordered::Bits;
  using Sort = ::cuda::std::conditional_t<BITONIC, ::cub::detail::WarpBitonicSort<Bits, K, W, Value>,
                                          ::cub::WarpMergeSort<Bits, K, W, Value>>;
  using Compare = ::cuda::std::conditional_t<LARGEST, ::cuda::std::greater<Bits>, ::cuda::std::less<Bits>>;
  static constexpr Bits PAD = LARGEST ? (Bits)0 : (Bits)~(Bits)0;  // orders after every other key

  Sort sort;

  static __device__ __forceinline__ void ToBits(Bits (&bits)[K], const Key (&keys)[K]) {
#pragma unroll
    for (int i = 0; i < K; ++i) bits[i] = Ordered::To(keys[i]);
  }

  static __device__ __forceinline__ void FromBits(Key (&keys)[K], const Bits (&bits)[K]) {
#pragma unroll
    for (int i = 0; i < K; ++i) keys[i] = Ordered::From(bits[i]);
  }

 public:
  using TempStorage = typename Sort::TempStorage;

  __device__ __forceinline__ explicit WarpTopK(TempStorage& storage) : sort(storage) {}

  // Keys in place. PARTIAL: only the first valid_items positions of the tile take part.
  template <bool PARTIAL>
  __device__ __forceinline__ void Select(Key (&keys)[K], int valid_items) {
    Bits bits[K];
    ToBits(bits, keys);
    if constexpr (!PARTIAL) {
      sort.Sort(bits, Compare{});
    } else if constexpr (BITONIC) {
      sort.Sort(bits, Compare{}, valid_items);
    } else {
      sort.Sort(bits, Compare{}, valid_items, PAD);
    }
    FromBits(keys, bits);
  }

  // Keys and their values in place.
  template <bool PARTIAL>
  __device__ __forceinline__ void Select(Key (&keys)[K], Value (&values)[K], int valid_items) {
    Bits bits[K];
    ToBits(bits, keys);
    if constexpr (!PARTIAL) {
      sort.Sort(bits, values, Compare{});
    } else if constexpr (BITONIC) {
      sort.Sort(bits, values, Compare{}, valid_items);
    } else {
      sort.Sort(bits, values, Compare{}, valid_items, PAD);
    }
    FromBits(keys, bits);
  }
};

}  // namespace cuda_coop
