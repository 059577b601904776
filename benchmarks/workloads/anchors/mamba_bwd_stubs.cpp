// cuda-coop's own file (not part of mamba-ssm): the backward half of mamba-ssm's selective_scan_cuda extension,
// left out of issue 43's forward-only anchor build.
//
// mamba-ssm 2.3.2.post1's csrc/selective_scan/selective_scan.cpp, compiled unchanged, declares
//     template <typename input_t, typename weight_t>
//     void selective_scan_bwd_cuda(SSMParamsBwd &params, cudaStream_t stream);
// and calls it from its `bwd` binding for every input type (float, Half, BFloat16) and weight type (float,
// complex<float>) it dispatches; mamba-ssm defines those in its selective_scan_bwd_*.cu units, which this build does
// not compile (minutes of nvcc for kernels the benchmarks never run). These definitions take their place, so that
// the module links and imports (RTLD_NOW) with every symbol resolved; calling `bwd` raises a clear error instead.
// The forward (selective_scan_fwd_cuda, float and complex weights) comes from mamba-ssm's own
// selective_scan_fwd_{fp32,fp16,bf16}.cu, compiled unchanged.

#include <c10/util/BFloat16.h>
#include <c10/util/Exception.h>
#include <c10/util/Half.h>
#include <c10/util/complex.h>
#include <cuda_runtime_api.h>

#include "selective_scan.h"  // mamba-ssm's parameter structs (SSMParamsBwd), unchanged

template <typename input_t, typename weight_t>
void selective_scan_bwd_cuda(SSMParamsBwd &params, cudaStream_t stream) {
  (void)params;
  (void)stream;
  TORCH_CHECK(false,
              "selective_scan_cuda.bwd: backward not built (cuda-coop's forward-only anchor build of mamba-ssm, "
              "benchmarks/workloads/anchors/mamba_bwd_stubs.cpp); install mamba-ssm for the backward");
}

// The six combinations selective_scan.cpp dispatches (DISPATCH_ITYPE_FLOAT_AND_HALF_AND_BF16 x
// DISPATCH_WTYPE_FLOAT_AND_COMPLEX), as explicit instantiations: the same symbols mamba-ssm's backward units export.
template void selective_scan_bwd_cuda<float, float>(SSMParamsBwd &, cudaStream_t);
template void selective_scan_bwd_cuda<float, c10::complex<float>>(SSMParamsBwd &, cudaStream_t);
template void selective_scan_bwd_cuda<c10::Half, float>(SSMParamsBwd &, cudaStream_t);
template void selective_scan_bwd_cuda<c10::Half, c10::complex<float>>(SSMParamsBwd &, cudaStream_t);
template void selective_scan_bwd_cuda<c10::BFloat16, float>(SSMParamsBwd &, cudaStream_t);
template void selective_scan_bwd_cuda<c10::BFloat16, c10::complex<float>>(SSMParamsBwd &, cudaStream_t);
