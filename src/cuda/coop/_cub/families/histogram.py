"""CUB BlockHistogram provider (docs: operations/histogram): counters in scratch, returned as fresh striped payloads."""
from __future__ import annotations

from ..._semantics.common import c_type
from ..._semantics.histogram import HistogramSpec
from ..provider import SCRATCH_PARAMS, CParam, Provider, c_signature, reuse_barrier

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
    algo = f"cub::BlockHistogram<{t}, {bx}, {k}, {bins}, {_ALGORITHMS[spec.algorithm]}, {by}, {bz}>"
    # One scratch object: CUB's storage and the shared counters side by side (BLOCK_HISTO_SORT uses its storage
    # while the counters it was given are live).
    scratch = (f"struct @SYM@_scratch {{\n  typename {algo}::TempStorage algo;\n  {counter_t} counters[{bins}];\n}};\n")
    lines = [
        f"  using Algo = {algo};",
        "  @SYM@_scratch& s = *reinterpret_cast<@SYM@_scratch*>(scratch);",
        # A private copy: CUB takes the samples by mutable reference and BLOCK_HISTO_SORT sorts them in place.
        f"  {t} items[{k}];",
        f"  for (int i = 0; i < {k}; ++i) items[i] = {'sample' if scalar_samples else 'samples[i]'};",
        "  Algo(s.algo).Histogram(items, s.counters);  // zeroes the counters, then counts the tile",
        "  __syncthreads();  // every count is in before any member reads its bins",
        f"  const int rank = (int)cuda_coop::linear_rank<{bx}, {by}, {bz}>();",
        f"  for (int i = 0; i < {per_thread}; ++i) {{",
        f"    const int bin = rank + i * {bx};  // striped: slot i of member t holds bin t + i*T",
        f"    output[i] = bin < {bins} ? ({out_t})s.counters[bin] : ({out_t})0;",
        "  }",
    ]
    if spec.barrier:
        lines.append(reuse_barrier(None))
    samples = CParam("value", t, "sample") if scalar_samples else CParam("ptr", f"const {t}*", "samples")
    params = [samples, CParam("ptr", f"{out_t}*", "output"), *SCRATCH_PARAMS]
    body = scratch + f'extern "C" __device__ void @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n}\n"
    return Provider.make("histogram", ("cub/block/block_histogram.cuh",), body, "@SYM@_scratch", params)
