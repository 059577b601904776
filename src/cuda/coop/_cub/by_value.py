"""Entry points that take and return payloads by value, for a backend whose kernel calls the C++ as a function.

A provider takes each payload as a pointer to its items. When the call is inlined (LTO) the pointer disappears; when
it stays a call (the CuTe DSL's link route: docs: cutlass, "How it works"), the items must live in local memory for
their address to be taken. ``adapt`` wraps a provider in an entry point that receives each payload as a struct of its
items and returns every payload (and the original result) in one struct: the items cross in registers, and the
caller's payloads stay in registers too.
"""
from __future__ import annotations

from dataclasses import dataclass

from .._semantics.common import c_type
from .provider import Abi, CParam, Provider


@dataclass(frozen=True)
class PayloadParam:
    """Parameter ``index`` of the provider points to a payload of ``items`` items of ``dtype``."""

    index: int
    dtype: str
    items: int


def adapt(provider: Provider, payloads: tuple[PayloadParam, ...], result_dtype: str | None,
          global_params: tuple[int, ...] = ()) -> Provider:
    """``provider`` behind an entry point taking the ``payloads`` by value and returning
    ``struct {payload 0 items; payload 1 items; ...; result}``; the original stays in the same translation unit.

    The caller's pointers arrive generic; the entry point tells the compiler what they point to (the parameters
    ``global_params`` to global memory, the scratch to shared memory), so that the inlined CUB code uses the
    global and shared load and store instructions, as it does when the whole kernel is one program."""
    symbol = f"{provider.symbol}_v"
    by_index = {p.index: p for p in payloads}
    fields = [f"  {c_type(p.dtype)} a{n}[{p.items}];" for n, p in enumerate(payloads)]
    if result_dtype is not None:
        fields.append(f"  {c_type(result_dtype)} ret;")
    lines = [f"struct {symbol}_r {{", *fields, "};"]
    params, args, copies = [], [], []
    for index, param in enumerate(provider.params):
        payload = by_index.get(index)
        if payload is None:
            params.append(param)
            args.append(param.name)
            continue
        n = payloads.index(payload)
        lines += [f"struct {symbol}_i{n} {{ {c_type(payload.dtype)} v[{payload.items}]; }};"]
        params.append(CParam(param.abi, f"{symbol}_i{n}", param.name, param.dtype))
        args.append(f"r.a{n}")
        copies.append(f"  cuda_coop::copy_items(r.a{n}, {param.name}.v);")
    spaces = [f"  __builtin_assume(__isGlobal({provider.params[index].name}));" for index in global_params]
    if provider.scratch_type is not None:
        spaces += [f"  __builtin_assume(__isShared({param.name}));" for param in provider.params
                   if param.abi is Abi.SCRATCH]
    call = f"{provider.symbol}({', '.join(args)});"
    lines += [f'extern "C" __device__ {symbol}_r {symbol}({", ".join(p.declaration for p in params)}) {{',
              *spaces, f"  {symbol}_r r;", *copies, f"  {'r.ret = ' if result_dtype is not None else ''}{call}",
              "  return r;", "}"]
    headers = provider.headers + (("cuda_coop/util_items.cuh",) if copies else ())
    return Provider(symbol, headers, provider.body + "\n" + "\n".join(lines), provider.scratch_type,
                    provider.family, provider.template, provider.scratch_template, tuple(params))
