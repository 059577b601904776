"""argmax / argmin providers: CUB BlockReduce / WarpReduce over (value, index) pairs (docs: operations/argreduce)."""
from __future__ import annotations

from ..._semantics.argreduce import ArgReduceSpec
from ..._semantics.common import BLOCK, c_type
from ..provider import SCRATCH_PARAMS, Abi, CParam, Provider, c_signature, reuse_barrier


def emit(spec: ArgReduceSpec) -> Provider:
    """The pair, its operator and the fold of a member's items are in include/cuda_coop (util_arg.cuh); blocks
    reduce with CUB's BlockReduce (warp reductions), warps with WarpReduce."""
    t, k = c_type(spec.dtype), spec.items_per_thread
    index_t = c_type(spec.index_dtype)
    bx, by, bz = spec.block
    params = [CParam(Abi.PTR, f"{t}*", "items") if k else CParam(Abi.VALUE, t, "value")]
    if spec.has_indices:
        params.append(CParam(Abi.PTR, f"{index_t}*", "indices") if k
                      else CParam(Abi.VALUE, index_t, "index", spec.index_dtype))
    if spec.has_valid_items:
        params.append(CParam(Abi.I64, "long long", "valid_items"))
    params += [CParam(Abi.OUT, f"{t}*", "value_out", spec.dtype),
               CParam(Abi.OUT, f"{index_t}*", "index_out", spec.index_dtype), *SCRATCH_PARAMS]
    flags = ", ".join(str(flag).lower() for flag in (spec.largest, spec.is_float, spec.has_valid_items,
                                                      spec.broadcast))
    block = spec.group.kind == BLOCK
    if block:
        algo = f"cuda_coop::BlockArgReduce<{t}, {index_t}, {flags}, {bx}, {by}, {bz}>"
        header = "cuda_coop/block/block_arg_reduce.cuh"
        make = "  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));"
    else:
        algo = f"cuda_coop::WarpArgReduce<{t}, {index_t}, {flags}, {spec.group.size}, {bx}, {by}, {bz}>"
        header = "cuda_coop/warp/warp_arg_reduce.cuh"
        make = "  Algo algo;  // power-of-two widths shuffle: no shared memory"
    lines = [f"  using Algo = {algo};"]
    if spec.has_valid_items:  # trap before any use (docs: errors, "Device traps")
        lines.append(f"  cuda_coop::check_range(valid_items, 1, {spec.positions});")
    if k:
        lines.append(f"  const {t} (&in)[{k}] = *reinterpret_cast<const {t} (*)[{k}]>(items);")
    lines.append(make)
    source = "in" if k else "value"
    index_source = ("indices" if k else "&index") if spec.has_indices else "nullptr"
    valid = "valid_items" if spec.has_valid_items else "0"
    lines.append(f"  algo.Reduce<{str(spec.has_indices).lower()}>({source}, {index_source}, {valid}, *value_out, "
                 "*index_out);")
    if spec.barrier:
        lines.append(reuse_barrier(None))
    body = f'extern "C" __device__ void @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n}\n"
    scratch = f"typename {algo}::TempStorage" if block else None
    return Provider.make("argreduce", (header,), body, scratch, params)
