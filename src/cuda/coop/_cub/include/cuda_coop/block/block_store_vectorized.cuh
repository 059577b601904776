// cuda-coop: the blocked vector store of BLOCK_STORE_VECTORIZE (docs: operations/load_store).
#pragma once

#include <cuda_coop/util_group.cuh>

namespace cuda_coop {

#if defined(CUDA_COOP_CLANG)
// clang only (the bitcode route): a blocked store of vectors, one IR vector store per vector, where CUB's
// StoreDirectBlockedVectorized copies a vector struct that clang lowers to scalar stores, which LLVM may then sink
// apart (a 16-byte vector became three stores). The same vector size, alignment test and fallback as CUB's.
template <int Bytes>
struct vector_words {
  typedef unsigned type __attribute__((ext_vector_type(Bytes / 4)));
};
template <>
struct vector_words<4> {
  typedef unsigned type;
};

template <typename T, int K>
struct blocked_vectors {
  static constexpr int most = K < 4 ? K : 4;
  static constexpr int per_vector = ((most & (most - 1)) == 0 && K % most == 0) ? most : 1;  // items
  static constexpr int bytes = per_vector * (int)sizeof(T);
  static constexpr bool used = per_vector > 1 && (bytes == 4 || bytes == 8 || bytes == 16);
};

template <typename T, int K>
__device__ __forceinline__ void store_blocked_vectors(unsigned member, T* tile, const T (&items)[K]) {
  using V = blocked_vectors<T, K>;
  using Words = typename vector_words<V::used ? V::bytes : 4>::type;
  if (reinterpret_cast<unsigned long long>(tile) % V::bytes == 0) {
    Words* out = reinterpret_cast<Words*>(tile) + member * (K / V::per_vector);
    for (int v = 0; v < K / V::per_vector; ++v) {
      Words words;
      __builtin_memcpy(&words, &items[v * V::per_vector], V::bytes);
      out[v] = words;
    }
  } else {
    for (int i = 0; i < K; ++i) tile[member * K + i] = items[i];
  }
}
#endif

// `store`'s blocked vectorised Store of `items` at `tile` (a cub::BlockStore with BLOCK_STORE_VECTORIZE), or on
// the bitcode route, where it can, the vector store above.
template <int BX, int BY, int BZ, typename Store, typename T, int K>
__device__ __forceinline__ void block_store_vectorized(Store& store, T* tile, T (&items)[K]) {
#if defined(CUDA_COOP_CLANG)
  if constexpr (blocked_vectors<T, K>::used) {
    store_blocked_vectors(linear_rank<BX, BY, BZ>(), tile, items);
  } else {
    store.Store(tile, items);
  }
#else
  store.Store(tile, items);
#endif
}

}  // namespace cuda_coop
