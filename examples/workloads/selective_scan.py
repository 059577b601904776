"""Mamba's selective scan with cuda.coop (numba-cuda-mlir): the forward of mamba-ssm's ``selective_scan_fn`` (u, delta
(batch, dim, seqlen); A (dim, dstate); B, C (batch, dstate, seqlen); D, delta_bias (dim,); z gating; the last state),
float32 and bfloat16 inputs, checked against a float64 NumPy oracle.

The kernel is in ``selective_scan_numba.py`` (one block per (batch, dim) row, a block scan over (decay, value) pairs
per state and chunk); the oracle in ``selective_scan_reference.py``. With a GPU this runs each kernel on random
inputs, with every option on (D, z, delta_bias, softplus) and with none, and checks the output and the last state;
without one it builds each kernel for sm_90 and says that it could not launch.

    python examples/workloads/selective_scan.py [--batch 2] [--dim 4] [--seqlen 3000] [--dstate 16]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import selective_scan_numba as kernels  # noqa: E402
import selective_scan_reference as ref  # noqa: E402
from sampling_reference import built_line  # noqa: E402  (the workloads' report of one build)
from selective_scan_reference import DTYPES, oracle, outputs, variants  # noqa: E402
from numba_cuda_mlir import cuda  # noqa: E402
import cuda.coop.numba_mlir as numba_coop  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--dim", type=int, default=4)
    parser.add_argument("--seqlen", type=int, default=3000)
    parser.add_argument("--dstate", type=int, default=16)
    args = parser.parse_args()
    threads, items = kernels.tiling(args.seqlen)
    rows = args.batch * args.dim
    for dtype in DTYPES:
        inputs = ref.problem(args.batch, args.dim, args.seqlen, args.dstate, dtype)
        kernel = kernels.kernel_for(threads, items, dtype, kernels.reads_pairs(args.seqlen, dtype))
        out, last_state = outputs(inputs["u"], args.dstate)
        start = time.perf_counter()
        built = numba_coop.compile_kernel(kernel, kernels.arguments(inputs, out, last_state), block=threads,
                                          grid=rows)
        print(built_line(f"selective_scan {dtype} ({threads} x {items})", built, "sm_90", time.perf_counter() - start,
                         threads))
        for name, chosen, softplus in variants(inputs):
            out, last_state = outputs(inputs["u"], args.dstate)
            host = kernels.arguments(chosen, out, last_state, softplus)
            try:
                device = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
                kernel[rows, threads](*device)
                got_out, got_state = device[8].copy_to_host(), device[9].copy_to_host()
            except Exception as exc:  # no driver or no GPU on this machine
                print(f"  could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:100]})")
                break
            want_out, want_state = oracle(chosen, softplus)
            print(f"OK: {dtype}, {name}: out {ref.check(got_out, want_out, dtype)}; last state "
                  f"{ref.check(got_state, want_state, 'float32', 'last_state')}")


if __name__ == "__main__":
    main()
