"""The backend contract (issue 20): a backend that executes the kernel's Python (a tracer, as the CuTe DSL is) receives
every common call through the current backend context, without anything of numba_mlir/; R1 without one, R11 for
another backend's qualified call; the backend-free layers' messages name the current backend's namespace; the
registry serves ``register`` and automatic registration for any backend."""
from __future__ import annotations

import inspect
import sys
import types

import pytest

from cuda import coop
from cuda.coop import _backends
from cuda.coop._backend_context import BackendContext, MarkerCall, active, current
from cuda.coop._markers.base import OP_ATTR
from cuda.coop._markers.records import qualified
from cuda.coop._semantics.common import check_payload_dtype

RECORDER = "tests.recorder_coop"  # the qualified namespace of the test backend


class Recorder:
    """A tracer with no compiler: it records each call and returns a token for it."""

    def __init__(self):
        self.calls: list[MarkerCall] = []

    def call(self, call: MarkerCall) -> object:
        self.calls.append(call)
        return ("result of", call.name)


def _common_markers() -> list[str]:
    return [name for name in coop.__all__ if hasattr(getattr(coop, name), OP_ATTR)]


def _sample_arguments(marker) -> tuple[tuple, dict]:
    """One positional object per required parameter (positional ones in order, keyword-only ones by name)."""
    args, kwargs = [], {}
    for parameter in inspect.signature(marker).parameters.values():
        if parameter.default is not inspect.Parameter.empty or parameter.kind in (parameter.VAR_POSITIONAL,
                                                                                  parameter.VAR_KEYWORD):
            continue
        if parameter.kind == parameter.KEYWORD_ONLY:
            kwargs[parameter.name] = f"<{parameter.name}>"
        else:
            args.append(f"<{parameter.name}>")
    return tuple(args), kwargs


def test_every_common_call_reaches_the_tracer_with_its_arguments_and_call_site():
    names = _common_markers()
    assert {"ThreadData", "TempStorage", "this_block", "load", "radix_sort_pairs",
            "run_length_decode_into"} <= set(names)
    recorder = Recorder()
    with active(BackendContext("recorder", RECORDER, recorder)):
        for name in names:
            args, kwargs = _sample_arguments(getattr(coop, name))
            line = inspect.currentframe().f_lineno + 1
            result = getattr(coop, name)(*args, **kwargs)
            assert result == ("result of", name)
            call = recorder.calls[-1]
            assert (call.name, call.namespace, call.qualified) == (name, "cuda.coop", False)
            assert call.site == (__file__, line)
            if name not in ("ThreadData", "TempStorage"):  # constructors pass their defaults on by keyword
                assert (call.args, call.kwargs) == (args, kwargs)
    assert [call.name for call in recorder.calls] == names
    assert current() is None  # the context ends with the trace


def test_constructors_pass_the_call_as_written_and_document_their_signature():
    """A constructor hands the tracer the arguments as written (it binds them to the documented signature, so that a
    mistake is C5 as in any call, on every backend); the signature is the documented one."""
    recorder = Recorder()
    with active(BackendContext("recorder", RECORDER, recorder)):
        coop.ThreadData(8, "int32", alignment=16)
        coop.TempStorage(1024, auto_sync=True)
        coop.TempStorage(1024, 16)  # a mistake the tracer reports
    items, scratch, wrong = recorder.calls
    assert (items.args, items.kwargs) == ((8, "int32"), {"alignment": 16})
    assert (scratch.args, scratch.kwargs) == ((1024,), {"auto_sync": True})
    assert (wrong.args, wrong.kwargs) == ((1024, 16), {})
    assert str(inspect.signature(coop.ThreadData)) == "(items_per_thread: 'int', dtype: 'Any' = None, *, " \
        "alignment: 'int | None' = None) -> 'ThreadData'"
    assert str(inspect.signature(coop.TempStorage)) == "(size_in_bytes: 'int | None' = None, *, alignment: " \
        "'int | None' = None, auto_sync: 'bool' = False, sharing: 'str' = 'shared') -> 'TempStorage'"


def test_a_marker_outside_a_trace_is_r1():
    with pytest.raises(coop.CoopCompilerContextRequiredError, match=r"^cuda\.coop\.load must be called from a "
                                                                    r"supported GPU kernel\.$"):
        coop.load("<group>", "<source>", "<output>")
    with active(BackendContext("numba-like", "cuda.coop.compiled")):  # a backend that does not run the Python
        with pytest.raises(coop.CoopCompilerContextRequiredError, match=r"cuda\.coop\.ThreadData must be called"):
            coop.ThreadData(4)


def test_a_qualified_call_goes_to_its_own_backend_and_another_backends_is_r11():
    own = qualified(coop.load, RECORDER)
    other = qualified(coop.load, "cuda.coop.other_backend")
    recorder = Recorder()
    with active(BackendContext("recorder", RECORDER, recorder)):
        own("<group>", "<source>", "<output>", algorithm="transpose")
        with pytest.raises(coop.CoopTypeError) as error:
            other("<group>", "<source>", "<output>")
    call = recorder.calls[-1]
    assert (call.name, call.namespace, call.qualified, call.kwargs) == ("load", RECORDER, True,
                                                                        {"algorithm": "transpose"})
    # R11 names the line of the call
    assert str(error.value) == (f"{__file__}:{error.tb.tb_lineno}: cuda.coop.other_backend.load belongs to "
                                "cuda.coop.other_backend; this kernel is "
                                f"compiled by recorder: use cuda.coop.load or {RECORDER}.load")
    assert len(recorder.calls) == 1


def test_backend_free_messages_name_the_current_backends_namespace():
    with active(BackendContext("recorder", RECORDER)):
        with pytest.raises(coop.CoopTypeError, match=f"through the common API; use {RECORDER} for float16$"):
            check_payload_dtype("cuda.coop.load", "items", "float16", qualified=False)
    with pytest.raises(coop.CoopTypeError, match="use the backend's qualified namespace for float16$"):
        check_payload_dtype("cuda.coop.load", "items", "float16", qualified=False)


@pytest.fixture
def registry(monkeypatch):
    """The registry with a test backend whose qualified namespace is a module made here."""
    monkeypatch.setattr(_backends, "_registry", dict(_backends._registry))
    monkeypatch.setattr(_backends, "_entry_points_read", True)
    registered = []
    module = types.ModuleType(RECORDER)
    module._register_backend = lambda: registered.append(RECORDER)
    monkeypatch.setitem(sys.modules, RECORDER, module)
    backend = _backends.Backend(("recorder", "rec"), RECORDER, "recorder_compiler", "Install recorder")
    _backends.add_backend(backend)
    return backend, registered


def test_register_and_automatic_registration_serve_any_backend(registry, monkeypatch):
    backend, registered = registry
    coop.register("rec")
    assert registered == [RECORDER]
    assert backend in _backends.backends() and _backends.backends()[0].name == "numba-cuda-mlir"
    with pytest.raises(ValueError, match="expected 'numba-cuda-mlir' or 'numba_cuda_mlir' or 'cutlass' or 'cute' or "
                                         "'cutlass-dsl' or 'cutlass_dsl' or 'recorder' or 'rec'"):
        coop.register("nothing")
    monkeypatch.setenv("CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION", "0")
    monkeypatch.delitem(sys.modules, "numba_cuda_mlir", raising=False)  # only the test backend's compiler is there
    monkeypatch.setitem(sys.modules, "recorder_compiler", types.ModuleType("recorder_compiler"))
    _backends.auto_register()
    assert registered == [RECORDER, RECORDER]
    with pytest.raises(ValueError, match="'rec' is already taken"):
        _backends.add_backend(_backends.Backend(("rec",), "elsewhere", "other_compiler"))


def test_a_failing_backend_warns_and_leaves_the_others(registry, monkeypatch):
    backend, registered = registry

    def broken():
        raise ImportError("recorder_compiler 9.9 is not supported")

    sys.modules[RECORDER]._register_backend = broken
    other = types.ModuleType("tests.second_coop")
    other._register_backend = lambda: registered.append("second")
    monkeypatch.setitem(sys.modules, "tests.second_coop", other)
    _backends.add_backend(_backends.Backend(("second",), "tests.second_coop", "recorder_compiler"))
    monkeypatch.setenv("CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION", "0")
    monkeypatch.delitem(sys.modules, "numba_cuda_mlir", raising=False)
    monkeypatch.setitem(sys.modules, "recorder_compiler", types.ModuleType("recorder_compiler"))
    with pytest.warns(coop.CudaCoopAutoRegistrationWarning,
                      match=r"recorder unknown is imported but could not be registered \(recorder_compiler 9\.9 is "
                            r"not supported\); the cuda.coop import continued\. Install recorder or set"):
        _backends.auto_register()
    assert registered == ["second"]


def test_backends_named_by_entry_points_are_found_on_demand(monkeypatch):
    from importlib import metadata

    monkeypatch.setattr(_backends, "_registry", dict(_backends._registry))
    monkeypatch.setattr(_backends, "_entry_points_read", False)
    found = _backends.Backend(("plugin",), "tests.plugin_coop", "plugin_compiler")
    entry = types.SimpleNamespace(name="plugin", value="tests.plugin:BACKEND", load=lambda: found)
    monkeypatch.setattr(metadata, "entry_points", lambda group: [entry] if group == _backends.ENTRY_POINT_GROUP else [])
    registered = []
    module = types.ModuleType("tests.plugin_coop")
    module._register_backend = lambda: registered.append("plugin")
    monkeypatch.setitem(sys.modules, "tests.plugin_coop", module)
    coop.register("plugin")
    assert registered == ["plugin"]


def test_the_value_abi_is_the_backends_policy():
    """How float16, aggregates and predicate results cross to a backend's code is its own ValueAbi: the entry
    point's C ABI and the callables' calling convention follow the context; C++'s convention without one."""
    from cuda.coop._backend_context import ValueAbi
    from cuda.coop._cub.abi import c_abi_entry
    from cuda.coop._cub.families.operators import predicate_functor
    from cuda.coop._semantics.common import passes_by_pointer
    from cuda.coop._semantics.operators import resolve_predicate

    body = 'extern "C" __device__ __half cuda_coop_x_0(int n, __half v) { return v; }\n'
    assert c_abi_entry(body, ValueAbi()) == body  # halves by value: nothing to carry
    carried = c_abi_entry(body, ValueAbi(half_as_bits=True))
    assert 'extern "C" __device__ unsigned short cuda_coop_x_0(int n, unsigned short v)' in carried
    assert "__half_as_ushort(cuda_coop_x_0_typed(n, __ushort_as_half(v)))" in carried

    def before(a, b):
        return a < b

    assert not passes_by_pointer("float16")
    native = resolve_predicate("merge_sort_keys", "compare_op", before, "int32")
    assert 'extern "C" __device__ bool ' in predicate_functor(native, "int", "less")
    with active(BackendContext("byte", "tests.byte_coop", abi=ValueAbi(True, True, True))):
        assert passes_by_pointer("float16")
        byte = resolve_predicate("merge_sort_keys", "compare_op", before, "int32")
    assert 'extern "C" __device__ unsigned char ' in predicate_functor(byte, "int", "less")


def test_an_emitter_lacking_a_parameter_kind_is_refused_at_registration():
    from cuda.coop._calls.emitter import EMITTER_METHODS, check_emitter

    class Partial:
        def pointer(self, operand):
            return operand

    with pytest.raises(TypeError, match="Partial does not implement the cuda.coop Emitter protocol: it lacks "
                                        "extent, integer, scalar, result_slot, scratch, stride"):
        check_emitter(Partial)
    assert set(EMITTER_METHODS) == {name for name in dir(
        __import__("cuda.coop._calls.emitter", fromlist=["Emitter"]).Emitter) if not name.startswith("_")}
