// CUB C++ twins of the tile kernels of benchmarks/cute.py that no other family has: an exchange from
// blocked to striped order, a top-k of each tile, and (issue 31) a reverse and a segmented scan and an argmax. The other CuTe rows reuse the other families' twins.
// Written the way a CUDA C++ expert writes them with CUB, as in the other files: the load and store algorithms of
// the cuda.coop kernels, a barrier only where shared memory is reused, the lightest operator CUB allows, no
// __restrict__, and __launch_bounds__ only where nvcc then keeps more blocks per SM without spilling (the segmented
// sums, BENCH_SEGMENTED_BOUNDS below; benchmarks/README.md, "How the twins are tuned"). benchmarks/cub_build.py
// includes this file and appends one BENCH_* line per kernel.
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cuda/std/iterator>

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

// Suffix sums of each tile as a CUDA C++ user writes them with CUB: the tile read and written through reverse
// iterators (so each thread holds the mirrored tile in blocked order) around a forward BlockScan.
template <typename T, int THREADS, int K>
__device__ __forceinline__ void tile_reverse_inclusive_sum(const T* src, T* dst)
{
  using Load  = cub::BlockLoad<T, THREADS, K, cub::BLOCK_LOAD_TRANSPOSE>;
  using Store = cub::BlockStore<T, THREADS, K, cub::BLOCK_STORE_TRANSPOSE>;
  using Scan  = cub::BlockScan<T, THREADS>;
  __shared__ union
  {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename Scan::TempStorage scan;
  } temp;
  const long long end = (static_cast<long long>(blockIdx.x) + 1) * (THREADS * K);
  T items[K];
  Load(temp.load).Load(cuda::std::make_reverse_iterator(src + end), items);
  __syncthreads();
  Scan(temp.scan).InclusiveSum(items, items);
  __syncthreads();
  Store(temp.store).Store(cuda::std::make_reverse_iterator(dst + end), items);
}

// A segmented inclusive sum: BlockScan over (head flag, value) pairs with the segmented operator; a segment
// starts at every item whose (whole number's) low four bits are zero.
template <typename T>
struct FlaggedValue
{
  int flag;
  T value;
};

template <typename T>
struct SegmentedSum
{
  __device__ __forceinline__ FlaggedValue<T> operator()(const FlaggedValue<T>& a, const FlaggedValue<T>& b) const
  {
    return {a.flag | b.flag, b.flag ? b.value : a.value + b.value};
  }
};

// The tile moves as in the cuda.coop kernels (benchmarks/cute.py, segmented_tile_algorithm): vector accesses
// at 4 items per thread, the transpose through shared memory beyond.
template <typename T, int THREADS, int K>
__device__ __forceinline__ void tile_segmented_inclusive_sum(const T* src, T* dst)
{
  constexpr bool vector = K <= 4;
  using Load  = cub::BlockLoad<T, THREADS, K, vector ? cub::BLOCK_LOAD_VECTORIZE : cub::BLOCK_LOAD_TRANSPOSE>;
  using Store = cub::BlockStore<T, THREADS, K, vector ? cub::BLOCK_STORE_VECTORIZE : cub::BLOCK_STORE_TRANSPOSE>;
  using Scan  = cub::BlockScan<FlaggedValue<T>, THREADS>;
  __shared__ union
  {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename Scan::TempStorage scan;
  } temp;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T items[K];
  Load(temp.load).Load(src + base, items);
  FlaggedValue<T> pairs[K];
  for (int i = 0; i < K; ++i)
  {
    pairs[i] = {(static_cast<int>(items[i]) & 15) == 0 ? 1 : 0, items[i]};  // float: of the whole number
  }
  if constexpr (!vector)
  {
    __syncthreads(); // the scan reuses the load's shared memory
  }
  Scan(temp.scan).InclusiveScan(pairs, pairs, SegmentedSum<T>{});
  for (int i = 0; i < K; ++i)
  {
    items[i] = pairs[i].value;
  }
  if constexpr (!vector)
  {
    __syncthreads(); // the store reuses the scan's shared memory
  }
  Store(temp.store).Store(dst + base, items);
}

// The tile position of each tile's largest item (the first of equal ones): a blocked vectorized load (one
// 16-byte access per thread at 256x4 int32), BlockReduce over (value, position) pairs with an arg-max operator,
// thread 0 writes the position. The cuda.coop kernels load the same way (algorithm="vectorize").
template <typename T>
struct ValuePosition
{
  T value;
  int position;
};

// Compares values only: every step's left operand holds the earlier positions, so keeping it on a tie keeps the
// first position of the maximum. The thread's loop below goes up its blocked items; BlockReduce's default
// algorithm (BLOCK_REDUCE_WARP_REDUCTIONS, deterministic: it supports non-commutative operators) reduces each
// warp with shuffles down, lane i taking op(own, lane i + offset) for offsets 1, 2, 4, 8, 16 (lane 0 ends with
// the warp's lanes in order), then thread 0 folds the warp aggregates in warp order, op(first warps, next warp).
// Lane and warp order are thread order, which for a blocked tile is position order. (The input holds no NaN.)
template <typename T>
struct ArgMaxFirst
{
  __device__ __forceinline__ ValuePosition<T> operator()(const ValuePosition<T>& a, const ValuePosition<T>& b) const
  {
    return b.value > a.value ? b : a;
  }
};

template <typename T, int THREADS, int K>
__device__ __forceinline__ void tile_argmax(const T* src, int* positions)
{
  using Reduce = cub::BlockReduce<ValuePosition<T>, THREADS>;
  __shared__ typename Reduce::TempStorage temp;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T items[K];
  cub::LoadDirectBlockedVectorized(threadIdx.x, const_cast<T*>(src + base), items);
  ValuePosition<T> best = {items[0], static_cast<int>(threadIdx.x * K)};
  for (int i = 1; i < K; ++i)
  {
    const ValuePosition<T> mine = {items[i], static_cast<int>(threadIdx.x * K + i)};
    best = ArgMaxFirst<T>{}(best, mine);
  }
  const ValuePosition<T> winner = Reduce(temp).Reduce(best, ArgMaxFirst<T>{});
  if (threadIdx.x == 0)
  {
    positions[blockIdx.x] = winner.position;
  }
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

#define BENCH_TILE_REVERSE_INCLUSIVE_SUM(NAME, T, THREADS, K)                                         \
  extern "C" __global__ void NAME(const T* src, T* dst)                                              \
  {                                                                                                  \
    bench::tile_reverse_inclusive_sum<T, THREADS, K>(src, dst);                                      \
  }

// The launch bounds of the segmented sums per items per thread, BENCH_SEGMENTED_BOUNDS_<K> (a shape without one
// does not build). 4 items (vector accesses): 8 blocks of 256 threads per SM (32 registers, no spill; 39-40 and 6
// blocks without bounds). 16 items: none, as (256, 4) spills 4 bytes and (256, 3) keeps the 3 blocks of the 80
// registers nvcc takes without bounds.
#define BENCH_SEGMENTED_BOUNDS_4(THREADS) __launch_bounds__(THREADS, 8)
#define BENCH_SEGMENTED_BOUNDS_16(THREADS)

#define BENCH_TILE_SEGMENTED_INCLUSIVE_SUM(NAME, T, THREADS, K)                                       \
  extern "C" __global__ void BENCH_SEGMENTED_BOUNDS_##K(THREADS) NAME(const T* src, T* dst)          \
  {                                                                                                  \
    bench::tile_segmented_inclusive_sum<T, THREADS, K>(src, dst);                                    \
  }

#define BENCH_TILE_ARGMAX(NAME, T, THREADS, K)                                                        \
  extern "C" __global__ void NAME(const T* src, int* positions)                                      \
  {                                                                                                  \
    bench::tile_argmax<T, THREADS, K>(src, positions);                                               \
  }
