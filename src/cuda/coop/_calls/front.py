"""The kernel front every backend drives: the rules of one operation call that are the kernel's rather than a
family's, in the order the families expect them (docs: errors, "Reading a message").

* The dtype gates: ``check_operand_dtypes`` before inference (P1/P2 of what the kernel declared: an explicit
  ThreadData dtype, an array operand's element type) and ``gate_common_dtypes`` after it (P1 of every operand:
  float16 and aggregates are the qualified namespaces').
* The steps of a call (``family_of``, then ``evidence`` -> ``result`` -> ``plan``): a backend that reads the whole
  kernel first (numba-cuda-mlir) runs every call's ``evidence`` before inference, makes each call's fresh result where
  the call is, and plans the calls in order; a tracer (the CuTe DSL) runs the three as each call executes.

A call's namespace (R11) is the backend context's rule (``_backend_context.BackendContext.foreign_call``), checked as
a tracer's markers execute and by a backend reading IR where it finds them. The kernel's objects (ThreadData,
TempStorage, groups and their queries) are made by ``objects``. The backend reads and writes its compiler's values:
the operands, their dtypes, the IR or trace it emits into.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._errors import CoopUnsupportedError
from .._semantics.common import GroupSpec, LaunchShape, check_payload_dtype, require_common_dtype
from .._semantics.groups import require_cluster_target, require_operation_group
from .._semantics.reduce import require_reduce_group
from .._version import __version__
from . import FAMILIES, Family
from .context import C, P, Call, CallContext

#: (parameter, dtype) of a call's operands, as the backend reads them; None: not a typed operand, or not known yet
OperandDtypes = Iterable[tuple[str, "str | None"]]


def check_operand_dtypes(call: Call, dtypes: OperandDtypes) -> None:
    """P1/P2 of the dtypes the kernel declared for the call's operands, before any inference."""
    for param, dtype in dtypes:
        check_payload_dtype(call.name, param, dtype, call.qualified)


def gate_common_dtypes(call: Call, dtypes: OperandDtypes) -> None:
    """P1 of every operand once dtypes are known: families accept every dtype they can build, so a common call is gated
    here (docs: operations/index, "Dtypes")."""
    for param, dtype in dtypes:
        require_common_dtype(call.name, param, dtype, call.qualified)


def family_of(call: Call, backend: str) -> Family:
    """The call layer's family of ``call`` (R9 when none plans it)."""
    family = FAMILIES.get(call.op)
    if family is None:
        raise CoopUnsupportedError(f"{call.name} is not implemented by the {backend} backend in cuda-coop "
                                   f"{__version__}")
    return family


def evidence(ctx: CallContext[C, P], call: C, family: Family) -> None:
    """What ``call`` says about its payloads' dtypes (docs: concepts, "ThreadData payloads")."""
    if family.evidence is not None:
        family.evidence(ctx, call)


def result(ctx: CallContext[C, P], call: C, family: Family) -> Any:
    """The fresh payload (or tuple of payloads) ``call`` returns; None when it returns none."""
    return family.result_payload(ctx, call) if family.result_payload is not None else None


def check_group(op: str, name: str, group: GroupSpec, launch: LaunchShape, cc: int) -> None:
    """The call's group before anything about its arguments (SPEC 10.1's order): G20 (a cluster needs sm_90), then
    the kinds and widths the operation takes (G3, G4, G15; reduce and sum by their own, richer rule)."""
    require_cluster_target(group, cc)
    if op in ("reduce", "sum"):
        require_reduce_group(name, group, launch)
    else:
        require_operation_group(op, name, group)


def plan(ctx: CallContext[C, P], call: C, family: Family, dtypes: OperandDtypes) -> None:
    """Plan ``call`` (it records its ``SiteCall`` through ``ctx.add_site``), after the P1 gate of ``dtypes``."""
    gate_common_dtypes(call, dtypes)
    family.plan(ctx, call)
