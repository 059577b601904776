"""CUB BlockScan / WarpScan providers, qualified extensions included (docs: operations/scan)."""
from __future__ import annotations

from ..._semantics.common import BLOCK, c_type
from ..._semantics.scan import ScanSpec
from ..provider import SCRATCH_PARAMS, CParam, Provider, c_signature, reuse_barrier
from . import operators


def _prefix_functor(spec: ScanSpec, t: str) -> str:
    """The block prefix callback functor. CUB calls it in the first warp with the block aggregate and seeds the
    scan with lane 0's result. A StatefulFunction's op receives a pointer to the caller's one-item state payload.
    float16 and aggregate values cross by pointer (docs: qualified, "User-defined aggregates";
    ``numba_mlir._compat.compile_operator``)."""
    prefix = spec.prefix
    assert prefix is not None
    stateful = spec.state_dtype is not None
    name = prefix.name if stateful else f"{prefix.name}_1"
    state_params = [f"{c_type(spec.state_dtype)}*"] if stateful else []  # type: ignore[arg-type]
    state_args = ["state"] if stateful else []
    if prefix.by_pointer:
        decl = f'extern "C" __device__ void {name}({", ".join([f"{t}*", *state_params, f"{t}*"])});\n'
        body = f"{t} r; {name}({', '.join(['&r', *state_args, '&aggregate'])}); return r;"
    else:
        decl = f'extern "C" __device__ {t} {name}({", ".join([*state_params, t])});\n'
        body = f"return {name}({', '.join([*state_args, 'aggregate'])});"
    member = f"  {c_type(spec.state_dtype)}* state;\n" if stateful else ""  # type: ignore[arg-type]
    return (decl + "struct @SYM@_prefix {\n" + member +
            f"  __device__ __forceinline__ {t} operator()({t} aggregate) {{ {body} }}\n" + "};\n")


def _partial_warp_lines(spec: ScanSpec, t: str, op: str) -> list[str]:
    """A warp scan with valid_items and aggregate_output.

    CUB's documented WarpScan has no partial overloads, and user operators have no identity to pad with. The
    construction used instead holds for every associative operator: a scan result at lane p only combines the
    inputs of lanes 0..p, so the full-warp scan is already right in every lane below valid_items whatever the
    other lanes hold (their results are unspecified). Only the aggregate must leave them out: it is the inclusive
    scan (without initial_value) at lane valid_items - 1, broadcast with one shuffle. For an exclusive scan the
    inclusive scan is computed and shifted up one lane, as CUB itself does.
    """
    w = spec.group.size
    bx, by, bz = spec.block
    lines = [f"  const unsigned rank = cuda_coop::linear_rank<{bx}, {by}, {bz}>();",
             f"  const unsigned mask = cuda_coop::logical_warp_mask(rank, {w}u);",
             f"  const unsigned lane = rank % {w}u;"]
    inclusive = "out" if spec.mode == "inclusive" else "inclusive"
    if spec.mode != "inclusive":
        lines.append(f"  {t} inclusive;")
    if spec.operator.is_sum:
        lines.append(f"  algo.InclusiveSum(in, {inclusive});")
    else:
        lines.append(f"  algo.InclusiveScan(in, {inclusive}, {op});")
    lines.append(f"  *aggregate = cub::ShuffleIndex<{w}>({inclusive}, (int)valid_items - 1, mask);")
    if spec.mode != "inclusive":  # initial_value is 0 for exclusive sums without one
        lines += [f"  const {t} before = cub::ShuffleUp<{w}>(inclusive, 1, 0, mask);",
                  f"  out = lane == 0 ? initial_value : {op}(initial_value, before);"]
    return lines


def _reverse_block_stage(spec: ScanSpec, op: str) -> str:
    """The block-stage call of a reverse scan on the mirrored thread aggregates. A sum or an initial value seeds it
    (its rank-0 result is defined); an inclusive non-sum scan leaves rank 0's result, which no thread uses, open."""
    aggregate = ", *aggregate" if spec.aggregate else ""
    if spec.has_initial_value:
        return f"algo.ExclusiveScan(mirrored, before, initial_value, {op}{aggregate});"
    if spec.operator.is_sum:
        return f"algo.ExclusiveSum(mirrored, before{aggregate});"
    return f"algo.ExclusiveScan(mirrored, before, {op}{aggregate});"


def _reverse_lines(spec: ScanSpec, t: str, op: str, swapped: str) -> list[str]:
    """A reverse scan (SPEC 8.17): the forward CUB scan with the operator's operands swapped over the tile mirrored
    (position ``p`` <-> ``P-1-p``), which folds right to left: ``x[p] op (x[p+1] op ...)``.

    Warps mirror their lanes with two shuffles around the WarpScan. Blocks keep their items: each thread folds its
    own items right to left, the thread aggregates are mirrored through shared memory (one value per thread) for a
    BlockScan, and each thread's seed (the fold of every later thread, then ``initial_value``) comes back the same
    way."""
    bx, by, bz = spec.block
    exclusive = spec.mode == "exclusive"
    if spec.group.kind != BLOCK:
        w = spec.group.size
        method = ("ExclusiveScan(mirrored, r, initial_value, {op}{agg})" if spec.has_initial_value else
                  ("ExclusiveSum(mirrored, r{agg})" if exclusive else "InclusiveSum(mirrored, r{agg})")
                  if spec.operator.is_sum else "InclusiveScan(mirrored, r, {op}{agg})")
        return [f"  const unsigned rank = cuda_coop::linear_rank<{bx}, {by}, {bz}>();",
                f"  const unsigned mask = cuda_coop::logical_warp_mask(rank, {w}u);",
                f"  const unsigned mirror = {w - 1}u - rank % {w}u;",
                f"  const {t} mirrored = cub::ShuffleIndex<{w}>(in, mirror, mask);",
                f"  {t} r;",
                "  algo." + method.format(op=swapped, agg=", *aggregate" if spec.aggregate else "") + ";",
                f"  out = cub::ShuffleIndex<{w}>(r, mirror, mask);"]
    threads = bx * by * bz
    k = max(spec.items_per_thread, 1)
    src, dst = ("in", "out") if spec.items_per_thread else ("single_in", "single_out")
    stage = _reverse_block_stage(spec, swapped)
    lines = [f"  const unsigned rank = cuda_coop::linear_rank<{bx}, {by}, {bz}>();"]
    if not spec.items_per_thread:
        lines += [f"  const {t} single_in[1] = {{in}};", f"  {t} single_out[1];"]
    lines += [f"  {t} folded[{k}];  // folded[i]: this thread's items i.. folded right to left",
              f"  folded[{k - 1}] = {src}[{k - 1}];",
              f"  for (int i = {k - 2}; i >= 0; --i) folded[i] = {op}({src}[i], folded[i + 1]);",
              f"  storage.mirror[{threads - 1}u - rank] = folded[0];",
              "  __syncthreads();",
              f"  const {t} mirrored = storage.mirror[rank];",
              f"  {t} before;",
              f"  {stage}",
              "  __syncthreads();",
              f"  storage.mirror[{threads - 1}u - rank] = before;",
              "  __syncthreads();",
              f"  const {t} seed = storage.mirror[rank];  // the fold of every later thread's items"]
    if exclusive:  # seeded: by a sum's 0 or by initial_value (an exclusive non-sum scan requires one)
        lines.append(f"  for (int i = 0; i < {k}; ++i) {dst}[i] = i + 1 < {k} ? {op}(folded[i + 1], seed) : seed;")
    else:  # the last thread has no later thread (a sum's 0 is kept out, as CUB keeps it out of position 0)
        lines.append(f"  for (int i = 0; i < {k}; ++i) {dst}[i] = rank == {threads - 1}u ? folded[i] "
                     f": {op}(folded[i], seed);")
    if not spec.items_per_thread:
        lines.append("  out = single_out[0];")
    return lines


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
    swapped = "@SYM@_swapped{}"
    if spec.reverse:  # the operator with its operands swapped (_reverse_lines)
        decl += (f"struct @SYM@_swapped {{\n  __device__ __forceinline__ {t} operator()(const {t}& a, const {t}& b) "
                 f"const {{ return {op}(b, a); }}\n}};\n")
    if spec.group.kind == BLOCK:
        algo = f"cub::BlockScan<{t}, {bx}, cub::BLOCK_SCAN_{spec.algorithm.upper()}, {by}, {bz}>"
        header = "cub/block/block_scan.cuh"
        make = "  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));"
        if spec.reverse:  # the scan's storage and one value per thread, mirrored
            decl += (f"struct @SYM@_storage {{\n  typename {algo}::TempStorage scan;\n  {t} mirror[{bx * by * bz}];\n"
                     "};\n")
            make = ("  @SYM@_storage& storage = *reinterpret_cast<@SYM@_storage*>(scratch);\n"
                    "  Algo algo(storage.scan);")
    else:
        algo = f"cub::WarpScan<{t}, {spec.group.size}>"
        header = "cub/warp/warp_scan.cuh"
        make = "  typename Algo::TempStorage unused;  // shuffle-based: no shared memory\n  Algo algo(unused);"
    if k:
        params = [CParam("ptr", f"{t}*", "items"), CParam("ptr", f"{t}*", "output")]
        io = [f"  {t} (&in)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(items);",
              f"  {t} (&out)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(output);"]
        ret, result = "void", ""
    else:
        params, io, ret, result = [CParam("value", t, "in")], [f"  {t} out;"], t, "  return out;\n"
    params.append(CParam("elem", t, "initial_value"))
    if spec.has_valid_items:
        params.append(CParam("i64", "long long", "valid_items"))
    if spec.aggregate:
        params.append(CParam("ptr", f"{t}*", "aggregate"))
    if spec.state_dtype is not None:
        params.append(CParam("ptr", f"{c_type(spec.state_dtype)}*", "state"))
    params += SCRATCH_PARAMS
    lines = [f"  using Algo = {algo};", *io]
    if spec.has_valid_items:  # trap before narrowing to int (docs: errors, "Device traps")
        lines.append(f"  cuda_coop::check_range(valid_items, 1, {spec.group.size});")
    lines.append(make)
    if spec.prefix is not None:
        lines.append("  @SYM@_prefix prefix{state};" if spec.state_dtype is not None else "  @SYM@_prefix prefix;")
    if spec.reverse:
        lines += _reverse_lines(spec, t, op, swapped)
    elif spec.has_valid_items and spec.aggregate:
        lines += _partial_warp_lines(spec, t, op)
    else:  # without an aggregate, valid_items needs nothing more: lanes below it only see lanes below it
        lines.append(f"  algo.{method};")
    if spec.barrier:
        lines.append(reuse_barrier(None))
    body = (decl + f'extern "C" __device__ {ret} @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n"
            + result + "}\n")
    scratch = (("@SYM@_storage" if spec.reverse else f"typename {algo}::TempStorage") if spec.uses_scratch
               else None)
    shuffles = spec.has_valid_items or (spec.reverse and spec.group.kind != BLOCK)
    headers = (header, *operators.HEADERS) + (("cub/util_ptx.cuh",) if shuffles else ())
    return Provider.make("scan", headers, body, scratch, params)
