#!/usr/bin/env bash
# From the project root, on the GPU machine (torch, nvcc):
#   bash benchmarks/workloads/anchors/build_mamba.sh [SRC] [anchor_build.py options: --jobs N --arch 90 --force
#                                                     --no-python]
# builds mamba-ssm 2.3.2.post1's selective_scan_cuda extension, forward only: its csrc/selective_scan/
# selective_scan.cpp and selective_scan_fwd_{fp32,fp16,bf16}.cu, unchanged, + our mamba_bwd_stubs.cpp (the backward
# instantiations, raising "backward not built") from SRC (default .anchors/mamba-src, unpacked from
# .anchors/kit/anchors-kit.tar.xz when missing) into $MAMBA_BUILD (default .anchors/mamba-build):
# selective_scan_cuda<EXT_SUFFIX>.so, importable as selective_scan_cuda with that folder on sys.path
# (benchmarks/workloads/selective_scan.py's MAMBA_BUILD). Skips the build when unchanged. $PYTHON (default python3)
# runs the builder; $CUDA_HOME picks the toolkit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
anchors=${ANCHORS_DIR:-$root/.anchors}
src=$anchors/mamba-src
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then src=$1; shift; fi
[ -d "$src" ] || bash "$here/unpack_kit.sh"
out=${MAMBA_BUILD:-$anchors/mamba-build}
start=$(date +%s)
"${PYTHON:-python3}" "$here/anchor_build.py" mamba --src "$src" --out "$out" "$@"
echo "build_mamba: done in $(( $(date +%s) - start )) s: $(ls "$out"/selective_scan_cuda*)"
