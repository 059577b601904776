// Tier 4 tile kernels (issue 9) written the way a CUDA C++ user writes them with CUB: the references of
// benchmarks/tier4.py. Block histogram (BlockHistogram, then one atomicAdd per bin into a global histogram),
// left adjacent difference (BlockAdjacentDifference::SubtractLeft), head flags (BlockDiscontinuity::FlagHeads),
// run-length decode (BlockRunLengthDecode, lengths constructor, then every window of T*D items) and batched warp
// sums (WarpReduceBatched::ReduceToStriped). As in the other files: one __shared__ union of the TempStorage types
// where several algorithms share memory, a barrier only where shared memory is reused, no __restrict__, and
// __launch_bounds__ only where nvcc then keeps more blocks per SM without spilling (the sort-based histograms,
// BENCH_HISTOGRAM_BOUNDS below; benchmarks/README.md, "How the twins are tuned"). benchmarks/cub_build.py includes
// this file and appends one BENCH_* line per kernel.
#include <cub/block/block_adjacent_difference.cuh>
#include <cub/block/block_discontinuity.cuh>
#include <cub/block/block_histogram.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_run_length_decode.cuh>
#include <cub/block/block_store.cuh>
#include <cub/warp/warp_load.cuh>
#include <cub/warp/warp_reduce_batched.cuh>

#include <cuda/std/cstdint>
#include <cuda/std/functional>
#include <cuda/std/type_traits>

namespace bench {

template <cub::BlockLoadAlgorithm A>
constexpr bool tier4_load_uses_shared = A == cub::BLOCK_LOAD_TRANSPOSE || A == cub::BLOCK_LOAD_WARP_TRANSPOSE
                                     || A == cub::BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED;

template <cub::BlockStoreAlgorithm A>
constexpr bool tier4_store_uses_shared = A == cub::BLOCK_STORE_TRANSPOSE || A == cub::BLOCK_STORE_WARP_TRANSPOSE
                                      || A == cub::BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED;

constexpr int histogram_bins = 256;

// Counts the block's THREADS x K samples (loaded striped: a histogram does not care about the order) into
// shared counters, then adds each bin to the global histogram.
template <typename T, int THREADS, int K, cub::BlockHistogramAlgorithm A>
__device__ __forceinline__ void block_histogram(const T* src, int* histogram)
{
  using Histogram = cub::BlockHistogram<T, THREADS, K, histogram_bins, A>;
  __shared__ typename Histogram::TempStorage temp;
  __shared__ int counters[histogram_bins];
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T samples[K];
  cub::LoadDirectStriped<THREADS>(threadIdx.x, src + base, samples); // = BlockLoad BLOCK_LOAD_STRIPED
  Histogram(temp).Histogram(samples, counters); // zeroes the counters, barrier, counts
  __syncthreads(); // every count is in before any thread reads a bin
  for (int bin = threadIdx.x; bin < histogram_bins; bin += THREADS)
  {
    atomicAdd(histogram + bin, counters[bin]);
  }
}

// current - neighbour, wrapping modulo 2^bits like the other implementations (no signed overflow).
struct WrappingDifference
{
  template <typename T>
  __device__ __forceinline__ T operator()(const T& current, const T& neighbour) const
  {
    using U = ::cuda::std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(current) - static_cast<U>(neighbour)));
  }
};

// out[p] = x[p] - x[p-1] over the block's tile, loaded and stored with IO. PREDECESSOR: the tile's first item
// subtracts the previous tile's last item (0 for the first tile); otherwise it is copied.
template <typename T, int THREADS, int K, cub::BlockLoadAlgorithm LA, cub::BlockStoreAlgorithm SA, bool PREDECESSOR>
__device__ __forceinline__ void adjacent_difference_left(const T* src, T* dst)
{
  using Load       = cub::BlockLoad<T, THREADS, K, LA>;
  using Difference = cub::BlockAdjacentDifference<T, THREADS>;
  using Store      = cub::BlockStore<T, THREADS, K, SA>;
  __shared__ union
  {
    typename Load::TempStorage load;
    typename Difference::TempStorage difference;
    typename Store::TempStorage store;
  } temp;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T items[K];
  Load(temp.load).Load(src + base, items);
  if constexpr (tier4_load_uses_shared<LA>)
  {
    __syncthreads(); // the difference reuses the load's shared memory
  }
  T out[K];
  if constexpr (PREDECESSOR)
  {
    const T predecessor = blockIdx.x == 0 ? T(0) : src[base - 1];
    Difference(temp.difference).SubtractLeft(items, out, WrappingDifference{}, predecessor);
  }
  else
  {
    Difference(temp.difference).SubtractLeft(items, out, WrappingDifference{});
  }
  if constexpr (tier4_store_uses_shared<SA>)
  {
    __syncthreads(); // the store reuses the difference's shared memory
  }
  Store(temp.store).Store(dst + base, out);
}

// flags[p] = keys[p] != keys[p-1] as int 1/0. PREDECESSOR: the previous tile's last key (the first tile's first
// key is compared with its complement: a head); otherwise every tile's first key is a head.
template <typename T, int THREADS, int K, cub::BlockLoadAlgorithm LA, cub::BlockStoreAlgorithm SA, bool PREDECESSOR>
__device__ __forceinline__ void discontinuity_heads(const T* keys, int* dst)
{
  using Load          = cub::BlockLoad<T, THREADS, K, LA>;
  using Discontinuity = cub::BlockDiscontinuity<T, THREADS>;
  using Store         = cub::BlockStore<int, THREADS, K, SA>;
  __shared__ union
  {
    typename Load::TempStorage load;
    typename Discontinuity::TempStorage discontinuity;
    typename Store::TempStorage store;
  } temp;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * K);
  T items[K];
  Load(temp.load).Load(keys + base, items);
  if constexpr (tier4_load_uses_shared<LA>)
  {
    __syncthreads(); // the flags reuse the load's shared memory
  }
  int flags[K];
  if constexpr (PREDECESSOR)
  {
    const T predecessor = blockIdx.x == 0 ? static_cast<T>(~keys[0]) : keys[base - 1];
    Discontinuity(temp.discontinuity).FlagHeads(flags, items, ::cuda::std::not_equal_to<T>{}, predecessor);
  }
  else
  {
    Discontinuity(temp.discontinuity).FlagHeads(flags, items, ::cuda::std::not_equal_to<T>{});
  }
  if constexpr (tier4_store_uses_shared<SA>)
  {
    __syncthreads(); // the store reuses the flags' shared memory
  }
  Store(temp.store).Store(dst + base, flags);
}

// The block's THREADS x R runs (blocked: thread t holds runs t*R ... t*R+R-1), decoded window by window (T*D
// items each, thread t writes its D consecutive items) into out[offsets[block] ...].
template <typename T, int THREADS, int R, int D>
__device__ __forceinline__ void run_length_decode(const T* values, const int* lengths, const long long* offsets, T* out)
{
  using LoadValues  = cub::BlockLoad<T, THREADS, R, cub::BLOCK_LOAD_VECTORIZE>;
  using LoadLengths = cub::BlockLoad<int, THREADS, R, cub::BLOCK_LOAD_VECTORIZE>;
  using Decode      = cub::BlockRunLengthDecode<T, THREADS, R, D>; // uint32_t decoded offsets
  __shared__ typename Decode::TempStorage temp; // the vectorized loads need none
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * R);
  T run_values[R];
  int run_lengths[R];
  LoadValues().Load(values + base, run_values);
  LoadLengths().Load(lengths + base, run_lengths);
  ::cuda::std::uint32_t total;
  Decode decode(temp, run_values, run_lengths, total); // scans the lengths, stores the run table, barrier
  T* segment = out + offsets[blockIdx.x];
  constexpr ::cuda::std::uint32_t window_items = THREADS * D;
  for (::cuda::std::uint32_t window = 0; window < total; window += window_items)
  {
    T decoded[D];
    decode.RunLengthDecode(decoded, window); // reads the table only: no barrier between windows
    if (total - window >= window_items)
    {
      cub::StoreDirectBlocked(threadIdx.x, segment + window, decoded);
    }
    else
    {
      cub::StoreDirectBlocked(threadIdx.x, segment + window, decoded, static_cast<int>(total - window));
    }
  }
}

// Each warp reduces the B columns of its 32 x B row-major tile (lane r loads row r, vectorized) with one
// WarpReduceBatched call; lane r slot i holds column r + 32*i, written to out[(block * WARPS + warp) * B + column].
template <typename T, int THREADS, int B>
__device__ __forceinline__ void warp_reduce_batched(const T* src, T* out)
{
  constexpr int WARPS = THREADS / 32;
  constexpr int SLOTS = (B + 31) / 32;
  using Load          = cub::WarpLoad<T, B, cub::WARP_LOAD_VECTORIZE, 32>;
  using Reduce        = cub::WarpReduceBatched<T, B, 32>;
  __shared__ typename Load::TempStorage load_temp[WARPS]; // vectorized: empty
  __shared__ typename Reduce::TempStorage reduce_temp[WARPS]; // shuffle-based: empty
  const int warp       = threadIdx.x / 32;
  const int lane       = threadIdx.x % 32;
  const long long base = static_cast<long long>(blockIdx.x) * (THREADS * B) + warp * (32 * B);
  T items[B];
  Load(load_temp[warp]).Load(src + base, items);
  T sums[SLOTS];
  Reduce(reduce_temp[warp]).ReduceToStriped(items, sums, ::cuda::std::plus<T>{});
  const long long first = (static_cast<long long>(blockIdx.x) * WARPS + warp) * B;
  for (int i = 0; i < SLOTS; ++i)
  {
    const int batch = lane + i * 32;
    if (batch < B)
    {
      out[first + batch] = sums[i];
    }
  }
}

} // namespace bench

// The launch bounds of each histogram algorithm and shape, BENCH_HISTOGRAM_BOUNDS_<ALG>_<K> (a shape without one
// does not build). The sort-based histogram (a radix sort of the samples, then run boundaries): 4 int32 samples,
// 6 blocks of 256 threads per SM (39-40 registers, no spill; nvcc 13.0 takes 47 without bounds, 5 blocks); 16
// samples, 3 blocks (80 registers for uint8, no spill, where it takes 90 without bounds, 2 blocks; (256, 4) spills;
// int32 samples get the same bounds and keep their 3 blocks, 78-80 registers). The atomic one keeps 8 blocks
// without bounds.
#define BENCH_HISTOGRAM_BOUNDS_SORT_4(THREADS) __launch_bounds__(THREADS, 6)
#define BENCH_HISTOGRAM_BOUNDS_SORT_16(THREADS) __launch_bounds__(THREADS, 3)
#define BENCH_HISTOGRAM_BOUNDS_ATOMIC_4(THREADS)
#define BENCH_HISTOGRAM_BOUNDS_ATOMIC_16(THREADS)

#define BENCH_BLOCK_HISTOGRAM(NAME, T, THREADS, K, ALG)                                               \
  extern "C" __global__ void BENCH_HISTOGRAM_BOUNDS_##ALG##_##K(THREADS) NAME(const T* src, int* histogram) \
  {                                                                                                  \
    bench::block_histogram<T, THREADS, K, cub::BLOCK_HISTO_##ALG>(src, histogram);                   \
  }

#define BENCH_ADJACENT_DIFFERENCE_LEFT(NAME, T, THREADS, K, IO, PREDECESSOR)                          \
  extern "C" __global__ void NAME(const T* src, T* dst)                                              \
  {                                                                                                  \
    bench::adjacent_difference_left<T, THREADS, K, cub::BLOCK_LOAD_##IO, cub::BLOCK_STORE_##IO,      \
                                    PREDECESSOR>(src, dst);                                          \
  }

#define BENCH_DISCONTINUITY_HEADS(NAME, T, THREADS, K, IO, PREDECESSOR)                               \
  extern "C" __global__ void NAME(const T* keys, int* dst)                                           \
  {                                                                                                  \
    bench::discontinuity_heads<T, THREADS, K, cub::BLOCK_LOAD_##IO, cub::BLOCK_STORE_##IO,           \
                               PREDECESSOR>(keys, dst);                                              \
  }

#define BENCH_RUN_LENGTH_DECODE(NAME, T, THREADS, R, D)                                               \
  extern "C" __global__ void NAME(const T* values, const int* lengths, const long long* offsets,    \
                                  T* out)                                                            \
  {                                                                                                  \
    bench::run_length_decode<T, THREADS, R, D>(values, lengths, offsets, out);                       \
  }

#define BENCH_WARP_REDUCE_BATCHED(NAME, T, THREADS, B)                                                \
  extern "C" __global__ void NAME(const T* src, T* out)                                              \
  {                                                                                                  \
    bench::warp_reduce_batched<T, THREADS, B>(src, out);                                             \
  }
