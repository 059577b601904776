// cuda-coop: loads and stores of large payloads as loops (docs: operations/load_store, "Partial tiles").
#pragma once

namespace cuda_coop {

// Above 256 items per thread a load or store is one loop over the thread's items instead of CUB's unrolled code
// (whose build took minutes): blocked (item i of member `lane` at lane*K + i) or STRIPED (at i*STRIDE + lane,
// STRIDE the group's size), with CUB's partial-tile rules. Unrolled by 4: the loop stays small, its accesses batched.
template <int K, int STRIDE, bool STRIPED>
struct RolledTile {
  static __device__ __forceinline__ long long position(long long lane, int i) {
    return STRIPED ? i * (long long)STRIDE + lane : lane * (long long)K + i;
  }
};

template <int K, int STRIDE, bool STRIPED, typename T>
__device__ __forceinline__ void load_rolled(long long lane, const T* tile, T* items) {
#pragma unroll 4
  for (int i = 0; i < K; ++i) {
    items[i] = tile[RolledTile<K, STRIDE, STRIPED>::position(lane, i)];
  }
}

// A guarded load leaves the slots past valid_items as they were.
template <int K, int STRIDE, bool STRIPED, typename T>
__device__ __forceinline__ void load_rolled(long long lane, const T* tile, T* items, long long valid_items) {
#pragma unroll 4
  for (int i = 0; i < K; ++i) {
    const long long at = RolledTile<K, STRIDE, STRIPED>::position(lane, i);
    if (at < valid_items) items[i] = tile[at];
  }
}

// A guarded load with a default writes it past valid_items.
template <int K, int STRIDE, bool STRIPED, typename T>
__device__ __forceinline__ void load_rolled(long long lane, const T* tile, T* items, long long valid_items,
                                            T oob_default) {
#pragma unroll 4
  for (int i = 0; i < K; ++i) {
    const long long at = RolledTile<K, STRIDE, STRIPED>::position(lane, i);
    items[i] = at < valid_items ? tile[at] : oob_default;
  }
}

template <int K, int STRIDE, bool STRIPED, typename T>
__device__ __forceinline__ void store_rolled(long long lane, T* tile, const T* items) {
#pragma unroll 4
  for (int i = 0; i < K; ++i) {
    tile[RolledTile<K, STRIDE, STRIPED>::position(lane, i)] = items[i];
  }
}

template <int K, int STRIDE, bool STRIPED, typename T>
__device__ __forceinline__ void store_rolled(long long lane, T* tile, const T* items, long long valid_items) {
#pragma unroll 4
  for (int i = 0; i < K; ++i) {
    const long long at = RolledTile<K, STRIDE, STRIPED>::position(lane, i);
    if (at < valid_items) tile[at] = items[i];
  }
}

}  // namespace cuda_coop
