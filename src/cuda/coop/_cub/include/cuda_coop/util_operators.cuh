// cuda-coop: operator adaptors shared by the algorithms of this folder.
#pragma once

namespace cuda_coop {

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
