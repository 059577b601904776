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
    params: str  # the C ABI parameters between the outputs and the scratch
    sort: list[str]  # statements sorting ``out`` (and ``out_values``) in place
    prologue: list[str] = field(default_factory=list)  # statements before the CUB object is constructed


def _merge(spec: SortSpec, t: str, v: str, operands: str) -> _Parts:
    bx, by, bz = spec.block
    k = spec.items_per_thread
    compare = f"::cuda::std::{'greater' if spec.descending else 'less'}<{t}>{{}}"
    if spec.has_valid_items:
        sort = [f"  cuda_coop::check_range(valid_items, 0, {spec.tile_items});",
                f"  algo.Sort({operands}, {compare}, (int)valid_items, oob_default);"]
    else:
        sort = [f"  algo.Sort({operands}, {compare});"]
    params = f"long long valid_items, {t} oob_default"
    headers = ("cuda/std/functional",)
    if spec.group.kind == BLOCK:
        return _Parts(f"cub::BlockMergeSort<{t}, {bx}, {k}, {v}, {by}, {bz}>",
                      ("cub/block/block_merge_sort.cuh",) + headers, params, sort)
    w = spec.group.size
    prologue = [f"  scratch += cuda_coop::group_instance<{w}>(cuda_coop::linear_rank<{bx}, {by}, {bz}>()) * stride;"]
    return _Parts(f"cub::WarpMergeSort<{t}, {k}, {w}, {v}>", ("cub/warp/warp_merge_sort.cuh",) + headers, params,
                  sort, prologue)


def _radix(spec: SortSpec, t: str, v: str, operands: str) -> _Parts:
    bx, by, bz = spec.block
    # The template arguments after the value type are CUB's defaults, spelled out to reach the block shape.
    algo = (f"cub::BlockRadixSort<{t}, {bx}, {spec.items_per_thread}, {v}, 4, true, cub::BLOCK_SCAN_WARP_SCANS, "
            f"cudaSharedMemBankSizeFourByte, {by}, {bz}>")
    sort = []
    if spec.begin_bit is None or spec.end_bit is None:  # runtime bounds trap outside 0 <= begin < end <= width
        sort += [f"  cuda_coop::check_range(begin_bit, 0, {spec.key_bits - 1});",
                 f"  cuda_coop::check_range(end_bit, begin_bit + 1, {spec.key_bits});"]
    method = ("SortDescending" if spec.descending else "Sort") + ("BlockedToStriped" if spec.blocked_to_striped else "")
    sort.append(f"  algo.{method}({operands}, (int)begin_bit, (int)end_bit);")
    return _Parts(algo, ("cub/block/block_radix_sort.cuh",), "long long begin_bit, long long end_bit", sort)


def emit(spec: SortSpec) -> Provider:
    t, k = c_type(spec.key_dtype), spec.items_per_thread
    pairs = spec.value_dtype is not None
    v = c_type(spec.value_dtype) if pairs else "cub::NullType"
    parts = (_merge if spec.op == "merge_sort" else _radix)(spec, t, v, "out, out_values" if pairs else "out")
    # CUB sorts in place; the results are fresh payloads and the inputs stay unchanged.
    copies = [f"  {t} (&out)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(output);",
              f"  for (int i = 0; i < {k}; ++i) out[i] = keys[i];"]
    inputs = f"const {t}* keys, "
    outputs = f"{t}* output"
    if pairs:
        copies += [f"  {v} (&out_values)[{k}] = *reinterpret_cast<{v} (*)[{k}]>(output_values);",
                   f"  for (int i = 0; i < {k}; ++i) out_values[i] = values[i];"]
        inputs += f"const {v}* values, "
        outputs += f", {v}* output_values"
    lines = [f"  using Algo = {parts.algo};", *parts.prologue,
             "  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));", *copies, *parts.sort]
    if spec.barrier:
        if spec.group.kind == BLOCK:
            lines.append("  __syncthreads();  // reuse barrier for the scratch")
        else:
            rank = f"cuda_coop::linear_rank<{spec.block[0]}, {spec.block[1]}, {spec.block[2]}>()"
            lines.append(f"  __syncwarp(cuda_coop::logical_warp_mask({rank}, {spec.group.size}u));")
    body = (f'extern "C" __device__ void @SYM@({inputs}{outputs}, {parts.params}, char* scratch, '
            "unsigned long long stride) {\n" + "\n".join(lines) + "\n}\n")
    return Provider.make(spec.op, parts.headers, body, f"typename {parts.algo}::TempStorage")
