// cuda-coop: broadcast over a block (docs: operations/broadcast). CUB has no block broadcast.
#pragma once

#include <cuda_coop/util_group.cuh>

namespace cuda_coop {

// Member src_rank of a BX x BY x BZ block hands its value to every thread through shared memory: it writes each
// member of the value into a slot of K items (Write), one CTA barrier follows (Sync), then every thread reads the
// slots (Read). Items are copied as they are: no conversion, so NaN payloads and -0.0 arrive bit for bit.
template <int BX, int BY = 1, int BZ = 1>
class BlockBroadcast {
  const bool source;

 public:
  // src_rank: checked by the caller to be in 0 ... BX*BY*BZ-1 (docs: errors, "Device traps").
  __device__ __forceinline__ explicit BlockBroadcast(long long src_rank)
      : source(linear_rank<BX, BY, BZ>() == (unsigned)src_rank) {}

  // The source's K items into their slot.
  template <typename T, int K>
  __device__ __forceinline__ void Write(T (&slot)[K], const T* items) const {
    if (source) {
#pragma unroll
      for (int k = 0; k < K; ++k) slot[k] = items[k];
    }
  }

  // The algorithm barrier: every slot written before any thread reads one.
  __device__ __forceinline__ void Sync() const { __syncthreads(); }

  // A slot's K items into the caller's fresh result.
  template <typename T, int K>
  __device__ __forceinline__ void Read(T* items, const T (&slot)[K]) const {
#pragma unroll
    for (int k = 0; k < K; ++k) items[k] = slot[k];
  }
};

}  // namespace cuda_coop
