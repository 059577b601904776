// CUB C++ twins of the two tile kernels of benchmarks/cute.py that no other family has: an exchange from
// blocked to striped order and a top-k of each tile. The other CuTe rows reuse the other families' twins.
// Written the way a CUDA C++ user writes them with CUB, as in the other files: a barrier only where shared
// memory is reused, no launch bounds and no __restrict__. benchmarks/cub_build.py includes this file and
// appends one BENCH_* line per kernel.
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>

namespace bench {

// Direct (blocked) load, BlockExchange::BlockedToStriped, striped store: each tile is copied unchanged,
// through the exchange's permutation.
template <typename T, int THREADS, int K>
__device__ __forceinline__ void block_exchange_blocked_to_striped(const T* src, T* dst)
{
  using Exchange = cub::BlockExchange<T, THREADS, K>;
  __shared__ typename Exchange::TempStorage temp;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T items[K];
  cub::LoadDirectBlocked(threadIdx.x, src + base, items);
  Exchange(temp).BlockedToStriped(items, items);
  cub::StoreDirectStriped<THREADS>(threadIdx.x, dst + base, items);
}

// The TOP largest keys of each tile, in no particular order: load (warp transpose, as the sorts), a
// descending block radix sort (what cuda.coop's topk_max_keys does), the first TOP blocked positions
// stored directly to out[blockIdx.x * TOP ...].
template <typename T, int THREADS, int K, int TOP>
__device__ __forceinline__ void tile_topk_max(const T* src, T* out)
{
  using Load = cub::BlockLoad<T, THREADS, K, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Sort = cub::BlockRadixSort<T, THREADS, K>;
  __shared__ union
  {
    typename Load::TempStorage load;
    typename Sort::TempStorage sort;
  } temp;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T keys[K];
  Load(temp.load).Load(src + base, keys);
  __syncthreads(); // the sort reuses the load's shared memory
  Sort(temp.sort).SortDescending(keys);
  cub::StoreDirectBlocked(threadIdx.x, out + static_cast<long long>(blockIdx.x) * TOP, keys, TOP);
}

} // namespace bench

#define BENCH_BLOCK_EXCHANGE_BLOCKED_TO_STRIPED(NAME, T, THREADS, K)                                  \
  extern "C" __global__ void NAME(const T* src, T* dst)                                              \
  {                                                                                                  \
    bench::block_exchange_blocked_to_striped<T, THREADS, K>(src, dst);                               \
  }

#define BENCH_TILE_TOPK_MAX(NAME, T, THREADS, K, TOP)                                                 \
  extern "C" __global__ void NAME(const T* src, T* out)                                              \
  {                                                                                                  \
    bench::tile_topk_max<T, THREADS, K, TOP>(src, out);                                              \
  }
