"""CUB BlockReduce / WarpReduce providers (SPEC 8.5)."""
from __future__ import annotations

from ..._semantics.common import BLOCK, c_type, is_power_of_two
from ..._semantics.reduce import ReduceSpec
from ..provider import Provider, reuse_barrier
from . import operators


def _call(spec: ReduceSpec, source: str, op: str, lines: list[str]) -> str:
    """The CUB method call; a partial reduction first checks its runtime range (SPEC 2.5)."""
    name = "Sum" if spec.operator.is_sum else "Reduce"
    args = [source] + ([] if spec.operator.is_sum else [op])
    if spec.has_valid_items:
        lines.append(f"  cuda_coop::check_range(valid_items, 1, {spec.group.size});")
        args.append("(int)valid_items")
    return f"{name}({', '.join(args)})"


def emit(spec: ReduceSpec) -> Provider:
    t, k = c_type(spec.dtype), spec.items_per_thread
    bx, by, bz = spec.block
    decl, op = operators.functor(spec.operator, t)
    value_param = f"{t}* items" if k else f"{t} value"
    lines = [f"  const unsigned rank = cuda_coop::linear_rank<{bx}, {by}, {bz}>();"]
    if k:
        lines.append(f"  {t} (&in)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(items);")
    source = "in" if k else "value"
    if spec.group.kind == BLOCK:
        algo = f"cub::BlockReduce<{t}, {bx}, cub::BLOCK_REDUCE_{spec.algorithm.upper()}, {by}, {bz}>"
        header = "cub/block/block_reduce.cuh"
        pre = [f"struct @SYM@_storage {{ typename {algo}::TempStorage reduce; {t} result; }};"]
        lines += [f"  using Algo = {algo};", "  auto& storage = *reinterpret_cast<@SYM@_storage*>(scratch);"]
        call = _call(spec, source, op, lines)
        lines.append(f"  {t} result = Algo(storage.reduce).{call};")
        if spec.broadcast and not spec.has_valid_items:
            lines += ["  if (rank == 0) storage.result = result;", "  __syncthreads();", "  result = storage.result;"]
        if spec.barrier:
            lines.append(reuse_barrier(None))
        scratch_type = "@SYM@_storage"
    else:
        w = spec.group.size
        algo = f"cub::WarpReduce<{t}, {w}>"
        header = "cub/warp/warp_reduce.cuh"
        pre = []
        lines += [f"  using Algo = {algo};", f"  const unsigned mask = cuda_coop::logical_warp_mask(rank, {w}u);"]
        if spec.uses_scratch:
            lines += [f"  scratch += cuda_coop::group_instance<{w}>(rank) * stride;",
                      "  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));"]
        else:
            lines += ["  typename Algo::TempStorage unused;  // shuffle-based: no shared memory", "  Algo algo(unused);"]
        if k:  # each lane folds its own slots first, in slot order
            lines.append(f"  const {t} partial = cub::ThreadReduce(in, {op});")
            source = "partial"
        call = _call(spec, source, op, lines)
        lines.append(f"  {t} result = algo.{call};")
        if spec.broadcast and not spec.has_valid_items:
            width = w if is_power_of_two(w) else 32  # odd widths: one group per warp, starting at lane 0
            lines.append(f"  result = cub::ShuffleIndex<{width}>(result, 0, mask);")
        if spec.barrier:
            lines.append("  __syncwarp(mask);")
    body = (
        decl + "\n".join(pre) + "\n"
        + f'extern "C" __device__ {t} @SYM@({value_param}, long long valid_items, char* scratch, '
        f"unsigned long long stride) {{\n" + "\n".join(lines) + "\n  return result;\n}\n"
    )
    headers = (header, "cub/thread/thread_reduce.cuh", "cub/util_ptx.cuh", *operators.HEADERS)
    return Provider.make("reduce", headers, body, scratch_type if spec.group.kind == BLOCK else
                         ("typename " + algo + "::TempStorage" if spec.uses_scratch else None))
