"""The C ABI of by-value float16 (SPEC 9.2).

numba-cuda-mlir passes a float16 scalar as LLVM ``half``; C++'s ``__half`` is a struct, so a call between them would
not be inlined by link-time optimisation. A provider whose entry point takes or returns ``__half`` by value is kept
as written under another name (inlined) and exposed through an entry point that takes and returns the 16 bits as
``unsigned short``; the backend bit-casts on its side.
"""
from __future__ import annotations

import re

_DEFINITION = re.compile(r'extern "C" __device__ (?P<ret>[\w ]+?) (?P<name>cuda_coop_\w+)\((?P<params>[^)]*)\) \{')
_HALF_PARAM = re.compile(r"^(?:const )?__half (?P<name>\w+)$")


def half_bits_entry(body: str) -> str:
    """``body`` with its entry point's by-value ``__half`` parameters and result carried as ``unsigned short``."""
    match = _DEFINITION.search(body)
    if match is None:
        return body
    ret, name, params = match.group("ret"), match.group("name"), match.group("params").split(", ")
    halves = [_HALF_PARAM.match(p) for p in params]
    if ret != "__half" and not any(halves):
        return body
    abi_params, args = [], []
    for param, half in zip(params, halves):
        arg = param.replace("*", " ").split()[-1]
        abi_params.append(f"unsigned short {half.group('name')}" if half else param)
        args.append(f"__ushort_as_half({half.group('name')})" if half else arg)
    call = f"{name}_typed({', '.join(args)})"
    result = {"void": f"  {call};", "__half": f"  return __half_as_ushort({call});"}.get(ret, f"  return {call};")
    typed = body[:match.start()] + f"static __device__ __forceinline__ {ret} {name}_typed(" + \
        match.group("params") + ") {" + body[match.end():]
    abi_ret = "unsigned short" if ret == "__half" else ret
    return typed + f'extern "C" __device__ {abi_ret} {name}({", ".join(abi_params)}) {{\n{result}\n}}\n'
