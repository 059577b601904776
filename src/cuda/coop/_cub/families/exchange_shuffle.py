"""CUB BlockExchange / WarpExchange / BlockShuffle providers (docs: operations/exchange_shuffle)."""
from __future__ import annotations

from ..._semantics.common import BLOCK, c_type
from ..._semantics.exchange_shuffle import ExchangeSpec
from ..provider import SCRATCH_PARAMS, Abi, CParam, Provider, c_signature, reuse_barrier

_METHODS = {"striped_to_blocked": "StripedToBlocked", "blocked_to_striped": "BlockedToStriped",
            "warp_striped_to_blocked": "WarpStripedToBlocked", "blocked_to_warp_striped": "BlockedToWarpStriped",
            "scatter_to_blocked": "ScatterToBlocked", "scatter_to_striped": "ScatterToStriped",
            "scatter_to_striped_guarded": "ScatterToStripedGuarded",
            "scatter_to_striped_flagged": "ScatterToStripedFlagged",
            "up": "Up", "down": "Down"}


def _scalar_shuffle(spec: ExchangeSpec) -> Provider:
    """``Offset``/``Rotate`` of one scalar per thread; the result starts as the caller's own value, which is what an
    offset shuffle leaves where its source lies outside the block (CUB does not write it)."""
    t = c_type(spec.dtype)
    bx, by, bz = spec.block
    threads = spec.threads
    algo = f"cub::BlockShuffle<{t}, {bx}, {by}, {bz}>"
    lines = [f"  using Algo = {algo};", f"  {t} result = value;"]
    if spec.mode == "rotate":
        if spec.distance is None:  # trap before narrowing to CUB's unsigned (docs: errors, "Device traps")
            lines.append(f"  cuda_coop::check_range(distance, 1, {threads - 1});")
        call = "Rotate(value, result, (unsigned)distance)"
    else:
        # Every source is outside the block when |distance| >= T: pass T, so the narrowing to int never wraps a
        # far distance back into the block.
        lines.append(f"  const int d = (distance >= -{threads} && distance <= {threads}) ? (int)distance : {threads};")
        call = "Offset(value, result, d)"
    lines.append(f"  Algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch)).{call};")
    if spec.barrier:
        lines.append(reuse_barrier(None))
    params = [CParam(Abi.VALUE, t, "value"), CParam(Abi.I64, "long long", "distance"), *SCRATCH_PARAMS]
    body = f'extern "C" __device__ {t} @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n  return result;\n}\n"
    return Provider.make(spec.op, ("cub/block/block_shuffle.cuh",), body, f"typename {algo}::TempStorage", params)


def emit(spec: ExchangeSpec) -> Provider:
    if spec.op == "shuffle" and spec.items_per_thread == 0:
        return _scalar_shuffle(spec)
    t, k = c_type(spec.dtype), spec.items_per_thread
    bx, by, bz = spec.block
    lines = [f"  const unsigned rank = cuda_coop::linear_rank<{bx}, {by}, {bz}>();"]
    if spec.op == "shuffle":
        algo, header = f"cub::BlockShuffle<{t}, {bx}, {by}, {bz}>", "cub/block/block_shuffle.cuh"
    elif spec.group.kind == BLOCK:
        slicing = "true" if spec.warp_time_slicing else "false"
        algo, header = f"cub::BlockExchange<{t}, {bx}, {k}, {slicing}, {by}, {bz}>", "cub/block/block_exchange.cuh"
    else:
        w = spec.group.size
        algo, header = f"cub::WarpExchange<{t}, {k}, {w}>", "cub/warp/warp_exchange.cuh"
        lines.append(f"  scratch += cuda_coop::group_instance<{w}>(rank) * stride;")
    params = [CParam(Abi.PTR, f"{t}*", "items"), CParam(Abi.PTR, f"{t}*", "output")]
    args = ["in", "out"]
    lines += [
        f"  using Algo = {algo};",
        f"  {t} (&in)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(items);",
        f"  {t} (&out)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(output);",
    ]
    for name, dtype in (("ranks", spec.ranks_dtype), ("flags", spec.flags_dtype)):
        if dtype is not None:
            c = c_type(dtype)
            params.append(CParam(Abi.PTR, f"{c}*", f"{name}_ptr"))
            lines.append(f"  {c} (&{name})[{k}] = *reinterpret_cast<{c} (*)[{k}]>({name}_ptr);")
            args.append(name)
    lines.append(f"  Algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch)).{_METHODS[spec.mode]}"
                 f"({', '.join(args)});")
    if spec.barrier:
        lines.append(reuse_barrier(None if spec.group.kind == BLOCK else spec.group.size))
    params += SCRATCH_PARAMS
    body = f'extern "C" __device__ void @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n}\n"
    return Provider.make(spec.op, (header,), body, f"typename {algo}::TempStorage", params)
