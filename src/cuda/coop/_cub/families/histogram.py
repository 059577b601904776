"""CUB BlockHistogram provider (docs: operations/histogram): counters in scratch, returned as fresh striped payloads
(``cuda_coop::BlockHistogramStriped``, include/cuda_coop/block)."""
from __future__ import annotations

from ..._semantics.common import c_type
from ..._semantics.histogram import HistogramSpec
from ..provider import SCRATCH_PARAMS, Abi, CParam, Provider, c_signature, reuse_barrier

_ALGORITHMS = {"atomic": "cub::BLOCK_HISTO_ATOMIC", "sort": "cub::BLOCK_HISTO_SORT"}

# The type CUB counts in. Its atomic add (atomicAdd_block) has int, unsigned int and unsigned long long
# overloads but none for long long: int64 counters are counted as unsigned long long, whose bits equal the
# (nonnegative, below 2**31) signed counts.
_COUNTING_TYPE = {"int64": "unsigned long long"}


def emit(spec: HistogramSpec, scalar_samples: bool = False) -> Provider:
    """``scalar_samples``: the qualified form that counts one sample per thread, passed by value."""
    bx, by, bz = spec.block
    t, k = c_type(spec.sample_dtype), spec.items_per_thread
    out_t = c_type(spec.counter_dtype)
    counter_t = _COUNTING_TYPE.get(spec.counter_dtype, out_t)
    bins, per_thread = spec.bins, spec.bins_per_thread
    algo = (f"cuda_coop::BlockHistogramStriped<{t}, {counter_t}, {out_t}, {bx}, {k}, {bins}, {per_thread}, "
            f"{_ALGORITHMS[spec.algorithm]}, {by}, {bz}>")
    lines = [f"  using Algo = {algo};",
             "  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));"]
    samples = CParam(Abi.VALUE, t, "sample") if scalar_samples else CParam(Abi.PTR, f"const {t}*", "samples")
    params = [samples, CParam(Abi.PTR, f"{out_t}*", "output")]
    if spec.has_valid_items:  # a partial tile (docs: operations/histogram, "A partial tile")
        # the scalar form is a tile of one sample per thread: the sample is its one-item array
        lines += [f"  cuda_coop::check_range(valid_items, 0, {spec.tile_items});",
                  f"  algo.Histogram({'&sample' if scalar_samples else 'samples'}, output, valid_items);"]
        params.append(CParam(Abi.I64, "long long", "valid_items"))
    else:
        lines.append(f"  algo.Histogram({'sample' if scalar_samples else 'samples'}, output);")
    if spec.barrier:
        lines.append(reuse_barrier(None))
    params += SCRATCH_PARAMS
    body = f'extern "C" __device__ void @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n}\n"
    return Provider.make("histogram", ("cuda_coop/block/block_histogram_striped.cuh",), body,
                         f"typename {algo}::TempStorage", params)
