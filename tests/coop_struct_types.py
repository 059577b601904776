"""Struct-model types registered the way a numba-cuda-mlir user registers them (its extension API with a struct data
model), for the aggregate tests of SPEC 9.2. Not a test module itself.

``Interval(lo, hi)``: two float32 (8 bytes, aligned to 4). ``Tagged(key, tag, flag)``: int64, int8 and bool, which
LLVM lays out in 16 bytes aligned to 8 (padding after the byte fields), so a wrong size or alignment shows.
"""
from __future__ import annotations

from numba_cuda_mlir import cuda, extending, types
from numba_cuda_mlir.models import StructModel

import cuda.coop.numba_mlir as numba_coop


def _struct_type(name, fields):
    """A Python class, its numba type (one instance) with a StructModel, attributes and a positional constructor."""
    pyclass = type(name, (), {"__init__": lambda self, *values: None})
    numba_class = type(f"{name}Type", (types.Type,), {"__init__": lambda self: types.Type.__init__(self, name=name)})
    instance = numba_class()

    @extending.register_model(numba_class)
    class Model(StructModel):
        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type, list(fields))

    for field, _ in fields:
        extending.make_attribute_wrapper(numba_class, field, field)

    @extending.type_callable(pyclass)
    def _typer(context):
        def typer(*args):
            if tuple(args) == tuple(ty for _, ty in fields):
                return instance
        return typer

    @extending.lower_builtin(pyclass, *[ty for _, ty in fields])
    def _construct(builder, target, args, kwargs):
        from numba_cuda_mlir._mlir.dialects import llvm

        value = llvm.UndefOp(builder.get_mlir_type(instance)).result
        for position, arg in enumerate(args):
            value = llvm.insertvalue(value, builder.load_var(arg), [position])
        builder.store_var(target, value)

    return pyclass, instance


Interval, interval_type = _struct_type("Interval", [("lo", types.float32), ("hi", types.float32)])
Tagged, tagged_type = _struct_type("Tagged", [("key", types.int64), ("tag", types.int8), ("flag", types.boolean)])


# The callables the aggregate tests pass (compile and GPU tests share them).
def hull(a, b):
    return Interval(min(a.lo, b.lo), max(a.hi, b.hi))


@cuda.jit(device=True)
def hull_device(a, b):
    return Interval(min(a.lo, b.lo), max(a.hi, b.hi))


def larger_key(a, b):
    return a if a.key >= b.key else b


def running_hull(state, block_aggregate):
    old = state[0]
    state[0] = hull_device(old, block_aggregate)
    return old


RUNNING_HULL = numba_coop.StatefulFunction(running_hull, interval_type)
