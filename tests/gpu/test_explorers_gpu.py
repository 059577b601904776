"""Every explorer picture in the docs of shuffle, reduce and sum, the scans (reverse and segmented too), adjacent
difference, discontinuity, merge sort, radix sort and rank, top-k, argmax/argmin, broadcast, select and partition,
and segment totals (reduce and sum with head_flags, compacted or not), against the built kernel: the
kernel runs the pictured operation at the pictured shape on random data (the picture's own keys for the sorts and
argmax/argmin), and each cell the picture defines must hold what its label says (tests/explorer_cases.py reads the
labels)."""
from __future__ import annotations

import zlib

import numpy as np
import pytest
from explorer_cases import case_for, check, inputs, kernel, kernel_cases, outputs
from gpu_helpers import poisoned
from numba_cuda_mlir import cuda

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("line", [case.line for case in kernel_cases()])
def test_the_kernel_does_what_the_docs_picture_draws(line):
    case = case_for(line)
    for seed in range(3):
        src, values = inputs(case, np.random.default_rng(zlib.crc32(line.encode()) + seed))
        out = outputs(case, src, poisoned)
        kernel(line)[1, case.block](src, values, *out)
        cuda.synchronize()
        check(case, src, values, out[:len(case.result_columns())])
