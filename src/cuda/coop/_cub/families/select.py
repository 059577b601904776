"""select / partition providers (docs: operations/select): our own ranks of a stable compaction (include/cuda_coop:
an exclusive sum of the flags by CUB's BlockScan or WarpScan), then CUB's BlockExchange::ScatterToBlocked or
WarpExchange ScatterToStriped and StripedToBlocked for each item operand.

The entry point takes each item operand apart (one, or a tuple's 1-8 of one shape): a payload by pointer with a
pointer to its fresh result (``items{j}``, ``output{j}``), a scalar by value with an ``out`` pointer to its result
(``value{j}``, ``result{j}``); then the flags, ``valid_items`` and the ``out`` count.
"""
from __future__ import annotations

from ..._semantics.common import BLOCK, c_type
from ..._semantics.select import SelectSpec
from ..provider import SCRATCH_PARAMS, Abi, CParam, Provider, c_signature, reuse_barrier


def block_exchange(t: str, k: int, block: tuple[int, int, int]) -> str:
    """The class that moves a block's items of C type ``t`` to their ranks."""
    bx, by, bz = block
    return f"cuda_coop::BlockSelectExchange<{t}, {k}, {bx}, {by}, {bz}>"


def warp_exchange(t: str, k: int, width: int) -> str:
    """The class that moves a logical warp's items of C type ``t`` to their ranks."""
    return f"cuda_coop::WarpSelectExchange<{t}, {k}, {width}>"


def ranks_class(k: int, kind: str, width: int, block: tuple[int, int, int]) -> str:
    """The class that ranks a tile's kept positions (``Rank(flags, valid_items, ranks)``, returning the count)."""
    bx, by, bz = block
    if kind == BLOCK:
        return f"cuda_coop::BlockSelectRanks<{k}, {bx}, {by}, {bz}>"
    return f"cuda_coop::WarpSelectRanks<{k}, {width}, {bx}, {by}, {bz}>"


def compaction_lines(kind: str, k: int, width: int, block: tuple[int, int, int], moves: list[tuple[str, str, str]],
                     flags: str, valid_items: str) -> list[str]:
    """The C++ statements that rank the tile by ``flags`` (a ``const F (&)[k]``) below ``valid_items`` into ``n``
    (the count) and move each ``(C type, input array, output array)`` of ``moves`` to its rank; the storage is the
    reference ``storage`` (a union of ``ranks`` and ``x{j}``; warp groups: only ``x{j}``), and ``mask`` the logical
    warp's lanes. Phases sharing the storage meet at a barrier first."""
    lines = [f"  int ranks[{k}];"]
    if kind == BLOCK:
        lines.append(f"  const int n = {ranks_class(k, kind, width, block)}(storage.ranks).Rank({flags}, "
                     f"{valid_items}, ranks);")
        for j, (t, source, target) in enumerate(moves):
            lines.append("  cuda_coop::sync_block();  // the storage's last use is read before it is written")
            lines.append(f"  {block_exchange(t, k, block)}(storage.x{j}).ScatterToBlocked({source}, {target}, ranks);")
    else:
        lines.append(f"  const int n = {ranks_class(k, kind, width, block)}().Rank({flags}, {valid_items}, ranks);")
        for j, (t, source, target) in enumerate(moves):
            if j:
                lines.append("  cuda_coop::sync_lanes(mask);  // the previous member's exchange is read first")
            lines.append(f"  {warp_exchange(t, k, width)}(storage.x{j}, mask).Scatter({source}, {target}, ranks);")
    return lines


def storage_union(kind: str, k: int, width: int, block: tuple[int, int, int], types: list[str]) -> str:
    """The members of the union a compaction's phases share (``ranks`` on blocks, then ``x{j}`` per moved type)."""
    members = []
    if kind == BLOCK:
        members.append(f"typename {ranks_class(k, kind, width, block)}::TempStorage ranks;")
    for j, t in enumerate(types):
        exchange = block_exchange(t, k, block) if kind == BLOCK else warp_exchange(t, k, width)
        members.append(f"typename {exchange}::TempStorage x{j};")
    return " ".join(members)


def _members(spec: SelectSpec) -> tuple[list[CParam], list[CParam], list[str], list[str], list[str]]:
    """The item operands' input and result parameters; per member the statements that view its input and result
    as arrays of ``K`` items, and those that hand a scalar result back."""
    inputs: list[CParam] = []
    outputs: list[CParam] = []
    views: list[str] = []
    after: list[str] = []
    k = spec.k
    for j, dtype in enumerate(spec.dtypes):
        t = c_type(dtype)
        if spec.items_per_thread:
            inputs.append(CParam(Abi.PTR, f"{t}*", f"items{j}", dtype))
            outputs.append(CParam(Abi.PTR, f"{t}*", f"output{j}", dtype))
            views += [f"  const {t} (&in{j})[{k}] = *reinterpret_cast<const {t} (*)[{k}]>(items{j});",
                      f"  {t} (&out{j})[{k}] = *reinterpret_cast<{t} (*)[{k}]>(output{j});"]
        else:
            inputs.append(CParam(Abi.VALUE, t, f"value{j}", dtype))
            outputs.append(CParam(Abi.OUT, f"{t}*", f"result{j}", dtype))
            views += [f"  const {t} in{j}[1] = {{value{j}}};", f"  {t} out{j}[1];"]
            after.append(f"  *result{j} = out{j}[0];")
    return inputs, outputs, views, after, [c_type(d) for d in spec.dtypes]


def emit(spec: SelectSpec) -> Provider:
    k, kind, width = spec.k, spec.group.kind, spec.group.size
    inputs, outputs, views, after, types = _members(spec)
    f = c_type(spec.flag_dtype)
    flag_param = (CParam(Abi.PTR, f"{f}*", "flags", spec.flag_dtype) if spec.items_per_thread
                  else CParam(Abi.VALUE, f, "flag", spec.flag_dtype))
    params = [*inputs, flag_param, CParam(Abi.I64, "long long", "valid_items"), *outputs,
              CParam(Abi.OUT, "int*", "count", "int32"), *SCRATCH_PARAMS]
    bx, by, bz = spec.block
    pre = f"union @SYM@_storage {{ {storage_union(kind, k, width, spec.block, types)} }};\n"
    # trap before any use (docs: errors, "Device traps"); a constant in range folds away
    lines = [f"  cuda_coop::check_range(valid_items, 0, {spec.positions});"]
    if kind != BLOCK:
        lines += [f"  const unsigned rank = cuda_coop::linear_rank<{bx}, {by}, {bz}>();",
                  f"  const unsigned mask = cuda_coop::logical_warp_mask(rank, {width}u);",
                  f"  scratch += cuda_coop::group_instance<{width}>(rank) * stride;  // the group's own slice"]
    lines.append("  auto& storage = *reinterpret_cast<@SYM@_storage*>(scratch);")
    if spec.items_per_thread:
        lines.append(f"  const {f} (&keep)[{k}] = *reinterpret_cast<const {f} (*)[{k}]>(flags);")
    else:
        lines.append(f"  const {f} keep[1] = {{flag}};")
    lines += views
    moves = [(t, f"in{j}", f"out{j}") for j, t in enumerate(types)]
    lines += compaction_lines(kind, k, width, spec.block, moves, "keep", "valid_items")
    lines += after
    lines.append("  *count = n;")
    if spec.barrier:
        lines.append(reuse_barrier(None if kind == BLOCK else width))
    body = pre + f'extern "C" __device__ void @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n}\n"
    header = "cuda_coop/block/block_select.cuh" if kind == BLOCK else "cuda_coop/warp/warp_select.cuh"
    return Provider.make("select", (header,), body, "@SYM@_storage", params)
