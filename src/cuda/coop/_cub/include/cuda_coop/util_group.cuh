// cuda-coop: ranks and lane masks of the groups a call runs on (docs: concepts, "Groups and ranks").
#pragma once

namespace cuda_coop {

// The caller's row-major rank in a block of BX x BY x BZ threads.
template <int BX, int BY, int BZ>
__device__ __forceinline__ unsigned linear_rank() {
  // An index along an extent-1 dimension is 0: skip its special-register read, as CUB does.
  const unsigned y = BY == 1 ? 0u : threadIdx.y;
  const unsigned z = BZ == 1 ? 0u : threadIdx.z;
  return threadIdx.x + BX * (y + BY * z);
}

// Index of the caller's group among groups of W lanes (W need not divide 32: non-exhaustive groups).
template <unsigned W>
__device__ __forceinline__ unsigned group_instance(unsigned rank) {
  return (rank / 32u) * (32u / W) + (rank % 32u) / W;
}

// The lanes of the caller's logical warp of `width` lanes, as a shuffle or __syncwarp mask.
__device__ __forceinline__ unsigned logical_warp_mask(unsigned rank, unsigned width) {
  unsigned lanes = width >= 32 ? 0xffffffffu : ((1u << width) - 1u);
  return lanes << ((rank % 32u) / width * width);
}

}  // namespace cuda_coop
