"""Multi-operand calls in C++ (``_semantics.tuples``): user operators over tuples, and the entry point that takes
each operand apart (the tuple structs are defined with the translation unit: ``abi.tuple_definitions``).

A family's provider is emitted for the tuple dtype as for any value type (its C++ type is a struct of one field
``f{j}`` per operand, and a user operator over it calls the user's function field by field); ``split_entry`` then
keeps that entry point under another name and exposes one whose tuple parameters are one parameter per operand,
which is what the backends pass (each operand is a payload or a scalar of its own dtype)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .._backend_context import value_abi
from .._semantics.aggregates import token_c_type
from .._semantics.common import ALL_NUMERIC_DTYPES, c_type, passes_by_pointer
from .._semantics.tuples import TUPLE_C_PREFIX, fields
from .provider import Abi, CParam, Provider, c_signature


@dataclass(frozen=True)
class Member:
    """One field of a tuple C type: its C type, and whether the user's function takes it by pointer (the backend's
    value ABI: float16 and aggregates; docs: qualified, "User-defined aggregates")."""
    c_type: str
    by_pointer: bool


def operator_call(name: str, t: str, members: list[Member]) -> str:
    """The body of a functor over tuples of ``members`` calling the user's C function ``name(&r.f0, ..., a.f0, ...,
    b.f0, ...)`` (results through pointers, operands field by field; a field that crosses by pointer is passed as a
    pointer to a copy, so CUB's operands stay const whatever the function does)."""
    out = ", ".join(f"&r.f{j}" for j in range(len(members)))
    copies = "".join(f"{m.c_type} {side}{j} = {side}.f{j}; " for side in ("a", "b") for j, m in enumerate(members)
                     if m.by_pointer)
    a = ", ".join(f"&a{j}" if m.by_pointer else f"a.f{j}" for j, m in enumerate(members))
    b = ", ".join(f"&b{j}" if m.by_pointer else f"b.f{j}" for j, m in enumerate(members))
    return f"{t} r; {copies}{name}({out}, {a}, {b}); return r;"


def operator_declaration(name: str, members: list[Member]) -> str:
    """The user's function over tuples of ``members`` as the backends compile it: results through pointers, then
    each operand of ``a``, then of ``b`` (by pointer where ``operator_call`` passes one)."""
    types = [m.c_type + ("*" if m.by_pointer else "") for m in members]
    return f'extern "C" __device__ void {name}({", ".join([f"{m.c_type}*" for m in members] + types + types)});\n'


def tuple_fields(t: str) -> list[Member] | None:
    """The fields of a tuple C type (``_semantics.tuples.tuple_c_type``), or None for another type."""
    if not t.startswith(TUPLE_C_PREFIX):
        return None
    members = []
    for token in t[len(TUPLE_C_PREFIX):].split("_"):
        aggregate = token_c_type(token)
        if aggregate is not None:
            members.append(Member(aggregate, value_abi().aggregates_by_pointer))
        else:
            members.append(Member(ALL_NUMERIC_DTYPES[token][0], passes_by_pointer(token)))
    return members


def split_entry(provider: Provider, dtype: str, extents: dict[str, int], outputs: tuple[str, ...] = ()) -> Provider:
    """``provider`` (emitted for the tuple ``dtype``) with an entry point taking each operand apart: a pointer to
    tuples (``extents[name]`` of them) becomes one pointer per operand, a tuple value one value per operand, and a
    tuple result one ``out`` pointer per operand. Pointers named in ``outputs`` are written back after the call,
    the others read before it; an ``out`` pointer to one tuple becomes one ``out`` pointer per operand, in its
    place. The original entry is kept, inlined, as ``@SYM@_tuples``."""
    t = c_type(dtype)
    dtypes = fields(dtype)
    template = provider.template
    head = re.search(r'extern "C" __device__ (?P<ret>[\w ]+?) @SYM@\(', template)
    assert head is not None, "a provider's entry point"
    ret = head.group("ret")
    inner = template[:head.start()] + f"static __device__ __forceinline__ {ret} @SYM@_tuples(" + \
        template[head.end():]
    params: list[CParam] = []
    before: list[str] = []
    after: list[str] = []
    args: list[str] = []
    for param in provider.params:
        if param.abi is Abi.OUT and param.c_type == f"{t}*":  # one tuple result: an ``out`` pointer per operand
            before.append(f"  {t} {param.name}_t;")
            for j, d in enumerate(dtypes):
                params.append(CParam(Abi.OUT, f"{c_type(d)}*", f"{param.name}{j}", d))
                after.append(f"  *{param.name}{j} = {param.name}_t.f{j};")
            args.append(f"&{param.name}_t")
        elif param.c_type == f"{t}*":
            count = extents[param.name]
            before.append(f"  {t} {param.name}_t[{count}];")
            for j, d in enumerate(dtypes):
                params.append(CParam(Abi.PTR, f"{c_type(d)}*", f"{param.name}{j}", d))
                if param.name in outputs:
                    after.append(f"  cuda_coop::scatter_field({param.name}{j}, {param.name}_t, &{t}::f{j});")
                else:
                    before.append(f"  cuda_coop::gather_field({param.name}_t, &{t}::f{j}, {param.name}{j});")
            args.append(f"{param.name}_t")
        elif param.c_type == t:
            for j, d in enumerate(dtypes):
                params.append(CParam(param.abi, c_type(d), f"{param.name}{j}", d))
            members = ", ".join(f"{param.name}{j}" for j in range(len(dtypes)))
            before.append(f"  const {t} {param.name}_t = {{{members}}};")
            args.append(f"{param.name}_t")
        else:
            params.append(param)
            args.append(param.name)
    call = f"@SYM@_tuples({', '.join(args)})"
    if ret == t:  # a scalar result: one out pointer per operand
        for j, d in enumerate(dtypes):
            params.append(CParam(Abi.OUT, f"{c_type(d)}*", f"result{j}", d))
        before.append(f"  const {t} result = {call};")
        after += [f"  *result{j} = result.f{j};" for j in range(len(dtypes))]
    else:
        before.append(f"  {call};")
    body = inner + (f'extern "C" __device__ void @SYM@({c_signature(params)}) {{\n' + "\n".join(before + after)
                    + "\n}\n")
    return Provider.make(provider.family, (*provider.headers, "cuda_coop/util_items.cuh"), body,
                         provider.scratch_template, params)
