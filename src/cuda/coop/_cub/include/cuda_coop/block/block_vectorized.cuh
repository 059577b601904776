// cuda-coop: the blocked vector loads and stores of a block's algorithm="vectorize" (docs: operations/load_store,
// "Algorithms").
#pragma once

#include <cuda_coop/util_group.cuh>

namespace cuda_coop {

// The vector a thread moves its K items of T in: the widest of 16, 8 and 4 bytes that holds two or more whole items
// and a whole number of which make the K items. CUB's own vectors hold 4 items at most (8 bytes of a 2-byte type,
// where these take 16) and its store vectorizes only when 4 divides K: `used` is true where these vectors are wider
// than CUB's. Items of 4 bytes or more with K a multiple of 4 keep CUB's BlockLoad/BlockStore, whose vectors are as
// wide and whose unrolled fallback, issued predicated off, measured faster on the aligned path than the rolled loop
// below (a 256x16 int32 copy: 0.94x of CUB C++ on the H200), except under clang, which splits CUB's 16-byte vector
// store (a copy of a vector struct) into 8- and 4-byte stores. `used` is also false where no vector fits (K odd,
// say): then CUB's move the items one by one.
template <typename T, int K>
struct blocked_vectors {
  static constexpr int item = (int)sizeof(T);
  static constexpr bool primitive = item == 1 || item == 2 || item == 4 || item == 8;
  static constexpr bool fits16 = primitive && 16 / item > 1 && K % (16 / item) == 0;
  static constexpr bool fits8 = primitive && 8 / item > 1 && K % (8 / item) == 0;
  static constexpr bool fits4 = primitive && 4 / item > 1 && K % (4 / item) == 0;
  static constexpr int bytes = fits16 ? 16 : fits8 ? 8 : fits4 ? 4 : 0;
#if defined(CUDA_COOP_CLANG)
  static constexpr bool cub_as_wide = false;
#else
  static constexpr bool cub_as_wide = item >= 4 && K % 4 == 0;
#endif
  static constexpr bool used = bytes != 0 && !cub_as_wide;
  static constexpr int per_vector = used ? bytes / item : 1;  // items
  static constexpr int count = K / per_vector;                // vectors
};

#if defined(CUDA_COOP_CLANG)
// clang (the bitcode route): IR vectors, one vector load or store each. clang lowers a copy of a vector struct to
// scalar accesses, which LLVM may then sink apart (a 16-byte store became three).
template <int Bytes>
struct vector_words {
  typedef unsigned type __attribute__((ext_vector_type(Bytes / 4)));
};
#else
template <int Bytes>
struct vector_words;
template <>
struct vector_words<16> {
  typedef uint4 type;
};
template <>
struct vector_words<8> {
  typedef uint2 type;
};
#endif
template <>
struct vector_words<4> {
  typedef unsigned type;
};

template <int Bytes>
__device__ __forceinline__ void copy_bytes(void* to, const void* from) {
#if defined(CUDA_COOP_CLANG)
  __builtin_memcpy(to, from, Bytes);
#else
  memcpy(to, from, Bytes);
#endif
}

// The unsigned integer of an item narrower than a word.
template <int Bytes>
struct narrow_bits;
template <>
struct narrow_bits<1> {
  typedef unsigned char type;
};
template <>
struct narrow_bits<2> {
  typedef unsigned short type;
};

// The P items of T in a vector of Bytes bytes. An item narrower than 4 bytes is its 32-bit word shifted right and
// truncated, which the compiler can fold into what the caller does with it next (a bfloat16 widened to float32:
// one shift or mask of the word, not an extraction and a shift).
template <int P, int Bytes, typename T, typename Words>
__device__ __forceinline__ void unpack_words(T* items, const Words& words) {
  if constexpr (sizeof(T) < 4) {
    unsigned word[Bytes / 4];
    copy_bytes<Bytes>(word, &words);
    constexpr int per_word = 4 / (int)sizeof(T);
#pragma unroll
    for (int i = 0; i < P; ++i) {
      const typename narrow_bits<sizeof(T)>::type bits =
          (typename narrow_bits<sizeof(T)>::type)(word[i / per_word] >> (8 * (int)sizeof(T) * (i % per_word)));
      copy_bytes<sizeof(T)>(&items[i], &bits);
    }
  } else {
    copy_bytes<Bytes>(items, &words);
  }
}

// A vector's words from P narrow items at `from`, one by one, as 32-bit shifts and ors behind an empty asm
// statement: packed from 16-bit values, or seen through by the compiler, they lead it to choose between the items,
// not the words, where this path meets the aligned one, which costs the aligned path an extraction of each item.
template <int P, int Bytes, typename T, typename Words>
__device__ __forceinline__ void pack_words(Words& words, const T* from) {
  constexpr int per_word = 4 / (int)sizeof(T);
  unsigned word[Bytes / 4];
#pragma unroll
  for (int w = 0; w < Bytes / 4; ++w) word[w] = 0;
#pragma unroll
  for (int i = 0; i < P; ++i) {
    const unsigned bits = reinterpret_cast<const typename narrow_bits<sizeof(T)>::type*>(from)[i];
    word[i / per_word] |= bits << (8 * (int)sizeof(T) * (i % per_word));
  }
#pragma unroll
  for (int w = 0; w < Bytes / 4; ++w) asm("" : "+r"(word[w]));
  copy_bytes<Bytes>(&words, word);
}

// The caller's K items from tile[member * K ...]: vector loads when `tile` is aligned to a vector, else item by item.
// Either way the items pass through the vector words, so the caller's later reads of its items (a widening of 2-byte
// items, say) see one value per word, not a choice between a word's half and an item loaded alone.
template <typename T, int K>
__device__ __forceinline__ void load_blocked_vectors(unsigned member, const T* tile, T (&items)[K]) {
  using V = blocked_vectors<T, K>;
  using Words = typename vector_words<V::bytes>::type;
  Words words[V::count];
  if (reinterpret_cast<unsigned long long>(tile) % V::bytes == 0) {
    const Words* in = reinterpret_cast<const Words*>(tile) + member * V::count;
#pragma unroll
    for (int v = 0; v < V::count; ++v) words[v] = in[v];
  } else {
    // A rolled loop, a vector's items a trip, the words shifting down one a trip: unrolled, ptxas might issue these
    // loads on the aligned path too, predicated off.
#pragma unroll
    for (int v = 0; v < V::count; ++v) words[v] = Words{};
#pragma unroll 1
    for (int v = 0; v < V::count; ++v) {
#pragma unroll
      for (int w = 0; w + 1 < V::count; ++w) words[w] = words[w + 1];
      const T* from = tile + member * K + v * V::per_vector;
      if constexpr (sizeof(T) < 4) {
        pack_words<V::per_vector, V::bytes>(words[V::count - 1], from);
      } else {
        T part[V::per_vector];
#pragma unroll
        for (int j = 0; j < V::per_vector; ++j) part[j] = from[j];
        copy_bytes<V::bytes>(&words[V::count - 1], part);
      }
    }
  }
#pragma unroll
  for (int v = 0; v < V::count; ++v) unpack_words<V::per_vector, V::bytes>(&items[v * V::per_vector], words[v]);
}

template <typename T, int K>
__device__ __forceinline__ void store_blocked_vectors(unsigned member, T* tile, const T (&items)[K]) {
  using V = blocked_vectors<T, K>;
  using Words = typename vector_words<V::bytes>::type;
  if (reinterpret_cast<unsigned long long>(tile) % V::bytes == 0) {
    Words* out = reinterpret_cast<Words*>(tile) + member * V::count;
#pragma unroll
    for (int v = 0; v < V::count; ++v) {
      Words words;
      copy_bytes<V::bytes>(&words, &items[v * V::per_vector]);
      out[v] = words;
    }
  } else {
#pragma unroll
    for (int i = 0; i < K; ++i) tile[member * K + i] = items[i];
  }
}

// `load`'s blocked vectorised Load of `items` from `tile`: the vectors above where the item type and K allow one,
// else the cub::BlockLoad with BLOCK_LOAD_VECTORIZE that `load` was given.
template <int BX, int BY, int BZ, typename Load, typename T, int K>
__device__ __forceinline__ void block_load_vectorized(Load& load, const T* tile, T (&items)[K]) {
  if constexpr (blocked_vectors<T, K>::used) {
    load_blocked_vectors(linear_rank<BX, BY, BZ>(), tile, items);
  } else {
    load.Load(tile, items);
  }
}

// `store`'s blocked vectorised Store of `items` at `tile`, as the load above.
template <int BX, int BY, int BZ, typename Store, typename T, int K>
__device__ __forceinline__ void block_store_vectorized(Store& store, T* tile, T (&items)[K]) {
  if constexpr (blocked_vectors<T, K>::used) {
    store_blocked_vectors(linear_rank<BX, BY, BZ>(), tile, items);
  } else {
    store.Store(tile, items);
  }
}

}  // namespace cuda_coop
