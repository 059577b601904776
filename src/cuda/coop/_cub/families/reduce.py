"""CUB BlockReduce / WarpReduce providers (docs: operations/reduce)."""
from __future__ import annotations

from ..._semantics.aggregates import aggregate, uniform_word
from ..._semantics.common import BLOCK, CLUSTER, THREAD, WARPS_IN_BLOCK, c_type, is_power_of_two, itemsize
from ..._semantics.reduce import ReduceSpec
from ..provider import REUSE_MARK, SCRATCH_PARAMS, CParam, Provider, c_signature, reuse_barrier
from . import operators

# size -> (register type, PTX load type, asm constraint, unsigned type of exactly that size)
_UNSIGNED = {1: ("unsigned short", "u8", "h", "unsigned char"), 2: ("unsigned short", "u16", "h", "unsigned short"),
             4: ("unsigned", "u32", "r", "unsigned"), 8: ("unsigned long long", "u64", "l", "unsigned long long")}


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


def _warps_within_block(spec: ReduceSpec, t: str, op: str, lines: list[str]) -> None:
    """Each warp reduces with shuffles, its lane 0 puts the warp's partial in scratch, then every member folds its
    group's partials in warp order. Members synchronise on named barrier 1 with exactly the member warps' threads:
    non-members (group_by(n, exhaustive=False)) never arrive, so the block barrier could not be used."""
    n = spec.group.size // 32
    members = spec.group.instances * spec.group.size
    source = _fold_thread(spec, t, op, lines)
    reduce = "Sum(" + source + ")" if spec.operator.is_sum else f"Reduce({source}, {op})"
    lines += [f"  typename cub::WarpReduce<{t}>::TempStorage unused;  // 32 lanes: shuffles only",
              f"  const {t} warp_total = cub::WarpReduce<{t}>(unused).{reduce};  // defined in lane 0"]
    if n == 1:
        lines.append(f"  const {t} result = cub::ShuffleIndex<32>(warp_total, 0, 0xffffffffu);")
        return
    barrier = f"cuda_coop::sync_named<1, {members}>();"
    lines += [f"  {t}* partials = reinterpret_cast<{t}*>(scratch);",
              "  if (rank % 32 == 0) partials[rank / 32] = warp_total;",
              f"  {barrier}  // the group's partials are in",
              f"  const unsigned first = rank / 32 / {n} * {n};",
              f"  {t} result = partials[first];",
              f"  for (unsigned i = 1; i < {n}; ++i) result = {op}(result, partials[first + i]);"]
    if spec.barrier:
        lines.append(f"  {barrier}  {REUSE_MARK}")


def _cluster_load(t: str, dtype: str) -> str:
    """A load of one ``t`` from another block's shared memory (distributed shared memory, sm_90), in the widest
    words that divide its size and alignment (an aggregate of 8 bytes aligned to 4 is two 32-bit loads)."""
    found = aggregate(dtype)
    size = itemsize(dtype)
    alignment = found.alignment if found is not None else size
    width = uniform_word(size, alignment)
    word, kind, constraint, exact = _UNSIGNED[width]
    return (f"__device__ __forceinline__ {t} @SYM@_load(unsigned address) {{\n"
            f"  union {{ {exact} words[{size // width}]; {t} value; }} same;  // the loaded words are a {t}\n"
            f"  for (unsigned i = 0; i < {size // width}; ++i) {{\n"
            f"    {word} bits;\n"
            f'    asm volatile("ld.shared::cluster.{kind} %0, [%1];" : "={constraint}"(bits) : '
            f'"r"(address + i * {width})'
            ' : "memory");\n'
            f"    same.words[i] = ({exact})bits;\n"
            "  }\n  return same.value;\n}\n")


def _cluster(spec: ReduceSpec, t: str, op: str, lines: list[str], bx: int, by: int, bz: int) -> tuple[str, str]:
    """Each block reduces (CUB BlockReduce), thread 0 leaves the block's partial in its shared memory, and after a
    cluster barrier the members read every block's partial through distributed shared memory, in block-rank order.
    The closing cluster barrier keeps each block's shared memory alive until every read is done: it is required
    even after the last call, so it is not a removable reuse barrier."""
    algo = f"cub::BlockReduce<{t}, {bx}, cub::BLOCK_REDUCE_WARP_REDUCTIONS, {by}, {bz}>"
    source = "in" if spec.items_per_thread else "value"
    call = "Sum(" + source + ")" if spec.operator.is_sum else f"Reduce({source}, {op})"
    cluster_barrier = "cuda_coop::sync_cluster_release_acquire();"
    readers = "true" if spec.broadcast else "cta == 0 && rank == 0"
    lines += ["  auto& storage = *reinterpret_cast<@SYM@_storage*>(scratch);",
              f"  const {t} block_total = {algo}(storage.reduce).{call};  // defined in thread 0",
              "  if (rank == 0) storage.partial = block_total;",
              "  unsigned cta, ncta;",
              '  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(cta));',
              '  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(ncta));',
              "  (void)cta;",
              f"  {cluster_barrier}  // every block's partial is in",
              f"  {t} result = block_total;",
              f"  if ({readers}) {{",
              "    const unsigned local = (unsigned)__cvta_generic_to_shared(&storage.partial);",
              "    for (unsigned c = 0; c < ncta; ++c) {",
              "      unsigned remote;",
              '      asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(c));',
              f"      const {t} v = @SYM@_load(remote);",
              f"      result = c == 0 ? v : {op}(result, v);",
              "    }",
              "  }",
              f"  {cluster_barrier}  // no block leaves or reuses its partial while others read it"]
    pre = _cluster_load(t, spec.dtype) + (f"struct @SYM@_storage {{ typename {algo}::TempStorage reduce; "
                                          f"{t} partial; }};")
    return pre, "@SYM@_storage"


def emit(spec: ReduceSpec) -> Provider:
    t, k = c_type(spec.dtype), spec.items_per_thread
    bx, by, bz = spec.block
    decl, op = operators.functor(spec.operator, t)
    params = [CParam("ptr", f"{t}*", "items") if k else CParam("value", t, "value"),
              CParam("i64", "long long", "valid_items"), *SCRATCH_PARAMS]
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
        _warps_within_block(spec, t, op, lines)
        scratch_type = f"{t}[{spec.group.instances * spec.group.size // 32}]" if spec.uses_scratch else None
    elif kind == CLUSTER:
        header = "cub/block/block_reduce.cuh"
        declaration, scratch_type = _cluster(spec, t, op, lines, bx, by, bz)
        pre = [declaration]
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
