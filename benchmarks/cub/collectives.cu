// Reduce, scan and exchange tile kernels (issue 4) written the way a CUDA C++ user writes
// them with CUB. They are the references the cuda.coop kernels of benchmarks/collectives.py
// are compared against, so they follow the idiomatic pattern of benchmarks/cub/load_store.cu:
// one __shared__ union of the TempStorage types, a barrier only where shared memory is
// reused, no launch bounds and no __restrict__.
// benchmarks/cub_build.py includes this file and appends one BENCH_* line per kernel, so
// every instantiation has an extern "C" name cupy can look up.
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/thread/thread_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>

#include <cuda/std/functional>

namespace bench {

template <cub::BlockLoadAlgorithm A>
constexpr bool block_load_uses_shared = A == cub::BLOCK_LOAD_TRANSPOSE || A == cub::BLOCK_LOAD_WARP_TRANSPOSE
                                     || A == cub::BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED;

template <cub::BlockStoreAlgorithm A>
constexpr bool block_store_uses_shared = A == cub::BLOCK_STORE_TRANSPOSE || A == cub::BLOCK_STORE_WARP_TRANSPOSE
                                      || A == cub::BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED;

// Block sum of a THREADS x K tile loaded striped (a sum does not care about the order, and a
// striped load is coalesced without shared memory). ATOMIC: thread 0 adds the block's total
// to out[0]; otherwise it writes it to out[blockIdx.x].
template <typename T, int THREADS, int K, cub::BlockReduceAlgorithm A, bool ATOMIC>
__device__ __forceinline__ void block_sum(const T* src, T* out)
{
  using Reduce = cub::BlockReduce<T, THREADS, A>;
  __shared__ typename Reduce::TempStorage temp; // the striped load needs none
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T items[K];
  cub::LoadDirectStriped<THREADS>(threadIdx.x, src + base, items); // = BlockLoad BLOCK_LOAD_STRIPED
  const T total = Reduce(temp).Sum(items); // defined in thread 0 only
  if (threadIdx.x == 0)
  {
    if constexpr (ATOMIC)
    {
      atomicAdd(out, total);
    }
    else
    {
      out[blockIdx.x] = total;
    }
  }
}

// Exclusive prefix sum of each THREADS x K tile: load (LA), BlockScan::ExclusiveSum in
// blocked order, store (the same algorithm as the load).
template <typename T, int THREADS, int K, cub::BlockLoadAlgorithm LA, cub::BlockStoreAlgorithm SA,
          cub::BlockScanAlgorithm A>
__device__ __forceinline__ void tile_exclusive_sum(const T* src, T* dst)
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
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T items[K];
  Load(temp.load).Load(src + base, items);
  if constexpr (block_load_uses_shared<LA>)
  {
    __syncthreads(); // the scan reuses the load's shared memory
  }
  Scan(temp.scan).ExclusiveSum(items, items);
  if constexpr (block_store_uses_shared<SA>)
  {
    __syncthreads(); // the store reuses the scan's shared memory
  }
  Store(temp.store).Store(dst + base, items);
}

// Each warp of the block sums its own 32 x K tile (loaded striped), lane 0 writes the total
// to out[blockIdx.x * WARPS + warp].
template <typename T, int THREADS, int K>
__device__ __forceinline__ void warp_sum(const T* src, T* out)
{
  constexpr int WARPS = THREADS / 32;
  using Reduce        = cub::WarpReduce<T, 32>;
  __shared__ typename Reduce::TempStorage temp[WARPS]; // shuffle-based: empty
  const int warp       = threadIdx.x / 32;
  const int lane       = threadIdx.x % 32;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K) + warp * (32 * K);
  T items[K];
  cub::LoadDirectStriped<32>(lane, src + base, items); // = WarpLoad WARP_LOAD_STRIPED
  const T partial = cub::ThreadReduce(items, ::cuda::std::plus<>{});
  const T total   = Reduce(temp[warp]).Sum(partial); // defined in lane 0 only
  if (lane == 0)
  {
    out[static_cast<long long>(blockIdx.x) * WARPS + warp] = total;
  }
}

// Striped load, BlockExchange::StripedToBlocked, direct (blocked) store: each tile is copied
// unchanged, through the exchange's permutation.
template <typename T, int THREADS, int K>
__device__ __forceinline__ void block_exchange(const T* src, T* dst)
{
  using Exchange = cub::BlockExchange<T, THREADS, K>;
  __shared__ typename Exchange::TempStorage temp;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T items[K];
  cub::LoadDirectStriped<THREADS>(threadIdx.x, src + base, items);
  Exchange(temp).StripedToBlocked(items, items);
  cub::StoreDirectBlocked(threadIdx.x, dst + base, items);
}

// Striped load, StripedToBlocked, BlockedToStriped, striped store: both exchanges, with
// coalesced global accesses at both ends (the usual way a kernel uses an exchange).
template <typename T, int THREADS, int K>
__device__ __forceinline__ void block_exchange_round_trip(const T* src, T* dst)
{
  using Exchange = cub::BlockExchange<T, THREADS, K>;
  __shared__ typename Exchange::TempStorage temp;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T items[K];
  cub::LoadDirectStriped<THREADS>(threadIdx.x, src + base, items);
  Exchange(temp).StripedToBlocked(items, items);
  __syncthreads(); // the second exchange reuses the shared memory
  Exchange(temp).BlockedToStriped(items, items);
  cub::StoreDirectStriped<THREADS>(threadIdx.x, dst + base, items);
}

} // namespace bench

#define BENCH_BLOCK_SUM_ATOMIC(NAME, T, THREADS, K, ALG)                                              \
  extern "C" __global__ void NAME(const T* src, T* out)                                              \
  {                                                                                                  \
    bench::block_sum<T, THREADS, K, cub::BLOCK_REDUCE_##ALG, true>(src, out);                        \
  }

#define BENCH_BLOCK_SUM_PARTIALS(NAME, T, THREADS, K, ALG)                                            \
  extern "C" __global__ void NAME(const T* src, T* out)                                              \
  {                                                                                                  \
    bench::block_sum<T, THREADS, K, cub::BLOCK_REDUCE_##ALG, false>(src, out);                       \
  }

#define BENCH_TILE_EXCLUSIVE_SUM(NAME, T, THREADS, K, LOAD, ALG)                                      \
  extern "C" __global__ void NAME(const T* src, T* dst)                                              \
  {                                                                                                  \
    bench::tile_exclusive_sum<T, THREADS, K, cub::BLOCK_LOAD_##LOAD, cub::BLOCK_STORE_##LOAD,        \
                              cub::BLOCK_SCAN_##ALG>(src, dst);                                      \
  }

#define BENCH_WARP_SUM(NAME, T, THREADS, K)                                                           \
  extern "C" __global__ void NAME(const T* src, T* out)                                              \
  {                                                                                                  \
    bench::warp_sum<T, THREADS, K>(src, out);                                                        \
  }

#define BENCH_BLOCK_EXCHANGE(NAME, T, THREADS, K)                                                     \
  extern "C" __global__ void NAME(const T* src, T* dst)                                              \
  {                                                                                                  \
    bench::block_exchange<T, THREADS, K>(src, dst);                                                  \
  }

#define BENCH_BLOCK_EXCHANGE_ROUND_TRIP(NAME, T, THREADS, K)                                          \
  extern "C" __global__ void NAME(const T* src, T* dst)                                              \
  {                                                                                                  \
    bench::block_exchange_round_trip<T, THREADS, K>(src, dst);                                       \
  }
