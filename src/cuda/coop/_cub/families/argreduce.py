"""argmax / argmin providers: CUB BlockReduce / WarpReduce over (value, index) pairs (docs: operations/argreduce)."""
from __future__ import annotations

from ..._semantics.argreduce import ArgReduceSpec
from ..._semantics.common import BLOCK, c_type
from ..provider import SCRATCH_PARAMS, CParam, Provider, c_signature, reuse_barrier


def _pair_decl(spec: ArgReduceSpec, t: str, index_t: str) -> str:
    """The (value, index) pair and the arg-reduction operator: the extreme value wins; for floats a NaN is the
    extreme, the first NaN winning (NumPy's rule). With ``valid_items`` a pair may hold no item.

    A tie keeps the first operand. Every reduction here applies the operator in blocked tile order (this member's
    items in slot order, then CUB's WarpReduce and BlockReduce warp reductions, which support non-commutative
    operators: their first operand always holds the earlier tile positions), so a tie goes to the smaller tile
    position without comparing positions, whatever ``indices`` holds; and an item past ``valid_items`` is never
    followed by a valid one."""
    valid = "  int ok;\n" if spec.has_valid_items else ""
    lines = [f"struct @SYM@_pair {{\n  {t} v;\n  {index_t} i;\n{valid}}};",
             "__device__ __forceinline__ bool @SYM@_wins(const @SYM@_pair& a, const @SYM@_pair& b) {  // b over a"]
    fields = ["v", "i"] + (["ok"] if spec.has_valid_items else [])
    # bitwise & and |, not && and ||: no short circuit, so no branch per comparison (float argmax ran at 0.6x of
    # the CUB C++ twin when the NaN test was an early return)
    if spec.is_float:
        # b wins where it is better or a NaN, unless a is a NaN (an unordered comparison is false both ways)
        not_better = "<=" if spec.largest else ">="
        wins = f"!(b.v {not_better} a.v) & (a.v == a.v)"
    else:
        wins = f"(b.v {'>' if spec.largest else '<'} a.v)"
    if spec.has_valid_items:
        wins = f"b.ok & ({wins})"
    lines += [f"  return {wins};", "}",
              # field by field: a select of whole structs would make clang address them (local memory)
              "__device__ __forceinline__ @SYM@_pair @SYM@_pick(const @SYM@_pair& a, const @SYM@_pair& b) {",
              "  const bool w = @SYM@_wins(a, b);",
              "  @SYM@_pair r;",
              *[f"  r.{f} = w ? b.{f} : a.{f};" for f in fields],
              "  return r;",
              "}",
              "struct @SYM@_op {",
              "  __device__ __forceinline__ @SYM@_pair operator()(const @SYM@_pair& a, const @SYM@_pair& b) const {",
              "    return @SYM@_pick(a, b);",
              "  }",
              "};"]
    return "\n".join(lines) + "\n"


def emit(spec: ArgReduceSpec) -> Provider:
    t, k = c_type(spec.dtype), spec.items_per_thread
    index_t = c_type(spec.index_dtype)
    bx, by, bz = spec.block
    n = max(k, 1)
    params = [CParam("ptr", f"{t}*", "items") if k else CParam("value", t, "value")]
    if spec.has_indices:
        params.append(CParam("ptr", f"{index_t}*", "indices") if k
                      else CParam("value", index_t, "index", spec.index_dtype))
    if spec.has_valid_items:
        params.append(CParam("i64", "long long", "valid_items"))
    params += [CParam("out", f"{t}*", "value_out", spec.dtype),
               CParam("out", f"{index_t}*", "index_out", spec.index_dtype), *SCRATCH_PARAMS]
    lines = [f"  const unsigned rank = cuda_coop::linear_rank<{bx}, {by}, {bz}>();"]
    if spec.has_valid_items:  # trap before any use (docs: errors, "Device traps")
        lines.append(f"  cuda_coop::check_range(valid_items, 1, {spec.positions});")
    member = "rank" if spec.group.kind == BLOCK else f"(rank % {spec.group.size}u)"
    lines.append(f"  const long long first = (long long){member} * {n};  // this member's first tile position")
    if k:
        lines.append(f"  const {t} (&in)[{k}] = *reinterpret_cast<const {t} (*)[{k}]>(items);")
        if spec.has_indices:
            lines.append(f"  const {index_t} (&idx)[{k}] = *reinterpret_cast<const {index_t} (*)[{k}]>(indices);")
    item = "in[i]" if k else "value"
    index = ("idx[i]" if k else "index") if spec.has_indices else f"({index_t})(first + i)"
    valid = ", (first + i) < valid_items ? 1 : 0" if spec.has_valid_items else ""
    lines += ["  @SYM@_pair best;",
              f"  for (int i = 0; i < {n}; ++i) {{  // this member's items, in slot order",
              f"    const @SYM@_pair mine = {{{item}, {index}{valid}}};",
              "    best = i == 0 ? mine : @SYM@_pick(best, mine);",
              "  }"]
    decl = _pair_decl(spec, t, index_t)
    if spec.group.kind == BLOCK:
        algo = f"cub::BlockReduce<@SYM@_pair, {bx}, cub::BLOCK_REDUCE_WARP_REDUCTIONS, {by}, {bz}>"
        header = "cub/block/block_reduce.cuh"
        result = "winner" if not spec.broadcast else "result"
        shared = " @SYM@_pair result;" if spec.broadcast else ""
        decl += f"struct @SYM@_storage {{ typename {algo}::TempStorage reduce;{shared} }};\n"
        lines += ["  auto& storage = *reinterpret_cast<@SYM@_storage*>(scratch);",
                  f"  const @SYM@_pair {result} = {algo}(storage.reduce).Reduce(best, @SYM@_op{{}});  // in thread 0"]
        if spec.broadcast:
            lines += ["  if (rank == 0) storage.result = result;",
                      "  __syncthreads();",
                      "  const @SYM@_pair winner = storage.result;"]
        scratch = "@SYM@_storage"
    else:
        w = spec.group.size
        algo = f"cub::WarpReduce<@SYM@_pair, {w}>"
        header = "cub/warp/warp_reduce.cuh"
        result = "winner" if not spec.broadcast else "result"
        lines += [f"  typename {algo}::TempStorage unused;  // power-of-two widths shuffle: no shared memory",
                  f"  const @SYM@_pair {result} = {algo}(unused).Reduce(best, @SYM@_op{{}});  // in lane 0"]
        if spec.broadcast:
            lines.append(f"  const @SYM@_pair winner = cub::ShuffleIndex<{w}>(result, 0, "
                         f"cuda_coop::logical_warp_mask(rank, {w}u));")
        scratch = None
    lines += ["  *value_out = winner.v;", "  *index_out = winner.i;"]
    if spec.barrier:
        lines.append(reuse_barrier(None))
    body = (decl + f'extern "C" __device__ void @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n}\n")
    return Provider.make("argreduce", (header, "cub/util_ptx.cuh"), body, scratch, params)
