"""CUB BlockScan / WarpScan providers (SPEC 8.7)."""
from __future__ import annotations

from ..._semantics.common import BLOCK, c_type
from ..._semantics.scan import ScanSpec
from ..provider import Provider, reuse_barrier
from . import operators


def emit(spec: ScanSpec) -> Provider:
    t, k = c_type(spec.dtype), spec.items_per_thread
    bx, by, bz = spec.block
    decl, op = operators.functor(spec.operator, t)
    callback = ""
    if spec.prefix is not None:  # CUB calls it in the first warp with the block aggregate; it returns the seed
        decl += (f'extern "C" __device__ {t} {spec.prefix.name}_1({t});\n'
                 f"struct @SYM@_prefix {{\n"
                 f"  __device__ __forceinline__ {t} operator()({t} aggregate) {{ return {spec.prefix.name}_1(aggregate); }}\n"
                 f"}};\n")
        callback = ", prefix"
    if spec.mode == "inclusive":
        method = f"InclusiveSum(in, out{callback})" if spec.operator.is_sum else f"InclusiveScan(in, out, {op}{callback})"
    elif spec.has_initial_value:
        method = f"ExclusiveScan(in, out, initial_value, {op})"
    elif spec.operator.is_sum:
        method = f"ExclusiveSum(in, out{callback})"
    else:  # a non-sum exclusive scan seeded by its prefix callback
        method = f"ExclusiveScan(in, out, {op}{callback})"
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
    lines = [f"  using Algo = {algo};", *io, make]
    if spec.prefix is not None:
        lines.append("  @SYM@_prefix prefix;")
    lines.append(f"  algo.{method};")
    if spec.barrier:
        lines.append(reuse_barrier(None))
    body = (decl + f'extern "C" __device__ {ret} @SYM@({params}, {t} initial_value, char* scratch, '
            f"unsigned long long stride) {{\n" + "\n".join(lines) + "\n" + result + "}\n")
    scratch = f"typename {algo}::TempStorage" if spec.uses_scratch else None
    return Provider.make("scan", (header, *operators.HEADERS), body, scratch)
