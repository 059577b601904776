// cuda-coop: the barriers a call or a group's sync() runs (docs: concepts, "Scratch memory and barriers").
#pragma once

#include <cuda_coop/util_group.cuh>

namespace cuda_coop {

// Every thread of the block, at one aligned barrier (__syncthreads).
__device__ __forceinline__ void sync_block() { __syncthreads(); }

// Every thread of the block, arriving from any point of divergent code (barrier 0, not .aligned).
__device__ __forceinline__ void sync_block_unaligned() { asm volatile("barrier.sync 0;" ::: "memory"); }

// The lanes of `mask`.
__device__ __forceinline__ void sync_lanes(unsigned mask) { __syncwarp(mask); }

// The caller's logical warp of `width` lanes.
__device__ __forceinline__ void sync_logical_warp(unsigned rank, unsigned width) {
  __syncwarp(logical_warp_mask(rank, width));
}

// Named barrier ID over THREADS threads (whole warps): a subset of the block, which the block barrier cannot wait
// for when the other threads never arrive.
template <int ID, int THREADS>
__device__ __forceinline__ void sync_named() {
  asm volatile("bar.sync %0, %1;" ::"n"(ID), "n"(THREADS) : "memory");
}

// Every thread of the cluster; ALIGNED: every thread arrives at the same barrier instruction.
template <bool ALIGNED>
__device__ __forceinline__ void sync_cluster() {
  if constexpr (ALIGNED) {
    asm volatile("barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;" ::: "memory");
  } else {
    asm volatile("barrier.cluster.arrive; barrier.cluster.wait;" ::: "memory");
  }
}

// Every thread of the cluster, with release/acquire ordering of shared memory (distributed shared memory reads).
__device__ __forceinline__ void sync_cluster_release_acquire() {
  asm volatile("barrier.cluster.arrive.release; barrier.cluster.wait.acquire;" ::: "memory");
}

}  // namespace cuda_coop
