"""CUB BlockScan / WarpScan providers (SPEC 8.7)."""
from __future__ import annotations

from ..._semantics.common import BLOCK, c_type
from ..._semantics.scan import ScanSpec
from ..provider import Provider
from . import operators


def emit(spec: ScanSpec) -> Provider:
    t, k = c_type(spec.dtype), spec.items_per_thread
    bx, by, bz = spec.block
    decl, op = operators.functor(spec.operator, t)
    if spec.mode == "inclusive":
        method = "InclusiveSum(in, out)" if spec.operator.is_sum else f"InclusiveScan(in, out, {op})"
    elif spec.has_initial_value:
        method = f"ExclusiveScan(in, out, initial_value, {op})"
    else:
        method = "ExclusiveSum(in, out)"
    if spec.group.kind == BLOCK:
        algo = f"cub::BlockScan<{t}, {bx}, cub::BLOCK_SCAN_{spec.algorithm.upper()}, {by}, {bz}>"
        header = "cub/block/block_scan.cuh"
        make = "  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));"
    else:
        algo = f"cub::WarpScan<{t}, {spec.group.size}>"
        header = "cub/warp/warp_scan.cuh"
        make = "  typename Algo::TempStorage unused;  // shuffle-based: no shared memory\n  Algo algo(unused);"
    if k:
        params = f"{t}* items, {t}* output"
        io = [f"  {t} (&in)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(items);",
              f"  {t} (&out)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(output);"]
        ret, result = "void", ""
    else:
        params, io, ret, result = f"{t} in", [f"  {t} out;"], t, "  return out;\n"
    lines = [f"  using Algo = {algo};", *io, make, f"  algo.{method};"]
    if spec.barrier:
        lines.append("  __syncthreads();  // reuse barrier for the scratch")
    body = (decl + f'extern "C" __device__ {ret} @SYM@({params}, {t} initial_value, char* scratch, '
            f"unsigned long long stride) {{\n" + "\n".join(lines) + "\n" + result + "}\n")
    scratch = f"typename {algo}::TempStorage" if spec.uses_scratch else None
    return Provider.make("scan", (header, *operators.HEADERS), body, scratch)
