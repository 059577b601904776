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

  __device__ __forceinline__ void Count(T (&items)[K], Out* output) {
    CubHistogram(storage.algo).Histogram(items, storage.counters);  // zeroes the counters, then counts the tile
    __syncthreads();  // every count is in before any member reads its bins
    const int rank = (int)linear_rank<BX, BY, BZ>();
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) {
      const int bin = rank + i * BX;  // striped: slot i of member t holds bin t + i*T
      output[i] = bin < BINS ? (Out)storage.counters[bin] : (Out)0;
    }
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
};

}  // namespace cuda_coop
