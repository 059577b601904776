// Every algorithm of include/cuda_coop instantiated the ways the providers instantiate it (tests/compile/
// test_own_headers_compile.py builds this under NVRTC and under the bitcode route's clang): payloads and single
// values, sums and a non-commutative operator, aggregates, blocks of one warp, of a partial last warp, of several
// warps in three dimensions.
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>

#include <cuda/std/functional>

#include <cuda_coop/block/block_arg_reduce.cuh>
#include <cuda_coop/block/block_broadcast.cuh>
#include <cuda_coop/block/block_cluster_reduce.cuh>
#include <cuda_coop/block/block_histogram_striped.cuh>
#include <cuda_coop/block/block_load_store_rolled.cuh>
#include <cuda_coop/block/block_reverse_scan.cuh>
#include <cuda_coop/block/block_run_length_decode.cuh>
#include <cuda_coop/block/block_running_reverse_scan.cuh>
#include <cuda_coop/block/block_running_segmented_scan.cuh>
#include <cuda_coop/block/block_segmented_reverse_scan.cuh>
#include <cuda_coop/block/block_segmented_scan.cuh>
#include <cuda_coop/block/block_select.cuh>
#include <cuda_coop/block/block_single_item.cuh>
#include <cuda_coop/block/block_vectorized.cuh>
#include <cuda_coop/block/block_suffix_scan.cuh>
#include <cuda_coop/block/block_warps_reduce.cuh>
#include <cuda_coop/util_arg.cuh>
#include <cuda_coop/util_check.cuh>
#include <cuda_coop/util_cluster.cuh>
#include <cuda_coop/util_group.cuh>
#include <cuda_coop/util_items.cuh>
#include <cuda_coop/util_operators.cuh>
#include <cuda_coop/util_radix.cuh>
#include <cuda_coop/util_segment.cuh>
#include <cuda_coop/util_sync.cuh>
#include <cuda_coop/warp/warp_arg_reduce.cuh>
#include <cuda_coop/warp/warp_broadcast.cuh>
#include <cuda_coop/warp/warp_partial_scan.cuh>
#include <cuda_coop/warp/warp_reverse_scan.cuh>
#include <cuda_coop/warp/warp_segmented_scan.cuh>
#include <cuda_coop/warp/warp_select.cuh>
#include <cuda_coop/warp/warp_topk.cuh>

namespace {

struct keep_right {  // associative, not commutative
  template <typename T>
  __device__ T operator()(const T&, const T& b) const {
    return b;
  }
};

struct two {  // an aggregate payload
  int a;
  float b;
};

struct two_op {
  __device__ two operator()(const two& x, const two& y) const { return {x.a + y.a, y.b}; }
};

template <typename T, typename Op, int BX, int BY, int BZ, int K>
__device__ void block_scans(T* data, const int* flags, T* aggregate, char* scratch, Op op) {
  T (&items)[K] = *reinterpret_cast<T (*)[K]>(data);
  const int (&heads)[K] = *reinterpret_cast<const int (*)[K]>(flags);
  T out[K];
  using Reverse = cuda_coop::BlockReverseScan<T, BX, BY, BZ>;
  auto& reverse_storage = *reinterpret_cast<typename Reverse::TempStorage*>(scratch);
  Reverse(reverse_storage).InclusiveScan(items, out, op);
  Reverse(reverse_storage).InclusiveScan(items, out, op, *aggregate);
  Reverse(reverse_storage).ExclusiveScan(items, out, items[0], op);
  Reverse(reverse_storage).ExclusiveScan(items, out, items[0], op, *aggregate);
  T single;
  Reverse(reverse_storage).InclusiveScan(items[0], single, op);
  Reverse(reverse_storage).ExclusiveScan(items[0], single, items[0], op, *aggregate);
  using Segmented = cuda_coop::BlockSegmentedScan<T, BX, cub::BLOCK_SCAN_WARP_SCANS, BY, BZ>;
  auto& segmented_storage = *reinterpret_cast<typename Segmented::TempStorage*>(scratch);
  Segmented(segmented_storage).InclusiveScan(items, out, heads, op);
  Segmented(segmented_storage).InclusiveScan(items, out, heads, op, *aggregate);
  Segmented(segmented_storage).ExclusiveScan(items, out, heads, items[0], op);
  Segmented(segmented_storage).ExclusiveScan(items, out, heads, items[0], op, *aggregate);
  Segmented(segmented_storage).InclusiveScan(items[0], single, heads[0], op);
  Segmented(segmented_storage).ExclusiveScan(items[0], single, heads[0], items[0], op, *aggregate);
  using SegmentedReverse = cuda_coop::BlockSegmentedReverseScan<T, BX, BY, BZ>;
  auto& segmented_reverse_storage = *reinterpret_cast<typename SegmentedReverse::TempStorage*>(scratch);
  SegmentedReverse(segmented_reverse_storage).InclusiveScan(items, out, heads, op);
  SegmentedReverse(segmented_reverse_storage).InclusiveScan(items, out, heads, op, *aggregate);
  SegmentedReverse(segmented_reverse_storage).ExclusiveScan(items, out, heads, items[0], op);
  SegmentedReverse(segmented_reverse_storage).ExclusiveScan(items, out, heads, items[0], op, *aggregate);
  SegmentedReverse(segmented_reverse_storage).ExclusiveScan(items[0], single, (unsigned char)heads[0], items[0], op);
  int ranks[K];
  const int marked =
      SegmentedReverse(segmented_reverse_storage).InclusiveScanCounting(items, out, heads, heads, op, ranks);
  if (marked == ranks[K - 1]) {
    out[0] = single;
  }
#pragma unroll
  for (int i = 0; i < K; ++i) {
    items[i] = out[i];
  }
  items[0] = single;
}

template <typename T>
struct head_callback {  // a running segmented scan's prefix callback: (aggregate, has_head) -> prefix
  T* state;
  __device__ T operator()(T aggregate, int has_head) {
    const T prefix = *state;
    *state = has_head ? aggregate : prefix;
    return prefix;
  }
};

template <typename T>
struct suffix_callback {  // a reverse running scan's: aggregate -> prefix
  T* state;
  __device__ T operator()(T aggregate) {
    const T prefix = *state;
    *state = aggregate;
    return prefix;
  }
};

template <typename T, typename Op, int BX, int BY, int BZ, int K>
__device__ void running_scans(T* data, const int* flags, T* state, char* scratch, Op op) {
  T (&items)[K] = *reinterpret_cast<T (*)[K]>(data);
  const int (&heads)[K] = *reinterpret_cast<const int (*)[K]>(flags);
  T out[K];
  T single;
  head_callback<T> with_heads{state};
  using Running = cuda_coop::BlockRunningSegmentedScan<T, BX, cub::BLOCK_SCAN_RAKING, BY, BZ>;
  auto& running_storage = *reinterpret_cast<typename Running::TempStorage*>(scratch);
  Running(running_storage).InclusiveScan(items, out, heads, op, with_heads);
  Running(running_storage).ExclusiveScan(items, out, heads, items[0], op, with_heads);
  Running(running_storage).InclusiveScan(items[0], single, (unsigned char)heads[0], op, with_heads);
  Running(running_storage).ExclusiveScan(items[0], single, heads[0], items[0], op, with_heads);
  suffix_callback<T> suffix{state};
  using RunningReverse = cuda_coop::BlockRunningReverseScan<T, BX, BY, BZ>;
  auto& reverse_storage = *reinterpret_cast<typename RunningReverse::TempStorage*>(scratch);
  RunningReverse(reverse_storage).InclusiveScan(items, out, op, suffix);
  RunningReverse(reverse_storage).ExclusiveScan(items, out, op, suffix);
  RunningReverse(reverse_storage).InclusiveScan(items[0], single, op, suffix);
  RunningReverse(reverse_storage).ExclusiveScan(items[0], single, op, suffix);
#pragma unroll
  for (int i = 0; i < K; ++i) {
    items[i] = out[i];
  }
  items[0] = single;
}

template <typename T, int BX, int BY, int BZ, int K>
__device__ void running_sums(T* data, const int* flags, T* state, char* scratch) {
  T (&items)[K] = *reinterpret_cast<T (*)[K]>(data);
  const int (&heads)[K] = *reinterpret_cast<const int (*)[K]>(flags);
  T out[K];
  T single;
  head_callback<T> with_heads{state};
  using Running = cuda_coop::BlockRunningSegmentedScan<T, BX, cub::BLOCK_SCAN_WARP_SCANS, BY, BZ>;
  auto& storage = *reinterpret_cast<typename Running::TempStorage*>(scratch);
  Running(storage).ExclusiveSum(items, out, heads, with_heads);
  Running(storage).ExclusiveSum(items[0], single, heads[0], with_heads);
  items[0] = out[K - 1] + single;
}

template <typename T, int BX, int BY, int BZ, int K>
__device__ void block_sums(T* data, T* aggregate, char* scratch) {
  T (&items)[K] = *reinterpret_cast<T (*)[K]>(data);
  using Reverse = cuda_coop::BlockReverseScan<T, BX, BY, BZ>;
  auto& storage = *reinterpret_cast<typename Reverse::TempStorage*>(scratch);
  T out[K];
  Reverse(storage).InclusiveSum(items, out);
  Reverse(storage).ExclusiveSum(items, out, *aggregate);
  T single;
  Reverse(storage).ExclusiveSum(items[0], single);
  Reverse(storage).InclusiveSum(items[0], single, *aggregate);
  items[0] = out[K - 1] + single;
}

template <typename T, typename Op, int W>
__device__ void warp_scans(T* data, const int* flags, T* aggregate, Op op) {
  T value = data[0];
  const int head = flags[0];
  cuda_coop::WarpReverseScan<T, W, 64, 2, 1> reverse;
  reverse.InclusiveScan(value, value, op);
  reverse.InclusiveScan(value, value, op, *aggregate);
  reverse.ExclusiveScan(value, value, data[1], op);
  reverse.ExclusiveScan(value, value, data[1], op, *aggregate);
  cuda_coop::WarpSegmentedScan<T, W, 64, 2, 1> segmented;
  segmented.InclusiveScan(value, value, head, op);
  segmented.ExclusiveScan(value, value, head, data[1], op, *aggregate);
  cuda_coop::WarpSegmentedReverseScan<T, W, 64, 2, 1> segmented_reverse;
  segmented_reverse.InclusiveScan(value, value, head, op, *aggregate);
  segmented_reverse.ExclusiveScan(value, value, head, data[1], op);
  cuda_coop::WarpPartialScan<T, W, 64, 2, 1> partial;
  partial.InclusiveScan(value, value, op, 3, *aggregate);
  partial.ExclusiveScan(value, value, data[1], op, 3, *aggregate);
  data[0] = value;
}

template <typename T, int W>
__device__ void warp_sums(T* data, T* aggregate) {
  T value = data[0];
  cuda_coop::WarpReverseScan<T, W, 64, 2, 1> reverse;
  reverse.InclusiveSum(value, value);
  reverse.ExclusiveSum(value, value, *aggregate);
  cuda_coop::WarpPartialScan<T, W, 64, 2, 1>().InclusiveScan(value, value, ::cuda::std::plus<T>{}, 5, *aggregate);
  data[0] = value;
}

template <typename T, bool VALID, bool INDICES>
__device__ void arg_reductions(T* values, int* indices, char* scratch) {
  T (&items)[4] = *reinterpret_cast<T (*)[4]>(values);
  T value;
  int index;
  using Block = cuda_coop::BlockArgReduce<T, int, true, true, VALID, true, 64, 2, 1>;
  Block(*reinterpret_cast<typename Block::TempStorage*>(scratch)).template Reduce<INDICES>(items, indices, 77, value,
                                                                                            index);
  using Min = cuda_coop::BlockArgReduce<T, long long, false, false, VALID, false, 48, 1, 1>;
  long long position;
  Min(*reinterpret_cast<typename Min::TempStorage*>(scratch)).template Reduce<false>(items[0], nullptr, 5, value,
                                                                                      position);
  cuda_coop::WarpArgReduce<T, int, false, true, VALID, true, 16, 64, 2, 1>().template Reduce<INDICES>(
      items, indices, 9, value, index);
  cuda_coop::WarpArgReduce<T, int, true, false, VALID, false, 32, 64, 2, 1>().template Reduce<INDICES>(
      items[1], indices, 9, value, index);
  values[0] = value + (T)index + (T)position;
}

// A block's slots (payloads, a single value, an aggregate, in three dimensions and with a partial warp) and warp
// shuffles of power-of-two and other widths, 64-bit items as two words.
template <typename T>
__device__ void broadcasts(T* data, two* twos, long long src_rank, char* scratch) {
  struct Slots {
    T m0[4];
    two m1[1];
    double m2[2];
    T m3[1];
  };
  auto& slots = *reinterpret_cast<Slots*>(scratch);
  const T single = data[4];
  const cuda_coop::BlockBroadcast<8, 4, 2> block(src_rank);
  block.Write(slots.m0, data);
  block.Write(slots.m1, twos);
  block.Write(slots.m2, reinterpret_cast<const double*>(data + 8));
  block.Sync();
  T out[4];
  two pair;
  double wide[2];
  block.Read(out, slots.m0);
  block.Read(&pair, slots.m1);
  block.Read(wide, slots.m2);
  cuda_coop::BlockBroadcast<48, 1, 1>(src_rank).Write(slots.m3, &single);
  cuda_coop::WarpBroadcast<32, 8, 4, 2>(src_rank).template Broadcast<4>(out, data);
  cuda_coop::WarpBroadcast<8, 64, 2, 1>(src_rank).template Broadcast<1>(&pair, twos);
  cuda_coop::WarpBroadcast<12, 64, 2, 1>(src_rank).template Broadcast<2>(wide, reinterpret_cast<const double*>(data));
  cuda_coop::WarpBroadcast<1, 64, 2, 1>(src_rank).template Broadcast<1>(out, &single);
  data[0] = out[1] + (T)wide[1] + (T)pair.a;
}

// Compaction ranks and moves: blocks of whole warps and with a partial warp (raking), int and aggregate items,
// flags of other integer types; warps of 32 lanes, logical warps of 8 and of 1 lane, K of 1, 3 and 8 (CUB pads).
template <typename T, typename Flag, int K>
__device__ void selects(T* data, two* twos, const Flag* flags, long long valid, char* scratch, unsigned rank) {
  const T (&in)[K] = *reinterpret_cast<const T (*)[K]>(data);
  const Flag (&keep)[K] = *reinterpret_cast<const Flag (*)[K]>(flags);
  T out[K];
  two pairs_in[K], pairs[K];
  int ranks[K];
  using Ranks = cuda_coop::BlockSelectRanks<K, 8, 4, 2>;
  int n = Ranks(*reinterpret_cast<typename Ranks::TempStorage*>(scratch)).Rank(keep, valid, ranks);
  __syncthreads();
  using Exchange = cuda_coop::BlockSelectExchange<T, K, 8, 4, 2>;
  Exchange(*reinterpret_cast<typename Exchange::TempStorage*>(scratch)).ScatterToBlocked(in, out, ranks);
  using Partial = cuda_coop::BlockSelectRanks<K, 48, 1, 1>;
  n += Partial(*reinterpret_cast<typename Partial::TempStorage*>(scratch)).Rank(keep, valid, ranks);
  using Pairs = cuda_coop::BlockSelectExchange<two, K, 48, 1, 1>;
  Pairs(*reinterpret_cast<typename Pairs::TempStorage*>(scratch)).ScatterToBlocked(pairs_in, pairs, ranks);
  const unsigned mask = cuda_coop::logical_warp_mask(rank, 8u);
  n += cuda_coop::WarpSelectRanks<K, 32, 8, 4, 2>().Rank(keep, valid, ranks);
  using Warp = cuda_coop::WarpSelectExchange<T, K, 32>;
  Warp(*reinterpret_cast<typename Warp::TempStorage*>(scratch), 0xffffffffu).Scatter(in, out, ranks);
  n += cuda_coop::WarpSelectRanks<K, 8, 64, 1, 1>().Rank(keep, valid, ranks);
  using Lanes = cuda_coop::WarpSelectExchange<two, K, 8>;
  Lanes(*reinterpret_cast<typename Lanes::TempStorage*>(scratch), mask).Scatter(pairs_in, pairs, ranks);
  n += cuda_coop::WarpSelectRanks<K, 1, 64, 1, 1>().Rank(keep, valid, ranks);
  using Lone = cuda_coop::WarpSelectExchange<T, K, 1>;
  Lone(*reinterpret_cast<typename Lone::TempStorage*>(scratch), 1u << (rank % 32u)).Scatter(in, out, ranks);
  int cut[K], starts[K], whole[K], kept[K];
  cuda_coop::isolated_starts(keep, (int)rank * K, (int)valid, cut);
  cuda_coop::isolated_starts(keep, whole);
  cuda_coop::segment_starts(keep, (int)rank * K, starts);
  cuda_coop::segment_starts(keep, (int)rank * K, (int)valid, kept);
  using Kept = cuda_coop::BlockScatterKept<T, K, 8, 4, 2>;
  Kept(*reinterpret_cast<typename Kept::TempStorage*>(scratch)).ScatterToBlocked(in, out, kept, ranks, n);
  using KeptPairs = cuda_coop::BlockScatterKept<two, K, 48, 1, 1>;
  KeptPairs(*reinterpret_cast<typename KeptPairs::TempStorage*>(scratch)).ScatterToBlocked(pairs_in, pairs, starts,
                                                                                           ranks, n);
  data[0] = out[K - 1] + (T)n + (T)pairs[0].a + (T)cut[0] + (T)starts[K - 1] + (T)whole[0];
}

__device__ void barriers(unsigned rank) {
  cuda_coop::sync_block();
  cuda_coop::sync_block_unaligned();
  cuda_coop::sync_lanes(0xffu);
  cuda_coop::sync_logical_warp(rank, 8u);
  cuda_coop::sync_named<1, 64>();
  cuda_coop::sync_cluster<true>();
  cuda_coop::sync_cluster<false>();
  cuda_coop::sync_cluster_release_acquire();
}

template <typename T, int K>
__device__ void rolled(T* tile, T* items, long long valid, unsigned rank) {
  cuda_coop::load_rolled<K, 128, true>(rank, tile, items);
  cuda_coop::load_rolled<K, 128, false>(rank, tile, items, valid);
  cuda_coop::load_rolled<K, 8, true>(rank % 8, tile, items, valid, items[0]);
  cuda_coop::store_rolled<K, 128, false>(rank, tile, items);
  cuda_coop::store_rolled<K, 8, true>(rank % 8, tile, items, valid);
}

// Groups of warps and clusters; WORD: the words a T is read in from another block (its size and alignment).
template <typename T, bool SUM, int WORD, typename Op>
__device__ void group_reductions(T* data, char* scratch, Op op) {
  T items[2] = {data[0], data[1]};
  using Warps = cuda_coop::BlockWarpsReduce<T, 2, 128, 64, 2, 1>;
  auto& warps = *reinterpret_cast<typename Warps::TempStorage*>(scratch);
  T result = Warps(warps).Reduce(items[0], op);
  result = op(result, cuda_coop::BlockWarpsReduce<T, 1, 96, 64, 2, 1>().Reduce(items[1], op));
  using Cluster = cuda_coop::BlockClusterReduce<T, true, WORD, 64, 2, 1>;
  auto& cluster = *reinterpret_cast<typename Cluster::TempStorage*>(scratch);
  result = op(result, Cluster(cluster).Reduce(items, op));
  using Lone = cuda_coop::BlockClusterReduce<T, false, WORD, 48, 1, 1>;
  result = op(result, Lone(*reinterpret_cast<typename Lone::TempStorage*>(scratch)).Reduce(items[0], op));
  if constexpr (SUM) {
    result = op(result, Warps(warps).Sum(items[1]));
    result = op(result, Cluster(cluster).Sum(items));
  }
  data[0] = result;
}

template <typename T, typename Length, typename Offset>
__device__ void run_lengths(T* values, const Length* lengths, Offset* offsets, char* scratch) {
  using Decode = cuda_coop::BlockRunLengthDecode<T, Length, Offset, 64, 2, 4>;
  Decode table(*reinterpret_cast<typename Decode::TempStorage*>(scratch), values, lengths);
  table.RunLengthDecode(values + 128, 5);
  table.RunLengthDecode(values + 128, offsets, 5);
  offsets[0] = table.RunLengthDecodeInto(values, 1000, 3) + table.RunLengthDecodeInto(values, 1000, offsets, 1000, 3) +
               table.TotalDecodedSize();
}

struct int_two {  // a multi-operand value: one field per operand
  int f0;
  two f1;
};

__device__ void items(int* ints, two* twos, unsigned rank) {
  int copy[4];
  cuda_coop::copy_items(copy, ints);
  int_two tuples[3];
  cuda_coop::gather_field(tuples, &int_two::f0, ints);
  cuda_coop::gather_field(tuples, &int_two::f1, twos);
  cuda_coop::scatter_field(ints + 8, tuples, &int_two::f0);
  cuda_coop::scatter_field(twos + 8, tuples, &int_two::f1);
  cuda_coop::pad_blocked(copy, rank, ints[5], -1);
  unsigned bits[4];
  cuda_coop::ordered_bits<unsigned, true>(copy, bits);
  unsigned long long wide[2];
  cuda_coop::ordered_bits<unsigned long long, false>(reinterpret_cast<const unsigned long long*>(ints), wide);
  unsigned char small[2];
  cuda_coop::ordered_bits<unsigned char, true>(reinterpret_cast<const signed char*>(ints), small);
  ints[0] = (int)(bits[3] + wide[1] + small[1]);
}

// Top-k of warp groups: each key kind and width, one key per lane (shuffles) and several (merge sort in the
// group's scratch), keys alone and with values (an aggregate among them), whole and partial tiles.
template <typename Key, cuda_coop::KeyKind KIND>
__device__ void warp_topks(Key* keys, two* twos, int valid, char* scratch) {
  Key one[1] = {keys[0]};
  typename cuda_coop::WarpTopK<Key, KIND, 1, 32, cub::NullType, false, true>::TempStorage none;
  cuda_coop::WarpTopK<Key, KIND, 1, 32, cub::NullType, false, true>(none).template Select<true>(one, valid);
  two pair[1] = {twos[0]};
  typename cuda_coop::WarpTopK<Key, KIND, 1, 8, two, true, true>::TempStorage none_pairs;
  cuda_coop::WarpTopK<Key, KIND, 1, 8, two, true, true>(none_pairs).template Select<false>(one, pair, valid);
  Key four[4] = {keys[1], keys[2], keys[3], keys[4]};
  using Merge = cuda_coop::WarpTopK<Key, KIND, 4, 16, cub::NullType, true, false>;
  Merge(*reinterpret_cast<typename Merge::TempStorage*>(scratch)).template Select<true>(four, valid);
  int values[4] = {1, 2, 3, 4};
  using MergePairs = cuda_coop::WarpTopK<Key, KIND, 4, 1, int, false, false>;
  MergePairs(*reinterpret_cast<typename MergePairs::TempStorage*>(scratch)).template Select<true>(four, values, valid);
  keys[0] = one[0];
  keys[1] = four[values[0] & 3];
  twos[0] = pair[0];
}

// A block's vectorised load and store of K items of T (the emitter's calls, on a 64 x 2 block).
template <typename T, int K>
__device__ void vectorized_copies(T* data) {
  using Load = cub::BlockLoad<T, 64, K, cub::BLOCK_LOAD_VECTORIZE, 2, 1>;
  using Store = cub::BlockStore<T, 64, K, cub::BLOCK_STORE_VECTORIZE, 2, 1>;
  typename Load::TempStorage unused_load;
  typename Store::TempStorage unused_store;
  Load load(unused_load);
  Store store(unused_store);
  T items[K];
  cuda_coop::block_load_vectorized<64, 2, 1>(load, data + 1, items);  // not aligned to a vector: item by item
  for (int i = 0; i < K; ++i) items[i] = items[i] + items[i];
  cuda_coop::block_store_vectorized<64, 2, 1>(store, data + 2 * 128 * K, items);
}

__device__ void cluster_facts(unsigned long long* out) {
  unsigned rank = 0, count = 1;
  unsigned long long cluster = out[0], clusters = out[1];
  cuda_coop::cluster_position(rank, count, cluster, clusters);
  out[0] = rank + count + cluster + clusters + cuda_coop::map_cluster_shared(16u, rank) +
           cuda_coop::load_cluster_shared<unsigned char, 1>(0u) + cuda_coop::load_cluster_shared<short, 2>(0u);
}

}  // namespace

extern "C" __global__ void instantiate_all(int* ints, float* floats, two* twos, const int* flags, char* out) {
  __shared__ alignas(16) char scratch[8192];
  cuda_coop::check_range(ints[0], 0, 10);
  const unsigned rank = cuda_coop::linear_rank<8, 4, 2>();
  out[rank] = (char)cuda_coop::logical_warp_mask(rank, 8u) + (char)cuda_coop::group_instance<8>(rank);
  block_scans<int, keep_right, 8, 4, 2, 3>(ints, flags, ints + 100, scratch, keep_right{});
  block_scans<float, cuda::maximum<float>, 48, 1, 1, 1>(floats, flags, floats + 100, scratch, cuda::maximum<float>{});
  block_scans<two, two_op, 32, 1, 1, 4>(twos, flags, twos + 100, scratch, two_op{});
  block_scans<int, ::cuda::std::plus<int>, 5, 1, 1, 2>(ints, flags, ints + 100, scratch, ::cuda::std::plus<int>{});
  running_scans<int, keep_right, 8, 4, 2, 3>(ints, flags, ints + 100, scratch, keep_right{});
  running_scans<float, cuda::maximum<float>, 48, 1, 1, 1>(floats, flags, floats + 100, scratch,
                                                          cuda::maximum<float>{});
  running_scans<two, two_op, 32, 1, 1, 4>(twos, flags, twos + 100, scratch, two_op{});
  running_scans<int, ::cuda::std::plus<int>, 5, 1, 1, 2>(ints, flags, ints + 100, scratch, ::cuda::std::plus<int>{});
  running_sums<int, 128, 1, 1, 4>(ints, flags, ints + 100, scratch);
  running_sums<double, 64, 1, 1, 1>(reinterpret_cast<double*>(floats), flags, reinterpret_cast<double*>(floats) + 100,
                                    scratch);
  block_sums<int, 128, 1, 1, 4>(ints, ints + 100, scratch);
  block_sums<double, 33, 1, 1, 1>(reinterpret_cast<double*>(floats), reinterpret_cast<double*>(floats) + 100,
                                   scratch);
  warp_scans<int, keep_right, 32>(ints, flags, ints + 100, keep_right{});
  warp_scans<two, two_op, 8>(twos, flags, twos + 100, two_op{});
  warp_sums<float, 16>(floats, floats + 100);
  cub::BlockStore<float, 64, 4, cub::BLOCK_STORE_VECTORIZE, 2, 1> store(
      *reinterpret_cast<cub::BlockStore<float, 64, 4, cub::BLOCK_STORE_VECTORIZE, 2, 1>::TempStorage*>(scratch));
  float tile[4] = {floats[0], floats[1], floats[2], floats[3]};
  cuda_coop::block_store_vectorized<64, 2, 1>(store, floats + 256, tile);
  vectorized_copies<short, 16>(reinterpret_cast<short*>(out) + 64);  // two 16-byte vectors
  vectorized_copies<unsigned char, 8>(reinterpret_cast<unsigned char*>(out) + 4096);  // one 8-byte vector
  vectorized_copies<double, 4>(reinterpret_cast<double*>(floats) + 512);  // two 16-byte vectors
  vectorized_copies<short, 3>(reinterpret_cast<short*>(out) + 8192);  // none: CUB's BlockLoad and BlockStore
  arg_reductions<float, true, true>(floats, const_cast<int*>(flags), scratch);
  arg_reductions<int, false, false>(ints, const_cast<int*>(flags), scratch);
  broadcasts<int>(ints, twos, ints[2], scratch);
  broadcasts<float>(floats, twos, ints[3], scratch);
  selects<int, int, 3>(ints, twos, flags, ints[4], scratch, rank);
  selects<float, unsigned char, 8>(floats, twos, reinterpret_cast<const unsigned char*>(flags), ints[5], scratch,
                                   rank);
  selects<long long, short, 1>(reinterpret_cast<long long*>(ints), twos, reinterpret_cast<const short*>(flags),
                               ints[6], scratch, rank);
  barriers(rank);
  warp_topks<float, cuda_coop::KeyKind::FLOATING>(floats, twos, ints[4], scratch);
  warp_topks<int, cuda_coop::KeyKind::SIGNED>(ints, twos, ints[5], scratch);
  warp_topks<unsigned char, cuda_coop::KeyKind::UNSIGNED>(reinterpret_cast<unsigned char*>(out), twos, ints[6],
                                                          scratch);
  warp_topks<double, cuda_coop::KeyKind::FLOATING>(reinterpret_cast<double*>(floats), twos, ints[7], scratch);
  using Histogram = cuda_coop::BlockHistogramStriped<unsigned char, unsigned long long, long long, 128, 4, 256, 2,
                                                     cub::BLOCK_HISTO_SORT, 1, 1>;
  long long counts[2];
  Histogram(*reinterpret_cast<Histogram::TempStorage*>(scratch)).Histogram(reinterpret_cast<unsigned char*>(out),
                                                                            counts);
  using Atomic = cuda_coop::BlockHistogramStriped<int, int, int, 64, 1, 100, 2, cub::BLOCK_HISTO_ATOMIC, 2, 1>;
  int atomic_counts[2];
  Atomic(*reinterpret_cast<Atomic::TempStorage*>(scratch)).Histogram(ints[0], atomic_counts);
  out[0] = (char)(counts[1] + atomic_counts[1]);
  rolled<int, 300>(ints, ints + 4096, ints[1], rank);
  rolled<two, 257>(twos, twos + 4096, ints[1], rank);
  group_reductions<int, true, 4>(ints, scratch, ::cuda::std::plus<int>{});
  group_reductions<double, true, 8>(reinterpret_cast<double*>(floats), scratch, cuda::maximum<double>{});
  group_reductions<float, true, 4>(floats, scratch, cuda_coop::maximum<float>{});
  group_reductions<double, true, 8>(reinterpret_cast<double*>(floats), scratch, cuda_coop::minimum<double>{});
  group_reductions<int, true, 4>(ints, scratch, cuda_coop::minimum<int>{});
  group_reductions<two, false, 4>(twos, scratch, two_op{});
  group_reductions<unsigned char, true, 1>(reinterpret_cast<unsigned char*>(out), scratch, keep_right{});
  run_lengths<int, int, unsigned>(ints, flags, reinterpret_cast<unsigned*>(ints) + 512, scratch);
  run_lengths<two, unsigned char, unsigned long long>(twos, reinterpret_cast<const unsigned char*>(flags),
                                                      reinterpret_cast<unsigned long long*>(ints) + 512, scratch);
  run_lengths<float, long long, unsigned>(floats, reinterpret_cast<const long long*>(flags),
                                          reinterpret_cast<unsigned*>(ints) + 512, scratch);
  run_lengths<double, unsigned long long, unsigned>(reinterpret_cast<double*>(floats),
                                                    reinterpret_cast<const unsigned long long*>(flags),
                                                    reinterpret_cast<unsigned*>(ints) + 512, scratch);
  items(ints, twos, rank);
  cluster_facts(reinterpret_cast<unsigned long long*>(ints) + 1024);
}
