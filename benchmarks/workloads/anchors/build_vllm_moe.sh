#!/usr/bin/env bash
# From the project root, on the GPU machine (torch, nvcc):
#   bash benchmarks/workloads/anchors/build_vllm_moe.sh [SRC] [anchor_build.py options: --jobs N --arch 90 --force]
# builds vLLM 0.33.0's csrc/moe/moe_align_sum_kernels.cu (unchanged) + our vllm_moe_register.cpp from SRC (default
# .anchors/vllm-src, unpacked from .anchors/kit/anchors-kit.tar.xz when missing) into $VLLM_MOE_BUILD (default
# .anchors/vllm-moe-build)/libvllm_moe_align.so, registering torch.ops.coop_vllm.moe_align_block_size.
# Skips the build when the .so is there and the sources and flags are unchanged. $PYTHON (default python3) runs the
# builder; $CUDA_HOME picks the toolkit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
anchors=${ANCHORS_DIR:-$root/.anchors}
src=$anchors/vllm-src
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then src=$1; shift; fi
[ -d "$src" ] || bash "$here/unpack_kit.sh"
out=${VLLM_MOE_BUILD:-$anchors/vllm-moe-build}
start=$(date +%s)
"${PYTHON:-python3}" "$here/anchor_build.py" vllm --src "$src" --out "$out" "$@"
echo "build_vllm_moe: done in $(( $(date +%s) - start )) s: $(ls "$out"/libvllm_moe_align.so)"
