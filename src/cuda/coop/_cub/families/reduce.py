"""CUB BlockReduce / WarpReduce providers (docs: operations/reduce)."""
from __future__ import annotations

from ..._semantics.aggregates import uniform_word
from ..._semantics.common import BLOCK, CLUSTER, THREAD, WARPS_IN_BLOCK, c_type, is_power_of_two, layout
from ..._semantics.reduce import ReduceSpec, SegmentedReduceSpec
from ..provider import REUSE_MARK, SCRATCH_PARAMS, Abi, CParam, Provider, c_signature, reuse_barrier
from . import operators
from .select import compaction_lines, storage_union


def _call(spec: ReduceSpec, source: str, op: str, lines: list[str]) -> str:
    """The CUB method call; a partial reduction first checks its runtime range (docs: errors, "Device traps")."""
    name = "Sum" if spec.operator.is_sum else "Reduce"
    args = [source] + ([] if spec.operator.is_sum else [op])
    if spec.has_valid_items:
        lines.append(f"  cuda_coop::check_range(valid_items, 1, {spec.group.size});")
        args.append("(int)valid_items")
    return f"{name}({', '.join(args)})"


def _thread(spec: ReduceSpec, op: str, lines: list[str]) -> None:
    """A thread folds its own slots in slot order; a scalar is its own reduction (docs: operations/reduce,
    "More groups in the qualified namespace")."""
    lines.append(f"  const auto result = cub::ThreadReduce(in, {op});" if spec.items_per_thread else
                 "  const auto result = value;")


def _fold_thread(spec: ReduceSpec, t: str, op: str, lines: list[str]) -> str:
    """Each member first folds its own slots in slot order (a scalar is already folded)."""
    if not spec.items_per_thread:
        return "value"
    lines.append(f"  const {t} partial = cub::ThreadReduce(in, {op});")
    return "partial"


def _method(spec: ReduceSpec, source: str, op: str) -> str:
    return f"Sum({source})" if spec.operator.is_sum else f"Reduce({source}, {op})"


def _warps_within_block(spec: ReduceSpec, t: str, op: str, lines: list[str], bx: int, by: int, bz: int) -> str:
    """Groups of whole warps (``cuda_coop::BlockWarpsReduce``, include/cuda_coop/block): shuffles per warp, then the
    group's partials folded through scratch after a named barrier of the member warps' threads."""
    n = spec.group.size // 32
    members = spec.group.instances * spec.group.size
    source = _fold_thread(spec, t, op, lines)
    algo = f"cuda_coop::BlockWarpsReduce<{t}, {n}, {members}, {bx}, {by}, {bz}>"
    lines.append(f"  using Algo = {algo};")
    lines.append("  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));" if n > 1 else
                 "  Algo algo;  // one warp: shuffles only")
    lines.append(f"  const {t} result = algo.{_method(spec, source, op)};")
    if spec.barrier and n > 1:
        lines.append(f"  cuda_coop::sync_named<1, {members}>();  {REUSE_MARK}")
    return f"typename {algo}::TempStorage"


def _cluster(spec: ReduceSpec, t: str, op: str, lines: list[str], bx: int, by: int, bz: int) -> str:
    """A cluster (``cuda_coop::BlockClusterReduce``, include/cuda_coop/block): each block's partial read by the
    others through distributed shared memory, in words of the widest width dividing its size and alignment."""
    size, alignment = layout(spec.dtype)
    word = uniform_word(size, alignment)
    algo = f"cuda_coop::BlockClusterReduce<{t}, {str(spec.broadcast).lower()}, {word}, {bx}, {by}, {bz}>"
    source = "in" if spec.items_per_thread else "value"
    lines += [f"  using Algo = {algo};",
              "  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));",
              f"  const {t} result = algo.{_method(spec, source, op)};"]
    return f"typename {algo}::TempStorage"


def emit(spec: ReduceSpec) -> Provider:
    t, k = c_type(spec.dtype), spec.items_per_thread
    bx, by, bz = spec.block
    decl, op = operators.functor(spec.operator, t)
    params = [CParam(Abi.PTR, f"{t}*", "items") if k else CParam(Abi.VALUE, t, "value"),
              CParam(Abi.I64, "long long", "valid_items"), *SCRATCH_PARAMS]
    lines = [f"  const unsigned rank = cuda_coop::linear_rank<{bx}, {by}, {bz}>();"]
    if k:
        lines.append(f"  {t} (&in)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(items);")
    source = "in" if k else "value"
    kind = spec.group.kind
    scratch_type: str | None = None
    header = "cub/warp/warp_reduce.cuh"
    pre: list[str] = []
    if kind == THREAD:
        _thread(spec, op, lines)
    elif kind == WARPS_IN_BLOCK:
        storage = _warps_within_block(spec, t, op, lines, bx, by, bz)
        header = "cuda_coop/block/block_warps_reduce.cuh"
        scratch_type = storage if spec.uses_scratch else None
    elif kind == CLUSTER:
        header = "cuda_coop/block/block_cluster_reduce.cuh"
        scratch_type = _cluster(spec, t, op, lines, bx, by, bz)
    elif kind == BLOCK:
        algo = f"cub::BlockReduce<{t}, {bx}, cub::BLOCK_REDUCE_{spec.algorithm.upper()}, {by}, {bz}>"
        header = "cub/block/block_reduce.cuh"
        pre = [f"struct @SYM@_storage {{ typename {algo}::TempStorage reduce; {t} result; }};"]
        lines += [f"  using Algo = {algo};", "  auto& storage = *reinterpret_cast<@SYM@_storage*>(scratch);"]
        call = _call(spec, source, op, lines)
        lines.append(f"  {t} result = Algo(storage.reduce).{call};")
        if spec.broadcast and not spec.has_valid_items:
            lines += ["  if (rank == 0) storage.result = result;", "  cuda_coop::sync_block();",
                      "  result = storage.result;"]
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
            lines += ["  typename Algo::TempStorage unused;  // shuffle-based: no shared memory",
                      "  Algo algo(unused);"]
        if k:  # each lane folds its own slots first, in slot order
            lines.append(f"  const {t} partial = cub::ThreadReduce(in, {op});")
            source = "partial"
        call = _call(spec, source, op, lines)
        lines.append(f"  {t} result = algo.{call};")
        if spec.broadcast and not spec.has_valid_items:
            width = w if is_power_of_two(w) else 32  # odd widths: one group per warp, starting at lane 0
            lines.append(f"  result = cub::ShuffleIndex<{width}>(result, 0, mask);")
        if spec.barrier:
            lines.append(f"  cuda_coop::sync_lanes(mask);  {REUSE_MARK}")
    body = (
        decl + "\n".join(pre) + "\n"
        + f'extern "C" __device__ {t} @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n  return result;\n}\n"
    )
    headers = (header, "cub/thread/thread_reduce.cuh", "cub/util_ptx.cuh", *operators.HEADERS)
    if kind in (BLOCK, THREAD, WARPS_IN_BLOCK, CLUSTER):
        return Provider.make("reduce", headers, body, scratch_type, params)
    return Provider.make("reduce", headers, body, "typename " + algo + "::TempStorage" if spec.uses_scratch else None,
                         params)


def emit_segmented(spec: SegmentedReduceSpec) -> Provider:
    """A segmented reduction (docs: operations/reduce, "Segmented reductions"): our own reverse segmented scans
    (include/cuda_coop: ``BlockSegmentedReverseScan``, ``WarpSegmentedReverseScan``) with every position from
    ``valid_items`` on flagged, so that it cannot join the last valid segment: each segment's first position then
    holds its total. With ``compact``, the totals at the segment starts below ``valid_items`` (position 0 always,
    then the flagged ones) move to the front, and the count is the number of segments: on blocks the same suffix
    scan also counts the starts (``InclusiveScanCounting``), which ranks them, and ``BlockScatterKept`` writes the
    kept totals to their ranks beside the scan's storage (no barrier between the two, one inside the scatter); on
    warps select's ranks and exchange follow the scan (``_cub.families.select``)."""
    t, k, kind = c_type(spec.dtype), spec.k, spec.group.kind
    f, width = c_type(spec.flag_dtype), spec.group.size
    bx, by, bz = spec.block
    decl, op = operators.functor(spec.operator, t)
    payload = spec.items_per_thread > 0
    params = [CParam(Abi.PTR, f"{t}*", "items") if payload else CParam(Abi.VALUE, t, "value"),
              CParam(Abi.PTR, f"{f}*", "head_flags", spec.flag_dtype) if payload
              else CParam(Abi.VALUE, f, "flag", spec.flag_dtype),
              CParam(Abi.I64, "long long", "valid_items")]
    if payload:
        params.append(CParam(Abi.PTR, f"{t}*", "output"))
    elif spec.compact:
        params.append(CParam(Abi.OUT, f"{t}*", "result", spec.dtype))
    if spec.compact:
        params.append(CParam(Abi.OUT, "int*", "count", "int32"))
    params += SCRATCH_PARAMS
    ret = t if not payload and not spec.compact else "void"
    lines = [f"  cuda_coop::check_range(valid_items, 0, {spec.positions});",
             f"  const unsigned rank = cuda_coop::linear_rank<{bx}, {by}, {bz}>();"]
    if payload:
        lines += [f"  const {t} (&in)[{k}] = *reinterpret_cast<const {t} (*)[{k}]>(items);",
                  f"  {t} (&out)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(output);",
                  f"  const {f} (&heads)[{k}] = *reinterpret_cast<const {f} (*)[{k}]>(head_flags);"]
    else:
        lines += [f"  const {t} in[1] = {{value}};", f"  {t} out[1];", f"  const {f} heads[1] = {{flag}};"]
    first = "rank * " + str(k) if kind == BLOCK else f"(rank % {width}u) * {k}"
    lines.append(f"  const int first = (int)({first});  // the caller's first tile position")
    # a whole tile is cut at its flags only, a partial one also at every position from valid_items on (in 32 bits:
    # the range is checked above)
    valid = ", (int)valid_items" if spec.has_valid_items else ""
    lines += [f"  int cut[{k}];", f"  cuda_coop::isolated_starts(heads, first{valid}, cut);" if valid
              else "  cuda_coop::isolated_starts(heads, cut);"]
    totals = "totals" if spec.compact else "out"
    if spec.compact:
        lines += [f"  {t} totals[{k}];", f"  int keep[{k}];  // the segment starts below valid_items",
                  f"  cuda_coop::segment_starts(heads, first{valid}, keep);"]
    members = []
    if kind == BLOCK:
        scan = f"cuda_coop::BlockSegmentedReverseScan<{t}, {bx}, {by}, {bz}>"
        header = "cuda_coop/block/block_segmented_reverse_scan.cuh"
        members.append(f"typename {scan}::TempStorage scan;")
        lines.append("  auto& storage = *reinterpret_cast<@SYM@_storage*>(scratch);")
        if spec.compact:  # one suffix scan folds the totals and ranks the starts; the scatter has its own bytes
            scatter = f"cuda_coop::BlockScatterKept<{t}, {k}, {bx}, {by}, {bz}>"
            members.append(f"typename {scatter}::TempStorage x0;")
            counting = f"InclusiveScanCounting(in, totals, cut, keep, {op}, ranks)"
            lines += [f"  int ranks[{k}];", f"  const int n = {scan}(storage.scan).{counting};",
                      f"  {scatter}(storage.x0).ScatterToBlocked(totals, out, keep, ranks, n);"]
        else:
            lines.append(f"  {scan}(storage.scan).InclusiveScan(in, out, cut, {op});")
    else:
        scan = f"cuda_coop::WarpSegmentedReverseScan<{t}, {width}, {bx}, {by}, {bz}>"
        header = "cuda_coop/warp/warp_segmented_scan.cuh"
        lines.append(f"  {scan}().InclusiveScan(in[0], {totals}[0], cut[0], {op});  // shuffles: no shared memory")
        if spec.compact:
            lines += [f"  const unsigned mask = cuda_coop::logical_warp_mask(rank, {width}u);",
                      f"  scratch += cuda_coop::group_instance<{width}>(rank) * stride;  // the group's own slice",
                      "  auto& storage = *reinterpret_cast<@SYM@_storage*>(scratch);"]
    headers = [header, "cuda_coop/util_segment.cuh"]
    if spec.compact:
        if kind != BLOCK:
            members.append(storage_union(kind, k, width, spec.block, [t]))
            lines += compaction_lines(kind, k, width, spec.block, [(t, "totals", "out")], "keep", "valid_items")
        lines.append("  *count = n;")
        if not payload:
            lines.append("  *result = out[0];")
        headers.append("cuda_coop/block/block_select.cuh" if kind == BLOCK else "cuda_coop/warp/warp_select.cuh")
    if spec.barrier:
        lines.append(reuse_barrier(None if kind == BLOCK else width))
    if ret != "void":
        lines.append("  return out[0];")
    # a block's scan and scatter side by side (no barrier between them), a warp's one compaction alone
    pre = f"struct @SYM@_storage {{ {' '.join(members)} }};\n" if members else ""
    body = (decl + pre + f'extern "C" __device__ {ret} @SYM@({c_signature(params)}) {{\n' + "\n".join(lines)
            + "\n}\n")
    return Provider.make("reduce", (*headers, *operators.HEADERS), body, "@SYM@_storage" if members else None,
                         params)
