"""The call layer's binding of a call's operands to its provider's C parameters (issue 20): the emitter lists each
parameter once (``CParam``); the signature and the backend's call both come from that list."""
from __future__ import annotations

import pytest

from cuda.coop._calls.site import Operands, bind
from cuda.coop._cub.provider import SCRATCH_PARAMS, Abi, CParam, Provider, c_signature
from cuda.coop._semantics.common import Runtime, Static

PARAMS = [CParam(Abi.PTR, "const int*", "items"), CParam(Abi.PTR, "int*", "output"),
          CParam(Abi.ELEM, "int", "initial"), CParam(Abi.I64, "long long", "valid_items"),
          CParam(Abi.OUT, "float*", "extra", "float32"), *SCRATCH_PARAMS]


def _provider() -> Provider:
    body = f'extern "C" __device__ void @SYM@({c_signature(PARAMS)}) {{}}\n'
    return Provider.make("test", (), body, None, PARAMS)


def test_the_signature_renders_the_parameters_in_order():
    provider = _provider()
    assert (f"void {provider.symbol}(const int* items, int* output, int initial, long long valid_items, "
            "float* extra, char* scratch, unsigned long long stride)") in provider.body
    assert provider.params == tuple(PARAMS)


def test_operands_and_constants_bind_by_name_in_the_providers_order():
    operands = Operands()
    operands.add("output", "result")  # added out of order: the C order wins
    operands.add("items", "input")
    assert operands.control("valid_items", Runtime("int32"), "count", None) == 2
    assert operands.control("initial", Static(5), "unused", 5) is None
    params = operands.params(_provider())
    assert [(p.abi.value, p.operand, p.value, p.dtype) for p in params] == [
        ("ptr", 1, 0, None), ("ptr", 0, 0, None), ("elem", None, 5, None), ("i64", 2, 0, None),
        ("out", None, 0, "float32"), ("scratch", None, 0, None), ("stride", None, 0, None)]
    assert operands.values == ["result", "input", "count"]


def test_a_parameter_bound_to_nothing_or_a_name_the_provider_lacks_is_a_bug():
    with pytest.raises(AssertionError, match="initial is bound to nothing"):
        bind(_provider(), {"items": 0, "output": 1, "valid_items": 2})
    with pytest.raises(AssertionError, match="no C parameter \\['valid'\\]"):
        bind(_provider(), {"items": 0, "output": 1, "valid": 2}, {"initial": 0, "valid_items": 0})
