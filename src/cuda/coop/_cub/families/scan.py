"""CUB BlockScan / WarpScan providers, qualified extensions included (docs: operations/scan); reverse and segmented
scans run the algorithms of include/cuda_coop (block/ and warp/)."""
from __future__ import annotations

from ..._semantics.common import BLOCK, c_type
from ..._semantics.scan import ScanSpec
from ..provider import SCRATCH_PARAMS, Abi, CParam, Provider, c_signature, reuse_barrier
from . import operators


def _prefix_functor(spec: ScanSpec, t: str) -> str:
    """The block prefix callback functor. CUB calls it in the first warp with the block aggregate and seeds the
    scan with lane 0's result. A StatefulFunction's op receives a pointer to the caller's one-item state payload;
    in a running segmented scan (SPEC 8.24) both forms also receive ``int has_head``. float16 and aggregate values
    cross by pointer (docs: qualified, "User-defined aggregates"; ``numba_mlir._compat.compile_operator``)."""
    prefix = spec.prefix
    assert prefix is not None
    stateful = spec.state_dtype is not None
    name = prefix.name if stateful else f"{prefix.name}_1"
    state_params = [f"{c_type(spec.state_dtype)}*"] if stateful else []  # type: ignore[arg-type]
    state_args = ["state"] if stateful else []
    head = spec.flag_dtype is not None
    head_params, head_args = (["int"], ["has_head"]) if head else ([], [])
    if prefix.by_pointer:
        decl = f'extern "C" __device__ void {name}({", ".join([f"{t}*", *state_params, f"{t}*", *head_params])});\n'
        body = f"{t} r; {name}({', '.join(['&r', *state_args, '&aggregate', *head_args])}); return r;"
    else:
        decl = f'extern "C" __device__ {t} {name}({", ".join([*state_params, t, *head_params])});\n'
        body = f"return {name}({', '.join([*state_args, 'aggregate', *head_args])});"
    member = f"  {c_type(spec.state_dtype)}* state;\n" if stateful else ""  # type: ignore[arg-type]
    params = f"{t} aggregate" + (", int has_head" if head else "")
    return (decl + "struct @SYM@_prefix {\n" + member +
            f"  __device__ __forceinline__ {t} operator()({params}) {{ {body} }}\n" + "};\n")


_HEADERS = {  # (group is a block, reverse, segmented) -> the header of the class that runs the call
    (True, True, False): "cuda_coop/block/block_reverse_scan.cuh",
    (True, False, True): "cuda_coop/block/block_segmented_scan.cuh",
    (True, True, True): "cuda_coop/block/block_segmented_reverse_scan.cuh",
    (False, True, False): "cuda_coop/warp/warp_reverse_scan.cuh",
    (False, False, True): "cuda_coop/warp/warp_segmented_scan.cuh",
    (False, True, True): "cuda_coop/warp/warp_segmented_scan.cuh",
    (False, False, False): "cuda_coop/warp/warp_partial_scan.cuh",
}
_RUNNING_HEADERS = {  # a block's prefix callback with (reverse, segmented): SPEC 8.24 (the two never meet: O17)
    (True, False): "cuda_coop/block/block_running_reverse_scan.cuh",
    (False, True): "cuda_coop/block/block_running_segmented_scan.cuh",
}


def _running(spec: ScanSpec) -> bool:
    """A block prefix callback with reverse or head_flags: our own classes (CUB's callbacks seed forward scans)."""
    return spec.prefix is not None and (spec.reverse or spec.flag_dtype is not None)


def _own_algorithm(spec: ScanSpec, t: str) -> tuple[str, str]:
    """The cuda_coop class of a reverse or segmented scan (SPEC 8.17), of one running across tiles with a prefix
    callback (SPEC 8.24), or of a warp scan with valid_items and an aggregate (``cuda_coop::WarpPartialScan``),
    and its header; the algorithms are in include/cuda_coop."""
    bx, by, bz = spec.block
    segmented = spec.flag_dtype is not None
    if _running(spec):
        header = _RUNNING_HEADERS[(spec.reverse, segmented)]
        if segmented:
            return (f"cuda_coop::BlockRunningSegmentedScan<{t}, {bx}, cub::BLOCK_SCAN_{spec.algorithm.upper()}, {by}, "
                    f"{bz}>", header)
        return f"cuda_coop::BlockRunningReverseScan<{t}, {bx}, {by}, {bz}>", header
    header = _HEADERS[(spec.group.kind == BLOCK, spec.reverse, segmented)]
    if spec.group.kind == BLOCK:
        if segmented and not spec.reverse:
            return (f"cuda_coop::BlockSegmentedScan<{t}, {bx}, cub::BLOCK_SCAN_{spec.algorithm.upper()}, {by}, {bz}>",
                    header)
        name = "BlockSegmentedReverseScan" if segmented else "BlockReverseScan"
        return f"cuda_coop::{name}<{t}, {bx}, {by}, {bz}>", header
    w = spec.group.size
    if segmented:
        name = "WarpSegmentedReverseScan" if spec.reverse else "WarpSegmentedScan"
    else:
        name = "WarpReverseScan" if spec.reverse else "WarpPartialScan"
    return f"cuda_coop::{name}<{t}, {w}, {bx}, {by}, {bz}>", header


def _running_call(spec: ScanSpec, op: str) -> str:
    """The method call of a running scan (``_running``): the operator, then the prefix callback; a segmented one
    passes its head flags after the output, and its exclusive forms initial_value (a sum without one:
    ``ExclusiveSum``, zero at each flagged position)."""
    exclusive = spec.mode == "exclusive"
    args = ["in", "out"]
    if spec.flag_dtype is not None:
        args.append("flags" if spec.items_per_thread else "flag")
        if exclusive and spec.operator.is_sum and not spec.has_initial_value:
            return f"ExclusiveSum({', '.join(args)}, prefix)"
        if exclusive:
            args.append("initial_value")
    return f"{'ExclusiveScan' if exclusive else 'InclusiveScan'}({', '.join(args)}, {op}, prefix)"


def _own_call(spec: ScanSpec, op: str) -> str:
    """The method call on ``_own_algorithm``'s object: CUB's names and argument order, head flags after the output,
    ``valid_items`` and the aggregate last."""
    if _running(spec):
        return _running_call(spec, op)
    exclusive = spec.mode == "exclusive"
    args = ["in", "out"]
    if spec.flag_dtype is not None:
        args.append("flags" if spec.items_per_thread else "flag")
    partial = spec.has_valid_items  # only with an aggregate: without one, CUB's forward scan serves
    if spec.operator.is_sum and not partial and spec.flag_dtype is None and not spec.has_initial_value:
        method = "ExclusiveSum" if exclusive else "InclusiveSum"
    else:
        method = "ExclusiveScan" if exclusive else "InclusiveScan"
        # segmented and partial exclusive forms always take initial_value (zero for a sum without one)
        args += (["initial_value"] if exclusive else []) + [op]
    if partial:
        args.append("(int)valid_items")
    if spec.aggregate:
        args.append("*aggregate")
    return f"{method}({', '.join(args)})"


def emit(spec: ScanSpec) -> Provider:
    t, k = c_type(spec.dtype), spec.items_per_thread
    bx, by, bz = spec.block
    decl, op = operators.functor(spec.operator, t)
    callback = ""
    if spec.prefix is not None:
        decl += _prefix_functor(spec, t)
        callback = ", prefix"
    elif spec.aggregate:
        callback = ", *aggregate"  # CUB's block_aggregate / warp_aggregate overloads (every member receives it)
    if spec.mode == "inclusive":
        method = (f"InclusiveSum(in, out{callback})" if spec.operator.is_sum
                  else f"InclusiveScan(in, out, {op}{callback})")
    elif spec.has_initial_value:
        method = f"ExclusiveScan(in, out, initial_value, {op}{callback})"
    elif spec.operator.is_sum:
        method = f"ExclusiveSum(in, out{callback})"
    else:  # a non-sum exclusive scan seeded by its prefix callback
        method = f"ExclusiveScan(in, out, {op}{callback})"
    segmented = spec.flag_dtype is not None
    block = spec.group.kind == BLOCK
    # Reverse and segmented scans, and warp scans with valid_items and an aggregate, are our own algorithms
    # (include/cuda_coop); the others are CUB's BlockScan / WarpScan.
    own = segmented or spec.reverse or (spec.has_valid_items and spec.aggregate)
    if own:
        algo, header = _own_algorithm(spec, t)
    elif block:
        algo = f"cub::BlockScan<{t}, {bx}, cub::BLOCK_SCAN_{spec.algorithm.upper()}, {by}, {bz}>"
        header = "cub/block/block_scan.cuh"
    else:
        algo = f"cub::WarpScan<{t}, {spec.group.size}>"
        header = "cub/warp/warp_scan.cuh"
    if block:
        make = "  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));"
    elif own:
        make = "  Algo algo;  // shuffles: no shared memory"
    else:
        make = "  typename Algo::TempStorage unused;  // shuffle-based: no shared memory\n  Algo algo(unused);"
    if k:
        params = [CParam(Abi.PTR, f"{t}*", "items"), CParam(Abi.PTR, f"{t}*", "output")]
        io = [f"  {t} (&in)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(items);",
              f"  {t} (&out)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(output);"]
        ret, result = "void", ""
    else:
        params, io, ret, result = [CParam(Abi.VALUE, t, "in")], [f"  {t} out;"], t, "  return out;\n"
    if segmented:
        flag_type = c_type(spec.flag_dtype)  # type: ignore[arg-type]
        if k:
            params.append(CParam(Abi.PTR, f"{flag_type}*", "head_flags"))
            io.append(f"  const {flag_type} (&flags)[{k}] = *reinterpret_cast<{flag_type} (*)[{k}]>(head_flags);")
        else:
            params.append(CParam(Abi.VALUE, flag_type, "flag", spec.flag_dtype))
    params.append(CParam(Abi.ELEM, t, "initial_value"))
    if spec.has_valid_items:
        params.append(CParam(Abi.I64, "long long", "valid_items"))
    if spec.aggregate:
        params.append(CParam(Abi.PTR, f"{t}*", "aggregate"))
    if spec.state_dtype is not None:
        params.append(CParam(Abi.PTR, f"{c_type(spec.state_dtype)}*", "state"))
    params += SCRATCH_PARAMS
    lines = [f"  using Algo = {algo};", *io]
    if spec.has_valid_items:  # trap before narrowing to int (docs: errors, "Device traps")
        lines.append(f"  cuda_coop::check_range(valid_items, 1, {spec.group.size});")
    lines.append(make)
    if spec.prefix is not None:
        lines.append("  @SYM@_prefix prefix{state};" if spec.state_dtype is not None else "  @SYM@_prefix prefix;")
    # without an aggregate, valid_items needs nothing more: lanes below it only see lanes below it
    lines.append(f"  algo.{_own_call(spec, op) if own else method};")
    if spec.barrier:
        lines.append(reuse_barrier(None))
    body = (decl + f'extern "C" __device__ {ret} @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n"
            + result + "}\n")
    scratch = f"typename {algo}::TempStorage" if spec.uses_scratch else None
    return Provider.make("scan", (header, *operators.HEADERS), body, scratch, params)
