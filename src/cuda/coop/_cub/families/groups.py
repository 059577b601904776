"""Group queries and barriers (docs: concepts, "Groups and ranks") as tiny C ABI functions inlined by LTO."""
from __future__ import annotations

from ..._semantics.common import BLOCK, CLUSTER, LOGICAL_WARP, THREAD, WARP, WARPS_IN_BLOCK, c_type
from ..._semantics.groups import QuerySpec
from ..provider import Provider

_HEADERS = ("cuda_coop/util_cluster.cuh",)
# Per-thread facts every formula below is written in (64-bit where grid-sized).
_FACTS = """\
  const unsigned long long T = {T}ull;
  const unsigned long long lin = cuda_coop::linear_rank<{bx}, {by}, {bz}>();
  const unsigned long long nwarps = (T + 31) / 32, warp = lin / 32, lane = lin % 32;
  const unsigned long long blk =
      blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
  const unsigned long long nblk = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
  unsigned cta = 0, ncta = 1;
  unsigned long long clu = blk, nclu = nblk;
  cuda_coop::cluster_position(cta, ncta, clu, nclu);
"""


def _rank_count(spec: QuerySpec) -> tuple[str, str]:
    g, lvl = spec.group, spec.level
    n = g.size
    warp_threads = "(warp == nwarps - 1 ? T - 32 * warp : 32)"
    if g.kind == THREAD:
        table = {"thread": ("0", "1"), "warp": ("lane", warp_threads), "block": ("lin", "T"),
                 "cluster": ("cta * T + lin", "ncta * T"), "grid": ("blk * T + lin", "nblk * T")}
    elif g.kind == WARP:
        table = {"thread": ("lane", warp_threads), "warp": ("0", "1"), "block": ("warp", "nwarps"),
                 "cluster": ("cta * nwarps + warp", "ncta * nwarps"), "grid": ("blk * nwarps + warp", "nblk * nwarps")}
    elif g.kind == LOGICAL_WARP:
        table = {"thread": (f"lane - lane / {n} * {n}", f"{n}"), "warp": (f"lane / {n}", f"{32 // n}")}
    elif g.kind == WARPS_IN_BLOCK:
        units = g.instances
        table = {"thread": (f"lin - warp / {n // 32} * {n}", f"{n}"),
                 "warp": (f"warp - warp / {n // 32} * {n // 32}", f"{n // 32}"),
                 "block": (f"warp / {n // 32}", f"{units}")}
    elif g.kind == BLOCK:
        table = {"thread": ("lin", "T"), "warp": ("warp", "nwarps"), "block": ("0", "1"),
                 "cluster": ("cta", "ncta"), "grid": ("blk", "nblk")}
    elif g.kind == CLUSTER:
        table = {"thread": ("cta * T + lin", "ncta * T"), "warp": ("cta * nwarps + warp", "ncta * nwarps"),
                 "block": ("cta", "ncta"), "cluster": ("0", "1"), "grid": ("clu", "nclu")}
    else:  # grid
        table = {"thread": ("blk * T + lin", "nblk * T"), "warp": ("blk * nwarps + warp", "nblk * nwarps"),
                 "block": ("blk", "nblk"), "cluster": ("clu", "nclu"), "grid": ("0", "1")}
    return table[lvl]


def emit(spec: QuerySpec) -> Provider:
    bx, by, bz = spec.block
    g = spec.group
    facts = _FACTS.format(T=bx * by * bz, bx=bx, by=by, bz=bz)
    if spec.method in ("sync", "sync_aligned"):
        aligned = spec.method == "sync_aligned"
        if g.kind == BLOCK:
            stmt = "cuda_coop::sync_block();" if aligned else "cuda_coop::sync_block_unaligned();"
        elif g.kind == WARP:
            stmt = "cuda_coop::sync_lanes(warp == nwarps - 1 && (T % 32) ? (1u << (T % 32)) - 1u : 0xffffffffu);"
        elif g.kind == LOGICAL_WARP:
            stmt = f"cuda_coop::sync_logical_warp((unsigned)lin, {g.size}u);"
        elif g.kind == CLUSTER:
            stmt = f"cuda_coop::sync_cluster<{'true' if aligned else 'false'}>();"
        else:  # thread
            stmt = ""
        body = f'extern "C" __device__ void @SYM@() {{\n{facts}  {stmt}\n}}\n'
        return Provider.make("sync", _HEADERS, body, None)
    out = c_type(spec.dtype or "uint32")
    if spec.method == "is_member":
        if g.kind == LOGICAL_WARP and not g.exhaustive:
            expr = f"lane < {32 // g.size * g.size}"
        elif g.kind == WARPS_IN_BLOCK and not g.exhaustive:
            expr = f"warp < {g.instances * (g.size // 32)}"
        else:
            expr = "1"
    else:
        rank, count = _rank_count(spec)
        expr = rank if spec.method.startswith("rank") else count
    body = f'extern "C" __device__ {out} @SYM@() {{\n{facts}  return ({out})({expr});\n}}\n'
    return Provider.make("query", _HEADERS, body, None)
