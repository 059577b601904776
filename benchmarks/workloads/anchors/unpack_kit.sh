#!/usr/bin/env bash
# Unpack .anchors/kit/anchors-kit.tar.xz (made by fetch_anchors.py: vllm-src/, mamba-src/, KIT.txt) into .anchors/,
# unless the source copies there came from this very kit (same sha256). gpu_run43.sh and the build scripts run it.
#   bash benchmarks/workloads/anchors/unpack_kit.sh          (ANCHORS_DIR overrides .anchors, ANCHORS_KIT the kit)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
anchors=${ANCHORS_DIR:-$root/.anchors}
kit=${ANCHORS_KIT:-$anchors/kit/anchors-kit.tar.xz}
[ -f "$kit" ] || { echo "unpack_kit: no $kit (make it with python benchmarks/workloads/anchors/fetch_anchors.py" \
                        "on a machine with PyPI access; carry .anchors/kit)"; exit 2; }
sum=$(sha256sum "$kit" | cut -d' ' -f1)
if [ -f "$anchors/.kit-unpacked" ] && [ "$(cat "$anchors/.kit-unpacked")" = "$sum" ] \
   && [ -d "$anchors/vllm-src" ] && [ -d "$anchors/mamba-src" ]; then
  echo "unpack_kit: sources already from this kit (${sum:0:12})"; exit 0
fi
start=$(date +%s)
rm -rf "$anchors/vllm-src" "$anchors/mamba-src"
tar -C "$anchors" -xJf "$kit" vllm-src mamba-src KIT.txt
echo "$sum" > "$anchors/.kit-unpacked"
echo "unpack_kit: unpacked vllm-src mamba-src KIT.txt from $kit (${sum:0:12}) in $(( $(date +%s) - start )) s"
