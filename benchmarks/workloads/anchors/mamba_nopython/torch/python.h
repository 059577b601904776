// cuda-coop's own header (not part of torch or mamba-ssm), used only where the build machine's Python has no
// Python.h: benchmarks/workloads/anchors/anchor_build.py then puts this folder first on the include path, so that
// mamba-ssm's selective_scan.cpp, compiled unchanged, gets torch's C++ API from here instead of torch/python.h, and
// its PYBIND11_MODULE block registers `fwd` as the torch op coop_mamba::fwd (same arguments, same outputs) in a
// library loaded with torch.ops.load_library; a small Python shim (selective_scan_cuda.py, written by the builder)
// exposes it as selective_scan_cuda.fwd. `bwd` is not registered (its stubs raise anyway).
#pragma once

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/all.h>
#include <torch/library.h>

#include <optional>
#include <type_traits>
#include <vector>

namespace coop_mamba_nopython {

// selective_scan_fwd's signature in mamba-ssm 2.3.2.post1's selective_scan.cpp.
using FwdFn = std::vector<at::Tensor>(const at::Tensor &, const at::Tensor &, const at::Tensor &,
                                      const at::Tensor &, const at::Tensor &, const c10::optional<at::Tensor> &,
                                      const c10::optional<at::Tensor> &, const c10::optional<at::Tensor> &, bool);

struct Module {
  torch::Library &lib;
  template <typename F>
  void def(const char *name, F *fn, const char * /*doc*/) {
    if constexpr (std::is_same_v<F, FwdFn>) {
      lib.def(name, fn);
    } else {
      (void)name;
      (void)fn;
    }
  }
};

}  // namespace coop_mamba_nopython

#define PYBIND11_MODULE(name, m)                                     \
  static void coop_mamba_bind(coop_mamba_nopython::Module &m);       \
  TORCH_LIBRARY(coop_mamba, coop_lib) {                              \
    coop_mamba_nopython::Module coop_module{coop_lib};               \
    coop_mamba_bind(coop_module);                                    \
  }                                                                  \
  static void coop_mamba_bind(coop_mamba_nopython::Module &m)
