// Tile sorts (merge sort, radix sort) written the way a CUDA C++ user writes them with CUB:
// the references of benchmarks/sort.py. Each block loads its THREADS x K tile in blocked
// order (BLOCK_LOAD_WARP_TRANSPOSE: coalesced), sorts it, and stores it the same way; one
// __shared__ union of the TempStorage types, a barrier only where shared memory is reused.
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

#define BENCH_TILE_SORT(NAME, T, THREADS, K, RADIX)                                                   \
  extern "C" __global__ void NAME(const T* src, T* dst)                                              \
  {                                                                                                  \
    bench::tile_sort<T, THREADS, K, RADIX>(src, dst);                                                \
  }
