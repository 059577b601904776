"""Multi-operand calls in C++ (``_semantics.tuples``): user operators over tuples, and the entry point that takes
each operand apart (the tuple structs are defined with the translation unit: ``abi.tuple_definitions``).

A family's provider is emitted for the tuple dtype as for any value type (its C++ type is a struct of one field
``f{j}`` per operand, and a user operator over it calls the user's function field by field); ``split_entry`` then
keeps that entry point under another name and exposes one whose tuple parameters are one parameter per operand,
which is what the backends pass (each operand is a payload or a scalar of its own dtype)."""
from __future__ import annotations

import re

from .._semantics.common import c_type, passes_by_pointer
from .._semantics.tuples import TUPLE_C_PREFIX, fields
from .provider import CParam, Provider, c_signature


def operator_call(name: str, t: str, dtypes: list[str]) -> str:
    """The body of a functor over tuples of ``dtypes`` calling the user's C function ``name(&r.f0, ..., a.f0, ...,
    b.f0, ...)`` (results through pointers, operands field by field; a field whose dtype crosses by pointer, as the
    backend's value ABI says of float16, is passed as a pointer to a copy; docs: qualified, "User-defined
    aggregates")."""
    count = len(dtypes)
    out = ", ".join(f"&r.f{j}" for j in range(count))
    copies = "".join(f"{c_type(d)} {side}{j} = {side}.f{j}; " for side in ("a", "b") for j, d in enumerate(dtypes)
                     if passes_by_pointer(d))
    a = ", ".join(f"&a{j}" if passes_by_pointer(d) else f"a.f{j}" for j, d in enumerate(dtypes))
    b = ", ".join(f"&b{j}" if passes_by_pointer(d) else f"b.f{j}" for j, d in enumerate(dtypes))
    return f"{t} r; {copies}{name}({out}, {a}, {b}); return r;"


def operator_declaration(name: str, dtypes: list[str]) -> str:
    """The user's function over tuples of ``dtypes`` as the backends compile it: results through pointers, then
    each operand of ``a``, then of ``b`` (by pointer where ``operator_call`` passes one)."""
    types = [c_type(d) + ("*" if passes_by_pointer(d) else "") for d in dtypes]
    return f'extern "C" __device__ void {name}({", ".join([f"{c_type(d)}*" for d in dtypes] + types + types)});\n'


def tuple_fields(t: str) -> list[str] | None:
    """The operand dtypes of a tuple C type, or None for another type."""
    return t[len(TUPLE_C_PREFIX):].split("_") if t.startswith(TUPLE_C_PREFIX) else None


def split_entry(provider: Provider, dtype: str, extents: dict[str, int], outputs: tuple[str, ...] = ()) -> Provider:
    """``provider`` (emitted for the tuple ``dtype``) with an entry point taking each operand apart: a pointer to
    tuples (``extents[name]`` of them) becomes one pointer per operand, a tuple value one value per operand, and a
    tuple result one ``out`` pointer per operand. Pointers named in ``outputs`` are written back after the call,
    the others read before it. The original entry is kept, inlined, as ``@SYM@_tuples``."""
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
        if param.c_type == f"{t}*":
            count = extents[param.name]
            before.append(f"  {t} {param.name}_t[{count}];")
            for j, d in enumerate(dtypes):
                params.append(CParam("ptr", f"{c_type(d)}*", f"{param.name}{j}", d))
                if param.name in outputs:
                    after.append(f"  for (int e = 0; e < {count}; ++e) {param.name}{j}[e] = {param.name}_t[e].f{j};")
                else:
                    before.append(f"  for (int e = 0; e < {count}; ++e) {param.name}_t[e].f{j} = {param.name}{j}[e];")
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
            params.append(CParam("out", f"{c_type(d)}*", f"result{j}", d))
        before.append(f"  const {t} result = {call};")
        after += [f"  *result{j} = result.f{j};" for j in range(len(dtypes))]
    else:
        before.append(f"  {call};")
    body = inner + (f'extern "C" __device__ void @SYM@({c_signature(params)}) {{\n' + "\n".join(before + after)
                    + "\n}\n")
    return Provider.make(provider.family, provider.headers, body, provider.scratch_template, params)
