// Tile sorts (merge sort, radix sort) written the way a CUDA C++ expert writes them with CUB:
// the references of benchmarks/sort.py. Each block loads its THREADS x K tile in blocked
// order (BLOCK_LOAD_WARP_TRANSPOSE: coalesced, as the cuda.coop kernels), sorts it, and stores
// it the same way; one __shared__ union of the TempStorage types, a barrier only where shared
// memory is reused, and __launch_bounds__ where nvcc then keeps more blocks per SM without
// spilling (BENCH_SORT_BOUNDS below; benchmarks/README.md, "How the twins are tuned").
// benchmarks/cub_build.py includes this file and appends one BENCH_* line per kernel.
#include <cub/block/block_load.cuh>
#include <cub/block/block_merge_sort.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>

#include <cuda/std/functional>
#include <cuda/std/type_traits>

namespace bench {

template <typename T, int THREADS, int K, bool RADIX>
__device__ __forceinline__ void tile_sort(const T* src, T* dst)
{
  using Load  = cub::BlockLoad<T, THREADS, K, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Store = cub::BlockStore<T, THREADS, K, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  using Sort  = ::cuda::std::conditional_t<RADIX, cub::BlockRadixSort<T, THREADS, K>, cub::BlockMergeSort<T, THREADS, K>>;
  __shared__ union
  {
    typename Load::TempStorage load;
    typename Sort::TempStorage sort;
    typename Store::TempStorage store;
  } temp;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T items[K];
  Load(temp.load).Load(src + base, items);
  __syncthreads(); // the sort reuses the load's shared memory
  if constexpr (RADIX)
  {
    Sort(temp.sort).Sort(items);
  }
  else
  {
    Sort(temp.sort).Sort(items, ::cuda::std::less<T>{});
  }
  __syncthreads(); // the store reuses the sort's shared memory
  Store(temp.store).Store(dst + base, items);
}

} // namespace bench

// The launch bounds of each sort and shape, BENCH_SORT_BOUNDS_<RADIX>_<K> (a shape without one does not build).
// Radix sort of 4 items: 6 blocks of 256 threads per SM (40 registers, no spill; without bounds nvcc 13.0 takes
// 47, 5 blocks). At 16 items, (256, 4) spills 20 bytes and (256, 3) changes nothing (80 registers): none. Merge
// sort keeps 8 blocks without bounds (23 and 32 registers).
#define BENCH_SORT_BOUNDS_true_4(THREADS) __launch_bounds__(THREADS, 6)
#define BENCH_SORT_BOUNDS_true_16(THREADS)
#define BENCH_SORT_BOUNDS_false_4(THREADS)
#define BENCH_SORT_BOUNDS_false_16(THREADS)

#define BENCH_TILE_SORT(NAME, T, THREADS, K, RADIX)                                                   \
  extern "C" __global__ void BENCH_SORT_BOUNDS_##RADIX##_##K(THREADS) NAME(const T* src, T* dst)     \
  {                                                                                                  \
    bench::tile_sort<T, THREADS, K, RADIX>(src, dst);                                                \
  }
