// CUB C++ twins of benchmarks/beyond.py (issue 42): broadcast, select and partition, compacted segment sums,
// warp and logical-warp top-k, partial tiles of the histogram and the radix sort, and running scans across tiles
// (forward, segmented, reverse). Each is the tile kernel of the cuda.coop rows in CUDA C++, written as a CUDA
// programmer writes it with CUB where CUB has no such call: the load and store algorithms of the cuda.coop kernels,
// a barrier only where shared memory is reused, no __restrict__, and __launch_bounds__ only where stated (the radix
// sort's, as sort.cu's). benchmarks/cub_build.py includes this file and appends one BENCH_* line per kernel.
//
// Every kernel has the signature NAME(const T* src, const int* aux, D* dst, int* out2): aux holds each block's
// valid_items (partial tiles), dst the main output (D = T, or int for the histogram), out2 each block's count
// (select, partition, segment sums) or the top-k indices; an unused pointer is ignored.
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_histogram.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/warp/warp_merge_sort.cuh>

#include <cuda/std/limits>
#include <cuda/std/type_traits>

namespace bench42 {

template <cub::BlockLoadAlgorithm A>
constexpr bool load_uses_shared =
  A == cub::BLOCK_LOAD_TRANSPOSE || A == cub::BLOCK_LOAD_WARP_TRANSPOSE || A == cub::BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED;

template <cub::BlockStoreAlgorithm A>
constexpr bool store_uses_shared = A == cub::BLOCK_STORE_TRANSPOSE || A == cub::BLOCK_STORE_WARP_TRANSPOSE
                                || A == cub::BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED;

// The tile's load and store of the element-wise rows (benchmarks/cute.py, segmented_tile_algorithm): 16-byte vector
// accesses at 4 items per thread, the transpose through shared memory beyond.
template <int K>
constexpr cub::BlockLoadAlgorithm tile_load = K <= 4 ? cub::BLOCK_LOAD_VECTORIZE : cub::BLOCK_LOAD_TRANSPOSE;
template <int K>
constexpr cub::BlockStoreAlgorithm tile_store = K <= 4 ? cub::BLOCK_STORE_VECTORIZE : cub::BLOCK_STORE_TRANSPOSE;
// A store of the first `count` items: direct (blocked) at 4 items, the transpose beyond.
template <int K>
constexpr cub::BlockStoreAlgorithm partial_store = K <= 4 ? cub::BLOCK_STORE_DIRECT : cub::BLOCK_STORE_TRANSPOSE;

// x - y, wrapping modulo 2^bits for integers (no signed overflow); exact for the whole-number float inputs.
template <typename T>
__device__ __forceinline__ T minus(T x, T y)
{
  if constexpr (::cuda::std::is_integral_v<T>)
  {
    using U = ::cuda::std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(x) - static_cast<U>(y)));
  }
  else
  {
    return x - y;
  }
}

template <typename T>
__device__ __forceinline__ T plus(T x, T y)
{
  if constexpr (::cuda::std::is_integral_v<T>)
  {
    using U = ::cuda::std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
  }
  else
  {
    return x + y;
  }
}

// A segment starts at every item whose (whole number's) low four bits are zero, as in cute.py's segmented rows.
template <typename T>
__device__ __forceinline__ int is_head(T x)
{
  return (static_cast<int>(x) & 15) == 0 ? 1 : 0;
}

// --- broadcast: every thread rebases its items on the tile's first item (thread 0's first), through a shared slot.
template <typename T, int THREADS, int K>
__device__ __forceinline__ void tile_broadcast(const T* src, T* dst)
{
  using Load  = cub::BlockLoad<T, THREADS, K, tile_load<K>>;
  using Store = cub::BlockStore<T, THREADS, K, tile_store<K>>;
  __shared__ union
  {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
  } temp;
  __shared__ T slot;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T items[K];
  Load(temp.load).Load(src + base, items);
  if (threadIdx.x == 0)
  {
    slot = items[0];
  }
  __syncthreads(); // the slot is written; the transposing store may reuse the load's memory
  const T first = slot;
  for (int i = 0; i < K; ++i)
  {
    items[i] = minus(items[i], first);
  }
  Store(temp.store).Store(dst + base, items);
}

// --- select / partition: keep the positive items. BlockScan of the flags gives each position its rank (kept: the
// number of kept items before it; rejected: count + its position - that number), BlockExchange::ScatterToBlocked
// moves the items there, then select stores the first `count` and partition the whole tile.
template <typename T, int THREADS, int K, bool PARTITION>
__device__ __forceinline__ void tile_select(const T* src, T* dst, int* counts)
{
  constexpr cub::BlockStoreAlgorithm SA = PARTITION ? tile_store<K> : partial_store<K>;
  using Load     = cub::BlockLoad<T, THREADS, K, tile_load<K>>;
  using Scan     = cub::BlockScan<int, THREADS>;
  using Exchange = cub::BlockExchange<T, THREADS, K>;
  using Store    = cub::BlockStore<T, THREADS, K, SA>;
  __shared__ union
  {
    typename Load::TempStorage load;
    typename Scan::TempStorage scan;
    typename Exchange::TempStorage exchange;
    typename Store::TempStorage store;
  } temp;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T items[K];
  Load(temp.load).Load(src + base, items);
  int ranks[K];
  for (int i = 0; i < K; ++i)
  {
    ranks[i] = items[i] > T(0) ? 1 : 0;
  }
  if constexpr (load_uses_shared<tile_load<K>>)
  {
    __syncthreads(); // the scan reuses the load's shared memory
  }
  int count;
  Scan(temp.scan).ExclusiveSum(ranks, ranks, count);
  for (int i = 0; i < K; ++i)
  {
    const int p = threadIdx.x * K + i;
    ranks[i]    = items[i] > T(0) ? ranks[i] : count + p - ranks[i];
  }
  __syncthreads(); // the exchange reuses the scan's shared memory
  Exchange(temp.exchange).ScatterToBlocked(items, ranks);
  if constexpr (store_uses_shared<SA>)
  {
    __syncthreads(); // the store reuses the exchange's shared memory
  }
  if constexpr (PARTITION)
  {
    Store(temp.store).Store(dst + base, items);
  }
  else
  {
    Store(temp.store).Store(dst + base, items, count);
  }
  if (threadIdx.x == 0)
  {
    counts[blockIdx.x] = count;
  }
}

// --- compacted segment sums: one BlockScan over (flag, head count, value) triples with the segmented operator. The
// exclusive scan at a segment start s_j (j >= 1) holds the previous segment's total and j heads before it; the block
// aggregate holds the last segment's total and the number of segments. The totals go to shared memory at their
// segment's number and the first `count` are stored, striped.
template <typename T>
struct Segment
{
  int flag;
  int heads;
  T value;
};

template <typename T>
struct SegmentOp
{
  __device__ __forceinline__ Segment<T> operator()(const Segment<T>& a, const Segment<T>& b) const
  {
    return {a.flag | b.flag, a.heads + b.heads, b.flag ? b.value : plus(a.value, b.value)};
  }
};

template <typename T, int THREADS, int K>
__device__ __forceinline__ void tile_segment_sums(const T* src, T* dst, int* counts)
{
  using Load = cub::BlockLoad<T, THREADS, K, tile_load<K>>;
  using Scan = cub::BlockScan<Segment<T>, THREADS>;
  __shared__ union
  {
    typename Load::TempStorage load;
    typename Scan::TempStorage scan;
    T totals[THREADS * K];
  } temp;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T items[K];
  Load(temp.load).Load(src + base, items);
  Segment<T> pairs[K];
  for (int i = 0; i < K; ++i)
  {
    const int head = (threadIdx.x == 0 && i == 0) ? 1 : is_head(items[i]); // position 0 starts a segment
    pairs[i]       = {head, head, items[i]};
  }
  if constexpr (load_uses_shared<tile_load<K>>)
  {
    __syncthreads(); // the scan reuses the load's shared memory
  }
  Segment<T> aggregate;
  Scan(temp.scan).ExclusiveScan(pairs, pairs, Segment<T>{0, 0, T(0)}, SegmentOp<T>{}, aggregate);
  __syncthreads(); // the totals reuse the scan's shared memory
  for (int i = 0; i < K; ++i)
  {
    const bool head = (threadIdx.x == 0 && i == 0) ? false : is_head(items[i]) != 0;
    if (head)
    {
      temp.totals[pairs[i].heads - 1] = pairs[i].value; // the segment before this one
    }
  }
  if (threadIdx.x == 0)
  {
    temp.totals[aggregate.heads - 1] = aggregate.value;
    counts[blockIdx.x]               = aggregate.heads;
  }
  __syncthreads(); // every total is in place
  for (int i = threadIdx.x; i < aggregate.heads; i += THREADS)
  {
    dst[base + i] = temp.totals[i];
  }
}

// --- warp / logical-warp top-k: each group of W lanes x K items sorts its row of W*K keys (with their positions)
// descending with WarpMergeSort; the first TOP blocked positions are the row's TOP largest keys, stored with their
// positions at row * TOP. The items are loaded blocked (vectorized at 4, direct at 1: the block's tile is its
// groups' rows one after another).
struct Greater
{
  template <typename T>
  __device__ __forceinline__ bool operator()(const T& a, const T& b) const
  {
    return a > b;
  }
};

template <typename T, int THREADS, int W, int K, int TOP>
__device__ __forceinline__ void warp_topk(const T* src, T* keys_out, int* positions_out)
{
  using Sort                 = cub::WarpMergeSort<T, K, W, int>;
  constexpr int groups       = THREADS / W;
  __shared__ typename Sort::TempStorage temp[groups];
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  const int group      = threadIdx.x / W;
  const int lane       = threadIdx.x % W;
  T keys[K];
  int positions[K];
  if constexpr (K == 4)
  {
    cub::LoadDirectBlockedVectorized(threadIdx.x, const_cast<T*>(src + base), keys);
  }
  else
  {
    cub::LoadDirectBlocked(threadIdx.x, src + base, keys);
  }
  for (int i = 0; i < K; ++i)
  {
    positions[i] = lane * K + i;
  }
  Sort(temp[group]).Sort(keys, positions, Greater{});
  const long long row = static_cast<long long>(blockIdx.x) * groups + group;
  for (int i = 0; i < K; ++i)
  {
    const int p = lane * K + i;
    if (p < TOP)
    {
      keys_out[row * TOP + p]      = keys[i];
      positions_out[row * TOP + p] = positions[i];
    }
  }
}

// --- partial tiles. Radix sort: the keys past the block's valid_items padded with the largest key by the load, a
// full BlockRadixSort, the whole tile stored (what cuda.coop's valid_items + oob_default = that key write too).
template <typename T, int THREADS, int K>
__device__ __forceinline__ void partial_radix_sort(const T* src, const int* valid, T* dst)
{
  using Load  = cub::BlockLoad<T, THREADS, K, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Sort  = cub::BlockRadixSort<T, THREADS, K>;
  using Store = cub::BlockStore<T, THREADS, K, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  __shared__ union
  {
    typename Load::TempStorage load;
    typename Sort::TempStorage sort;
    typename Store::TempStorage store;
  } temp;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T keys[K];
  Load(temp.load).Load(src + base, keys, valid[blockIdx.x], ::cuda::std::numeric_limits<T>::max());
  __syncthreads(); // the sort reuses the load's shared memory
  Sort(temp.sort).Sort(keys);
  __syncthreads(); // the store reuses the sort's shared memory
  Store(temp.store).Store(dst + base, keys);
}

// Histogram of 256 bins: the samples past valid_items padded with 0 by the load (the old padding recipe), counted
// with BlockHistogram, and bin 0's padding taken off before each bin's atomicAdd into the global histogram.
template <typename T, int THREADS, int K>
__device__ __forceinline__ void partial_histogram(const T* src, const int* valid, int* histogram)
{
  constexpr int bins = 256;
  using Load         = cub::BlockLoad<T, THREADS, K, K <= 4 ? cub::BLOCK_LOAD_DIRECT : cub::BLOCK_LOAD_TRANSPOSE>;
  using Histogram    = cub::BlockHistogram<T, THREADS, K, bins>;
  __shared__ union
  {
    typename Load::TempStorage load;
    typename Histogram::TempStorage histogram;
  } temp;
  __shared__ int counters[bins];
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  const int n          = valid[blockIdx.x];
  T samples[K];
  Load(temp.load).Load(src + base, samples, n, T(0));
  if constexpr (K > 4)
  {
    __syncthreads(); // the histogram reuses the load's shared memory
  }
  Histogram(temp.histogram).Histogram(samples, counters); // zeroes the counters, barrier, counts
  __syncthreads(); // every count is in before any thread reads a bin
  for (int bin = threadIdx.x; bin < bins; bin += THREADS)
  {
    atomicAdd(histogram + bin, bin == 0 ? counters[0] - (THREADS * K - n) : counters[bin]);
  }
}

// --- running scans: each block walks TILES consecutive tiles of its segment, carrying the running value in a block
// prefix callback functor (CUB calls it in the first warp; lane 0's result seeds the tile's scan).
template <typename T>
struct RunningTotal
{
  T total;
  __device__ __forceinline__ T operator()(T aggregate)
  {
    const T prior = total;
    total         = plus(total, aggregate);
    return prior;
  }
};

// The segmented carry: CUB hands the callback the pair aggregate (has a head, running value of the last segment);
// the prefix (no flag, the open segment's running value) joins only the positions before the tile's first head.
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
    return {a.flag | b.flag, b.flag ? b.value : plus(a.value, b.value)};
  }
};

template <typename T>
struct SegmentCarry
{
  T open;
  __device__ __forceinline__ FlaggedValue<T> operator()(FlaggedValue<T> aggregate)
  {
    const T prior = open;
    open          = aggregate.flag ? aggregate.value : plus(open, aggregate.value);
    return {0, prior};
  }
};

// OP 0: exclusive sum; 1: segmented inclusive sum (heads as is_head, the first tile's position 0 included by the
// zero carry); 2: reverse exclusive sum (tiles from the last, each read and written through reverse iterators around
// the forward scan, as cute.cu's reverse sums).
template <typename T, int THREADS, int K, int TILES, int OP>
__device__ __forceinline__ void running_scan(const T* src, T* dst)
{
  constexpr bool reverse         = OP == 2;
  constexpr cub::BlockLoadAlgorithm LA  = reverse ? cub::BLOCK_LOAD_TRANSPOSE : tile_load<K>;
  constexpr cub::BlockStoreAlgorithm SA = reverse ? cub::BLOCK_STORE_TRANSPOSE : tile_store<K>;
  using Item  = ::cuda::std::conditional_t<OP == 1, FlaggedValue<T>, T>;
  using Load  = cub::BlockLoad<T, THREADS, K, LA>;
  using Scan  = cub::BlockScan<Item, THREADS>;
  using Store = cub::BlockStore<T, THREADS, K, SA>;
  __shared__ union
  {
    typename Load::TempStorage load;
    typename Scan::TempStorage scan;
    typename Store::TempStorage store;
  } temp;
  constexpr int tile   = THREADS * K;
  const long long base = static_cast<long long>(blockIdx.x) * (tile * TILES);
  RunningTotal<T> running{T(0)};
  SegmentCarry<T> carry{T(0)};
  for (int t = 0; t < TILES; ++t)
  {
    T items[K];
    const long long offset = base + static_cast<long long>(reverse ? TILES - 1 - t : t) * tile;
    if constexpr (reverse)
    {
      Load(temp.load).Load(::cuda::std::make_reverse_iterator(src + offset + tile), items);
    }
    else
    {
      Load(temp.load).Load(src + offset, items);
    }
    if constexpr (load_uses_shared<LA>)
    {
      __syncthreads(); // the scan reuses the load's shared memory
    }
    if constexpr (OP == 1)
    {
      FlaggedValue<T> pairs[K];
      for (int i = 0; i < K; ++i)
      {
        pairs[i] = {is_head(items[i]), items[i]};
      }
      Scan(temp.scan).InclusiveScan(pairs, pairs, SegmentedSum<T>{}, carry);
      for (int i = 0; i < K; ++i)
      {
        items[i] = pairs[i].value;
      }
    }
    else
    {
      Scan(temp.scan).ExclusiveSum(items, items, running);
    }
    if constexpr (store_uses_shared<SA>)
    {
      __syncthreads(); // the store reuses the scan's shared memory
    }
    if constexpr (reverse)
    {
      Store(temp.store).Store(::cuda::std::make_reverse_iterator(dst + offset + tile), items);
    }
    else
    {
      Store(temp.store).Store(dst + offset, items);
    }
    __syncthreads(); // the next tile's load (or scan) reuses the shared memory
  }
}

} // namespace bench42

// The radix sort's launch bounds per items per thread (sort.cu's: 6 blocks of 256 threads per SM at 4 items, none at
// 16; to be confirmed for these twins by `python -m benchmarks.sass_audit`).
#define BENCH42_SORT_BOUNDS_4(THREADS) __launch_bounds__(THREADS, 6)
#define BENCH42_SORT_BOUNDS_16(THREADS)

#define BENCH42_BROADCAST(NAME, T, THREADS, K)                                                        \
  extern "C" __global__ void NAME(const T* src, const int* aux, T* dst, int* out2)                  \
  {                                                                                                  \
    bench42::tile_broadcast<T, THREADS, K>(src, dst);                                                \
  }

#define BENCH42_SELECT(NAME, T, THREADS, K, PARTITION)                                                \
  extern "C" __global__ void NAME(const T* src, const int* aux, T* dst, int* out2)                  \
  {                                                                                                  \
    bench42::tile_select<T, THREADS, K, PARTITION>(src, dst, out2);                                  \
  }

#define BENCH42_SEGMENT_SUMS(NAME, T, THREADS, K)                                                     \
  extern "C" __global__ void NAME(const T* src, const int* aux, T* dst, int* out2)                  \
  {                                                                                                  \
    bench42::tile_segment_sums<T, THREADS, K>(src, dst, out2);                                       \
  }

#define BENCH42_WARP_TOPK(NAME, T, THREADS, W, K, TOP)                                                \
  extern "C" __global__ void NAME(const T* src, const int* aux, T* dst, int* out2)                  \
  {                                                                                                  \
    bench42::warp_topk<T, THREADS, W, K, TOP>(src, dst, out2);                                       \
  }

#define BENCH42_PARTIAL_RADIX_SORT(NAME, T, THREADS, K)                                               \
  extern "C" __global__ void BENCH42_SORT_BOUNDS_##K(THREADS) NAME(const T* src, const int* aux, T* dst, int* out2) \
  {                                                                                                  \
    bench42::partial_radix_sort<T, THREADS, K>(src, aux, dst);                                       \
  }

#define BENCH42_PARTIAL_HISTOGRAM(NAME, T, THREADS, K)                                                \
  extern "C" __global__ void NAME(const T* src, const int* aux, int* dst, int* out2)                \
  {                                                                                                  \
    bench42::partial_histogram<T, THREADS, K>(src, aux, dst);                                        \
  }

#define BENCH42_RUNNING_SCAN(NAME, T, THREADS, K, TILES, OP)                                          \
  extern "C" __global__ void NAME(const T* src, const int* aux, T* dst, int* out2)                  \
  {                                                                                                  \
    bench42::running_scan<T, THREADS, K, TILES, OP>(src, dst);                                       \
  }
