#!/usr/bin/env bash
# Pack the third-party source copies .anchors/{vllm-src,mamba-src} and .anchors/KIT.txt into
# .anchors/kit/anchors-kit.tar.xz (sources only: no build output, no sdist, none of cuda-coop's own files, which
# travel with the project). Deterministic (order, owner, mtime, single-threaded xz): the same sources give the
# same kit. fetch_anchors.py runs it; run it again by hand only after changing the source copies:
#   bash benchmarks/workloads/anchors/make_kit.sh            (ANCHORS_DIR overrides .anchors)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
anchors=${ANCHORS_DIR:-$root/.anchors}
for m in vllm-src mamba-src KIT.txt; do
  [ -e "$anchors/$m" ] || { echo "make_kit: no $anchors/$m (run benchmarks/workloads/anchors/fetch_anchors.py)"; exit 2; }
done
mkdir -p "$anchors/kit"
cd "$anchors"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2026-01-01 00:00:00' \
    --exclude='__pycache__' --exclude='*.pyc' --exclude='*.o' --exclude='*.so' \
    -cf - vllm-src mamba-src KIT.txt | xz -9e -T1 > kit/anchors-kit.tar.xz.tmp
mv kit/anchors-kit.tar.xz.tmp kit/anchors-kit.tar.xz
sha256sum kit/anchors-kit.tar.xz | cut -d' ' -f1 > .kit-unpacked  # the sources here are this kit's
echo "make_kit: $anchors/kit/anchors-kit.tar.xz: $(du -h kit/anchors-kit.tar.xz | cut -f1)," \
     "sha256 $(cut -c1-12 .kit-unpacked), $(tar -tJf kit/anchors-kit.tar.xz | wc -l) entries"
