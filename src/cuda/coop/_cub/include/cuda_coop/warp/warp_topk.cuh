// cuda-coop: top-k selection on a warp or a logical warp of W lanes (docs: operations/topk, "Warps and logical
// warps").
#pragma once

#include <cub/util_ptx.cuh>
#include <cub/util_type.cuh>
#include <cub/warp/warp_merge_sort.cuh>

#include <cuda/ptx>
#include <cuda/std/bit>
#include <cuda/std/functional>
#include <cuda/std/type_traits>

#include <cuda_coop/util_group.cuh>

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

// A bitonic sorting network over the lanes of a logical warp of W lanes (a power of two), one key (and one value)
// per lane, by shuffles: no shared memory and no barrier. Only the lanes of the caller's logical warp take part (its
// member mask): sibling logical warps of one physical warp may be on other paths (docs: concepts, "Participation").
// Lanes at or past valid_items order after every valid lane whatever their keys, so no pad competes with a valid key
// (nor carries its value into the selection). Keys that compare equal keep their own values.
template <typename Bits, int W, typename Value>
class WarpLaneBitonicSort {
  static_assert(W >= 1 && W <= 32 && (W & (W - 1)) == 0, "a logical warp of a power-of-two width");
  template <typename T>
  static __device__ __forceinline__ T Partner(const T& mine, int partner, unsigned members) {
    return ::cub::ShuffleIndex<W>(mine, partner, members);
  }

  // The network, over (invalid, key) ordered lexicographically by valid first, then Compare. In each pair, the lane
  // that keeps the element ordered first (the lower lane of an ascending run, the upper of a descending one) takes
  // its partner's when that orders strictly first, the other lane when its own does: both lanes compare the same two
  // elements, so a pair swaps in both lanes or in neither, and equal elements keep their own values.
  // Written for NVVM (the link routes) as much as for clang (issue 42): without PARTIAL no invalid flag exists, as
  // NVVM keeps a shuffled constant (one more shuffle and its selects per stage); and the decision is one comparison
  // XOR keep_first, not a choice between two comparisons, which NVVM turns into branches after which ptxas keeps
  // every stage's predicate in a register and shuffles the values only after all the keys. With PARTIAL the flag is
  // an int, combined without choices either.
  template <bool WITH_VALUES, bool PARTIAL, typename Compare>
  static __device__ __forceinline__ void Network(Bits& key, Value* value, Compare compare, int valid_items) {
    const unsigned physical_lane = ::cuda::ptx::get_sreg_laneid();
    const unsigned members = logical_warp_mask(physical_lane, W);
    const int lane = static_cast<int>(physical_lane % W);
    int invalid = PARTIAL && lane >= valid_items;  // 0 or 1 (an int: shuffled as it is)
#pragma unroll
    for (int size = 2; size <= W; size <<= 1) {
#pragma unroll
      for (int stride = size / 2; stride > 0; stride >>= 1) {
        const int partner = lane ^ stride;
        const bool keep_first = ((lane & size) == 0) == ((lane & stride) == 0);
        const Bits other_key = Partner(key, partner, members);
        bool mine_first = compare(key, other_key);  // strictly
        bool equal = key == other_key;  // the representation is a bijection: equal bits, equal order
        int other_invalid = 0;
        if constexpr (PARTIAL) {
          other_invalid = Partner(invalid, partner, members);
          const bool same = invalid == other_invalid;
          mine_first = (same & mine_first) | (other_invalid > invalid);
          equal = same & equal;
        }
        const bool take = (keep_first != mine_first) && !equal;
        if constexpr (WITH_VALUES) {
          const Value other_value = Partner(*value, partner, members);
          *value = take ? other_value : *value;
        }
        key = take ? other_key : key;
        if constexpr (PARTIAL) invalid = take ? other_invalid : invalid;
      }
    }
  }

 public:
  struct TempStorage {};

  __device__ __forceinline__ explicit WarpLaneBitonicSort(TempStorage&) {}

  template <typename Compare>
  __device__ __forceinline__ void Sort(Bits (&keys)[1], Compare compare) {
    Network<false, false>(keys[0], nullptr, compare, W);
  }

  template <typename Compare>
  __device__ __forceinline__ void Sort(Bits (&keys)[1], Compare compare, int valid_items) {
    Network<false, true>(keys[0], nullptr, compare, valid_items);
  }

  template <typename Compare>
  __device__ __forceinline__ void Sort(Bits (&keys)[1], Value (&values)[1], Compare compare) {
    Network<true, false>(keys[0], &values[0], compare, W);
  }

  template <typename Compare>
  __device__ __forceinline__ void Sort(Bits (&keys)[1], Value (&values)[1], Compare compare, int valid_items) {
    Network<true, true>(keys[0], &values[0], compare, valid_items);
  }
};

// The k smallest (LARGEST: largest) keys of a group's tile of W*K keys held in blocked order, K per lane: the tile
// is sorted by the keys' ordered representation, ascending (descending), with positions >= valid_items after every
// valid key, and the keys are mapped back. The first min(k, valid_items) blocked positions then hold the selection
// (sorted; the contract leaves their order unspecified) and each value moves with its key; the caller checks k and
// valid_items against the tile.
//
// BITONIC (one key per lane, where striped and blocked order coincide): WarpLaneBitonicSort above, a network of
// shuffles with no shared memory, in which the positions past valid_items order after every valid one, so no pad
// competes with a valid key. Otherwise CUB's WarpMergeSort in the group's scratch, with the
// extreme of the representation as the pad: CUB bounds its merges by valid_items, so a valid key equal to the pad
// still comes first.
template <typename Key, KeyKind KIND, int K, int W, typename Value, bool LARGEST, bool BITONIC>
class WarpTopK {
  using Ordered = OrderedKey<KIND, Key>;
  using Bits = typename Ordered::Bits;
  using Sort = ::cuda::std::conditional_t<BITONIC, WarpLaneBitonicSort<Bits, W, Value>,
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
