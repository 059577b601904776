"""CUB BlockRunLengthDecode providers (docs: operations/run_length_decode): the run table, its stream checks, windowed
and bulk decoding (``cuda_coop::BlockRunLengthDecode``, include/cuda_coop/block)."""
from __future__ import annotations

from ..._semantics.common import c_type
from ..._semantics.run_length import RunLengthSpec, decodes_into
from ..provider import SCRATCH_PARAMS, Abi, CParam, Provider, c_signature, reuse_barrier


def emit(spec: RunLengthSpec) -> Provider:
    t, length_t, offset_t = c_type(spec.value_dtype), c_type(spec.length_dtype), c_type(spec.offset_dtype)
    r, d = spec.runs_per_thread, spec.decoded_items_per_thread
    algo = f"cuda_coop::BlockRunLengthDecode<{t}, {length_t}, {offset_t}, {spec.threads}, {r}, {d}>"
    into = decodes_into(spec.op)
    lines = [f"  using Algo = {algo};",
             "  Algo table(*reinterpret_cast<typename Algo::TempStorage*>(scratch), run_values, run_lengths);"]
    params = [CParam(Abi.PTR, f"const {t}*", "run_values"), CParam(Abi.PTR, f"const {length_t}*", "run_lengths")]
    if spec.total_dtype is not None:
        params.append(CParam(Abi.PTR, f"{c_type(spec.total_dtype)}*", "total_decoded_size"))
        lines.append(f"  total_decoded_size[0] = ({c_type(spec.total_dtype)})table.TotalDecodedSize();")
    if into:
        params += [CParam(Abi.PTR, f"{t}*", "destination"), CParam(Abi.LEN, "long long", "capacity")]
        args = "destination, capacity"
        if spec.relative_offsets:
            params += [CParam(Abi.PTR, f"{offset_t}*", "relative_destination"),
                       CParam(Abi.LEN, "long long", "relative_capacity")]
            args += ", relative_destination, relative_capacity"
        params.append(CParam(Abi.I64, "long long", "destination_offset"))
        lines.append(f"  const {offset_t} total = table.RunLengthDecodeInto({args}, destination_offset);")
    else:
        params.append(CParam(Abi.PTR, f"{t}*", "output"))
        args = "output"
        if spec.relative_offsets:
            params.append(CParam(Abi.PTR, f"{offset_t}*", "relative_offsets"))
            args += ", relative_offsets"
        params.append(CParam(Abi.I64, "long long", "window_offset"))
        lines.append(f"  table.RunLengthDecode({args}, window_offset);")
    params += SCRATCH_PARAMS
    if spec.barrier:
        lines.append(reuse_barrier(None))
    if into:
        lines.append("  return total;")
    result = offset_t if into else "void"
    body = f'extern "C" __device__ {result} @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n}\n"
    return Provider.make(spec.op, ("cuda_coop/block/block_run_length_decode.cuh",), body,
                         f"typename {algo}::TempStorage", params)
