"""Layer 2 planning of the block histogram's partial tiles (SPEC 8.14, 8.23) without a compiler."""
from __future__ import annotations

import pytest

from cuda.coop._errors import CoopTypeError, CoopValueError
from cuda.coop._semantics.common import BLOCK, GroupSpec, LaunchShape, Runtime, Static
from cuda.coop._semantics.histogram import HistogramOptions, plan_histogram
from cuda.coop._semantics.shape import CallShape


def _shape(dtype="uint8", items_per_thread=4, **controls):
    return CallShape(name="h", op="histogram", group=GroupSpec(BLOCK, 64, 1), launch=LaunchShape((64, 1, 1)),
                     dtypes=(dtype,), items_per_thread=items_per_thread, controls=controls)


@pytest.mark.parametrize("valid_items", [None, Static(0), Static(256), Runtime("int32"), Runtime("uint32"),
                                         Runtime(None)])
@pytest.mark.parametrize("algorithm", ["atomic", "sort"])
def test_valid_items_is_a_range_checked_control(valid_items, algorithm):
    spec = plan_histogram(_shape(valid_items=valid_items), HistogramOptions(bins=256, bins_per_thread=4,
                                                                             algorithm=algorithm))
    assert spec.has_valid_items == (valid_items is not None)
    assert (spec.tile_items, spec.algorithm, spec.bins) == (256, algorithm, 256)


def test_a_scalar_sample_per_thread_is_a_tile_of_one_item():
    spec = plan_histogram(_shape(items_per_thread=0, valid_items=Static(64)), HistogramOptions(bins=10))
    assert (spec.items_per_thread, spec.tile_items, spec.has_valid_items) == (1, 64, True)


@pytest.mark.parametrize("valid_items,cls,message", [
    (Static(257), CoopValueError, "h static valid_items must be between 0 and 256; got 257"),
    (Static(-3), CoopValueError, "h static valid_items must be between 0 and 256; got -3"),
    (Static(2.0), CoopTypeError, "h valid_items must be a signed integer of at most 64 bits or an unsigned integer "
                                 "of at most 32 bits; got float"),
    (Runtime("uint64"), CoopTypeError, "h valid_items must be a signed integer of at most 64 bits or an unsigned "
                                       "integer of at most 32 bits; got uint64"),
    (Runtime("bool"), CoopTypeError, "h valid_items must be a signed integer of at most 64 bits or an unsigned "
                                     "integer of at most 32 bits; got bool"),
])
def test_valid_items_errors(valid_items, cls, message):
    with pytest.raises(cls) as info:
        plan_histogram(_shape(valid_items=valid_items), HistogramOptions(bins=64))
    assert str(info.value) == message
