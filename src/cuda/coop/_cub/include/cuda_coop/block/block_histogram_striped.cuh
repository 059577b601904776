// cuda-coop: a block histogram returned as striped counters (docs: operations/histogram).
#pragma once

#include <cub/block/block_histogram.cuh>

#include <cuda_coop/util_group.cuh>

namespace cuda_coop {

// CUB's BlockHistogram counts the tile into shared counters of type Counter; after a barrier, slot i of thread r
// receives bin r + i*BX as an Out (zero past the last bin). CUB's storage and the counters sit side by side:
// BLOCK_HISTO_SORT uses its storage while the counters it was given are live.
template <typename T, typename Counter, typename Out, int BX, int K, int BINS, int PER_THREAD,
          cub::BlockHistogramAlgorithm ALGORITHM, int BY = 1, int BZ = 1>
class BlockHistogramStriped {
  using CubHistogram = cub::BlockHistogram<T, BX, K, BINS, ALGORITHM, BY, BZ>;

 public:
  struct TempStorage {
    typename CubHistogram::TempStorage algo;
    Counter counters[BINS];
  };

 private:
  TempStorage& storage;

  // After a barrier, slot i of member r receives bin r + i*BX (zero past the last bin); `bin0_excess` samples that
  // were counted in bin 0 only to fill the tile are taken back out of it first, by the member holding that bin.
  __device__ __forceinline__ void Publish(Out* output, Counter bin0_excess) {
    __syncthreads();  // every count is in before any member reads its bins
    const int rank = (int)linear_rank<BX, BY, BZ>();
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) {
      const int bin = rank + i * BX;  // striped: slot i of member t holds bin t + i*T
      Counter count = bin < BINS ? storage.counters[bin] : (Counter)0;
      if (bin == 0) count -= bin0_excess;  // exact: the counter holds at least the excess
      output[i] = (Out)count;
    }
  }

  __device__ __forceinline__ void Count(T (&items)[K], Out* output) {
    CubHistogram(storage.algo).Histogram(items, storage.counters);  // zeroes the counters, then counts the tile
    Publish(output, (Counter)0);
  }

 public:
  __device__ __forceinline__ explicit BlockHistogramStriped(TempStorage& temp_storage) : storage(temp_storage) {}

  // K samples per thread. A private copy: CUB takes them by mutable reference and BLOCK_HISTO_SORT sorts in place.
  __device__ __forceinline__ void Histogram(const T* samples, Out* output) {
    T items[K];
#pragma unroll
    for (int i = 0; i < K; ++i) {
      items[i] = samples[i];
    }
    Count(items, output);
  }

  // One sample per thread, counted in each of its K slots.
  __device__ __forceinline__ void Histogram(const T& sample, Out* output) {
    T items[K];
#pragma unroll
    for (int i = 0; i < K; ++i) {
      items[i] = sample;
    }
    Count(items, output);
  }

  // K samples per thread of which only those at blocked positions rank*K + i < valid_items count (0 <= valid_items
  // <= BX*BY*BZ*K, checked by the caller); the others are never read as bin indices, so they may hold anything.
  // Atomic: CUB's counters zeroed, then its per-item shared-memory atomic, guarded. Sort: a private copy whose
  // missing samples are bin 0, CUB's sorting histogram, then their count taken back out of bin 0.
  __device__ __forceinline__ void Histogram(const T* samples, Out* output, long long valid_items) {
    // this member's samples before valid_items (may be < 0; 32 bits: valid_items is a tile's count): one compare
    // of each slot's constant with it
    const int kept = (int)valid_items - (int)(linear_rank<BX, BY, BZ>() * K);
    if constexpr (ALGORITHM == cub::BLOCK_HISTO_ATOMIC) {
      CubHistogram(storage.algo).InitHistogram(storage.counters);
      __syncthreads();  // the counters are zero before any member counts
#pragma unroll
      for (int i = 0; i < K; ++i) {
        if (i < kept) atomicAdd(storage.counters + samples[i], (Counter)1);
      }
      Publish(output, (Counter)0);
    } else {
      T items[K];
#pragma unroll
      for (int i = 0; i < K; ++i) {
        items[i] = i < kept ? samples[i] : (T)0;
      }
      CubHistogram(storage.algo).Histogram(items, storage.counters);
      Publish(output, (Counter)((long long)BX * BY * BZ * K - valid_items));
    }
  }
};

}  // namespace cuda_coop
