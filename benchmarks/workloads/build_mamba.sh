#!/usr/bin/env bash
# Build mamba-ssm's selective-scan CUDA forward (the anchor of the selective-scan benchmark) for sm_90 only, as the
# Python extension `selective_scan_cuda`, from a mamba-ssm source tree given by path. Nothing of it is committed:
# the source copy and the build stay in git-ignored folders (.anchors/ is in .gitignore).
#
#   bash benchmarks/workloads/build_mamba.sh SRC [OUTDIR]
#
# SRC: a mamba-ssm checkout, or any folder holding its csrc/selective_scan/ (only that folder is read). To bring
# one to the GPU machine (it has no network), copy that folder here first, e.g. from a clone of
# https://github.com/state-spaces/mamba:
#   mkdir -p .anchors/mamba-src && git -C /path/to/mamba archive HEAD csrc/selective_scan | tar -x -C .anchors/mamba-src
# and carry ".anchors" with the run (the folder is about 200 KB).
# OUTDIR (default .anchors/mamba-build): receives the objects and selective_scan_cuda<EXT_SUFFIX>. The benchmark
# imports it from there (MAMBA_BUILD=OUTDIR, or that default).
#
# What it compiles: csrc/selective_scan/selective_scan.cpp (the binding: fwd and bwd), the three forward units
# (fp32, fp16, bf16: the binding dispatches to all three), and, in place of the six backward units (most of the
# build time), a small unit of ours that defines the backward's instantiations as a function that throws. The
# flags are those of mamba-ssm's setup.py for nvcc (-O3, --use_fast_math, the half/bfloat16 operator macros,
# relaxed constexpr, extended lambdas), with one -gencode for sm_90. It calls nvcc and the C++ compiler directly
# (no ninja, no pip), the five units at once: CUDA_HOME (default /usr/local/cuda), CXX (default c++), PYTHON.
set -euo pipefail

SRC=$(cd "${1:?usage: build_mamba.sh SRC [OUTDIR]}" && pwd)/csrc/selective_scan
OUT=${2:-.anchors/mamba-build}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
CXX=${CXX:-c++}
PY=${PYTHON:-python3}
[ -f "$SRC/selective_scan_fwd_kernel.cuh" ] || { echo "build_mamba: no csrc/selective_scan/ under $1" >&2; exit 2; }

# torch's and Python's include and library folders, its C++ ABI, the extension suffix
eval "$("$PY" - <<'EOF'
import sysconfig
import torch
from torch.utils.cpp_extension import include_paths, library_paths
print("TORCH_INC='" + " ".join("-I" + p for p in include_paths() + [sysconfig.get_paths()["include"]]) + "'")
print("TORCH_LIB='" + " ".join(library_paths()) + "'")
print(f"ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}")
print(f"SUFFIX={sysconfig.get_config_var('EXT_SUFFIX')}")
EOF
)"
DEFS="-DTORCH_EXTENSION_NAME=selective_scan_cuda -DTORCH_API_INCLUDE_EXTENSION_H -D_GLIBCXX_USE_CXX11_ABI=$ABI"
NVCC_FLAGS="-O3 -std=c++17 -U__CUDA_NO_HALF_OPERATORS__ -U__CUDA_NO_HALF_CONVERSIONS__
  -U__CUDA_NO_BFLOAT16_OPERATORS__ -U__CUDA_NO_BFLOAT16_CONVERSIONS__ -U__CUDA_NO_BFLOAT162_OPERATORS__
  -U__CUDA_NO_BFLOAT162_CONVERSIONS__ --expt-relaxed-constexpr --expt-extended-lambda --use_fast_math
  -gencode arch=compute_90,code=sm_90 -Xcompiler -fPIC"

# The backward, not built: its instantiations (input float/half/bfloat16 x weight float/complex) throw.
cat > "$OUT/no_backward.cu" <<'EOF'
#include <stdexcept>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <c10/util/complex.h>
#include "selective_scan.h"

template <typename input_t, typename weight_t>
void selective_scan_bwd_cuda(SSMParamsBwd &, cudaStream_t) {
    throw std::runtime_error("selective_scan_cuda was built without its backward (benchmarks/workloads/build_mamba.sh)");
}
#define NO_BACKWARD(I, W) template void selective_scan_bwd_cuda<I, W>(SSMParamsBwd &, cudaStream_t);
NO_BACKWARD(float, float) NO_BACKWARD(float, c10::complex<float>)
NO_BACKWARD(c10::Half, float) NO_BACKWARD(c10::Half, c10::complex<float>)
NO_BACKWARD(c10::BFloat16, float) NO_BACKWARD(c10::BFloat16, c10::complex<float>)
EOF

start=$(date +%s)
pids=()
for unit in "$SRC"/selective_scan_fwd_fp32.cu "$SRC"/selective_scan_fwd_fp16.cu "$SRC"/selective_scan_fwd_bf16.cu \
            "$OUT"/no_backward.cu; do
  # shellcheck disable=SC2086
  "$NVCC" $NVCC_FLAGS $DEFS $TORCH_INC -I"$SRC" -c "$unit" -o "$OUT/$(basename "$unit" .cu).o" &
  pids+=($!)
done
# shellcheck disable=SC2086
"$CXX" -O3 -std=c++17 -fPIC $DEFS $TORCH_INC -I"$SRC" -I"$CUDA_HOME/include" -c "$SRC/selective_scan.cpp" \
  -o "$OUT/selective_scan.o" &
pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done
libs=""
for dir in $TORCH_LIB; do libs="$libs -L$dir -Wl,-rpath,$dir"; done
# shellcheck disable=SC2086
"$CXX" -shared "$OUT"/*.o -o "$OUT/selective_scan_cuda$SUFFIX" $libs -L"$CUDA_HOME/lib64" \
  -lc10 -lc10_cuda -ltorch -ltorch_cpu -ltorch_cuda -ltorch_python -lcudart
echo "build_mamba: $OUT/selective_scan_cuda$SUFFIX (forward only, sm_90) in $(( $(date +%s) - start )) s"
PYTHONPATH="$OUT${PYTHONPATH:+:$PYTHONPATH}" "$PY" -c "import torch, selective_scan_cuda; print('build_mamba: imports', selective_scan_cuda.__file__)"
