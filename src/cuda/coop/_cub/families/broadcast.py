"""broadcast providers (docs: operations/broadcast): our own block slot and warp shuffles (include/cuda_coop), since
CUB has no broadcast of a member's value.

The entry point takes each member of the value apart (one, or a tuple's 1-8): a payload by pointer with a pointer to
its fresh result (``items{j}``, ``output{j}``), a scalar by value with an ``out`` pointer to its result (``value{j}``,
``result{j}``); a single scalar returns its result. Members never meet: a tuple needs no struct of its members.
"""
from __future__ import annotations

from ..._semantics.broadcast import BroadcastSpec
from ..._semantics.common import BLOCK, c_type
from ..provider import SCRATCH_PARAMS, Abi, CParam, Provider, c_signature, reuse_barrier


def _members(spec: BroadcastSpec) -> tuple[list[CParam], list[str], list[str], list[tuple[str, int]]]:
    """The parameters of the members' inputs and results; per member the C expressions of its source items and of
    its result items, and its (C type, slot extent)."""
    inputs: list[CParam] = []
    outputs: list[CParam] = []
    sources, results, slots = [], [], []
    single_scalar = not spec.tupled and not spec.extents[0]
    for j, (dtype, k) in enumerate(zip(spec.dtypes, spec.extents)):
        t = c_type(dtype)
        suffix = str(j) if spec.tupled else ""
        if k:
            inputs.append(CParam(Abi.PTR, f"{t}*", f"items{suffix}", dtype))
            outputs.append(CParam(Abi.PTR, f"{t}*", f"output{suffix}", dtype))
            sources.append(f"items{suffix}")
            results.append(f"output{suffix}")
        else:
            inputs.append(CParam(Abi.VALUE, t, f"value{suffix}", dtype))
            if not single_scalar:
                outputs.append(CParam(Abi.OUT, f"{t}*", f"result{suffix}", dtype))
            sources.append(f"&value{suffix}")
            results.append("&result" if single_scalar else f"result{suffix}")
        slots.append((t, max(k, 1)))
    return inputs + outputs, sources, results, slots


def emit(spec: BroadcastSpec) -> Provider:
    bx, by, bz = spec.block
    params, sources, results, slots = _members(spec)
    params += [CParam(Abi.I64, "long long", "src_rank"), *SCRATCH_PARAMS]
    single_scalar = not spec.tupled and not spec.extents[0]
    ret = c_type(spec.dtypes[0]) if single_scalar else "void"
    # trap before the value is used (docs: errors, "Device traps"); a constant in range folds away
    lines = [f"  cuda_coop::check_range(src_rank, 0, {spec.group.size - 1});"]
    if single_scalar:
        lines.append(f"  {ret} result;")
    pre = ""
    scratch_type = None
    if spec.group.kind == BLOCK:
        header = "cuda_coop/block/block_broadcast.cuh"
        fields = " ".join(f"{t} m{j}[{k}];" for j, (t, k) in enumerate(slots))
        pre = f"struct @SYM@_storage {{ {fields} }};\n"
        scratch_type = "@SYM@_storage"
        lines += ["  auto& slots = *reinterpret_cast<@SYM@_storage*>(scratch);",
                  f"  const cuda_coop::BlockBroadcast<{bx}, {by}, {bz}> algo(src_rank);"]
        lines += [f"  algo.Write(slots.m{j}, {source});" for j, source in enumerate(sources)]
        lines.append("  algo.Sync();")
        lines += [f"  algo.Read({result}, slots.m{j});" for j, result in enumerate(results)]
        if spec.barrier:
            lines.append(reuse_barrier(None))
    else:
        header = "cuda_coop/warp/warp_broadcast.cuh"
        lines.append(f"  const cuda_coop::WarpBroadcast<{spec.group.size}, {bx}, {by}, {bz}> algo(src_rank);")
        lines += [f"  algo.Broadcast<{k}>({result}, {source});"
                  for result, source, (_, k) in zip(results, sources, slots)]
    if single_scalar:
        lines.append("  return result;")
    body = pre + f'extern "C" __device__ {ret} @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n}\n"
    return Provider.make("broadcast", (header,), body, scratch_type, params)
