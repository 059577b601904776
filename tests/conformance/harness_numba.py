"""numba-cuda-mlir harness: the case body as an always-inlined device function, called by a generated kernel."""
from __future__ import annotations

from typing import Any

import numpy as np

from .cases import Case, Int

NAME = "numba-cuda-mlir"
_kernels: dict[str, Any] = {}


def available() -> str | None:
    """None when the backend can run, else why not."""
    try:
        import cuda.coop.numba_mlir  # noqa: F401
        import numba_cuda_mlir  # noqa: F401
    except ImportError as exc:
        return f"{NAME} is not importable: {exc}"
    return None


def kernel_of(case: Case):
    """``@cuda.jit`` kernel calling ``body(cuda.blockIdx.x, *operands)``; generated per case (a fresh dispatcher, so
    two bodies of one signature never share a compiled kernel)."""
    if case.id not in _kernels:
        import cuda.coop.numba_mlir as cuda_coop_numba  # registers the backend
        from numba_cuda_mlir import cuda

        params = ", ".join(f"a{i}" for i in range(len(case.operands)))
        source = f"def kernel({params}):\n    BODY(cuda.blockIdx.x, {params})\n"
        body = case.body_in(cuda_coop_numba)
        scope: dict[str, Any] = {"cuda": cuda, "BODY": cuda.jit(device=True, inline="always")(body)}
        exec(compile(source, f"<conformance numba kernel {case.id}>", "exec"), scope)
        _kernels[case.id] = cuda.jit(scope["kernel"])
    return _kernels[case.id]


def _args(case: Case, values: dict[str, Any]) -> list[Any]:
    return [np.dtype(op.dtype).type(values[op.name]) if isinstance(op, Int) else values[op.name]
            for op in case.operands]


def run(case: Case, values: dict[str, Any]) -> dict[str, np.ndarray]:
    """Launch on the GPU with copies of ``values``' arrays; return every array after the launch."""
    from numba_cuda_mlir import cuda

    host = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in values.items()}
    kernel_of(case)[case.grid, case.block](*_args(case, host))  # host arrays are copied back after the launch
    cuda.synchronize()
    return {k: v for k, v in host.items() if isinstance(v, np.ndarray)}


def compile_case(case: Case, target: str = "sm_90"):
    import cuda.coop.numba_mlir as numba_coop

    return numba_coop.compile_kernel(kernel_of(case), _args(case, case.inputs()), block=case.block, grid=case.grid,
                                     target=target)


def batch_kernel_of(batch: tuple[Case, ...]):
    """One kernel for the cases of ``batch`` (equal block shapes): ``kernel(which, <every case's operands>)`` runs the
    body of case ``which``. A kernel argument is the same for every thread, so each body is reached as a whole."""
    key = "|".join(case.id for case in batch)
    if key not in _kernels:
        import cuda.coop.numba_mlir as cuda_coop_numba  # registers the backend
        from numba_cuda_mlir import cuda

        scope: dict[str, Any] = {"cuda": cuda}
        params, branches = ["which"], []
        for i, case in enumerate(batch):
            names = [f"a{i}_{j}" for j in range(len(case.operands))]
            params += names
            scope[f"BODY{i}"] = cuda.jit(device=True, inline="always")(case.body_in(cuda_coop_numba))
            branches.append(f"    {'if' if i == 0 else 'elif'} which == {i}:\n"
                            f"        BODY{i}(cuda.blockIdx.x, {', '.join(names)})\n")
        source = f"def kernel({', '.join(params)}):\n" + "".join(branches)
        exec(compile(source, f"<conformance numba batch {batch[0].id}..{batch[-1].id}>", "exec"), scope)
        _kernels[key] = cuda.jit(scope["kernel"])
    return _kernels[key]


def compile_batch(batch: tuple[Case, ...], target: str = "sm_90"):
    """The cases of ``batch`` built as one kernel (``compile_case`` for a batch of one)."""
    if len(batch) == 1:
        return compile_case(batch[0], target)
    import cuda.coop.numba_mlir as numba_coop

    args: list[Any] = [np.int32(0)]
    for case in batch:
        args += _args(case, case.inputs())
    return numba_coop.compile_kernel(batch_kernel_of(batch), args, block=batch[0].block, grid=batch[0].grid,
                                     target=target)
