"""CUB BlockAdjacentDifference / BlockDiscontinuity providers (docs: operations/adjacent)."""
from __future__ import annotations

from ..._semantics.adjacent import AdjacentSpec
from ..._semantics.common import c_type, itemsize
from ..provider import SCRATCH_PARAMS, Abi, CParam, Provider, c_signature, reuse_barrier
from . import operators

_UNSIGNED = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}


def _difference(spec: AdjacentSpec, t: str) -> list[str]:
    """op(current, neighbour) = current - neighbour in the payload type: integers subtract modulo 2**bits (through
    the unsigned type of the same width, so small types do not promote and signed types do not overflow)."""
    if spec.dtype.startswith(("int", "uint")):
        u = _UNSIGNED[itemsize(spec.dtype)]
        expr = f"({t})({u})(({u})current - ({u})neighbour)"
    else:
        expr = "current - neighbour"
    return ["  struct Difference {",
            f"    __device__ __forceinline__ {t} operator()(const {t}& current, const {t}& neighbour) const {{",
            f"      return {expr};",
            "    }",
            "  };"]


def _inequality(t: str) -> list[str]:
    return ["  struct Inequality {",
            f"    __device__ __forceinline__ bool operator()(const {t}& a, const {t}& b) const {{ return a != b; }}",
            "  };"]


def _adjacent_difference(spec: AdjacentSpec, t: str, k: int) -> tuple[str, list[str], list[CParam], str]:
    bx, by, bz = spec.block
    algo = f"cub::BlockAdjacentDifference<{t}, {bx}, {by}, {bz}>"
    method = "SubtractLeft" if spec.kind == "left" else "SubtractRight"
    if spec.operator is None:
        decl, op, lines = "", "Difference{}", _difference(spec, t)
    else:  # the qualified difference_op: CUB calls it as op(current, neighbour) in both directions
        (decl, op), lines = operators.functor(spec.operator, t), []
    args = ["in", "out", op]
    if spec.has_valid_items:  # trap before narrowing to CUB's int (docs: errors, "Device traps")
        lines.append(f"  cuda_coop::check_range(valid_items, 0, {spec.tile_items});")
        method += "PartialTile"
        args.append("(int)valid_items")
    if spec.has_predecessor or spec.has_successor:
        args.append("boundary")
    lines += [f"  using Algo = {algo};",
              f"  {t} (&in)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(const_cast<{t}*>(items));",
              f"  {t} (&out)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(output);",
              "  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));",
              f"  algo.{method}({', '.join(args)});"]
    params = [CParam(Abi.PTR, f"const {t}*", "items"), CParam(Abi.PTR, f"{t}*", "output"),
              CParam(Abi.I64, "long long", "valid_items"), CParam(Abi.ELEM, t, "boundary")]
    return algo, lines, params, decl


def _discontinuity(spec: AdjacentSpec, t: str, k: int) -> tuple[str, list[str], list[CParam], str]:
    bx, by, bz = spec.block
    algo = f"cub::BlockDiscontinuity<{t}, {bx}, {by}, {bz}>"
    predecessor = ", predecessor" if spec.has_predecessor else ""
    successor = ", successor" if spec.has_successor else ""
    if spec.operator is None:
        decl, flag, lines = "", "Inequality{}", _inequality(t)
    else:  # the qualified flag_op: CUB calls flag_op(previous, current) for heads, flag_op(current, next) for tails
        decl, flag, lines = operators.predicate_functor(spec.operator, t, "@SYM@_flag"), "@SYM@_flag{}", []
    if spec.kind == "heads":
        call, outputs = f"FlagHeads(heads, in, {flag}{predecessor})", ["heads"]
    elif spec.kind == "tails":
        call, outputs = f"FlagTails(tails, in, {flag}{successor})", ["tails"]
    else:  # the boundary items follow the flags they decide
        call, outputs = f"FlagHeadsAndTails(heads{predecessor}, tails{successor}, in, {flag})", ["heads", "tails"]
    lines += [f"  using Algo = {algo};",
              f"  {t} (&in)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(const_cast<{t}*>(items));"]
    lines += [f"  int (&{name})[{k}] = *reinterpret_cast<int (*)[{k}]>(output_{name});" for name in outputs]
    lines += ["  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));", f"  algo.{call};"]
    params = [CParam(Abi.PTR, f"const {t}*", "items"), *(CParam(Abi.PTR, "int*", f"output_{name}") for name in outputs),
              CParam(Abi.ELEM, t, "predecessor"), CParam(Abi.ELEM, t, "successor")]
    return algo, lines, params, decl


def emit(spec: AdjacentSpec) -> Provider:
    """``items`` is read as CUB's (non-const) input array but never written: the input payload stays unchanged."""
    t, k = c_type(spec.dtype), spec.items_per_thread
    build = _adjacent_difference if spec.op == "adjacent_difference" else _discontinuity
    algo, lines, params, decl = build(spec, t, k)
    params += SCRATCH_PARAMS
    if spec.barrier:
        lines.append(reuse_barrier(None))
    body = decl + f'extern "C" __device__ void @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n}\n"
    header = ("cub/block/block_adjacent_difference.cuh" if spec.op == "adjacent_difference"
              else "cub/block/block_discontinuity.cuh")
    headers = (header,) + (operators.HEADERS if spec.operator is not None else ())
    return Provider.make(spec.op, headers, body, f"typename {algo}::TempStorage", params)
