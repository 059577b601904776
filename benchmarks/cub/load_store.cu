// Load -> Store tile copies written the way a CUDA C++ user writes them with CUB.
// These are the references every cuda.coop copy kernel is compared against, so they
// use the idiomatic pattern: one __shared__ union of the TempStorage types, one
// barrier between the load and the store only where the algorithm uses shared memory,
// no launch bounds and no __restrict__ (the cuda.coop kernels declare neither).
// benchmarks/cub_build.py includes this file and appends one BENCH_*_COPY line per
// kernel, so every instantiation has an extern "C" name cupy can look up.
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
#include <cub/warp/warp_load.cuh>
#include <cub/warp/warp_store.cuh>

namespace bench {

template <cub::BlockLoadAlgorithm A>
constexpr bool copy_load_uses_shared = A == cub::BLOCK_LOAD_TRANSPOSE || A == cub::BLOCK_LOAD_WARP_TRANSPOSE
                                     || A == cub::BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED;

template <typename T, int THREADS, int K, cub::BlockLoadAlgorithm LA, cub::BlockStoreAlgorithm SA>
__device__ __forceinline__ void block_copy(const T* src, T* dst)
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
  if constexpr (copy_load_uses_shared<LA>)
  {
    __syncthreads(); // the store reuses the load's shared memory
  }
  Store(temp.store).Store(dst + base, items);
}

// One block of THREADS threads holds THREADS / 32 warps; each warp copies its own
// 32 * K tile, like coop.load(coop.this_warp(), ...) with the block's offset.
template <typename T, int THREADS, int K, cub::WarpLoadAlgorithm LA, cub::WarpStoreAlgorithm SA>
__device__ __forceinline__ void warp_copy(const T* src, T* dst)
{
  constexpr int WARPS = THREADS / 32;
  using Load          = cub::WarpLoad<T, K, LA, 32>;
  using Store         = cub::WarpStore<T, K, SA, 32>;
  __shared__ union
  {
    typename Load::TempStorage load[WARPS];
    typename Store::TempStorage store[WARPS];
  } temp;
  const int warp       = threadIdx.x / 32;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K) + warp * (32 * K);
  T items[K];
  Load(temp.load[warp]).Load(src + base, items);
  if constexpr (LA == cub::WARP_LOAD_TRANSPOSE)
  {
    __syncwarp(); // the store reuses the warp's shared memory
  }
  Store(temp.store[warp]).Store(dst + base, items);
}

} // namespace bench

#define BENCH_BLOCK_COPY(NAME, T, THREADS, K, ALG)                                                   \
  extern "C" __global__ void NAME(const T* src, T* dst)                                              \
  {                                                                                                  \
    bench::block_copy<T, THREADS, K, cub::BLOCK_LOAD_##ALG, cub::BLOCK_STORE_##ALG>(src, dst);       \
  }

#define BENCH_WARP_COPY(NAME, T, THREADS, K, ALG)                                                    \
  extern "C" __global__ void NAME(const T* src, T* dst)                                              \
  {                                                                                                  \
    bench::warp_copy<T, THREADS, K, cub::WARP_LOAD_##ALG, cub::WARP_STORE_##ALG>(src, dst);          \
  }
