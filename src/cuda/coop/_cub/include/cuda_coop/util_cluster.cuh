// cuda-coop: the caller's cluster and distributed shared memory (sm_90; docs: concepts, "Groups and ranks").
#pragma once

namespace cuda_coop {

// The caller's block rank in its cluster, and the cluster's block count.
__device__ __forceinline__ unsigned cluster_block_rank() {
  unsigned rank;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

__device__ __forceinline__ unsigned cluster_block_count() {
  unsigned count;
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(count));
  return count;
}

// The caller's block rank and block count in its cluster (`rank`, `count`), its cluster's index in the grid and the
// grid's cluster count (`cluster`, `clusters`). Before sm_90 every block is a cluster of one, and the arguments keep
// the values they came with (0, 1, the block's index, the grid's block count).
__device__ __forceinline__ void cluster_position(unsigned& rank, unsigned& count, unsigned long long& cluster,
                                                 unsigned long long& clusters) {
#if __CUDA_ARCH__ >= 900
  // A cluster's index comes from the cluster-id registers: dividing the block index by the cluster size is wrong
  // for clusters with a y or z extent above 1.
  unsigned cx, cy, cz, ncx, ncy, ncz;
  rank = cluster_block_rank();
  count = cluster_block_count();
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(cx));
  asm("mov.u32 %0, %%clusterid.y;" : "=r"(cy));
  asm("mov.u32 %0, %%clusterid.z;" : "=r"(cz));
  asm("mov.u32 %0, %%nclusterid.x;" : "=r"(ncx));
  asm("mov.u32 %0, %%nclusterid.y;" : "=r"(ncy));
  asm("mov.u32 %0, %%nclusterid.z;" : "=r"(ncz));
  cluster = cx + (unsigned long long)ncx * (cy + (unsigned long long)ncy * cz);
  clusters = (unsigned long long)ncx * ncy * ncz;
#else
  (void)rank, (void)count, (void)cluster, (void)clusters;
#endif
}

// The address, in the cluster's shared window, of shared address `local` of the cluster's block `block`.
__device__ __forceinline__ unsigned map_cluster_shared(unsigned local, unsigned block) {
  unsigned remote;
  asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(block));
  return remote;
}

// One word of WORD bytes from the cluster's shared window: the register type, PTX type and constraint of each size
// (a byte travels in a 16-bit register, as PTX requires).
template <int WORD>
struct cluster_word;
template <>
struct cluster_word<1> {
  using Exact = unsigned char;
  static __device__ __forceinline__ Exact load(unsigned address) {
    unsigned short bits;
    asm volatile("ld.shared::cluster.u8 %0, [%1];" : "=h"(bits) : "r"(address) : "memory");
    return (Exact)bits;
  }
};
template <>
struct cluster_word<2> {
  using Exact = unsigned short;
  static __device__ __forceinline__ Exact load(unsigned address) {
    unsigned short bits;
    asm volatile("ld.shared::cluster.u16 %0, [%1];" : "=h"(bits) : "r"(address) : "memory");
    return bits;
  }
};
template <>
struct cluster_word<4> {
  using Exact = unsigned;
  static __device__ __forceinline__ Exact load(unsigned address) {
    unsigned bits;
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(bits) : "r"(address) : "memory");
    return bits;
  }
};
template <>
struct cluster_word<8> {
  using Exact = unsigned long long;
  static __device__ __forceinline__ Exact load(unsigned address) {
    unsigned long long bits;
    asm volatile("ld.shared::cluster.u64 %0, [%1];" : "=l"(bits) : "r"(address) : "memory");
    return bits;
  }
};

// A T at `address` of the cluster's shared window, in words of WORD bytes (the widest that divide its size and
// alignment: an aggregate of 8 bytes aligned to 4 is two 32-bit loads).
template <typename T, int WORD>
__device__ __forceinline__ T load_cluster_shared(unsigned address) {
  using Word = cluster_word<WORD>;
  static_assert(sizeof(T) % WORD == 0, "whole words");
  union {
    typename Word::Exact words[sizeof(T) / WORD];
    T value;
  } same;  // the loaded words are a T
  for (unsigned i = 0; i < sizeof(T) / WORD; ++i) same.words[i] = Word::load(address + i * WORD);
  return same.value;
}

}  // namespace cuda_coop
