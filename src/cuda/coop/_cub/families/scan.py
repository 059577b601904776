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


def _segmented_decl(t: str, op: str) -> str:
    """A (flag, value) pair and the segmented operators over it (forward, and with the operands swapped): a flagged
    right operand starts a new segment, so the left one's value is dropped."""
    pair = "@SYM@_pair"
    head = f"  __device__ __forceinline__ {pair} operator()(const {pair}& a, const {pair}& b) const {{ "
    return (f"struct {pair} {{\n  int f;\n  {t} v;\n}};\n"
            f"struct @SYM@_seg {{\n{head}return {{a.f | b.f, b.f ? b.v : {op}(a.v, b.v)}}; }}\n}};\n"
            f"struct @SYM@_seg_swapped {{\n{head}return {{a.f | b.f, b.f ? b.v : {op}(b.v, a.v)}}; }}\n}};\n")


def _segmented_lines(spec: ScanSpec, t: str, op: str) -> list[str]:
    """A segmented scan (SPEC 8.17): a non-zero head flag starts a segment at its tile position (position 0 always
    starts one); each segment is scanned on its own, exclusive forms give ``initial_value`` where a segment's scan
    begins, and the aggregate is the last segment scanned.

    Forward: CUB's scan over (flag, value) pairs with the segmented operator. Reverse: as ``_reverse_lines``, with
    segment ends as the mirrored order's starts: warps mirror (tail flag, value) pairs; blocks fold their own items
    within segments and mirror one pair per thread (its items after the first hold a head, or the next thread's
    first item does: the fold stops there)."""
    bx, by, bz = spec.block
    exclusive = spec.mode == "exclusive"
    aggregate = ", aggregate_pair" if spec.aggregate else ""
    method = "ExclusiveScan" if exclusive else "InclusiveScan"
    lines = [f"  const unsigned rank = cuda_coop::linear_rank<{bx}, {by}, {bz}>();"]
    if spec.aggregate:
        lines.append("  @SYM@_pair aggregate_pair;")
    if spec.group.kind != BLOCK:
        w = spec.group.size
        lines += [f"  const unsigned lane = rank % {w}u;"]
        if not spec.reverse:
            lines += ["  const @SYM@_pair mine = {(flag != 0 || lane == 0) ? 1 : 0, in};",
                      "  @SYM@_pair r;",
                      f"  algo.{method}(mine, r, @SYM@_seg{{}}{aggregate});",
                      ("  out = mine.f ? initial_value : " + f"{op}(initial_value, r.v);") if exclusive
                      else "  out = r.v;"]
        else:
            lines += [f"  const unsigned mask = cuda_coop::logical_warp_mask(rank, {w}u);",
                      f"  const unsigned mirror = {w - 1}u - lane;",
                      f"  const int next_head = cub::ShuffleDown<{w}>(flag != 0 ? 1 : 0, 1, {w - 1}, mask);",
                      f"  const int tail = (lane == {w - 1}u || next_head) ? 1 : 0;  // this lane ends its segment",
                      f"  const @SYM@_pair mirrored = cub::ShuffleIndex<{w}>(@SYM@_pair{{tail, in}}, mirror, mask);",
                      "  @SYM@_pair r;",
                      f"  algo.{method}(mirrored, r, @SYM@_seg_swapped{{}}{aggregate});",
                      f"  const @SYM@_pair back = cub::ShuffleIndex<{w}>(r, mirror, mask);",
                      f"  out = tail ? initial_value : {op}(back.v, initial_value);" if exclusive
                      else "  out = back.v;"]
    else:
        threads = bx * by * bz
        k = max(spec.items_per_thread, 1)
        if spec.items_per_thread:
            src, dst, head = "in", "out", "(flags[i] != 0)"
        else:
            lines += [f"  const {t} single_in[1] = {{in}};", f"  {t} single_out[1];"]
            src, dst, head = "single_in", "single_out", "(flag != 0)"
        if not spec.reverse:
            lines += [f"  @SYM@_pair pin[{k}], pout[{k}];",
                      f"  for (int i = 0; i < {k}; ++i) pin[i] = {{({head} || (rank == 0 && i == 0)) ? 1 : 0, "
                      f"{src}[i]}};",
                      f"  algo.{method}(pin, pout, @SYM@_seg{{}}{aggregate});",
                      f"  for (int i = 0; i < {k}; ++i) {dst}[i] = " +
                      (f"pin[i].f ? initial_value : {op}(initial_value, pout[i].v);" if exclusive else "pout[i].v;")]
        else:
            lines += [f"  bool heads[{k}];",
                      f"  for (int i = 0; i < {k}; ++i) heads[i] = {head};",
                      f"  {t} folded[{k}];  // folded[i]: items i.. of this thread's segment of i, right to left",
                      f"  folded[{k - 1}] = {src}[{k - 1}];",
                      f"  for (int i = {k - 2}; i >= 0; --i) folded[i] = heads[i + 1] ? {src}[i] : "
                      f"{op}({src}[i], folded[i + 1]);",
                      "  int cut = 0;  // a segment starts after this thread's first item",
                      f"  for (int i = 1; i < {k}; ++i) cut |= heads[i] ? 1 : 0;",
                      "  storage.heads[rank] = heads[0] ? 1 : 0;",
                      "  __syncthreads();",
                      f"  const int next_head = rank + 1 < {threads}u ? storage.heads[rank + 1] : 1;",
                      f"  storage.mirror[{threads - 1}u - rank] = @SYM@_pair{{cut | next_head, folded[0]}};",
                      "  __syncthreads();",
                      "  const @SYM@_pair mirrored = storage.mirror[rank];",
                      "  @SYM@_pair before;",
                      f"  algo.ExclusiveScan(mirrored, before, @SYM@_seg_swapped{{}}{aggregate});",
                      "  __syncthreads();",
                      f"  storage.mirror[{threads - 1}u - rank] = before;",
                      "  __syncthreads();",
                      f"  const {t} seed = storage.mirror[rank].v;  // later threads' part of the last segment",
                      f"  bool open[{k}];  // item i's segment runs past this thread's last item",
                      f"  open[{k - 1}] = !next_head;",
                      f"  for (int i = {k - 2}; i >= 0; --i) open[i] = open[i + 1] && !heads[i + 1];",
                      f"  {t} full[{k}];",
                      f"  for (int i = 0; i < {k}; ++i) full[i] = open[i] ? {op}(folded[i], seed) : folded[i];"]
            if exclusive:
                lines += [f"  for (int i = 0; i < {k}; ++i) {{",
                          f"    const bool end = i + 1 < {k} ? heads[i + 1] : next_head != 0;",
                          f"    {dst}[i] = end ? initial_value : {op}(i + 1 < {k} ? full[i + 1] : seed, "
                          "initial_value);",
                          "  }"]
            else:
                lines.append(f"  for (int i = 0; i < {k}; ++i) {dst}[i] = full[i];")
        if not spec.items_per_thread:
            lines.append("  out = single_out[0];")
    if spec.aggregate:
        lines.append("  *aggregate = aggregate_pair.v;")
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
    segmented = spec.flag_dtype is not None
    scanned = "@SYM@_pair" if segmented else t  # what the CUB scan runs over
    swapped = "@SYM@_swapped{}"
    if segmented:
        decl += _segmented_decl(t, op)
    elif spec.reverse:  # the operator with its operands swapped (_reverse_lines)
        decl += (f"struct @SYM@_swapped {{\n  __device__ __forceinline__ {t} operator()(const {t}& a, const {t}& b) "
                 f"const {{ return {op}(b, a); }}\n}};\n")
    threads = bx * by * bz
    if spec.group.kind == BLOCK:
        algo = f"cub::BlockScan<{scanned}, {bx}, cub::BLOCK_SCAN_{spec.algorithm.upper()}, {by}, {bz}>"
        header = "cub/block/block_scan.cuh"
        make = "  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));"
        if spec.reverse:  # the scan's storage and one value (segmented: pair and head flag) per thread, mirrored
            heads = f"  int heads[{threads}];\n" if segmented else ""
            decl += (f"struct @SYM@_storage {{\n  typename {algo}::TempStorage scan;\n  {scanned} mirror[{threads}];\n"
                     f"{heads}}};\n")
            make = ("  @SYM@_storage& storage = *reinterpret_cast<@SYM@_storage*>(scratch);\n"
                    "  Algo algo(storage.scan);")
    else:
        algo = f"cub::WarpScan<{scanned}, {spec.group.size}>"
        header = "cub/warp/warp_scan.cuh"
        make = "  typename Algo::TempStorage unused;  // shuffle-based: no shared memory\n  Algo algo(unused);"
    if k:
        params = [CParam("ptr", f"{t}*", "items"), CParam("ptr", f"{t}*", "output")]
        io = [f"  {t} (&in)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(items);",
              f"  {t} (&out)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(output);"]
        ret, result = "void", ""
    else:
        params, io, ret, result = [CParam("value", t, "in")], [f"  {t} out;"], t, "  return out;\n"
    if segmented:
        flag_type = c_type(spec.flag_dtype)  # type: ignore[arg-type]
        if k:
            params.append(CParam("ptr", f"{flag_type}*", "head_flags"))
            io.append(f"  const {flag_type} (&flags)[{k}] = *reinterpret_cast<{flag_type} (*)[{k}]>(head_flags);")
        else:
            params.append(CParam("value", flag_type, "flag", spec.flag_dtype))
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
    if segmented:
        lines += _segmented_lines(spec, t, op)
    elif spec.reverse:
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
