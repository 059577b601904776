// cuda-coop: runtime checks of a call's controls (docs: errors, "Device traps").
#pragma once

namespace cuda_coop {

__device__ __forceinline__ void check_range(long long value, long long lo, long long hi) {
  if (value < lo || value > hi) __trap();  // SPEC 2.5: out-of-range runtime controls trap
}

}  // namespace cuda_coop
