"""CUB BlockLoad/BlockStore and WarpLoad/WarpStore providers (docs: operations/load_store)."""
from __future__ import annotations

from ..._semantics.common import BLOCK, c_type
from ..._semantics.load_store import LoadStoreSpec
from ..provider import SCRATCH_PARAMS, Abi, CParam, Provider, c_signature, reuse_barrier

_ENUM = {
    "direct": "DIRECT", "striped": "STRIPED", "vectorize": "VECTORIZE", "transpose": "TRANSPOSE",
    "warp_transpose": "WARP_TRANSPOSE", "warp_transpose_timesliced": "WARP_TRANSPOSE_TIMESLICED",
}


def emit(spec: LoadStoreSpec) -> Provider:
    if spec.rolled:
        return _emit_rolled(spec)
    t, k = c_type(spec.dtype), spec.items_per_thread
    bx, by, bz = spec.block
    tile = spec.tile_items
    is_block = spec.group.kind == BLOCK
    kind = "Load" if spec.op == "load" else "Store"
    enum = f"cub::{'BLOCK' if is_block else 'WARP'}_{kind.upper()}_{_ENUM[spec.algorithm]}"
    if is_block:
        algo = f"cub::Block{kind}<{t}, {bx}, {k}, {enum}, {by}, {bz}>"
        header = f"cub/block/block_{kind.lower()}.cuh"
    else:
        algo = f"cub::Warp{kind}<{t}, {k}, {enum}, {spec.group.size}>"
        header = f"cub/warp/warp_{kind.lower()}.cuh"

    headers: tuple[str, ...] = (header,)
    lines = [f"  using Algo = {algo};"]
    if not is_block:
        # The group's tile origin and scratch slice come from its instance index.
        lines += [
            f"  const unsigned rank = cuda_coop::linear_rank<{bx}, {by}, {bz}>();",
            f"  const unsigned instance = cuda_coop::group_instance<{spec.group.size}>(rank);",
            f"  array += (long long)instance * {tile};",
            "  scratch += instance * stride;",
        ]
    valid_arg = ""
    if spec.has_valid_items:
        # Each group's own count, relative to its own tile, passed to CUB unchanged (docs: operations/load_store,
        # "Partial tiles").
        lines += [f"  cuda_coop::check_range(valid_items, 0, {tile});", "  const int valid = (int)valid_items;"]
        valid_arg = ", valid" + (", oob_default" if spec.has_oob_default else "")
    if spec.uses_scratch:
        lines.append("  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));")
    else:
        lines += ["  typename Algo::TempStorage unused;  // storage-free algorithm", "  Algo algo(unused);"]
    params = _params(spec, t)
    # A block's vectorised full tile: cuda-coop's own vectors of up to 16 bytes (CUB's hold 4 items at most)
    vectors = is_block and spec.algorithm == "vectorize" and not spec.has_valid_items
    if vectors:
        headers += ("cuda_coop/block/block_vectorized.cuh",)
    if spec.op == "load":
        lines.append(f"  {t} (&out)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(items);")
        if vectors:
            lines.append(f"  cuda_coop::block_load_vectorized<{bx}, {by}, {bz}>(algo, array + offset, out);")
        else:
            lines.append(f"  algo.Load(array + offset, out{valid_arg});")
    else:
        # Store leaves its input unchanged: CUB's transposes work in place, so copy first.
        source = "{value}" if spec.scalar_value else ""
        lines.append(f"  {t} copy[{k}]{' = ' + source if source else ''};")
        if not spec.scalar_value:
            lines.append("  cuda_coop::copy_items(copy, items);")
            headers += ("cuda_coop/util_items.cuh",)
        if vectors:
            lines.append(f"  cuda_coop::block_store_vectorized<{bx}, {by}, {bz}>(algo, array + offset, copy);")
        else:
            lines.append(f"  algo.Store(array + offset, copy{valid_arg});")
    if spec.barrier:
        lines.append(reuse_barrier(None if is_block else spec.group.size))
    body = f'extern "C" __device__ void @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n}\n"
    return Provider.make(spec.op, headers, body, "typename " + algo + "::TempStorage" if spec.uses_scratch else None,
                         params)


def _params(spec: LoadStoreSpec, t: str) -> list[CParam]:
    """The entry point's parameters: the array, the payload (a scalar value for a scalar store), the tile's
    offset and valid_items, a load's oob_default, the scratch slice."""
    if spec.op == "load":
        items = [CParam(Abi.PTR, f"const {t}*", "array"), CParam(Abi.PTR, f"{t}*", "items")]
    elif spec.scalar_value:
        items = [CParam(Abi.PTR, f"{t}*", "array"), CParam(Abi.VALUE, t, "value")]
    else:
        items = [CParam(Abi.PTR, f"{t}*", "array"), CParam(Abi.PTR, f"const {t}*", "items")]
    controls = [CParam(Abi.I64, "long long", "offset"), CParam(Abi.I64, "long long", "valid_items")]
    if spec.op == "load":
        controls.append(CParam(Abi.ELEM, t, "oob_default"))
    return items + controls + list(SCRATCH_PARAMS)


def _emit_rolled(spec: LoadStoreSpec) -> Provider:
    """A large payload (``spec.rolled``): one loop over the thread's items, blocked (``direct``) or striped, with
    CUB's partial-tile rules (``cuda_coop::load_rolled`` / ``store_rolled``, include/cuda_coop/block)."""
    t, k = c_type(spec.dtype), spec.items_per_thread
    bx, by, bz = spec.block
    lines = [f"  const unsigned rank = cuda_coop::linear_rank<{bx}, {by}, {bz}>();"]
    if spec.group.kind == BLOCK:
        lines.append("  const long long lane = rank;")
    else:
        width = spec.group.size
        lines += [f"  array += (long long)cuda_coop::group_instance<{width}>(rank) * {spec.tile_items};",
                  f"  const long long lane = (rank % 32u) % {width}u;"]
    if spec.has_valid_items:
        lines.append(f"  cuda_coop::check_range(valid_items, 0, {spec.tile_items});")
    lines.append("  array += offset;")
    args = "lane, array, items"
    if spec.has_valid_items:
        args += ", valid_items" + (", oob_default" if spec.op == "load" and spec.has_oob_default else "")
    striped = str(spec.algorithm == "striped").lower()
    lines.append(f"  cuda_coop::{spec.op}_rolled<{k}, {spec.group.size}, {striped}>({args});")
    body = f'extern "C" __device__ void @SYM@({c_signature(_params(spec, t))}) {{\n' + "\n".join(lines) + "\n}\n"
    return Provider.make(spec.op, ("cuda_coop/block/block_load_store_rolled.cuh",), body, None, _params(spec, t))
