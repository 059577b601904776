"""After CuTe traces a launcher: build its kernels' calls, place their scratch, and link the kernel with the C++.

The trace-finalize hook runs the shared build session (``_calls.build``) for every kernel of the module that made
cuda.coop calls: one NVRTC program for all of them, the reuse barriers a later call needs, and the scratch layout,
placed through the DSL's shared-memory allocator. It marks the module with the key of that program's LTO-IR, so
the module's hash (CuTe's cache key) changes with the C++. The link step then receives the kernel's relocatable
PTX and links it with that LTO-IR through nvJitLink (docs: cutlass, "How it works").
"""
from __future__ import annotations

import hashlib
import re
import threading
from typing import Any

from .._calls.build import compile_calls, drop_unneeded_reuse_barriers, place_scratch
from .._cub.link import link_ptx
from .._errors import CoopBuildError
from . import _about, _dsl
from ._compile import record_link
from ._tracer import KernelTracer, Planned, take_tracers

KEPT_PROGRAMS = 64
_ltoirs: dict[str, bytes] = {}
_sources: dict[str, str] = {}
_lock = threading.Lock()


def finish_trace(dsl: Any, module: Any, function_name: str) -> None:
    """The trace-finalize hook: a no-op for a trace without cuda.coop calls."""
    kernels = list(_dsl.kernels_of(module))
    tracers = [t for t in take_tracers([_dsl.kernel_name(k) for k in kernels]) if t.plan.planned]
    if not tracers:
        return
    for tracer in tracers:
        _drop_reuse_barriers(tracer)
    calls = [planned for tracer in tracers for planned in tracer.plan.planned]
    label = " and ".join(t.name for t in tracers)
    built = compile_calls(calls, label, tracers[0].cc, _about.BUILD_TAG)
    assert built is not None
    for tracer in tracers:
        _place_scratch(tracer)
    key = hashlib.sha256(built.ltoir).hexdigest()[:32]
    with _lock:  # the most recent programs, by content (a trace and its compile are near each other)
        for table, value in ((_ltoirs, built.ltoir), (_sources, built.source)):
            table.pop(key, None)
            table[key] = value  # type: ignore[index]
            while len(table) > KEPT_PROGRAMS:
                table.pop(next(iter(table)))
    for gpu_module in {id(t.gpu_module): t.gpu_module for t in tracers}.values():
        _dsl.mark_link(gpu_module, key)


def _drop_reuse_barriers(tracer: KernelTracer) -> None:
    planned = tracer.plan.planned
    position = {id(p): i for i, p in enumerate(planned)}
    last = max((i for i, p in enumerate(planned) if p.scratch is not None), default=-1)

    def followed(call: Planned) -> bool:  # trace order is program order, except in a loop
        return call.in_loop or position[id(call)] < last

    emitted = [p.site.symbol for p in planned]
    drop_unneeded_reuse_barriers(planned, followed)
    for call, symbol in zip(planned, emitted):
        if call.site.symbol != symbol:
            _dsl.retarget(call.call_op, call.site.symbol)


def _place_scratch(tracer: KernelTracer) -> None:
    _plan, backing = place_scratch(tracer.plan.planned, tracer.name, tracer.cc, descriptors=tracer.plan.descriptors)
    if backing is None:
        return
    base = _dsl.shared_backing(tracer.kernel, backing.size, backing.alignment)
    for call in tracer.plan.planned:
        if call.scratch_operand is not None:
            call.call_op.operands[call.scratch_operand] = _dsl.offset_pointer(base, call.site.scratch_offset,
                                                                              base.owner)
        if call.stride_operand is not None:
            call.call_op.operands[call.stride_operand] = _dsl.constant_i64(call.site.stride, base.owner)


_TARGET_RE = re.compile(r"^\s*\.target\s+(sm_\w+)", re.MULTILINE)


def link(ptx: str, keys: list[str]) -> bytes:
    """The cubin of a module's kernels: their PTX linked with the LTO-IR its trace built."""
    with _lock:
        missing = [key for key in keys if key not in _ltoirs]
        ltoirs = [_ltoirs[key] for key in dict.fromkeys(keys) if key in _ltoirs]
    if missing:
        raise CoopBuildError("cuda.coop lost the C++ of a traced CuTe kernel before it was linked; trace it again")
    found = _TARGET_RE.search(ptx)
    arch = found.group(1) if found else "sm_90a"
    cubin = link_ptx(ptx, ltoirs, arch, "a CuTe kernel with cuda.coop calls")
    record_link(cubin, "\n".join(_sources.get(key, "") for key in dict.fromkeys(keys)))
    return cubin
