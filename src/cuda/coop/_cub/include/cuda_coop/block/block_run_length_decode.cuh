// cuda-coop: run-length decoding with the stream's rules checked (docs: operations/run_length_decode).
#pragma once

#include <cub/block/block_run_length_decode.cuh>
#include <cub/block/block_scan.cuh>

#include <cuda/std/type_traits>

#include <cuda_coop/util_check.cuh>

namespace cuda_coop {

// CUB's BlockRunLengthDecode over a 1-D block of THREADS threads, RUNS runs and DECODED decoded items per thread,
// decoded offsets of type Offset. The run table is built from offsets scanned here (the same raking-memoize
// BlockScan CUB uses in its lengths constructor) so that every stream rule is checked where the data is: a negative
// length, a zero length followed by a positive one, and a total beyond Offset (an exclusive prefix in that type
// wraps exactly at the run whose end passes its maximum) each trap (SPEC 10.2). The scan's storage sits beside the
// table's rather than in a union with it, so no barrier separates the scan from the table's writes.
template <typename T, typename Length, typename Offset, int THREADS, int RUNS, int DECODED>
class BlockRunLengthDecode {
  using Scan = cub::BlockScan<Offset, THREADS, cub::BLOCK_SCAN_RAKING_MEMOIZE>;
  using Table = cub::BlockRunLengthDecode<T, THREADS, RUNS, DECODED, Offset>;
  static constexpr bool SIGNED = ::cuda::std::is_signed<Length>::value;
  static constexpr bool TOO_LONG = sizeof(Length) == 8 && sizeof(Offset) == 4;  // a length Offset cannot hold
  static constexpr unsigned WINDOW = THREADS * DECODED;

 public:
  struct TempStorage {
    typename Scan::TempStorage scan;
    typename Table::TempStorage table;
    unsigned char last_run_empty[THREADS];  // read by the next member after the table's barrier
  };

 private:
  struct Runs {
    T values[RUNS];  // CUB takes the values by mutable reference: a private copy keeps the input
    Offset offsets[RUNS];
    Offset total;
    bool malformed;
  };

  unsigned rank;
  Runs runs;
  Table table;

  static __device__ __forceinline__ bool OutOfRange(Length length) {
    if constexpr (SIGNED && TOO_LONG) {
      return length < 0 || (unsigned long long)length > 0xffffffffull;
    } else if constexpr (SIGNED) {
      return length < 0;
    } else if constexpr (TOO_LONG) {
      return (unsigned long long)length > 0xffffffffull;
    } else {
      return false;
    }
  }

  // The runs' values and offsets, the total, whether a run breaks a rule this member sees alone.
  static __device__ __forceinline__ Runs Prefix(TempStorage& storage, unsigned rank, const T* run_values,
                                                const Length* run_lengths) {
    Runs runs;
    Offset terms[RUNS];
    bool malformed = false;  // a local flag: kept in a predicate, where a struct's bool would be a byte
    for (int i = 0; i < RUNS; ++i) {
      const Length length = run_lengths[i];
      runs.values[i] = run_values[i];
      malformed |= OutOfRange(length);
      malformed |= i > 0 && run_lengths[i - 1] == 0 && length > 0;  // zero padding must come last
      terms[i] = (Offset)length;
    }
    Scan(storage.scan).ExclusiveSum(terms, runs.offsets, runs.total);
    for (int i = 0; i < RUNS; ++i) {
      malformed |= (Offset)(runs.offsets[i] + terms[i]) < runs.offsets[i];  // the total overflows Offset
    }
    storage.last_run_empty[rank] = run_lengths[RUNS - 1] == 0;
    runs.malformed = malformed;
    return runs;
  }

  template <bool RELATIVE>
  __device__ __forceinline__ void Window(T* output, Offset* relative_offsets, long long window_offset) {
    check_range(window_offset, 0, 0x7fffffffffffffffll);
    const Offset total = runs.total;
    // CUB's decoding is undefined past the total: start there and mask every position beyond it.
    const Offset from = (unsigned long long)window_offset < total ? (Offset)window_offset : total;
    T decoded[DECODED];
    Offset relative[DECODED];
    table.RunLengthDecode(decoded, relative, from);
    const unsigned long long first = (unsigned long long)window_offset + (unsigned long long)rank * (unsigned)DECODED;
    const T zero{};  // value-initialised: zero, for aggregates too
    for (int i = 0; i < DECODED; ++i) {
      const bool inside = first + i < total;
      output[i] = inside ? decoded[i] : zero;
      if constexpr (RELATIVE) relative_offsets[i] = inside ? relative[i] : (Offset)~(Offset)0;  // past the end: max
    }
  }

  // Window after window until the stream ends; each member writes its DECODED consecutive items (CUB's blocked
  // direct store). The loop stops at the last window instead of stepping past the total, so the window offset never
  // overflows its type, and positions are 32-bit offsets from the window's start.
  template <bool RELATIVE>
  __device__ __forceinline__ void Into(T* out, Offset* rel) {
    const Offset total = runs.total;
    const unsigned first = rank * (unsigned)DECODED;
    for (Offset window = 0; window < total;) {
      T decoded[DECODED];
      Offset relative[DECODED];
      table.RunLengthDecode(decoded, relative, window);
      T* segment = out + window;
      Offset* relative_segment = RELATIVE ? rel + window : nullptr;
      const Offset left = total - window;
      if (left > WINDOW) {  // a full window, and more to come: no bounds checks
        for (int i = 0; i < DECODED; ++i) {
          segment[first + i] = decoded[i];
          if constexpr (RELATIVE) relative_segment[first + i] = relative[i];
        }
        window += WINDOW;
      } else {
        for (int i = 0; i < DECODED; ++i) {
          if (first + i < left) {
            segment[first + i] = decoded[i];
            if constexpr (RELATIVE) relative_segment[first + i] = relative[i];
          }
        }
        break;
      }
    }
  }

  // Traps unless `capacity` items hold the stream at `destination_offset`.
  __device__ __forceinline__ void CheckFits(long long capacity, long long destination_offset) {
    if (capacity < 0 || (unsigned long long)runs.total > (unsigned long long)capacity ||
        (unsigned long long)destination_offset > (unsigned long long)capacity - runs.total)
      __trap();  // SPEC 10.2: the destination is too short
  }

 public:
  // Builds the table from each member's runs (a block barrier), trapping on a malformed stream.
  __device__ __forceinline__ BlockRunLengthDecode(TempStorage& storage, const T* run_values,
                                                  const Length* run_lengths)
      : rank(threadIdx.x),
        runs(Prefix(storage, threadIdx.x, run_values, run_lengths)),
        table(storage.table, runs.values, runs.offsets) {  // stores the table, then a block barrier
    const bool last_run_empty = rank > 0 && storage.last_run_empty[rank - 1];  // the previous member's
    if (runs.malformed | (last_run_empty && run_lengths[0] > 0)) __trap();  // SPEC 10.2: a malformed stream
  }

  // The stream's decoded length.
  __device__ __forceinline__ Offset TotalDecodedSize() const { return runs.total; }

  // The window of THREADS * DECODED items from `window_offset`, DECODED per member (blocked); zero past the end.
  __device__ __forceinline__ void RunLengthDecode(T* output, long long window_offset) {
    Window<false>(output, nullptr, window_offset);
  }

  // The same and each item's offset in its run (the Offset maximum past the end).
  __device__ __forceinline__ void RunLengthDecode(T* output, Offset* relative_offsets, long long window_offset) {
    Window<true>(output, relative_offsets, window_offset);
  }

  // The whole stream into destination[destination_offset:], which holds `capacity` items; returns its length.
  __device__ __forceinline__ Offset RunLengthDecodeInto(T* destination, long long capacity,
                                                        long long destination_offset) {
    check_range(destination_offset, 0, 0x7fffffffffffffffll);
    CheckFits(capacity, destination_offset);
    Into<false>(destination + destination_offset, nullptr);
    return runs.total;
  }

  // The same and each item's offset in its run into relative_destination[destination_offset:].
  __device__ __forceinline__ Offset RunLengthDecodeInto(T* destination, long long capacity,
                                                        Offset* relative_destination, long long relative_capacity,
                                                        long long destination_offset) {
    check_range(destination_offset, 0, 0x7fffffffffffffffll);
    CheckFits(capacity, destination_offset);
    CheckFits(relative_capacity, destination_offset);  // relative_offsets_destination is too short
    Into<true>(destination + destination_offset, relative_destination + destination_offset);
    return runs.total;
  }
};

}  // namespace cuda_coop
