"""Every private name of the CuTe DSL the backend uses, in one place, behind the version check of ``_about`` (what
the backend replaces of the DSL is in ``_patches``). What the backend needs from the DSL (docs: cutlass, "How it
works"): the kernel being traced and its launch facts, a hook after each trace, calls of C functions, register and
shared-memory pointers, one step after the DSL's device pipeline to link the kernel with the CUB LTO-IR, and what a
compiled launcher holds (its cubin, the shared memory its launch asks for)."""
from __future__ import annotations

import contextlib
import re
from typing import Any, Callable, Iterator, cast

import numpy as np

from . import _about, _callbacks  # noqa: F401  (the version check runs first)

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
import cutlass._mlir.dialects.cute as cute_ir  # noqa: E402
from cutlass._mlir import ir  # noqa: E402
from cutlass._mlir.dialects import arith, func, llvm  # noqa: E402
from cutlass.cute import launch_facts as _launch_facts  # noqa: E402
from cutlass.cutlass_dsl import CuTeDSL  # noqa: E402

KERNEL_OPS = ("cuda.kernel", "lir.func", "gpu.func")
LOOP_OPS = ("scf.for", "scf.while", "scf.parallel")
LINK_ATTR = "cuda_coop.link"
BITCODE_ATTR = "cuda_coop.bitcode"

Tensor = cute.Tensor
Numeric = cutlass.Numeric

# the ten numeric dtypes of the common API, and the CuTe type of each
NUMERIC_TYPES: dict[str, Any] = {
    "int8": cutlass.Int8, "int16": cutlass.Int16, "int32": cutlass.Int32, "int64": cutlass.Int64,
    "uint8": cutlass.Uint8, "uint16": cutlass.Uint16, "uint32": cutlass.Uint32, "uint64": cutlass.Uint64,
    "float32": cutlass.Float32, "float64": cutlass.Float64,
}
OTHER_TYPES: dict[str, Any] = {"float16": cutlass.Float16, "bool": cutlass.Boolean}
DTYPE_OF_TYPE = {t: name for name, t in {**NUMERIC_TYPES, **OTHER_TYPES}.items()}
_NUMERIC_OF_RAW_TYPE = {"i1": "Boolean", "i8": "Int8", "i16": "Int16", "i32": "Int32", "i64": "Int64",
                        "f16": "Float16", "f32": "Float32", "f64": "Float64"}  # MLIR integers have no sign: signed


def untyped_value_numeric(value: Any) -> tuple[str, str] | None:
    """(CuTe numeric's name, dtype) of an untyped scalar DSL value (what ``cutlass.select_`` returns), else None."""
    name = None if isinstance(value, Numeric) or not isinstance(value, ir.Value) else \
        _NUMERIC_OF_RAW_TYPE.get(str(value.type))
    return None if name is None else (name, DTYPE_OF_TYPE[getattr(cutlass, name)])


# ---- the trace
def current_kernel() -> Any | None:
    """The kernel operation being traced at the current insertion point, None outside a CuTe trace."""
    try:
        block = ir.InsertionPoint.current.block
    except Exception:  # noqa: BLE001 - no MLIR context or insertion point: not tracing
        return None
    op = block.owner
    while op is not None:
        operation = getattr(op, "operation", op)
        if operation.name in KERNEL_OPS:
            return operation
        op = operation.parent
    return None


def kernel_name(kernel: Any) -> str:
    return str(ir.StringAttr(kernel.attributes["sym_name"]).value)


def kernel_function_name(kernel: Any) -> str | None:
    """The name of the ``@cute.kernel`` Python function being traced into ``kernel`` (the DSL keeps the function
    while it traces it; its symbol is ``kernel_cutlass_<name>_<argument types>_<n>``); None when it does not say."""
    name = getattr(getattr(CuTeDSL._get_dsl(), "funcBody", None), "__name__", None)
    return name if isinstance(name, str) and f"_{name}_" in kernel_name(kernel) else None


def launch_dim(kernel: Any, which: str) -> tuple[int, int, int] | None:
    """The launch's ``"block"`` or ``"cluster"`` shape when it is a compile-time constant, else None."""
    with ir.InsertionPoint(kernel.regions[0].blocks[0]):
        facts = _launch_facts._get_launch_facts()
    unclustered = which == "cluster" and facts.cluster_launch is False  # a launch without clusters: one block each
    exact = (1, 1, 1) if unclustered else cast("tuple[int, int, int] | None", getattr(facts, f"exact_{which}_dim"))
    attrs = kernel.attributes  # constants out of range (0, negative) are not facts; the reqntid keeps them: G22
    if exact is None and which == "block" and "nvvm.reqntid" in attrs:
        exact = cast("tuple[int, int, int]", tuple(int(v) for v in ir.DenseI32ArrayAttr(attrs["nvvm.reqntid"])))
    return exact


def compute_capability() -> int:
    """The compute capability the DSL compiles for (``--gpu-arch sm_100a`` -> 100; 90 when it names none)."""
    try:
        arch = str(CuTeDSL._get_dsl().get_arch_enum().to_string())
    except Exception:  # noqa: BLE001 - no arch named and no GPU to ask
        return 90
    found = re.match(r"sm_(\d+)", arch)
    return int(found.group(1)) if found else 90


def register_trace_hook(hook: Callable[[Any, Any, str], None]) -> None:
    """Run ``hook`` after each trace (the DSL reports its exceptions as its own internal error, unless
    ``_patches.pass_user_errors_through_trace_hooks`` lets them through)."""
    CuTeDSL._get_dsl().register_trace_finalize_hook(hook)


def kernels_of(module: Any) -> Iterator[Any]:
    """Every kernel operation in a traced module."""
    return iter(_operations_where(module, lambda op: op.name in KERNEL_OPS))


def _operations_where(module: Any, keep: Callable[[Any], bool]) -> list[Any]:
    """The operations of a module that ``keep`` accepts, in the order of a walk."""
    found: list[Any] = []

    def visit(op: Any) -> Any:
        if keep(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def gpu_module_of(op: Any) -> Any:
    while op is not None and op.name != "gpu.module":
        op = op.parent
    return op


# the operations a per-thread value starts from (``_divergence``)
THREAD_INDEX_OPS = {"nvvm.read.ptx.sreg.tid.x": "the thread index (thread_idx()[0])",
                    "nvvm.read.ptx.sreg.tid.y": "the thread index (thread_idx()[1])",
                    "nvvm.read.ptx.sreg.tid.z": "the thread index (thread_idx()[2])"}
LANE_OPS = {"nvvm.read.ptx.sreg.laneid": "the lane id (lane_idx())"}


@contextlib.contextmanager
def reading_ir() -> Iterator[None]:
    """While the kernel's IR is read, tensor values come back as plain MLIR values: CuTe's wrapper of one emits its
    iterator at the insertion point, which would put a use of a loop's or branch's value outside the region."""
    from cutlass.cute.tensor import _Tensor

    typeids = [cute_ir.MemRefType.get_static_typeid(), cute_ir.CoordTensorType.get_static_typeid()]
    for typeid in typeids:
        ir.register_value_caster(typeid, replace=True)(lambda value: value)
    try:
        yield
    finally:
        for typeid in typeids:
            ir.register_value_caster(typeid, replace=True)(_Tensor)


def raw_value(value: Any) -> Any:
    """The MLIR value of an operand (CuTe hands tensors, pointers and layouts back as wrappers holding it), or None."""
    value = value if isinstance(value, ir.Value) else getattr(value, "value", None)
    return value if isinstance(value, ir.Value) else None


def is_tensor_value(value: Any) -> bool:
    """Whether an MLIR value is a tensor's memref (the same memory in every thread, whatever branch passed it on)."""
    return bool(cute_ir.MemRefType.isinstance(value.type))


def same_value(a: Any, b: Any) -> bool:
    """Whether two MLIR values are one (a DSL value's own ``==`` would emit a comparison into the kernel)."""
    return bool(ir.Value.__eq__(a, b))


def defining_operation(value: Any) -> Any | None:
    """The operation whose result ``value`` is; None for a block argument."""
    owner = value.owner
    return getattr(owner, "operation", owner) if hasattr(owner, "name") else None


def result_number(value: Any) -> int:
    return int(ir.OpResult(value).result_number)


def block_argument(value: Any) -> tuple[Any, int, int] | None:
    """(the operation that owns the block, the index of its region, the argument's number) of a block argument."""
    block = value.owner
    if hasattr(block, "name"):
        return None
    owner = getattr(block.owner, "operation", block.owner)
    region = next((i for i, r in enumerate(owner.regions) if len(r.blocks) and r.blocks[0] == block), -1)
    return owner, region, int(ir.BlockArgument(value).arg_number)


def callee(call: Any) -> str:
    return str(ir.FlatSymbolRefAttr(call.attributes["callee"]).value)


def inside_loop(op: Any) -> bool:
    """Whether ``op`` sits in a loop of its kernel (it may execute again after later calls)."""
    op = op.parent
    while op is not None and op.name not in KERNEL_OPS:
        if op.name in LOOP_OPS:
            return True
        op = op.parent
    return False


# ---- values
def plain_builtin(value: Any) -> Any:
    """A builtin the DSL rewrote inside the kernel (``min`` becomes a partial of its redirector, so that it works on
    dynamic values) as the builtin itself; anything else unchanged."""
    import builtins
    import functools

    if isinstance(value, functools.partial) and not value.keywords and len(value.args) == 1 \
            and getattr(value.func, "__name__", "") == "builtin_wrapper" \
            and getattr(builtins, getattr(value.args[0], "__name__", ""), None) is value.args[0]:
        return value.args[0]
    return value


def i64(value: Any) -> Any:
    """A compile-time or runtime integer as an MLIR i64 value."""
    return cutlass.Int64(value).ir_value()


def scalar(value: Any, dtype: str) -> Any:
    """A Python number or CuTe value converted to the CuTe type of ``dtype``, as an MLIR value."""
    t = NUMERIC_TYPES[dtype]
    if isinstance(value, np.generic):
        value = value.item()
    unsigned = getattr(t, "signed", True) is False
    if isinstance(value, int) and not isinstance(value, bool) and unsigned and value >= 1 << (t.width - 1):
        value -= 1 << t.width  # MLIR integers are signless; the binding takes the signed value with the same bits
        return arith.constant(t.mlir_type, value)
    return t(value).ir_value()


def converted(value: Any, dtype: str) -> Any:
    """``value`` as the CuTe numeric of ``dtype``, converted as an assignment to a payload item converts it (docs:
    concepts, "ThreadData payloads"; numba-cuda-mlir's cast): integers keep their low bits, floats truncate toward
    zero, a Python or NumPy number too. Anything else is returned unchanged, for the DSL to take or refuse."""
    t = NUMERIC_TYPES[dtype]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, Numeric):
        return value.to(t)
    if isinstance(value, int) and not isinstance(value, bool) and issubclass(t, cutlass.Integer):
        value &= (1 << t.width) - 1  # wrap here: the DSL warns about a literal out of the type's range
        if t.signed and value >= 1 << (t.width - 1):
            value -= 1 << t.width
    if isinstance(value, (bool, int, float)):
        return t(value)
    return value


def wrap(value: Any, dtype: str) -> Any:
    """An MLIR value of ``dtype`` as the CuTe numeric the user gets."""
    return NUMERIC_TYPES[dtype](value)


def generic(pointer: Any) -> Any:
    """An LLVM pointer in the generic address space (what the C ABI entry points take)."""
    generic_already = llvm.PointerType(pointer.type).address_space == 0
    return pointer if generic_already else llvm.addrspacecast(llvm.PointerType.get(0), pointer)


def tensor_pointer(tensor: Any) -> Any:
    return generic(tensor.iterator.llvm_ptr)


def null_pointer() -> Any:
    return llvm.mlir_zero(llvm.PointerType.get(0))


def memspace(tensor: Any) -> str:
    """``gmem``, ``smem``, ``rmem`` (or the DSL's name of another space)."""
    return str(tensor.memspace).split(".")[-1].lower()


def element_dtype(tensor: Any) -> str | None:
    return DTYPE_OF_TYPE.get(tensor.element_type)


def shape_and_stride(tensor: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    shape, stride = tensor.layout.shape, tensor.layout.stride
    return (shape if isinstance(shape, tuple) else (shape,)), (stride if isinstance(stride, tuple) else (stride,))


def extent(tensor: Any) -> Any:
    """The number of elements of a 1-D tensor (a Python int when static)."""
    return cute.size(tensor)


def make_fragment(count: int, dtype: str, kernel: Any) -> Any:
    """A register tensor of ``count`` items, allocated at the kernel's entry (it dominates every use)."""
    with ir.InsertionPoint.at_block_begin(kernel.regions[0].blocks[0]):
        return cute.make_rmem_tensor((count,), NUMERIC_TYPES[dtype])


def canonical_fragment(tensor: Any, count: int) -> Any:
    """A unit-stride 1-D register tensor viewed with the layout ``(count):(1)`` of the fragments the backend makes
    (same registers), so that a payload variable keeps one structure through a traced loop or branch whichever
    payload it holds (``make_rmem_tensor(K)`` has the layout ``K:1``)."""
    layout = tensor.layout
    if isinstance(layout.shape, tuple) or layout.stride != 1:
        return tensor
    return cute.make_tensor(tensor.iterator, cute.make_layout((count,)))


def is_register_tensor(value: Any) -> bool:
    return isinstance(value, cute.Tensor) and memspace(value) == "rmem"


# ---- calls
def call(symbol: str, values: list[Any], result: Any | None, gpu_module: Any) -> Any:
    """Call the C function ``symbol`` (declared once per module); returns the call operation."""
    types = [v.type for v in values]
    results = [result] if result is not None else []
    table = ir.SymbolTable(gpu_module)
    if symbol not in table:
        declare(symbol, types, results, gpu_module)
    return func.CallOp(results, ir.FlatSymbolRefAttr.get(symbol), values)


def declare(symbol: str, types: list[Any], results: list[Any], gpu_module: Any) -> None:
    body = gpu_module.regions[0].blocks[0]
    with ir.InsertionPoint.at_block_begin(body):
        proto = func.FuncOp(symbol, (types, results))
        proto.sym_visibility = ir.StringAttr.get("private")


def define_function(symbol: str, arg_dtypes: list[str], result_dtype: str, body: Callable[..., Any],
                    gpu_module: Any) -> None:
    """Define the C function ``symbol`` in the module (once) by tracing ``body`` on CuTe numerics of
    ``arg_dtypes``; its result is converted to ``result_dtype`` (``"boolean"``: a C++ ``bool``). The generated C++
    declares it ``extern "C"`` and calls it; it is public, so that it survives until the C++ is linked with it."""
    if symbol in ir.SymbolTable(gpu_module):
        return
    result_type = cutlass.Boolean if result_dtype == "boolean" else NUMERIC_TYPES[result_dtype]
    params = [NUMERIC_TYPES[d].mlir_type for d in arg_dtypes]
    with _defining(symbol, params, [result_type.mlir_type], gpu_module) as entry:
        traced = _callbacks.traceable(body, cute.jit)
        value = traced(*[NUMERIC_TYPES[d](a) for d, a in zip(arg_dtypes, entry.arguments)])
        func.ReturnOp([result_type(value).ir_value()])


@contextlib.contextmanager
def _defining(symbol: str, params: list[Any], results: list[Any], gpu_module: Any) -> Iterator[Any]:
    """The entry block of a new function ``symbol`` of the module, the insertion point while its body is traced; the
    function is erased if tracing it fails."""
    with ir.InsertionPoint.at_block_begin(gpu_module.regions[0].blocks[0]):
        function = func.FuncOp(symbol, (params, results))
    try:
        entry = function.add_entry_block()
        with ir.InsertionPoint(entry):
            yield entry
    except BaseException:
        function.operation.erase()
        raise


def define_stateful_function(symbol: str, state_dtype: str, arg_dtypes: list[str], result_dtype: str,
                             body: Callable[..., Any], gpu_module: Any) -> None:
    """Define ``result symbol(S* state, args...)`` (once) by tracing ``body(state, *args)``, where ``state`` is a
    one-item register tensor of ``state_dtype`` holding ``*state`` on entry and written back to it on return (a
    StatefulFunction prefix callback; docs: cutlass, "Prefix callbacks"). Inlined into the C++ caller, which passes
    the address of the calling thread's own one-item register payload, both stay in registers."""
    if symbol in ir.SymbolTable(gpu_module):
        return
    state_type = NUMERIC_TYPES[state_dtype]
    result_type = NUMERIC_TYPES[result_dtype]
    params = [llvm.PointerType.get(0)] + [NUMERIC_TYPES[d].mlir_type for d in arg_dtypes]
    with _defining(symbol, params, [result_type.mlir_type], gpu_module) as entry:
        pointer, *values = entry.arguments
        state = cute.make_rmem_tensor((1,), state_type)
        state[0] = state_type(llvm.load(state_type.mlir_type, pointer))
        value = _callbacks.traceable(body, cute.jit)(state, *[NUMERIC_TYPES[d](a) for d, a in zip(arg_dtypes, values)])
        llvm.store(state_type(state[0]).ir_value(), pointer)
        func.ReturnOp([result_type(value).ir_value()])


def define_tuple_function(symbol: str, dtypes: list[str], body: Callable[..., Any], gpu_module: Any) -> None:
    """Define ``void symbol(T0* r0, ..., T0 a0, ..., T0 b0, ...)`` (once) by tracing ``body(a, b)`` on two tuples of
    CuTe numerics of ``dtypes``; each member of the tuple it returns is converted to its dtype and stored through
    its pointer (the C++ side of a multi-operand operator, ``_cub.tuples``). A result that is not a tuple of
    ``len(dtypes)`` values is a ``TypeError`` naming what it is."""
    if symbol in ir.SymbolTable(gpu_module):
        return
    count = len(dtypes)
    types = [NUMERIC_TYPES[d].mlir_type for d in dtypes]
    with _defining(symbol, [llvm.PointerType.get(0)] * count + types + types, [], gpu_module) as entry:
        values = list(entry.arguments)
        a = tuple(NUMERIC_TYPES[d](v) for d, v in zip(dtypes, values[count:2 * count]))
        b = tuple(NUMERIC_TYPES[d](v) for d, v in zip(dtypes, values[2 * count:]))
        result = _callbacks.traceable(body, cute.jit)(a, b)
        if not isinstance(result, (tuple, list)) or len(result) != count:
            shape = f"a tuple of {len(result)}" if isinstance(result, (tuple, list)) else type(result).__name__
            raise TypeError(f"it returns {shape}; a tuple of {count} values is needed")
        for pointer, dtype, member in zip(values[:count], dtypes, result):
            llvm.store(NUMERIC_TYPES[dtype](member).ir_value(), pointer)
        func.ReturnOp([])


def retarget(call_op: Any, symbol: str) -> None:
    """Point a call at another function of the same signature (a provider emitted again without its barrier)."""
    gpu_module = gpu_module_of(call_op)
    if symbol not in ir.SymbolTable(gpu_module):
        declare(symbol, [v.type for v in call_op.operands], [r.type for r in call_op.results], gpu_module)
    call_op.attributes["callee"] = ir.FlatSymbolRefAttr.get(symbol)


def items_type(dtype: str, count: int) -> Any:
    """``struct { T v[count]; }``: a payload passed by value (``_cub.by_value``)."""
    return llvm.StructType.get_literal([llvm.ArrayType.get(NUMERIC_TYPES[dtype].mlir_type, count)])


def results_type(payloads: list[tuple[str, int]], result: str | None) -> Any:
    """``struct { T0 a0[K0]; ...; R ret; }``: what a by-value entry point returns."""
    fields = [llvm.ArrayType.get(NUMERIC_TYPES[dtype].mlir_type, count) for dtype, count in payloads]
    if result is not None:
        fields.append(NUMERIC_TYPES[result].mlir_type)
    return llvm.StructType.get_literal(fields)


def pack_items(fragment: Any, dtype: str, count: int) -> Any:
    """A register tensor's items as one by-value struct."""
    value = llvm.mlir_undef(items_type(dtype, count))
    for k in range(count):
        value = llvm.insertvalue(value, NUMERIC_TYPES[dtype](fragment[k]).ir_value(), [0, k])
    return value


def unpack_items(results: Any, field: int, fragment: Any, dtype: str, count: int) -> None:
    """Write field ``field`` of a by-value result back into the register tensor."""
    element = NUMERIC_TYPES[dtype].mlir_type
    for k in range(count):
        fragment[k] = NUMERIC_TYPES[dtype](llvm.extractvalue(element, results, [field, k]))


def field_of(results: Any, field: int, dtype: str) -> Any:
    return llvm.extractvalue(NUMERIC_TYPES[dtype].mlir_type, results, [field])


def result_of(call_op: Any) -> Any:
    return call_op.results[0]


def shared_backing(kernel: Any, size: int, alignment: int) -> Any:
    """``size`` bytes of shared memory from the DSL's allocator at the kernel's entry (beside the user's own
    allocations, counted in the launch's shared memory), as a generic pointer."""
    from cutlass.memory import SmemAllocator

    with ir.InsertionPoint.at_block_begin(kernel.regions[0].blocks[0]):
        pointer = SmemAllocator().allocate(size, alignment)
        return generic(pointer.llvm_ptr)


def offset_pointer(base: Any, offset: int, after: Any) -> Any:
    """``base + offset`` bytes, computed right after the operation defining ``base``."""
    with ir.InsertionPoint.after(after):
        if not offset:
            return base
        return llvm.getelementptr(llvm.PointerType.get(0), base, [], [offset], ir.IntegerType.get_signless(8), 0)


def constant_i64(value: int, after: Any) -> Any:
    with ir.InsertionPoint.after(after):
        return arith.constant(ir.IntegerType.get_signless(64), value)


# ---- the DSL's device compiler: bitcode it links and inlines, or the link step after it
def llvm_major() -> int | None:
    """The major version of the LLVM inside the DSL's native library (it reads the bitcode the calls become)."""
    import mmap

    from cutlass._mlir._mlir_libs import _cutlass_ir

    path = getattr(_cutlass_ir, "__file__", None)
    if not path:
        return None
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as image:
        found = re.search(rb"LLVM version (\d+)\.", image)
        return int(found.group(1)) if found else None


def target_arch() -> str:
    """The architecture the DSL compiles for (``sm_90a``; the family-specific form of ``compute_capability``)."""
    try:
        arch = str(CuTeDSL._get_dsl().get_arch_enum().to_string())
    except Exception:  # noqa: BLE001 - no arch named and no GPU to ask
        return "sm_90a"
    return arch if re.match(r"^sm_\d+[af]?$", arch) else "sm_90a"


def attach_bitcode(gpu_module: Any, path: str) -> None:
    """Have the DSL link the LLVM bitcode at ``path`` into ``gpu_module`` (its ``link-libraries``, the mechanism of
    ``cute.ffi``'s ``BitCode``); its functions are inlined where the kernel calls them."""
    present = [ir.StringAttr(x).value for x in gpu_module.attributes["link-libraries"]] \
        if "link-libraries" in gpu_module.attributes else []
    libraries = list(dict.fromkeys([*present, path]))
    gpu_module.attributes["link-libraries"] = ir.ArrayAttr.get([ir.StringAttr.get(x) for x in libraries])
    ours = _attached(gpu_module)
    gpu_module.attributes[BITCODE_ATTR] = ir.StringAttr.get(",".join(dict.fromkeys([*ours, path])))


def _attached(gpu_module: Any) -> list[str]:
    if BITCODE_ATTR not in gpu_module.attributes:
        return []
    return [p for p in ir.StringAttr(gpu_module.attributes[BITCODE_ATTR]).value.split(",") if p]


def mark_link(gpu_module: Any, key: str) -> None:
    gpu_module.attributes[LINK_ATTR] = ir.StringAttr.get(key)


_LINK_LIBRARIES_RE = re.compile(r"link-libraries='([^']*)'")
# printed by the DSL's LLVM for each bitcode link: clang's NVPTX layout differs from the DSL's in pointer widths that
# the calls never use (_patches keeps it off the screen)
DATA_LAYOUT_WARNING = b"Linking two modules of different data layouts"


def own_libraries(pipeline: str, bitcode: list[str], attached: Callable[[str], bool]) -> str:
    """The pipeline's ``link-libraries`` without repeats and without cuda.coop bitcode of other modules
    (``attached(path)``: one of ours): the DSL gathers them into options that outlive one compile."""
    def keep(found: Any) -> str:
        libraries = [p for p in dict.fromkeys(found.group(1).split(",")) if p and (p in bitcode or not attached(p))]
        return f"link-libraries='{','.join(libraries)}'" if libraries else ""

    return _LINK_LIBRARIES_RE.sub(keep, pipeline)


def take_marks(module: Any) -> tuple[list[str], list[str]]:
    """The LTO-IR keys (link route) and bitcode paths (bitcode route) the module's gpu.modules were marked with."""
    keys: list[str] = []
    bitcode: list[str] = []
    for op in _operations_where(module, lambda op: op.name == "gpu.module"):
        if LINK_ATTR in op.attributes:
            keys.extend(ir.StringAttr(op.attributes[LINK_ATTR]).value.split(","))
            del op.attributes[LINK_ATTR]
        bitcode.extend(_attached(op))
    return keys, bitcode


def relocatable(pipeline: str, ptx_path: str) -> str:
    """The pipeline compiling the module to relocatable PTX at ``ptx_path`` (the link route)."""
    pipeline = pipeline.replace("rdc=false", "rdc=true")
    pipeline = re.sub(r"(dump-ptx-path|ptx-options)='[^']*'", "", pipeline)
    at = pipeline.rfind("}")
    # PTX ISA 9.0: what the oldest nvJitLink of CUDA 13 reads (the DSL's libNVVM writes a newer one by default)
    return pipeline[:at] + f" ptx-options='-c' ptx-version=+ptx90 dump-ptx-path='{ptx_path}'" + pipeline[at:]


def _device_binaries(module: Any) -> list[Any]:
    """The ``*_binary`` globals that hold a compiled module's device code."""
    return _operations_where(module, lambda op: op.name == "llvm.mlir.global"
                             and ir.StringAttr(op.attributes["sym_name"]).value.endswith("_binary"))


def replace_binary(module: Any, cubin: bytes) -> None:
    """Put ``cubin`` in place of the compiled module's device binary."""
    binaries = _device_binaries(module)
    if not binaries:
        raise RuntimeError("cuda.coop found no device binary to link in the CuTe DSL's compiled module")
    for op in binaries:
        op.attributes["value"] = ir.StringAttr.get(cubin)
        op.attributes["global_type"] = ir.TypeAttr.get(llvm.ArrayType.get(ir.IntegerType.get_signless(8), len(cubin)))


# ---- compile-only builds
def fake_tensor(dtype: Any, shape: tuple[int, ...], stride: tuple[int, ...]) -> Any:
    from cutlass.cute.runtime import make_fake_tensor

    return make_fake_tensor(dtype, shape, stride=stride)


def target_names() -> tuple[str, ...]:
    """The architectures the DSL compiles for (``sm_80`` ... ``sm_90a`` ... ``sm_121f``), in its own order."""
    from cutlass.base_dsl.enums import Arch

    return tuple(Arch.__members__)


def compile_launcher(launcher: Any, args: list[Any], target: str) -> Any:
    return cute.compile(launcher, *args, options=f"--gpu-arch {target}")


def binary_of(compiled: Any) -> bytes:
    """The device binary a compiled launcher holds (the ``*_binary`` global of its module)."""
    binaries = _device_binaries(compiled.ir_module)
    if not binaries:
        raise RuntimeError("the CuTe DSL's compiled launcher holds no device binary")
    return bytes(ir.StringAttr(binaries[0].attributes["value"]).value_bytes)


def launch_dynamic_shared_bytes(compiled: Any) -> int | None:
    """The constant ``dynamicSmemBytes`` its host code stores in a ``cudaLaunchConfig_t`` (the largest), or None."""
    config = "[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)>"
    def sized(op: Any) -> bool:  # a store of a constant into the config's third field
        if op.name != "llvm.store":
            return False
        value, field = (operand.owner for operand in op.operands)
        return getattr(value, "name", "") == "llvm.mlir.constant" and str(field).endswith(config)
    return max((ir.IntegerAttr(op.operands[0].owner.attributes["value"]).value
                for op in _operations_where(compiled.ir_module, sized)), default=None)
