"""After CuTe traces a launcher: build its kernels' calls, place their scratch, and give the C++ to the kernel.

The trace-finalize hook runs the shared build session (``_calls.build``) for every kernel of the module that made
cuda.coop calls: one translation unit for all of them, compiled once, which gives the scratch sizes; the reuse
barriers a later call needs; and the scratch layout, placed through the DSL's shared-memory allocator. Then one of two
routes (docs: cutlass, "How it works"):

* **bitcode** (the default): the ziglang wheel's clang compiles the C++ to LLVM bitcode, which the DSL links into the
  kernel's module and inlines (``_cub.bitcode``); the scratch sizes are read from that bitcode, so no NVRTC program
  runs. Payloads cross by pointer, which inlining removes.
* **link** (without ziglang, or when clang fails on a kernel): NVRTC compiles the C++ (scratch sizes, and the build
  errors in words) and the kernel is compiled as relocatable PTX and linked with the program's LTO-IR through
  nvJitLink; each call stays a call, payloads cross by value (``_cub.by_value``).

Either way the module is marked with what it links, so its hash (CuTe's cache key) follows the C++.
"""
from __future__ import annotations

import hashlib
import re
import threading
from typing import Any

from .._calls.build import (
    compile_calls,
    drop_unneeded_reuse_barriers,
    place_scratch,
    scratch_symbols,
    use_scratch_sizes,
)
from .._cub import bitcode
from .._cub.link import link_ptx
from .._cub.provider import translation_unit
from .._errors import CoopBuildError, CoopError, located
from . import _about, _dsl
from ._compile import record_link, record_scratch, record_source
from ._route import clang_lookup, warn_link_route
from ._context import KernelTracer, take_tracers
from ._emit import Planned

KEPT_PROGRAMS = 64
_ltoirs: dict[str, bytes] = {}
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
    label = " and ".join(t.python_name or t.name for t in tracers)
    source = translation_unit([call.provider for call in calls], _about.ABI)
    try:
        attached, clang_failure = _bitcode(source, scratch_symbols(calls))
    except CoopError as exc:  # a configuration error (CUDA_COOP_*): at the first call, as on numba-cuda-mlir
        raise located(exc, calls[0].where) from None
    built = None
    if attached is not None and attached.scratch is not None:
        use_scratch_sizes(calls, attached.scratch)
    else:  # NVRTC: the link route's LTO-IR, the scratch sizes the bitcode did not show, or clang's error in words
        try:
            built = compile_calls(calls, label, tracers[0].cc, _about.BUILD_TAG)
        except CoopError as exc:  # at the first call, as the numba-cuda-mlir backend reports it
            raise located(exc, calls[0].where) from None
        assert built is not None and built.source == source
    for tracer in tracers:
        try:
            _place_scratch(tracer)
        except CoopError as exc:  # S6-S8: at the kernel's first call that uses scratch
            first = next((call for call in tracer.plan.planned if call.scratch is not None), tracer.plan.planned[0])
            raise located(exc, first.where) from None
    record_source(source)
    modules = {id(t.gpu_module): t.gpu_module for t in tracers}.values()
    if attached is not None:
        for gpu_module in modules:
            _dsl.attach_bitcode(gpu_module, str(attached.path))
        return
    if clang_failure is not None:
        warn_link_route(f"clang could not build the calls of {label} ({clang_failure}); report it with the source "
                        f"(CUDA_COOP_SOURCE_DUMP_DIR)")
    else:
        warn_link_route(clang_lookup().reason)
    assert built is not None
    key = hashlib.sha256(built.ltoir).hexdigest()[:32]
    with _lock:  # the most recent programs, by content (a trace and its compile are near each other)
        _ltoirs.pop(key, None)
        _ltoirs[key] = built.ltoir
        while len(_ltoirs) > KEPT_PROGRAMS:
            _ltoirs.pop(next(iter(_ltoirs)))
    for gpu_module in modules:
        _dsl.mark_link(gpu_module, key)


def _bitcode(source: str, symbols: frozenset[str]) -> tuple[bitcode.Bitcode | None, str | None]:
    """The bitcode route's build of ``source`` (None on the link route), or the first line of clang's failure."""
    clang = clang_lookup().clang
    if clang is None:
        return None, None
    try:
        return bitcode.build(clang, source, _dsl.target_arch(), symbols, backend=_about.BUILD_TAG), None
    except CoopBuildError as exc:
        return None, str(exc).splitlines()[0]


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
    _plan, backing = place_scratch(tracer.plan.planned, tracer.python_name or tracer.name, tracer.cc,
                                   descriptors=tracer.plan.descriptors)
    if backing is None:
        return
    record_scratch(tracer.name, backing.size)
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
    record_link(cubin)
    return cubin
