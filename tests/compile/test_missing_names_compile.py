"""A name a cuda.coop namespace lacks inside a numba-cuda-mlir kernel (issue 37 item 15): the namespace's own
AttributeError with the nearest name, at the line that names it, not what the call would do to its operands (the
common namespace on both backends: tests/conformance/error_cases.py, ``missing-name-*``)."""
from __future__ import annotations

import numpy as np
import pytest

import cuda.coop.numba_mlir as numba_coop
from cuda import coop
from numba_cuda_mlir import cuda

from compile_helpers import line_of

I32 = np.zeros(512, np.int32)


def test_a_qualified_name_the_namespace_lacks():
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4, np.int32)
        numba_coop.load(block, src, items)
        numba_coop.store(block, dst, numba_coop.inclusive_scann(block, items, scan_op="max"))  # HERE

    with pytest.raises(AttributeError) as info:
        numba_coop.compile_kernel(kernel, (I32, I32), block=128, target="sm_90")
    assert str(info.value) == (f"{__file__}:{line_of(kernel, '# HERE')}: cuda.coop.numba_mlir has no operation "
                               "'inclusive_scann'; did you mean 'inclusive_scan'?")


def test_a_misspelt_group_factory():
    @cuda.jit
    def kernel(src, dst):
        dst[0] = coop.this_blok().rank()  # HERE

    with pytest.raises(AttributeError) as info:
        numba_coop.compile_kernel(kernel, (I32, I32), block=128, target="sm_90")
    assert str(info.value) == (f"{__file__}:{line_of(kernel, '# HERE')}: cuda.coop has no attribute 'this_blok'; "
                               "did you mean 'this_block'?")
