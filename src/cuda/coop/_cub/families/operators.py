"""C++ functors for operator specs (docs: operations/operators)."""
from __future__ import annotations

from ..._semantics.operators import OperatorSpec
from ..tuples import operator_call, operator_declaration, tuple_fields

HEADERS = ("cuda/std/functional", "cuda/functional", "cuda_coop/util_operators.cuh")
_FUNCTORS = {
    "sum": "cuda::std::plus<{t}>", "multiplies": "cuda::std::multiplies<{t}>", "min": "cuda::minimum<{t}>",
    "max": "cuda::maximum<{t}>", "bit_and": "cuda::std::bit_and<{t}>", "bit_or": "cuda::std::bit_or<{t}>",
    "bit_xor": "cuda::std::bit_xor<{t}>",
}
# min and max of floats: one FMNMX a combination where CCCL's under NVRTC tests each operand for NaN
# (util_operators.cuh); integers keep CCCL's, which CUB reduces across a warp with one REDUX
_FLOAT_FUNCTORS = {"min": "cuda_coop::minimum<{t}>", "max": "cuda_coop::maximum<{t}>"}
_FLOATS = ("float", "double")


def functor(spec: OperatorSpec, t: str) -> tuple[str, str]:
    """(declarations to place before the provider, expression constructing the functor)."""
    if spec.builtin:
        table = _FLOAT_FUNCTORS if t in _FLOATS and spec.name in _FLOAT_FUNCTORS else _FUNCTORS
        return "", table[spec.name].format(t=t) + "{}"
    # A user callable compiled separately to LTO-IR with a C ABI; LTO inlines it into CUB.
    members = tuple_fields(t)
    if members is not None:  # over a tuple of operands: results through pointers, operands field by field
        call = operator_call(spec.name, t, members)
        decl = operator_declaration(spec.name, members)
    elif spec.by_pointer:  # values cross by pointer; copies keep CUB's operands const whatever the callable does
        call = f"{t} r, x = a, y = b; {spec.name}(&r, &x, &y); return r;"
        decl = f'extern "C" __device__ void {spec.name}({t}*, {t}*, {t}*);\n'
    else:
        call = f"return {spec.name}(a, b);"
        decl = f'extern "C" __device__ {t} {spec.name}({t}, {t});\n'
    decl += (f"struct @SYM@_op {{\n"
             f"  __device__ __forceinline__ {t} operator()(const {t}& a, const {t}& b) const {{ {call} }}\n"
             f"}};\n")
    return decl, "@SYM@_op{}"


def predicate_functor(spec: OperatorSpec, t: str, functor: str) -> str:
    """Declarations of the functor struct ``functor`` calling a user predicate (``_semantics.operators.
    resolve_predicate``). The callable is compiled with a boolean result, which its C ABI returns as one byte
    holding 0 or 1 where the backend's value ABI says so (``spec.byte_result``: a compiler that stores booleans as
    bytes), else as a C++ ``bool``; the functor hands CUB a ``bool``."""
    if spec.by_pointer:
        params, call = f"{t}*, {t}*", f"{t} x = a, y = b; return {spec.name}(&x, &y) != 0;"
    else:
        params, call = f"{t}, {t}", f"return {spec.name}(a, b) != 0;"
    return (
        f'extern "C" __device__ {"unsigned char" if spec.byte_result else "bool"} {spec.name}({params});\n'
        f"struct {functor} {{\n"
        f"  __device__ __forceinline__ bool operator()(const {t}& a, const {t}& b) const {{ {call} }}\n"
        f"}};\n"
    )
