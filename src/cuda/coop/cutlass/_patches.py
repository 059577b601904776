"""Every attribute of the CuTe DSL that cuda.coop replaces, each installed by a named function and listed in
``PATCHES`` (end of this module: what, why, when, and what would remove it; CONTRIBUTING.md, "Patches").

``install`` applies them once per process when the backend is registered. ``tests/unit/test_patches.py`` checks
every target against the installed DSL. Only this module and ``_dsl`` name the DSL's private modules; the IR work the
compile step does (marks, pipelines, binaries) is ``_dsl``'s.
"""
from __future__ import annotations

import copy
import os
import tempfile
from typing import Any, Callable

from .._errors import CoopTypeError, located
from .._patching import Patch, once
from . import _about, _dsl  # noqa: F401  (_about: the version check runs first)
from ._native_stderr import native_stderr_without

from cutlass.base_dsl import compiler as _compiler
from cutlass.cute import tensor as _tensor
from cutlass.cutlass_dsl import cutlass_ast_decorators as _ast_decorators
from cutlass.cutlass_dsl import CuTeDSL

AT_REGISTER = "when the backend is registered"
_DSL_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(_ast_decorators.__file__)))  # the cutlass package
_OURS = "cuda_coop_patch"  # marks an installed wrapper: a second import of this module installs nothing again

# what _register_backend hands the patches: the link step, which bitcode is cuda.coop's, the errors that are the user's
_linker: Callable[[str, list[str]], bytes] | None = None
_attached: Callable[[str], bool] | None = None
_passes: tuple[type[BaseException], ...] = ()


def install(linker: Callable[[str, list[str]], bytes], attached: Callable[[str], bool],
            passes: tuple[type[BaseException], ...]) -> None:
    """Apply every patch once per process, in table order: ``linker(ptx, keys)`` links a module's PTX with the LTO-IR
    named by ``keys`` (the link route), ``attached(path)`` says whether a bitcode file is cuda.coop's, and exceptions
    of the ``passes`` types leave a trace-finalize hook as raised."""
    global _linker, _attached, _passes
    if _linker is None:
        _linker, _attached, _passes = linker, attached, passes
    for patch in PATCHES:
        if patch.install is not None:
            patch.install()


def _replace(owner: Any, attribute: str, wrap: Callable[[Any], Any], *, static: bool = False) -> None:
    """Set ``owner.attribute`` to ``wrap(original)``, marked as cuda.coop's and keeping the original as
    ``__wrapped__``; nothing when it is cuda.coop's already (a second import of this module)."""
    original = getattr(owner, attribute)
    if getattr(original, _OURS, False):
        return
    wrapper = wrap(original)
    wrapper.__wrapped__ = original
    setattr(wrapper, _OURS, True)
    setattr(owner, attribute, staticmethod(wrapper) if static else wrapper)


# --- a user's mistake found after the trace ----------------------------------------------------
# The DSL reports any exception of a trace-finalize hook as its own internal error ("a bug in the DSL"), its message
# wrapped; cuda.coop's hook raises the user's mistakes (CoopError: the call, the line, the fix) from there.
@once
def pass_user_errors_through_trace_hooks() -> None:
    def wrap(original: Callable[..., None]) -> Callable[..., None]:
        def run_hooks(self: Any, module: Any, function_name: str) -> None:
            try:
                original(self, module, function_name)
            except Exception as exc:
                if isinstance(exc.__cause__, _passes):
                    raise exc.__cause__ from None
                raise

        return run_hooks

    _replace(type(CuTeDSL._get_dsl()), "_run_trace_finalize_hooks", wrap)


# --- a payload or a group stored into a tensor element (P14, G2) ------------------------------
# The DSL's tensor accepts numeric values only and says "unsupported data type: <class ...ThreadData>" for a payload,
# with no line; numba-cuda-mlir reports the same mistake as P14 at the assignment.
@once
def report_payloads_stored_into_tensors() -> None:
    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def setitem(self: Any, crd: Any, data: Any, *args: Any, **kwargs: Any) -> Any:
            from ._values import ThreadData, ThreadGroup, caller_site, user_variable

            if isinstance(data, (ThreadData, ThreadGroup)):
                raise data._escapes(f"an assignment into {user_variable(self, caller_site()) or 'a tensor'}")
            return original(self, crd, data, *args, **kwargs)

        return setitem

    _replace(_tensor._Tensor, "__setitem__", wrap)


# --- one variable, payloads of two shapes or two groups or descriptors through a traced branch or loop (P15) ---
# The DSL finds a carried value whose structure changed only after it, as its own error with the MLIR types of the
# register tensors, and keeps the first of two groups or descriptors silently (they hold no run-time value);
# numba-cuda-mlir reports both mistakes as P15.
@once
def report_payload_shape_changes() -> None:
    def wrap(original: Callable[..., None]) -> Callable[..., None]:
        def check_region_result(original_value: Any, region_value: Any, arg_name: str, op_type_name: str) -> None:
            from .._calls.objects import several_sites
            from ._values import Storage, ThreadData, ThreadGroup, caller_site

            carried = (ThreadGroup, Storage)  # no run-time value: the DSL would keep the first one silently
            if (isinstance(original_value, carried) or isinstance(region_value, carried)) \
                    and original_value is not region_value:
                if isinstance(original_value, Storage) and isinstance(region_value, Storage):  # S3's words
                    raise located(CoopTypeError(f"variable {arg_name} may refer to several TempStorage descriptors; a "
                                                "temp_storage must resolve to exactly one TempStorage constructor in "
                                                "this kernel"), caller_site(_DSL_FOLDER))
                raise located(several_sites(arg_name), caller_site(_DSL_FOLDER))
            if isinstance(original_value, ThreadData) and isinstance(region_value, ThreadData):
                before, after = original_value._shape(), region_value._shape()
                if before != after:
                    raise located(CoopTypeError(f"variable {arg_name} may refer to payloads with different extents "
                                                f"or dtypes ({before}; {after})"), caller_site(_DSL_FOLDER))
            original(original_value, region_value, arg_name, op_type_name)

        return check_region_result

    _replace(_ast_decorators.ScfGenerator, "_check_region_result", wrap, static=True)


# --- the compile step ------------------------------------------------------------------------
# Around the DSL's device pipeline:
# * a module whose calls are linked (``_dsl.mark_link``) is compiled as relocatable PTX, and its device binary is
#   replaced with the kernel linked with the CUB LTO-IR (the link route);
# * a module with bitcode (``_dsl.attach_bitcode``) links only its own: the DSL gathers ``link-libraries`` into options
#   that outlive one compile, so earlier kernels' bitcode is dropped from the pipeline; and the warning the DSL's LLVM
#   prints on each such link is kept off the screen. LLVM writes it to file descriptor 2 from native code (no Python
#   stream, logger or warnings filter sees it), so it is filtered there, for the pass manager's run alone.
@once
def install_compile_step() -> None:
    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def compile_with_coop(self: Any, module: Any, pipeline: str, *args: Any, **kwargs: Any) -> Any:
            assert _linker is not None and _attached is not None
            keys, bitcode = _dsl.take_marks(module)
            pipeline = _dsl.own_libraries(pipeline, bitcode, _attached)
            if not keys:
                if not bitcode:
                    return original(self, module, pipeline, *args, **kwargs)
                if not hasattr(self, "passmanager"):  # not the DSL's Compiler of 4.8: the whole compile's window
                    with native_stderr_without(_dsl.DATA_LAYOUT_WARNING):
                        return original(self, module, pipeline, *args, **kwargs)
                return original(_quiet_linking(self), module, pipeline, *args, **kwargs)
            with tempfile.TemporaryDirectory(prefix="cuda_coop_cute_") as where:
                ptx_path = os.path.join(where, "kernel.ptx")
                result = original(self, module, _dsl.relocatable(pipeline, ptx_path), *args, **kwargs)
                with open(_find_ptx(where), encoding="utf-8") as handle:
                    ptx = handle.read()
            _dsl.replace_binary(result if result is not None else module, _linker(ptx, keys))
            return result

        return compile_with_coop

    _replace(_compiler.Compiler, "compile", wrap)


def _find_ptx(where: str) -> str:
    for root, _dirs, files in os.walk(where):
        for name in files:
            if name.endswith(".ptx"):
                return os.path.join(root, name)
    raise FileNotFoundError("the CuTe DSL wrote no PTX for a kernel with cuda.coop calls")


def _quiet_linking(compiler: Any) -> Any:
    """A copy of the DSL's compiler, for one compile, whose pass manager runs with the data-layout warning filtered:
    ``Compiler.compile`` makes its pass manager with ``self.passmanager.PassManager.parse(pipeline)`` and runs it once
    (the native call that links); everything else it does, its own diagnostics printed, is outside the filter."""
    quiet = copy.copy(compiler)
    quiet.passmanager = _QuietPassManagers(compiler.passmanager)
    return quiet


class _QuietPassManagers:
    """The DSL's ``passmanager`` module, whose ``PassManager.parse`` gives pass managers that filter while they run."""

    def __init__(self, passmanagers: Any) -> None:
        self._passmanagers = passmanagers
        self.PassManager = self

    def parse(self, *args: Any, **kwargs: Any) -> "_QuietPassManager":
        return _QuietPassManager(self._passmanagers.PassManager.parse(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._passmanagers, name)


class _QuietPassManager:
    def __init__(self, pass_manager: Any) -> None:
        self._pass_manager = pass_manager

    def run(self, *args: Any, **kwargs: Any) -> Any:
        with native_stderr_without(_dsl.DATA_LAYOUT_WARNING):
            return self._pass_manager.run(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pass_manager, name)


#: Every patch, in the order ``install`` applies them.
PATCHES: tuple[Patch, ...] = (
    Patch(
        "pass_user_errors_through_trace_hooks",
        targets=("cutlass.cutlass_dsl:CuTeDSL._run_trace_finalize_hooks",),
        reason="the DSL reports any exception of a trace-finalize hook as its own internal error; a CoopError "
               "raised by cuda.coop's hook (a user's mistake: the call, the line, the fix) is raised as it is",
        removal="the DSL letting a hook's exceptions of declared types through (register_trace_finalize_hook)",
        when=AT_REGISTER, where="cutlass._register_backend", install=pass_user_errors_through_trace_hooks,
        relies_on=("cutlass.cutlass_dsl:CuTeDSL._get_dsl",
                   "cutlass.base_dsl.dsl:BaseDSL.register_trace_finalize_hook")),
    Patch(
        "install_compile_step",
        targets=("cutlass.base_dsl.compiler:Compiler.compile",),
        reason="the link route compiles a marked module to relocatable PTX and links it with the CUB LTO-IR; the "
               "bitcode route drops other modules' bitcode from the DSL's lasting link-libraries, and filters the "
               "data-layout warning its LLVM prints per link: native code writing to file descriptor 2, so the "
               "process's descriptor is swapped while the pass manager runs (any thread's output meanwhile is "
               "written back after it, less that warning; _native_stderr)",
        removal="the DSL linking a module's own bitcode only and routing LLVM's linker warnings through MLIR "
                "diagnostics (or clang's bitcode carrying the DSL's data layout); a link step hook in the DSL",
        when=AT_REGISTER, where="cutlass._register_backend", install=install_compile_step,
        relies_on=("cutlass._mlir.passmanager:PassManager.parse", "cutlass._mlir.passmanager:PassManager.run")),
    Patch(
        "report_payloads_stored_into_tensors",
        targets=("cutlass.cute.tensor:_Tensor.__setitem__",),
        reason="a ThreadData stored into a tensor element is P14 at the assignment's line, as on numba-cuda-mlir; the "
               "DSL's own error (unsupported data type) names no line",
        removal="a conversion hook on the DSL's tensor stores (a value type that can refuse itself)",
        when=AT_REGISTER, where="cutlass._register_backend", install=report_payloads_stored_into_tensors),
    Patch(
        "report_payload_shape_changes",
        targets=("cutlass.cutlass_dsl.cutlass_ast_decorators:ScfGenerator._check_region_result",),
        reason="a variable given payloads of two extents or dtypes across a traced branch or loop is P15 at its "
               "line, as on numba-cuda-mlir; the DSL's own error shows the register tensors' MLIR types and starts "
               "with an empty line",
        removal="a structure-comparison hook for carried user values in the DSL",
        when=AT_REGISTER, where="cutlass._register_backend", install=report_payload_shape_changes),
)
