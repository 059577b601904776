// cuda-coop: operators and operator adaptors shared by the algorithms of this folder.
#pragma once

#include <cuda/functional>
#include <cuda/std/type_traits>

namespace cuda_coop {

// min and max of float and double as one instruction each (FMNMX). cuda::minimum / cuda::maximum of a floating type
// call cuda::std::fmin / fmax, which under NVRTC (no compiler builtin) test each operand for NaN: branches around
// every combination of a reduction. Which candidate a NaN yields is unspecified (SPEC 8.0), so the hardware's choice
// serves: NVRTC's fminf and kin, clang's builtins (the CuTe route, CUDA_COOP_CLANG). On sm_100 and later CUB reduces
// a warp's floats with one redux.sync when the operator is cuda::minimum / cuda::maximum itself: there those stay.
#if defined(CUDA_COOP_CLANG)
__device__ __forceinline__ float hardware_min(float a, float b) { return __builtin_fminf(a, b); }
__device__ __forceinline__ double hardware_min(double a, double b) { return __builtin_fmin(a, b); }
__device__ __forceinline__ float hardware_max(float a, float b) { return __builtin_fmaxf(a, b); }
__device__ __forceinline__ double hardware_max(double a, double b) { return __builtin_fmax(a, b); }
#else
__device__ __forceinline__ float hardware_min(float a, float b) { return ::fminf(a, b); }
__device__ __forceinline__ double hardware_min(double a, double b) { return ::fmin(a, b); }
__device__ __forceinline__ float hardware_max(float a, float b) { return ::fmaxf(a, b); }
__device__ __forceinline__ double hardware_max(double a, double b) { return ::fmax(a, b); }
#endif

template <typename T>
struct float_minimum {
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return hardware_min(a, b); }
};

template <typename T>
struct float_maximum {
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return hardware_max(a, b); }
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
template <typename T>
using minimum = ::cuda::minimum<T>;
template <typename T>
using maximum = ::cuda::maximum<T>;
#else
template <typename T>
using minimum = ::cuda::std::conditional_t<::cuda::std::is_same_v<T, float> || ::cuda::std::is_same_v<T, double>,
                                           float_minimum<T>, ::cuda::minimum<T>>;
template <typename T>
using maximum = ::cuda::std::conditional_t<::cuda::std::is_same_v<T, float> || ::cuda::std::is_same_v<T, double>,
                                           float_maximum<T>, ::cuda::maximum<T>>;
#endif

// `op` with its operands swapped: a forward scan with it over a mirrored sequence folds right to left.
template <typename Op>
struct swapped_op {
  Op op;
  template <typename T>
  __device__ __forceinline__ T operator()(const T& a, const T& b) const {
    return op(b, a);
  }
};

template <typename Op>
__device__ __forceinline__ swapped_op<Op> swap_operands(Op op) {
  return swapped_op<Op>{op};
}

}  // namespace cuda_coop
