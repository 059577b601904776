"""Mamba's selective scan in the CuTe DSL with cuda.coop: the forward of mamba-ssm's ``selective_scan_fn``, float32
and bfloat16 inputs, checked against a float64 NumPy oracle.

The kernel is in ``selective_scan_cute.py`` (the kernel of ``selective_scan_numba.py`` for ``cuda.coop.cutlass``);
the problem, the oracle and the check are those of ``selective_scan.py`` and ``selective_scan_reference.py``. Each
kernel is built for sm_90a without a GPU (``cute_coop.compile_kernel`` on fake tensors); with a GPU and torch (to hand
CuTe the device arrays) it runs on random inputs, with every option on and with none, and is checked; without one
the script says that it could not launch.

    python examples/workloads/cute_selective_scan.py [--batch 2] [--dim 4] [--seqlen 3000] [--dstate 16]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

try:
    import torch  # before cutlass: the other order once broke torch's operator registry
except ImportError:
    torch = None
import cutlass  # noqa: E402
from cutlass.cute.runtime import make_fake_tensor  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import selective_scan_cute as kernels  # noqa: E402
import selective_scan_reference as ref  # noqa: E402
from sampling_reference import built_line  # noqa: E402
from selective_scan_reference import DTYPES, oracle, outputs, variants  # noqa: E402  (as the numba script)
import cuda.coop.cutlass as cute_coop  # noqa: E402

SCALARS = {np.dtype(np.int32): cutlass.Int32, np.dtype(np.int64): cutlass.Int64, np.dtype(np.float32): cutlass.Float32,
           np.dtype(np.int16): cutlass.Int16}


def arguments(inputs: dict, out: np.ndarray, last_state: np.ndarray, delta_softplus: bool = True) -> tuple:
    """The launcher's host arguments: the numba kernel's (``selective_scan_numba.arguments``: flattened arrays, dim
    and seqlen as int64), with bfloat16 bits as int16, dstate and the flags as int32, then the grid (batch x dim)."""
    inputs = {key: a.view(np.int16) if a.dtype == np.uint16 else a for key, a in inputs.items()}
    out = out.view(np.int16) if out.dtype == np.uint16 else out
    u = inputs["u"]
    batch, dim, seqlen = u.shape
    D, bias, z = inputs.get("D"), inputs.get("delta_bias"), inputs.get("z")
    zeros = np.zeros(dim, np.float32)
    return (u.ravel(), inputs["delta"].ravel(), inputs["A"].ravel(), inputs["B"].ravel(), inputs["C"].ravel(),
            zeros if D is None else D, u.ravel()[:1].copy() if z is None else z.ravel(),
            zeros.copy() if bias is None else bias, out.ravel(), last_state.ravel(), np.int64(dim), np.int64(seqlen),
            np.int32(inputs["A"].shape[1]), np.int32(delta_softplus), np.int32(z is not None), np.int32(batch * dim))


def fake(a):
    """A launcher argument for a build without a GPU: a fake 1-D tensor for an array, a CuTe numeric for a scalar."""
    if isinstance(a, np.ndarray):
        return make_fake_tensor(SCALARS[a.dtype], a.shape, stride=(1,))
    return SCALARS[a.dtype](a.item())


def launch(launcher, host: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Run on device copies of the host arrays; (out, last_state) back on the host."""
    if torch is None or not torch.cuda.is_available():
        raise RuntimeError("no CUDA device (or no torch to hand the arrays to CuTe)")
    from cutlass.cute.runtime import from_dlpack

    device = [torch.from_numpy(a).cuda() if isinstance(a, np.ndarray) else a for a in host]
    launcher(*(from_dlpack(a) if isinstance(a, torch.Tensor) else SCALARS[a.dtype](a.item()) for a in device))
    torch.cuda.synchronize()
    got = device[8].cpu().numpy()
    return got.view(np.uint16) if got.dtype == np.int16 else got, device[9].cpu().numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--dim", type=int, default=4)
    parser.add_argument("--seqlen", type=int, default=3000)
    parser.add_argument("--dstate", type=int, default=16)
    args = parser.parse_args()
    threads, items = kernels.tiling(args.seqlen)
    for dtype in DTYPES:
        inputs = ref.problem(args.batch, args.dim, args.seqlen, args.dstate, dtype)
        launcher = kernels.kernel_for(threads, items, dtype, kernels.reads_pairs(args.seqlen, dtype))
        out, last_state = outputs(inputs["u"], args.dstate)
        start = time.perf_counter()
        built = cute_coop.compile_kernel(launcher, *(fake(a) for a in arguments(inputs, out, last_state)))
        print(built_line(f"selective_scan {dtype} ({threads} x {items})", built, "sm_90a",
                         time.perf_counter() - start, threads))
        for name, chosen, softplus in variants(inputs):
            out, last_state = outputs(inputs["u"], args.dstate)
            try:
                got_out, got_state = launch(launcher, arguments(chosen, out, last_state, softplus))
            except Exception as exc:  # no driver or no GPU on this machine
                print(f"  could not launch on a GPU here ({type(exc).__name__}: {str(exc).splitlines()[0][:100]})")
                break
            want_out, want_state = oracle(chosen, softplus)
            print(f"OK: {dtype}, {name}: out {ref.check(got_out, want_out, dtype)}; last state "
                  f"{ref.check(got_state, want_state, 'float32', 'last_state')}")


if __name__ == "__main__":
    main()
