// Qualified-namespace tile kernels (issue 11) written the way a CUDA C++ user writes them with CUB: the
// references of benchmarks/qualified.py. A running block scan over many tiles (BlockScan::ExclusiveSum with a
// block prefix callback functor that keeps the running total: the single-pass scan pattern inside one block),
// a float16 block sum (BlockReduce<__half>) writing one partial per block, and float16 Load -> Store copies.
// As in the other files: one __shared__ union of the TempStorage types, a barrier only where shared memory is
// reused, no launch bounds and no __restrict__. benchmarks/cub_build.py includes this file and appends one
// BENCH_* line per kernel.
#include <cuda_fp16.h> // __half, before the CUB headers

#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>

#include <cuda/std/type_traits>

namespace bench {

template <cub::BlockLoadAlgorithm A>
constexpr bool qualified_load_uses_shared = A == cub::BLOCK_LOAD_TRANSPOSE || A == cub::BLOCK_LOAD_WARP_TRANSPOSE
                                         || A == cub::BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED;

template <cub::BlockStoreAlgorithm A>
constexpr bool qualified_store_uses_shared = A == cub::BLOCK_STORE_TRANSPOSE || A == cub::BLOCK_STORE_WARP_TRANSPOSE
                                          || A == cub::BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED;

// The block prefix callback: CUB calls it in the first warp with each tile's aggregate; lane 0's result seeds
// the tile's scan. It returns the total of the tiles before this one and adds this tile's aggregate (wrapping
// modulo 2^bits like the other implementations: no signed overflow).
template <typename T>
struct RunningTotal
{
  T total;

  __device__ __forceinline__ explicit RunningTotal(T initial)
      : total(initial)
  {}

  __device__ __forceinline__ T operator()(T block_aggregate)
  {
    using U       = ::cuda::std::make_unsigned_t<T>;
    const T prior = total;
    total         = static_cast<T>(static_cast<U>(static_cast<U>(total) + static_cast<U>(block_aggregate)));
    return prior;
  }
};

// Each block walks TILES consecutive THREADS x K tiles: load (LA), ExclusiveSum seeded by the running total,
// store (SA). The scan always uses shared memory, so the next tile's first shared-memory user (its load, or
// its scan) needs a barrier after the store.
template <typename T, int THREADS, int K, int TILES, cub::BlockLoadAlgorithm LA, cub::BlockStoreAlgorithm SA,
          cub::BlockScanAlgorithm A>
__device__ __forceinline__ void running_exclusive_sum(const T* src, T* dst)
{
  using Load  = cub::BlockLoad<T, THREADS, K, LA>;
  using Scan  = cub::BlockScan<T, THREADS, A>;
  using Store = cub::BlockStore<T, THREADS, K, SA>;
  __shared__ union
  {
    typename Load::TempStorage load;
    typename Scan::TempStorage scan;
    typename Store::TempStorage store;
  } temp;
  constexpr int tile   = THREADS * K;
  const long long base = static_cast<long long>(blockIdx.x) * (tile * TILES);
  RunningTotal<T> prefix(T(0));
  for (int t = 0; t < TILES; ++t)
  {
    const long long offset = base + static_cast<long long>(t) * tile;
    T items[K];
    Load(temp.load).Load(src + offset, items);
    if constexpr (qualified_load_uses_shared<LA>)
    {
      __syncthreads(); // the scan reuses the load's shared memory
    }
    Scan(temp.scan).ExclusiveSum(items, items, prefix);
    if constexpr (qualified_store_uses_shared<SA>)
    {
      __syncthreads(); // the store reuses the scan's shared memory
    }
    Store(temp.store).Store(dst + offset, items);
    __syncthreads(); // the next tile's load (or scan) reuses the shared memory
  }
}

// Block sum of a THREADS x K tile loaded striped (coalesced, no shared memory); thread 0 writes the block's
// partial to out[blockIdx.x]. __half adds in half precision (cuda::std::plus<__half>).
template <typename T, int THREADS, int K, cub::BlockReduceAlgorithm A>
__device__ __forceinline__ void sum_partials(const T* src, T* out)
{
  using Reduce = cub::BlockReduce<T, THREADS, A>;
  __shared__ typename Reduce::TempStorage temp; // the striped load needs none
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T items[K];
  cub::LoadDirectStriped<THREADS>(threadIdx.x, src + base, items); // = BlockLoad BLOCK_LOAD_STRIPED
  const T total = Reduce(temp).Sum(items); // defined in thread 0 only
  if (threadIdx.x == 0)
  {
    out[blockIdx.x] = total;
  }
}

// Load -> Store copy of a THREADS x K tile (as cub/load_store.cu, here instantiated for __half).
template <typename T, int THREADS, int K, cub::BlockLoadAlgorithm LA, cub::BlockStoreAlgorithm SA>
__device__ __forceinline__ void qualified_copy(const T* src, T* dst)
{
  using Load  = cub::BlockLoad<T, THREADS, K, LA>;
  using Store = cub::BlockStore<T, THREADS, K, SA>;
  __shared__ union
  {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
  } temp;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T items[K];
  Load(temp.load).Load(src + base, items);
  if constexpr (qualified_load_uses_shared<LA>)
  {
    __syncthreads(); // the store reuses the load's shared memory
  }
  Store(temp.store).Store(dst + base, items);
}

} // namespace bench

#define BENCH_RUNNING_EXCLUSIVE_SUM(NAME, T, THREADS, K, TILES, IO, ALG)                              \
  extern "C" __global__ void NAME(const T* src, T* dst)                                              \
  {                                                                                                  \
    bench::running_exclusive_sum<T, THREADS, K, TILES, cub::BLOCK_LOAD_##IO, cub::BLOCK_STORE_##IO,  \
                                 cub::BLOCK_SCAN_##ALG>(src, dst);                                   \
  }

#define BENCH_HALF_SUM_PARTIALS(NAME, T, THREADS, K, ALG)                                             \
  extern "C" __global__ void NAME(const T* src, T* out)                                              \
  {                                                                                                  \
    bench::sum_partials<T, THREADS, K, cub::BLOCK_REDUCE_##ALG>(src, out);                           \
  }

#define BENCH_QUALIFIED_COPY(NAME, T, THREADS, K, ALG)                                                \
  extern "C" __global__ void NAME(const T* src, T* dst)                                              \
  {                                                                                                  \
    bench::qualified_copy<T, THREADS, K, cub::BLOCK_LOAD_##ALG, cub::BLOCK_STORE_##ALG>(src, dst);   \
  }
