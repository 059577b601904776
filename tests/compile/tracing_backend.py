"""A second backend built from the backend contract alone, for the tests: a tracer, as the CuTe DSL is.

It executes a kernel's Python with the markers dispatching to it (``_backend_context``), implements the call
layer's ``CallContext`` over plain Python values, plans every call with the shared family modules
(``cuda.coop._calls``), and builds the kernel's C++ with the shared build session (``_calls.build``): NVRTC, scratch
sizes, reuse barriers and the scratch layout. It emits nothing for a compiler and imports nothing of
``cuda.coop.numba_mlir``: what it cannot do without editing that package, the contract is missing.

``python tests/compile/tracing_backend.py`` traces the sample kernel and prints what it planned and built as JSON.
"""
from __future__ import annotations

import inspect
import json
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cuda import coop
from cuda.coop._backend_context import BackendContext, MarkerCall, active
from cuda.coop._calls import front
from cuda.coop._cub.provider import Abi
from cuda.coop._calls.build import (
    PlannedCall,
    compile_calls,
    drop_unneeded_reuse_barriers,
    place_scratch,
    scratch_use,
)
from cuda.coop._calls.site import Emission, SiteCall
from cuda.coop._cub.provider import REUSE_MARK
from cuda.coop._errors import CoopTypeError
from cuda.coop._calls.objects import FACTORIES, bind_constructor, factory_group, temp_storage, thread_data
from cuda.coop._semantics.common import LaunchShape, Runtime, Static

BACKEND, NAMESPACE, TAG = "toy tracer", "tests.toy_coop", "toy"


@dataclass(eq=False)
class Payload:
    items_per_thread: int
    dtype: str
    explicit: bool = True
    array: Any = None

    def root(self) -> "Payload":
        return self


@dataclass(frozen=True)
class PayloadPair:
    items: tuple[Payload, ...]
    scalars: tuple[int, ...] = ()  # the places of scalar results (the call's out parameters) among the payloads
    inner: int = 0  # the first results form a tuple of their own: ``((a, b), count)``


@dataclass(eq=False)
class Group:
    spec: Any


@dataclass(eq=False)
class Storage:
    descriptor: Any


@dataclass(frozen=True)
class GlobalArray:
    """A 1-D global array argument of the kernel (its dtype is known while tracing)."""

    dtype: str


@dataclass(frozen=True)
class RuntimeValue:
    """A value only known when the kernel runs: a kernel argument, or a call's scalar result."""

    dtype: str = "int32"


@dataclass
class Call:
    op: str
    name: str
    args: dict[str, Any]
    qualified: bool = False
    result: Any = None


@dataclass
class Planned(PlannedCall):
    operands: list[Any] = field(default_factory=list)
    call: str = ""


class Tracer:
    """The tracer and the ``CallContext`` of one kernel specialisation."""

    compiler = "the toy tracer"
    dtype_words = "a NumPy scalar type"

    def __init__(self, block: tuple[int, int, int]):
        self.launch = LaunchShape(block)
        self.cc = 90
        self.planned: list[Planned] = []
        self.descriptors: list[Any] = []

    # the tracer side: every marker executed while tracing arrives here
    def call(self, marker_call: MarkerCall) -> Any:
        name, args, kwargs = marker_call.name, marker_call.args, marker_call.kwargs
        if name in FACTORIES:
            return Group(factory_group(name, self.launch))
        if name in ("ThreadData", "TempStorage"):  # bound to the documented signature, checked by the call layer
            values = bind_constructor(f"{NAMESPACE}.{name}", getattr(coop, name), args, kwargs, namespace=NAMESPACE,
                                      backend=BACKEND)
            if name == "ThreadData":
                spec = thread_data(values, dtype_of_object=self.dtype_of_object, dtype_words=self.dtype_words)
                assert spec.dtype is not None, "the toy tracer infers no dtypes"
                return Payload(spec.items_per_thread, spec.dtype)
            descriptor = temp_storage(len(self.descriptors), values)
            self.descriptors.append(descriptor)
            return Storage(descriptor)
        marker = getattr(coop, name)
        bound = inspect.signature(marker).bind(*args, **kwargs)
        call = Call(name, f"{NAMESPACE}.{name}", dict(bound.arguments))
        family = front.family_of(call, BACKEND)  # the kernel front's steps: result, then plan (its dtypes are known)
        call.result = front.result(self, call, family)
        front.plan(self, call, family, ((param, value.dtype) for param, value in call.args.items()
                                        if isinstance(value, Payload)))
        if isinstance(call.result, PayloadPair):  # (keys, values); a broadcast's scalars at their places
            payloads = iter(call.result.items)
            outs = iter(RuntimeValue(p.dtype) for p in self.planned[-1].site.params if p.abi is Abi.OUT)
            size = len(call.result.items) + len(call.result.scalars)
            flat = [next(outs) if place in call.result.scalars else next(payloads) for place in range(size)]
            inner = call.result.inner
            return (tuple(flat[:inner]), *flat[inner:]) if inner else tuple(flat)
        if call.result is None and self.planned[-1].site.result_dtype is not None:
            return RuntimeValue(self.planned[-1].site.result_dtype)  # a scalar result
        return call.result

    def finish(self, kernel: str) -> dict[str, Any]:
        """What a trace-finalize hook does: the shared build sequence."""
        scratch_at = [i for i, p in enumerate(self.planned) if p.scratch is not None]
        drop_unneeded_reuse_barriers(self.planned, lambda p: self.planned.index(p) < max(scratch_at))
        built = compile_calls(self.planned, kernel, self.cc, TAG)
        plan, backing = place_scratch(self.planned, kernel, self.cc, descriptors=self.descriptors)
        assert built is not None
        return {
            "source": built.source,
            "ltoir_bytes": len(built.ltoir),
            "scratch_table": sorted(built.scratch),
            "scratch_bytes": plan.size,
            "backing": None if backing is None else [backing.size, backing.alignment, backing.dynamic],
            "calls": [{"call": p.call, "symbol": p.site.symbol, "params": [param.abi.value for param in p.site.params],
                       "operands": [_describe(o) for o in p.operands], "offset": p.site.scratch_offset,
                       "scratch": None if p.scratch is None else [p.scratch.need.size, p.scratch.need.alignment],
                       "reuse_barrier": REUSE_MARK in p.provider.body} for p in self.planned],
        }

    # the CallContext side
    def group(self, call: Call) -> Group:
        group = call.args["group"]
        if not isinstance(group, Group):
            raise CoopTypeError(f"{call.name} requires a group")
        return group

    def tuple_operands(self, operand: Any) -> list[Any] | None:
        return list(operand) if isinstance(operand, tuple) else None

    def payload(self, operand: Any) -> Payload | None:
        return operand if isinstance(operand, Payload) else None

    def require_payload(self, call: Call, param: str) -> Payload:
        payload = self.payload(call.args[param])
        if payload is None:
            raise CoopTypeError(f"{call.name} {param} must be a ThreadData payload; got a scalar")
        return payload

    def operand_form(self, operand: Any) -> str | None:
        return "array" if isinstance(operand, GlobalArray) else None

    def scalar_dtype(self, operand: Any, call: Call, param: str, through: tuple[str, ...] = ()) -> str:
        if isinstance(operand, (np.generic, RuntimeValue)):
            return np.dtype(operand.dtype).name
        raise CoopTypeError(f"could not infer the dtype of {call.name} {param}")

    def array_dtype(self, operand: Any) -> str | None:
        return operand.dtype if isinstance(operand, GlobalArray) else None

    def descriptor(self, operand: Any, name: str) -> Storage | None:
        return operand if isinstance(operand, Storage) else None

    def control(self, call: Call, key: str) -> Any:
        return self.operand_control(call.args.get(key))

    def operand_control(self, value: Any) -> Any:
        if value is None:
            return None
        return Runtime(value.dtype) if isinstance(value, RuntimeValue) else Static(value)

    def static(self, call: Call, key: str, default: Any, kind: str = "value") -> Any:
        value = call.args.get(key, default)
        if isinstance(value, RuntimeValue):
            raise CoopTypeError(f"{call.name} {key} must be a compile-time {kind}")
        return value

    def selector(self, call: Call, key: str, default: str) -> Any:
        return self.static(call, key, default, kind="string")

    def dtype_of_object(self, value: Any) -> str | None:
        try:
            return np.dtype(value).name
        except TypeError:
            return None

    def holds_by_value(self, dtype: str) -> bool:
        return True

    def result_operand(self, call: Call) -> Any:
        return call.result

    def result_name(self, call: Call) -> str:
        return f"the result of {call.name}"

    def new_result_payload(self, call: Call, items_per_thread: int, like: Payload | None,
                           dtype: str | None = None) -> Payload:
        return Payload(items_per_thread, dtype or like.dtype, explicit=dtype is not None)

    def new_result_payloads(self, call: Call, likes: list[Payload | None],
                            names: tuple[str, ...] = ("keys", "values"), inner: int = 0) -> PayloadPair:
        items, scalars = [], []
        for place, like in enumerate(likes):
            if like is None:  # a scalar result at this place
                scalars.append(place)
                continue
            payload = Payload(like.items_per_thread, like.dtype)
            payload.array = payload  # each result of the pair is filled through itself
            items.append(payload)
        return PayloadPair(tuple(items), tuple(scalars), inner)

    def payload_tuple(self, call: Call) -> PayloadPair:
        return call.result

    def add_evidence(self, payload: Payload, dtype: str | None, call: Call, param: str) -> None:
        pass  # every payload of this tracer has its dtype from the start

    def follow_dtype(self, output: Payload, source: Payload, call: Call, param: str) -> None:
        pass

    def link_operator(self, spec: Any, dtype: str, name: str, param: str, *, arity: int = 2, result: str | None = None,
                      state_dtype: str | None = None, extra: tuple[str, ...] = ()) -> list[Any]:
        if spec is not None and not getattr(spec, "builtin", True):
            raise CoopTypeError(f"{name} {param}: the toy tracer compiles no user callables")
        return []

    def add_site(self, call: Call, operands: list[Any], site: SiteCall, emission: Emission,
                 scratch: tuple[Any, Any] | None = None) -> None:
        use = None
        if scratch is not None:
            group, desc = scratch
            use = scratch_use(len(self.planned), group, desc.descriptor if desc else None, call.name)
        self.planned.append(Planned(site=site, provider=emission.provider, scratch=use, operands=operands,
                                    call=call.op, without_reuse_barrier=emission.without_reuse_barrier))


def _describe(operand: Any) -> str:
    if isinstance(operand, Payload):
        return f"payload {operand.items_per_thread}x{operand.dtype}"
    if isinstance(operand, GlobalArray):
        return f"array of {operand.dtype}"
    if isinstance(operand, RuntimeValue):
        return f"runtime {operand.dtype}"
    return type(operand).__name__


def sample_kernel(source: Any, destination: Any, count: Any) -> None:
    """The kernel traced, and compiled as it is by numba-cuda-mlir in test_tracing_backend_compile.py: one call of
    most families on a 128-thread block, 4 int32 items per thread. The last call with scratch is compiler-owned, so
    the build drops its reuse barrier; the TempStorage with auto_sync keeps its own."""
    block = coop.this_block()
    items = coop.ThreadData(4, np.int32)
    coop.load(block, source, items, algorithm="transpose")
    prefix = coop.exclusive_sum(block, items)
    total = coop.sum(block, np.int32(3), valid_items=count)  # a scalar per thread, the first count of them
    keys = coop.radix_sort_keys(block, prefix)
    values = coop.ThreadData(4, np.int32)
    keys, values = coop.merge_sort_pairs(block, keys, values)
    counts = coop.histogram(block, keys, bins=256, bins_per_thread=2)
    storage = coop.TempStorage(auto_sync=True)
    deltas = coop.adjacent_difference(block, counts, temp_storage=storage)
    striped = coop.exchange(block, deltas, mode="blocked_to_striped")
    coop.store(block, destination, striped, valid_items=total)


def trace() -> dict[str, Any]:
    tracer = Tracer((128, 1, 1))
    with active(BackendContext(BACKEND, NAMESPACE, tracer)):
        sample_kernel(GlobalArray("int32"), GlobalArray("int32"), RuntimeValue("int32"))
    report = tracer.finish("toy_sample_kernel")
    report["compiler_modules"] = sorted(m for m in sys.modules
                                        if m.split(".")[0] in ("numba", "numba_cuda_mlir")
                                        or m.startswith("cuda.coop.numba_mlir"))
    return report


if __name__ == "__main__":
    print(json.dumps(trace()))
