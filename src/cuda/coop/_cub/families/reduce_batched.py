"""CUB WarpReduceBatched provider (docs: operations/reduce_batched).

``cub::WarpReduceBatched<T, B, W>`` reduces all ``B`` batches at once for any ``B``: its
``ReduceToStriped``/``ReduceToBlocked`` write ``ceil(B/W)`` results per lane in exactly the documented layouts
(docs: operations/reduce_batched, "Semantics"), padding a ``B`` that is not a multiple of ``W`` internally. Its only
specialisation, ``cub::detail::warp_reduce_batched_wspro<T, B, W, false>``, is shuffle-based (``TempStorage`` is
``cub::NullType``), so a call needs no scratch and no reuse barrier; it finds its lane and logical warp from
``%laneid``, which matches the documented linear rank (docs: concepts, "Groups and ranks") because warp-scope groups
require blocks of complete warps.

The public ``ReduceTo*`` methods drive that specialisation through ``cuda::static_for`` with an unannotated lambda,
which NVRTC 13.0 rejects in JIT mode ("host functions are not allowed"). The provider therefore drives the same
specialisation itself, exactly as ``warp_reduce_batched_wspro::Reduce`` does: the ``redux.sync`` path where CUB
would take it (full warps, at most 8 batches, a redux-capable operator), else one ``RecurseReductionTree`` per
output slot, expanded with a fold expression instead of the lambda.
"""
from __future__ import annotations

from ..._semantics.common import c_type
from ..._semantics.reduce_batched import ReduceBatchedSpec
from ..provider import Abi, CParam, Provider, c_signature
from . import operators

HEADERS = ("cub/warp/warp_reduce_batched.cuh", "cuda/std/utility")


def emit(spec: ReduceBatchedSpec) -> Provider:
    t, b, m, w = c_type(spec.dtype), spec.batches, spec.items_out, spec.width
    params = [CParam(Abi.PTR, f"const {t}*", "items"), CParam(Abi.PTR, f"{t}*", "output")]
    blocked = "true" if spec.output_layout == "blocked" else "false"
    decl, op = operators.functor(spec.operator, t)
    impl = f"cub::detail::warp_reduce_batched_wspro<{t}, {b}, {w}, false>"
    body = (
        decl
        + f"using @SYM@_impl = {impl};\n"
        + f"using @SYM@_op_t = decltype({op});\n"
        # A template, so that the redux branch is not instantiated where CUB would not take it.
        + "template <int... Slot>\n"
        + f"__device__ __forceinline__ void @SYM@_reduce(const {t} (&in)[{b}], {t} (&out)[{m}],\n"
        + "                                              cuda::std::integer_sequence<int, Slot...>) {\n"
        + "  typename @SYM@_impl::TempStorage unused;  // cub::NullType: shuffle-based, no shared memory\n"
        + "  @SYM@_impl impl(unused);\n"
        + "  const @SYM@_op_t op{};\n"
        + f"  if constexpr (cub::detail::is_warp_redux_op_supported<@SYM@_op_t, {t}> && {w} == 32 && {b} <= 8) {{\n"
        + f"    if (impl.template ReduceRedux<{blocked}>(in, out, op)) return;\n"
        + "  }\n"
        + f"  ((out[Slot] = impl.template RecurseReductionTree<{blocked}, Slot * {w}>(in, op)), ...);\n"
        + "}\n"
        + f'extern "C" __device__ void @SYM@({c_signature(params)}) {{\n'
        + f"  const {t} (&in)[{b}] = *reinterpret_cast<const {t} (*)[{b}]>(items);\n"
        + f"  {t} (&out)[{m}] = *reinterpret_cast<{t} (*)[{m}]>(output);\n"
        + f"  @SYM@_reduce(in, out, cuda::std::make_integer_sequence<int, {m}>{{}});\n"
        + "}\n"
    )
    return Provider.make("reduce_batched", HEADERS + operators.HEADERS, body, None, params)
