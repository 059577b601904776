#!/usr/bin/env bash
# Issue 43 on the GPU machine: unpack the anchor kit, build vLLM's moe_align op and mamba-ssm's selective-scan
# forward (in parallel), then run the two benchmarks. The tools are this folder (tracked, carried with the
# project); the third-party sources come in the kit that fetch_anchors.py made (README.md). Carry
# [".stage/tools", ".anchors/kit"] and, from the project root:
#
#   bash .stage/tools/in.sh -- bash benchmarks/workloads/anchors/gpu_run43.sh [OPTIONS] [--] [workloads options]
#
# OPTIONS: --build-timeout S (each build, default 300)  --bench-timeout S (the benchmark run, default 480)
#          --build-only (stop after the builds and the load check)  --no-build (benchmarks only: anchors built)
#          --bench-anyway (run the benchmarks even when a build failed: its column is then left out)
# What follows goes to `python3 -m benchmarks.workloads $OUT/wl43 --workloads moe_align,selective_scan`, e.g.
#   --quick  --reps 10  --tokens 16,8192  --batches 1,16 --dims 4096 --seqlens 2048,8192 --dtypes float32
#   --no-torch  --backends numba,cute  --workloads selective_scan  (a later --workloads replaces the default)
# Results: $OUT/wl43/{moe_align,selective_scan}.json; logs: $OUT/wl43/logs/. Builds stay in .anchors/*-build
# (kept on a warm machine: a second call skips them); nothing but results and logs is left under $OUT.
# Environment: PYTHON (default python3) runs everything, CUDA_HOME picks nvcc, ANCHORS_DIR replaces .anchors.
set -uo pipefail
build_timeout=${BUILD_TIMEOUT:-300}; bench_timeout=${BENCH_TIMEOUT:-480}; mode=all; anyway=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build-timeout) build_timeout=$2; shift 2 ;;
    --bench-timeout) bench_timeout=$2; shift 2 ;;
    --build-only) mode=build; shift ;;
    --no-build) mode=bench; shift ;;
    --bench-anyway) anyway=1; shift ;;
    --) shift; break ;;
    *) break ;;
  esac
done
T0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
anchors=${ANCHORS_DIR:-$root/.anchors}; py=${PYTHON:-python3}
OUT=${OUT:-$PWD/bench-out}; res=$OUT/wl43; logs=$res/logs
mkdir -p "$logs"
export VLLM_MOE_BUILD=${VLLM_MOE_BUILD:-$anchors/vllm-moe-build} MAMBA_BUILD=${MAMBA_BUILD:-$anchors/mamba-build}
export MAX_JOBS=${MAX_JOBS:-$(( $(nproc) < 16 ? $(nproc) : 16 ))} PYTHONUNBUFFERED=1
echo "== gpu_run43: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1);" \
     "$("$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1);" \
     "nvcc $(${CUDA_HOME:-/usr/local/cuda}/bin/nvcc --version 2>/dev/null | grep -o 'V[0-9][0-9.]*');" \
     "$(nproc) cores; OUT=$OUT"

tails() {
  for f in "$logs"/unpack.log "$logs"/build_vllm_moe.log "$logs"/build_mamba.log "$logs"/load_check.log; do
    [ -f "$f" ] && { echo "---- tail $f"; tail -n 12 "$f"; }
  done
  [ -f "$logs/bench.log" ] && { echo "---- tail $logs/bench.log"; tail -n 40 "$logs/bench.log"; }
  ls -la "$res"/*.json 2>/dev/null
}
cleanup() {  # only results and logs under $OUT
  find "$OUT" -type f \( -name '*.so' -o -name '*.o' -o -name '*.a' -o -name '*.tar.xz' \) -delete 2>/dev/null
  find "$OUT" -type f -size +20M -delete 2>/dev/null
}

bash "$here/unpack_kit.sh" > "$logs/unpack.log" 2>&1 || { cat "$logs/unpack.log"; echo "gpu_run43: unpack failed"; exit 2; }
cat "$logs/unpack.log"

build_ok=1
if [ "$mode" != bench ]; then
  echo "== building both anchors in parallel (timeout ${build_timeout} s each, MAX_JOBS=$MAX_JOBS)"
  tb=$(date +%s)
  timeout -k 10 "$build_timeout" bash "$here/build_vllm_moe.sh" > "$logs/build_vllm_moe.log" 2>&1 & pv=$!
  timeout -k 10 "$build_timeout" bash "$here/build_mamba.sh" > "$logs/build_mamba.log" 2>&1 & pm=$!
  wait $pv; rv=$?; wait $pm; rm_=$?
  echo "== builds: vllm rc=$rv, mamba rc=$rm_ ($(( $(date +%s) - tb )) s wall)"
  for f in build_vllm_moe build_mamba; do grep -E '^\[anchor_build\]|^build_|^unpack' "$logs/$f.log" | tail -n 12; done
  # per-unit compiler logs, for a failed build (small text files)
  for d in "$VLLM_MOE_BUILD" "$MAMBA_BUILD"; do
    [ -d "$d/obj" ] && { mkdir -p "$logs/$(basename "$d")"; cp "$d"/obj/*.log "$logs/$(basename "$d")/" 2>/dev/null; }
  done
  [ $rv -eq 124 ] || [ $rm_ -eq 124 ] && echo "gpu_run43: a build ran past ${build_timeout} s"
  [ $rv -ne 0 ] || [ $rm_ -ne 0 ] && build_ok=0
fi

echo "== load check"
timeout -k 5 180 "$py" - > "$logs/load_check.log" 2>&1 <<'EOF'
import torch  # noqa: F401
from benchmarks.workloads import moe_align, selective_scan
op, origin = moe_align.vllm_cuda_op()
print("vllm_cuda:", "LOADED" if op is not None else "MISSING", "-", origin)
if op is not None:  # one small call, outputs as the benchmark allocates them
    ids = moe_align.topk_ids_for(64, 8, 2)
    outs = moe_align._outputs(ids.numel(), 8, 16)
    moe_align.vllm_cuda_launcher(op, ids, 8, 16, outs)()
    torch.cuda.synchronize()
    print("vllm_cuda: one call ok, num_tokens_post_pad =", int(outs[2].item()))
m = selective_scan.mamba_module()
print("mamba:", "LOADED " + str(getattr(m, "__file__", m)) if m is not None else "MISSING", "- MAMBA_BUILD",
      selective_scan.MAMBA_BUILD)
if m is not None:
    x = selective_scan.problem(1, 64, 512, "bfloat16")
    r = m.fwd(x["u"], x["delta"], x["A"], x["B"][:, None], x["C"][:, None], x["D"], x["z"], x["delta_bias"], True)
    torch.cuda.synchronize()
    print("mamba: one call ok, outputs", [tuple(t.shape) for t in r])
EOF
cat "$logs/load_check.log"

if [ "$mode" = build ]; then cleanup; echo "== gpu_run43: --build-only, $(( $(date +%s) - T0 )) s"; [ $build_ok = 1 ]; exit $?; fi
if [ $build_ok = 0 ] && [ $anyway = 0 ]; then
  cleanup; tails; echo "gpu_run43: a build failed: benchmarks not run (--bench-anyway runs them without it)"; exit 3
fi

echo "== benchmarks (timeout ${bench_timeout} s): $py -m benchmarks.workloads $res --workloads moe_align,selective_scan $*"
timeout -k 30 "$bench_timeout" "$py" -m benchmarks.workloads "$res" --workloads moe_align,selective_scan "$@" \
  2>&1 | tee "$logs/bench.log"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 124 ] && echo "gpu_run43: the benchmarks ran past ${bench_timeout} s (the JSON keeps every row finished)"
cleanup
echo "================ summary (rc=$rc, $(( $(date +%s) - T0 )) s in all)"
tails
exit "$rc"
