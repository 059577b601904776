"""``layout``: the size and alignment of one value as the generated C++ lays it out, a tuple operand's being its
struct's (fields in order), checked against NumPy's aligned structured dtypes, which follow the C rules. The cluster
reduction reads a block's partial through distributed shared memory in words of that layout (a tuple operand failed
here once with a KeyError)."""
from __future__ import annotations

import numpy as np
import pytest

from cuda.coop._semantics.common import itemsize, layout
from cuda.coop._semantics.tuples import tuple_dtype

MEMBERS = [["float32", "float32"], ["int8", "float64"], ["float64", "int8"], ["int16", "int8", "int32"],
           ["uint8", "uint8", "uint8"], ["int64", "float32", "int16", "uint8"]]


@pytest.mark.parametrize("members", MEMBERS, ids=["_".join(m) for m in MEMBERS])
def test_a_tuple_is_laid_out_as_a_c_struct(members):
    want = np.dtype([(f"f{j}", np.dtype(m)) for j, m in enumerate(members)], align=True)
    assert layout(tuple_dtype(members)) == (want.itemsize, want.alignment)
    assert itemsize(tuple_dtype(members)) == want.itemsize


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "float32", "int64", "float64"])
def test_a_number_is_its_own_size_and_alignment(dtype):
    assert layout(dtype) == (np.dtype(dtype).itemsize, np.dtype(dtype).alignment)
