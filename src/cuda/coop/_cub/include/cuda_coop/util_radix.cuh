// cuda-coop: keys as the unsigned bits a radix algorithm orders (docs: operations/radix_sort, "Radix rank").
#pragma once

#include <cuda/std/bit>

namespace cuda_coop {

// The bits of K keys as UnsignedBits, whose unsigned order is the keys' order: a signed key has its sign bit
// inverted (negative keys first), an unsigned key is its own bits.
template <typename UnsignedBits, bool SIGNED, typename Key, int K>
__device__ __forceinline__ void ordered_bits(const Key* keys, UnsignedBits (&bits)[K]) {
  for (int i = 0; i < K; ++i) {
    if constexpr (SIGNED) {
      bits[i] = ::cuda::std::bit_cast<UnsignedBits>(keys[i]) ^ ((UnsignedBits)1 << (sizeof(UnsignedBits) * 8 - 1));
    } else {
      bits[i] = ::cuda::std::bit_cast<UnsignedBits>(keys[i]);
    }
  }
}

}  // namespace cuda_coop
