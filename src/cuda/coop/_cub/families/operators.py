"""C++ functors for operator specs (SPEC 8.0)."""
from __future__ import annotations

from ..._semantics.operators import OperatorSpec

HEADERS = ("cuda/std/functional", "cuda/functional")
_FUNCTORS = {
    "sum": "cuda::std::plus<{t}>", "multiplies": "cuda::std::multiplies<{t}>", "min": "cuda::minimum<{t}>",
    "max": "cuda::maximum<{t}>", "bit_and": "cuda::std::bit_and<{t}>", "bit_or": "cuda::std::bit_or<{t}>",
    "bit_xor": "cuda::std::bit_xor<{t}>",
}


def functor(spec: OperatorSpec, t: str) -> tuple[str, str]:
    """(declarations to place before the provider, expression constructing the functor)."""
    if spec.builtin:
        return "", _FUNCTORS[spec.name].format(t=t) + "{}"
    # A user callable compiled separately to LTO-IR with a C ABI; LTO inlines it into CUB.
    decl = (
        f'extern "C" __device__ {t} {spec.name}({t}, {t});\n'
        f"struct @SYM@_op {{\n"
        f"  __device__ __forceinline__ {t} operator()(const {t}& a, const {t}& b) const {{ return {spec.name}(a, b); }}\n"
        f"}};\n"
    )
    return decl, "@SYM@_op{}"
