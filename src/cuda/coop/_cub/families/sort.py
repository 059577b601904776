"""CUB BlockMergeSort / WarpMergeSort / BlockRadixSort providers (SPEC 8.8, 8.9)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..._semantics.common import BLOCK, c_type
from ..._semantics.sort import SortSpec
from ..provider import Provider


@dataclass
class _Parts:
    algo: str
    headers: tuple[str, ...]
    params: str  # the C ABI parameters between the output and the scratch
    sort: list[str]  # statements sorting ``out`` in place
    prologue: list[str] = field(default_factory=list)  # statements before the CUB object is constructed


def _merge(spec: SortSpec, t: str, k: int) -> _Parts:
    bx, by, bz = spec.block
    compare = f"::cuda::std::{'greater' if spec.descending else 'less'}<{t}>{{}}"
    if spec.has_valid_items:
        sort = [f"  cuda_coop::check_range(valid_items, 0, {spec.tile_items});",
                f"  algo.Sort(out, {compare}, (int)valid_items, oob_default);"]
    else:
        sort = [f"  algo.Sort(out, {compare});"]
    params = f"long long valid_items, {t} oob_default"
    headers = ("cuda/std/functional",)
    if spec.group.kind == BLOCK:
        return _Parts(f"cub::BlockMergeSort<{t}, {bx}, {k}, cub::NullType, {by}, {bz}>",
                      ("cub/block/block_merge_sort.cuh",) + headers, params, sort)
    w = spec.group.size
    prologue = [f"  scratch += cuda_coop::group_instance<{w}>(cuda_coop::linear_rank<{bx}, {by}, {bz}>()) * stride;"]
    return _Parts(f"cub::WarpMergeSort<{t}, {k}, {w}>", ("cub/warp/warp_merge_sort.cuh",) + headers, params, sort,
                  prologue)


def _radix(spec: SortSpec, t: str, k: int) -> _Parts:
    bx, by, bz = spec.block
    # The template arguments after the value type are CUB's defaults, spelled out to reach the block shape.
    algo = (f"cub::BlockRadixSort<{t}, {bx}, {k}, cub::NullType, 4, true, cub::BLOCK_SCAN_WARP_SCANS, "
            f"cudaSharedMemBankSizeFourByte, {by}, {bz}>")
    sort = []
    if spec.begin_bit is None or spec.end_bit is None:  # runtime bounds trap outside 0 <= begin < end <= width
        sort += [f"  cuda_coop::check_range(begin_bit, 0, {spec.key_bits - 1});",
                 f"  cuda_coop::check_range(end_bit, begin_bit + 1, {spec.key_bits});"]
    method = ("SortDescending" if spec.descending else "Sort") + ("BlockedToStriped" if spec.blocked_to_striped else "")
    sort.append(f"  algo.{method}(out, (int)begin_bit, (int)end_bit);")
    return _Parts(algo, ("cub/block/block_radix_sort.cuh",), "long long begin_bit, long long end_bit", sort)


def emit(spec: SortSpec) -> Provider:
    t, k = c_type(spec.key_dtype), spec.items_per_thread
    parts = (_merge if spec.op == "merge_sort_keys" else _radix)(spec, t, k)
    lines = [
        f"  using Algo = {parts.algo};",
        *parts.prologue,
        "  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));",
        # CUB sorts in place; the result is a fresh payload and the input stays unchanged.
        f"  {t} (&out)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(output);",
        f"  for (int i = 0; i < {k}; ++i) out[i] = keys[i];",
        *parts.sort,
    ]
    if spec.barrier:
        if spec.group.kind == BLOCK:
            lines.append("  __syncthreads();  // reuse barrier for the scratch")
        else:
            rank = f"cuda_coop::linear_rank<{spec.block[0]}, {spec.block[1]}, {spec.block[2]}>()"
            lines.append(f"  __syncwarp(cuda_coop::logical_warp_mask({rank}, {spec.group.size}u));")
    body = (f'extern "C" __device__ void @SYM@(const {t}* keys, {t}* output, {parts.params}, char* scratch, '
            "unsigned long long stride) {\n" + "\n".join(lines) + "\n}\n")
    return Provider.make(spec.op, parts.headers, body, f"typename {parts.algo}::TempStorage")
