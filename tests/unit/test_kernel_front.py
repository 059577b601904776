"""The kernel front every backend drives (``cuda.coop._calls.front``) and the namespace rule of the backend context,
with no compiler: R11, the dtype gates (P1 before and after inference, P2), R9 for an operation no family plans, and
the steps of a call in order."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from cuda import coop
from cuda.coop._backend_context import BackendContext, active
from cuda.coop._calls import FAMILIES, Family, front

CONTEXT = BackendContext("toy", "cuda.coop.toy")


@dataclass
class Call:
    op: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    qualified: bool = False


def test_r11_is_the_backend_contexts_rule():
    assert CONTEXT.foreign_call("cuda.coop", "scan") is None
    assert CONTEXT.foreign_call("cuda.coop.toy", "scan") is None
    error = CONTEXT.foreign_call("cuda.coop.other", "scan")
    assert isinstance(error, coop.CoopTypeError)
    assert str(error) == ("cuda.coop.other.scan belongs to cuda.coop.other; this kernel is compiled by toy: use "
                          "cuda.coop.scan or cuda.coop.toy.scan")


def test_p1_gates_common_calls_only():
    common, qualified = Call("load", "cuda.coop.load"), Call("load", "cuda.coop.toy.load", qualified=True)
    with active(CONTEXT):
        with pytest.raises(coop.CoopTypeError, match=r"^cuda\.coop\.load supports output dtypes int8, .*, float64 "
                                                     r"through the common API; use cuda\.coop\.toy for float16$"):
            front.gate_common_dtypes(common, [("src", "int32"), ("output", "float16")])
        front.gate_common_dtypes(qualified, [("output", "float16")])
        front.gate_common_dtypes(common, [("output", None), ("output", "bool"), ("output", "complex64")])
        # before inference: P1, and P2 for a dtype no namespace builds
        with pytest.raises(coop.CoopTypeError, match=r"through the common API; use cuda\.coop\.toy for float16$"):
            front.check_operand_dtypes(common, [("src", "float16")])
        front.check_operand_dtypes(qualified, [("src", "float16")])
        with pytest.raises(coop.CoopTypeError, match=r"^cuda\.coop\.toy\.load does not support src dtype complex64; "):
            front.check_operand_dtypes(qualified, [("src", "complex64")])


def test_r9_for_an_operation_no_family_plans():
    assert front.family_of(Call("scan", "cuda.coop.scan"), "toy") is FAMILIES["scan"]
    with pytest.raises(coop.CoopUnsupportedError, match=r"^cuda\.coop\.toy\.frobnicate is not implemented by the toy "
                                                        r"backend in cuda-coop "):
        front.family_of(Call("frobnicate", "cuda.coop.toy.frobnicate"), "toy")


def test_the_steps_of_a_call_run_the_familys_own_in_order():
    seen: list[str] = []
    family = Family("toy", plan=lambda ctx, call: seen.append("plan"),
                    evidence=lambda ctx, call: seen.append("evidence"),
                    result_payload=lambda ctx, call: seen.append("result") or "payload")
    call = Call("load", "cuda.coop.load")
    front.evidence(None, call, family)  # type: ignore[arg-type]
    assert front.result(None, call, family) == "payload"  # type: ignore[arg-type]
    with active(CONTEXT):
        with pytest.raises(coop.CoopTypeError, match="through the common API"):
            front.plan(None, call, family, [("output", "float16")])  # type: ignore[arg-type]
        front.plan(None, call, family, [("output", "int32")])  # type: ignore[arg-type]
    assert seen == ["evidence", "result", "plan"]
    bare = Family("bare", plan=lambda ctx, call: None)
    front.evidence(None, call, bare)  # type: ignore[arg-type]
    assert front.result(None, call, bare) is None  # type: ignore[arg-type]
