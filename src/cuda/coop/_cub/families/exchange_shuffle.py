"""CUB BlockExchange / WarpExchange / BlockShuffle providers (SPEC 8.3, 8.4)."""
from __future__ import annotations

from ..._semantics.common import BLOCK, c_type
from ..._semantics.exchange_shuffle import ExchangeSpec
from ..provider import Provider, reuse_barrier

_METHODS = {"striped_to_blocked": "StripedToBlocked", "blocked_to_striped": "BlockedToStriped",
            "up": "Up", "down": "Down"}


def emit(spec: ExchangeSpec) -> Provider:
    t, k = c_type(spec.dtype), spec.items_per_thread
    bx, by, bz = spec.block
    lines = [f"  const unsigned rank = cuda_coop::linear_rank<{bx}, {by}, {bz}>();"]
    if spec.op == "shuffle":
        algo, header = f"cub::BlockShuffle<{t}, {bx}, {by}, {bz}>", "cub/block/block_shuffle.cuh"
    elif spec.group.kind == BLOCK:
        algo, header = f"cub::BlockExchange<{t}, {bx}, {k}, false, {by}, {bz}>", "cub/block/block_exchange.cuh"
    else:
        w = spec.group.size
        algo, header = f"cub::WarpExchange<{t}, {k}, {w}>", "cub/warp/warp_exchange.cuh"
        lines.append(f"  scratch += cuda_coop::group_instance<{w}>(rank) * stride;")
    lines += [
        f"  using Algo = {algo};",
        f"  {t} (&in)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(items);",
        f"  {t} (&out)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(output);",
        f"  Algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch)).{_METHODS[spec.mode]}(in, out);",
    ]
    if spec.barrier:
        lines.append(reuse_barrier(None if spec.group.kind == BLOCK else spec.group.size))
    body = (f'extern "C" __device__ void @SYM@({t}* items, {t}* output, char* scratch, unsigned long long stride) {{\n'
            + "\n".join(lines) + "\n}\n")
    return Provider.make(spec.op, (header,), body, f"typename {algo}::TempStorage")
