"""The kernels behind the docs' explorers (tests/explorer_cases.py) build for sm_90 with every call inlined; the GPU
test runs them and compares their output with the pictures."""
from __future__ import annotations

import numpy as np
import pytest
from explorer_cases import case_for, inputs, kernel, kernel_cases, outputs

import cuda.coop.numba_mlir as numba_coop


@pytest.mark.parametrize("line", [case.line for case in kernel_cases()])
def test_explorer_kernel_builds(line):
    case = case_for(line)
    src, values = inputs(case, np.random.default_rng(0))
    built = numba_coop.compile_kernel(kernel(line), (src, values, *outputs(case, src, np.zeros)), block=case.block)
    assert "CALL" not in built.sass()
