"""The C ABI of by-value float16 and aggregates at entry points, as the backend's value ABI asks (docs: qualified,
"User-defined aggregates"; ``_backend_context.ValueAbi``).

A compiler may pass a float16 scalar as LLVM ``half`` (numba-cuda-mlir does); C++'s ``__half`` is a struct, so a call
between them would not be inlined by link-time optimisation. A compiler may hold a record value as a pointer to its
bytes (numba-cuda-mlir does). For such a backend, a provider whose entry point takes or returns either by value is
kept as written under another name (inlined) and exposed through an entry point that carries ``__half`` as its
``unsigned short`` bits and an aggregate by pointer (a result through a trailing ``result`` pointer); the backend
converts on its side.
"""
from __future__ import annotations

import re

from .._backend_context import ValueAbi
from .._semantics.aggregates import AGGREGATE_C_PREFIX, token_c_type, uniform_word
from .._semantics.common import ALL_NUMERIC_DTYPES
from .._semantics.tuples import TUPLE_C_PREFIX

_DEFINITION = re.compile(r'extern "C" __device__ (?P<ret>[\w ]+?) (?P<name>cuda_coop_\w+)\((?P<params>[^)]*)\) \{')
_BY_VALUE = re.compile(rf"^(?:const )?(?P<type>__half|{AGGREGATE_C_PREFIX}\w+) (?P<name>\w+)$")
_AGGREGATE_TYPE = re.compile(rf"\b{AGGREGATE_C_PREFIX}(\d+)_(\d+)(?:_([1248]+))?\b")


def _is_aggregate(c_type: str) -> bool:
    return c_type.startswith(AGGREGATE_C_PREFIX)


def c_abi_entry(body: str, abi: ValueAbi) -> str:
    """``body`` with its entry point's by-value ``__half``/aggregate parameters and result carried as ``abi`` says
    (as above); unchanged for a backend that takes both by value."""
    match = _DEFINITION.search(body)
    if match is None:
        return body
    ret, name, params = match.group("ret"), match.group("name"), match.group("params").split(", ")

    def carried(c_type: str) -> bool:
        return (c_type == "__half" and abi.half_as_bits) or (_is_aggregate(c_type) and abi.aggregates_by_pointer)

    by_value = [value if value is not None and carried(value.group("type")) else None
                for value in (_BY_VALUE.match(p) for p in params)]
    if not carried(ret) and not any(by_value):
        return body
    abi_params, args = [], []
    for param, value in zip(params, by_value):
        if value is None:
            abi_params.append(param)
            args.append(param.replace("*", " ").split()[-1])
        elif value.group("type") == "__half":
            abi_params.append(f"unsigned short {value.group('name')}")
            args.append(f"__ushort_as_half({value.group('name')})")
        else:
            # an absent optional operand arrives as a null pointer: a zero value (folded once inlined)
            kind, arg = value.group("type"), value.group("name")
            abi_params.append(f"const {kind}* {arg}")
            args.append(f"({arg} ? *{arg} : {kind}{{}})")
    call = f"{name}_typed({', '.join(args)})"
    abi_ret = ret
    if ret == "void":
        result = f"  {call};"
    elif not carried(ret):
        result = f"  return {call};"
    elif ret == "__half":
        abi_ret, result = "unsigned short", f"  return __half_as_ushort({call});"
    else:  # an aggregate result, written through a trailing pointer
        abi_ret, result = "void", f"  *result = {call};"
        abi_params.append(f"{ret}* result")
    typed = body[:match.start()] + f"static __device__ __forceinline__ {ret} {name}_typed(" + \
        match.group("params") + ") {" + body[match.end():]
    return typed + f'extern "C" __device__ {abi_ret} {name}({", ".join(abi_params)}) {{\n{result}\n}}\n'


def aggregate_definitions(source: str) -> list[str]:
    """The opaque struct of every aggregate C type ``source`` names: ``S`` bytes aligned to ``A``, trivially
    copyable, which is all data movement and user callables need. Its members are unsigned words: uniform (the
    widest dividing ``S`` and ``A``), or the widths the name lists after them (``_cub`` sees only the name, see
    ``_semantics.aggregates.Aggregate.members``). Copies move whole words, which keeps items in registers where
    byte-wise copies would not (SROA)."""
    definitions = []
    for size, alignment, plan in sorted(set(_AGGREGATE_TYPE.findall(source))):
        name = f"{AGGREGATE_C_PREFIX}{size}_{alignment}" + (f"_{plan}" if plan else "")
        if plan:
            members = " ".join(f"{_WORDS[int(w)]} m{i};" for i, w in enumerate(plan))
        else:
            width = uniform_word(int(size), int(alignment))
            members = f"{_WORDS[width]} words[{int(size) // width}];"
        definitions.append(f"struct alignas({alignment}) {name} {{ {members} }};")
    return definitions


_TUPLE_TYPE = re.compile(rf"\b{TUPLE_C_PREFIX}(\w+?)\b")


def tuple_definitions(source: str) -> list[str]:
    """The struct of every multi-operand tuple C type ``source`` names (``_semantics.tuples``; ``_cub.tuples``):
    one field ``f{j}`` per operand, of its numeric C type or its aggregate's opaque struct (named by its token)."""
    definitions = []
    for suffix in sorted(set(_TUPLE_TYPE.findall(source))):
        members = " ".join(f"{token_c_type(token) or ALL_NUMERIC_DTYPES[token][0]} f{j};"
                           for j, token in enumerate(suffix.split("_")))
        definitions.append(f"struct {TUPLE_C_PREFIX}{suffix} {{ {members} }};")
    return definitions


_WORDS = {8: "unsigned long long", 4: "unsigned int", 2: "unsigned short", 1: "unsigned char"}
