"""Every attribute of numba-cuda-mlir that cuda.coop replaces, each installed by a named function and listed in
``PATCHES`` (end of this module: what, why, when, and what would remove it; CONTRIBUTING.md, "Patches").

Each installer runs once per process (``install(when)`` applies the patches of one moment) and leaves numba-cuda-mlir
as it is when a name it replaces is not what 0.6 has: cuda.coop then runs slower or builds more, never wrongly.
``tests/unit/test_patches.py`` checks every target against the installed numba-cuda-mlir. Only this module and
``_compat`` name numba-cuda-mlir's private modules.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterable, Iterator

from .._patching import AROUND_A_CALL, Patch, once
from ._about import HINT, VERSION  # the version check runs first

try:
    from numba_cuda_mlir._whole_function_planners import _planner_registry
except ImportError as exc:  # a name this package relies on is gone
    raise ImportError(f"numba-cuda-mlir {VERSION} does not provide {getattr(exc, 'name', None) or exc}, which "
                      f"cuda.coop requires. To fix it, {HINT}") from exc

AT_REGISTER = "when the backend is registered (before any launch)"
AT_FIRST_KERNEL = "when the first kernel with cuda.coop calls is planned (before it is translated)"
AT_FIRST_LITERAL = "when a kernel is first specialised on an integer argument"


def install(when: str) -> None:
    """Apply the patches installed at ``when`` (``AT_REGISTER``, ...), each once per process, in table order."""
    for patch in PATCHES:
        if patch.when == when and patch.install is not None:
            patch.install()


# --- how a kernel with cuda.coop calls is translated -------------------------------------------
# Two things numba-cuda-mlir 0.6 does for every kernel below sm_100 (translated through its LLVM 7 C API) that cost
# a kernel calling CUB, and are changed for such kernels only:
# * 64-bit shared pointers. nvcc and NVRTC address shared memory with 32-bit pointers (data layout "p3:32:32:32"), so
#   CUB's index arithmetic folds constant offsets into the shared loads and stores; with 64-bit ones the inlined CUB
#   code sign-extends every index and keeps an address register per item (a 256x16 exchange round trip: 56
#   registers instead of CUB C++'s 40). These kernels are translated with NVRTC's layout.
# * The block declared as a maximum at most (launch_bounds: maxntid; the translation has no attribute for more),
#   though such a kernel is built for one block shape (its launch configuration: a new grid may reuse a build, a new
#   block never does). Without the exact shape ptxas cannot prove a warp whole, and guards CUB's warp shuffles with a
#   divergent fallback (BRA.DIV, WARPSYNC.COLLECTIVE: the 256x16 segment sums' kernel has 888 instructions, 768 with
#   it; CuTe's kernels declare it). Such a kernel's LTO-IR is compiled from the translation's own IR with reqntid
#   annotations (``_cub.nvvm``), by the libNVVM and with the options the translation uses: without the annotations
#   this LTO-IR is the translation's, byte for byte (tests/compile/test_exact_block_compile.py).
COOP_SYMBOL_PREFIXES = ("cuda_coop_", "__cuda_coop_")
_SHORT_SHARED_POINTER = "p3:32:32:32"


def _has_coop_symbols(gpu_module: Any) -> bool:
    for op in gpu_module.bodyRegion.blocks[0].operations:
        name = getattr(op, "sym_name", None)
        if name is not None and str(getattr(name, "value", "")).startswith(COOP_SYMBOL_PREFIXES):
            return True
    return False


def _exact_block(target_options: dict[str, Any]) -> tuple[int, ...] | None:
    """The block shape a kernel is built for (its launch configuration's); None without one, or for a build with
    debug information (whose libNVVM options the translation keeps to itself)."""
    config = target_options.get("__launch_config__")
    if not config or target_options.get("debug") or target_options.get("lineinfo"):
        return None
    return tuple(int(extent) for extent in config["block"])


@once
def translate_cooperative_kernels() -> None:
    """Idempotent; a numba-cuda-mlir without these private hooks keeps its own translation (slower, still correct)."""
    try:
        from numba_cuda_mlir import mlir_optimization as mo
        from numba_cuda_mlir.lowering_utilities.llvm_utils import NVPTX64_DATALAYOUT
        from numba_cuda_mlir.numba_cuda.cudadrv.libs import get_libdevice
        from numba_cuda_mlir.tools import get_gpu_compute_capability

        translate, get_capi, single_gpu_module = mo._call_llvm70_capi, mo._get_llvm70_capi, mo._get_single_gpu_module
        libnvvm = mo._get_libnvvm_path
    except (ImportError, AttributeError):
        return
    if "-p3:" in NVPTX64_DATALAYOUT or not NVPTX64_DATALAYOUT.startswith("e-p:64:64:64-"):
        return  # a layout we do not know how to amend
    from .._cub import nvvm

    layout = NVPTX64_DATALAYOUT.replace("e-p:64:64:64-", f"e-p:64:64:64-{_SHORT_SHARED_POINTER}-", 1).encode()
    state = threading.local()

    class _CapiWithLayout:
        """The LLVM 7 C API, passing the short-pointer layout while a cuda.coop kernel is translated."""

        def __init__(self, lib: Any) -> None:
            self._lib = lib

        def __getattr__(self, name: str) -> Any:
            return getattr(self._lib, name)

        def llvm70_translate_gpu_module_from_op(self, op: Any, chip: Any, data_layout: bytes | None, *rest: Any) -> Any:
            if data_layout is None and getattr(state, "coop", False):
                data_layout = layout
            return self._lib.llvm70_translate_gpu_module_from_op(op, chip, data_layout, *rest)

    def get_capi_with_layout() -> _CapiWithLayout:
        return _CapiWithLayout(get_capi())

    def exact_block_ltoir(module: Any, target_options: dict[str, Any], block: tuple[int, ...]) -> bytes:
        ir = nvvm.declare_exact_block(translate(module, target_options, gen_llvmir=True), block)
        if ir is None:  # not the IR expected: the translation's own build
            return bytes(translate(module, target_options, gen_lto=True))
        chip = str(target_options.get("chip") or get_gpu_compute_capability())
        return nvvm.compile_to_ltoir(ir, libnvvm().decode(), str(get_libdevice()), chip.replace("sm_", "compute_"),
                                     int(target_options.get("opt_level", 2)))

    def translate_coop_aware(module: Any, target_options: dict[str, Any], gen_lto: bool = False,
                             gen_llvmir: bool = False) -> Any:
        previous = getattr(state, "coop", False)
        try:
            state.coop = _has_coop_symbols(single_gpu_module(module))
        except Exception:  # never fail a compile over the optimisation
            state.coop = False
        try:
            block = _exact_block(target_options) if state.coop and gen_lto and not gen_llvmir else None
            if block is not None:
                return exact_block_ltoir(module, target_options, block)
            return translate(module, target_options, gen_lto=gen_lto, gen_llvmir=gen_llvmir)
        finally:
            state.coop = previous

    get_capi_with_layout.__wrapped__ = get_capi  # type: ignore[attr-defined]
    translate_coop_aware.__wrapped__ = translate  # type: ignore[attr-defined]
    mo._get_llvm70_capi = get_capi_with_layout
    mo._call_llvm70_capi = translate_coop_aware


# --- launches from several Python threads ------------------------------------------------
# A configured launcher (``kernel[grid, block]``, cached per configuration and so shared by threads) keeps per-launch
# state on itself: the copy-back callbacks of host arrays, the native launcher of the chosen specialisation.
# numba-cuda-mlir 0.6 serialises a dispatcher's launches only on free-threaded Python; with the GIL, threads still
# interleave there, and one thread runs (and clears) another's copy-backs before that thread's kernel ran, so a
# host output is never written. Give every dispatcher the launch lock the free-threaded build already uses, which
# its launchers take on every launch: when it is made, and before any launch configuration is made (a dispatcher
# made before this module was imported). Launchers configured before then keep numba-cuda-mlir's own behaviour.
_launch_lock_bootstrap = threading.Lock()


@once
def serialise_launches() -> None:
    """Idempotent; a numba-cuda-mlir without this private path keeps its own behaviour."""
    try:
        from numba_cuda_mlir.descriptor import MLIRDispatcher

        init = MLIRDispatcher.__dict__["__init__"]
        configure = MLIRDispatcher.__dict__["_configure_cached"]
    except (ImportError, KeyError):
        return

    def give_launch_lock(dispatcher: Any) -> None:
        if getattr(dispatcher, "_launch_lock", None) is None:
            with _launch_lock_bootstrap:  # two threads' first configurations must not make two locks
                if getattr(dispatcher, "_launch_lock", None) is None:
                    dispatcher._launch_lock = threading.RLock()

    def make_dispatcher(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        give_launch_lock(self)

    def configure_launcher(self: Any, *args: Any, **kwargs: Any) -> Any:
        give_launch_lock(self)
        return configure(self, *args, **kwargs)

    make_dispatcher.__wrapped__ = init  # type: ignore[attr-defined]
    configure_launcher.__wrapped__ = configure  # type: ignore[attr-defined]
    MLIRDispatcher.__init__ = make_dispatcher
    MLIRDispatcher._configure_cached = configure_launcher


# --- launch cost of integer arguments the kernel specialises on ---------------------------
# A kernel is specialised on an integer argument (ForceLiteralArg;
# docs: concepts, "Compile-time values and specialisation"). numba-cuda-mlir 0.6 then rebuilds the argument's
# literal type with ``types.literal(value)`` on every launch (``MLIRDispatcher._literal_type_for_value``),
# about 5 us of host time per argument and launch. Literal types are interned (one object per type and value),
# so a memo returns the very object the call would build; errors (values it rejects) are not memoised.
_LITERAL_MEMO_LIMIT = 4096


@once
def memoize_literal_launch_types() -> None:
    """Idempotent; a numba-cuda-mlir without this private hook keeps its own (slower, same) path."""
    try:
        from numba_cuda_mlir.descriptor import MLIRDispatcher

        original = MLIRDispatcher.__dict__["_literal_type_for_value"].__func__
    except (ImportError, KeyError, AttributeError):
        return
    memo: dict[tuple[type, object], object] = {}

    def literal_type_for_value(cls: type, value: object, index: Any) -> Any:
        key = (type(value), value)  # True and 1 are equal keys otherwise
        try:
            return memo[key]
        except (KeyError, TypeError):
            pass
        ty = original(cls, value, index)
        if len(memo) < _LITERAL_MEMO_LIMIT:
            try:
                memo[key] = ty
            except TypeError:  # an unhashable value: nothing to memoise
                pass
        return ty

    literal_type_for_value.__wrapped__ = original  # type: ignore[attr-defined]  # the benchmark's unmemoised row
    MLIRDispatcher._literal_type_for_value = classmethod(literal_type_for_value)


# --- one build per block shape -------------------------------------------------------------
# numba-cuda-mlir 0.6 keys a planner kernel's builds on the whole launch configuration, grid included, because a
# planner may read any of it. cuda.coop's planner reads the block shape only (the dynamic shared memory it needs is
# reported separately and the cluster shape is a launch attribute), so its builds are marked grid-free and a launch
# at another grid with the same block, dynamic shared memory and cluster reuses the build (issue 19, item 1). The
# mark is withheld when another planner or an extension that reads the launch configuration takes part in the build.
GRID_FREE = "cuda_coop_grid_free"


_own_planner: type | None = None  # cuda.coop's registered planner class (claim_planner)


def claim_planner(planner: type) -> None:
    """Tell the hooks below which registered planner is cuda.coop's (the package registers it)."""
    global _own_planner
    _own_planner = planner


def _only_cuda_coop_reads_the_launch(extensions: Iterable[object] | None) -> bool:
    """No planner but cuda.coop's is registered and no extension reads the launch configuration."""
    with _planner_registry._lock:
        planners = tuple(_planner_registry._planners)
    return (all(planner is _own_planner for planner in planners)
            and not any(getattr(extension, "uses_launch_config", False) for extension in extensions or ()))


def mark_grid_free(state: Any) -> None:
    """Record on the build being planned that it depends on the block shape only, when nothing else read the launch
    configuration: no other planner registered and no launch-config extension active."""
    if _only_cuda_coop_reads_the_launch(state.metadata.get("targetoptions", {}).get("extensions")):
        state.metadata[GRID_FREE] = True  # numba-cuda-mlir keeps it on the build


@once
def reuse_builds_across_grids() -> None:
    """Idempotent; a numba-cuda-mlir without these private names keeps one build per launch configuration."""
    try:
        from numba_cuda_mlir._launch_config import _is_launch_config_key_tuple as is_launch_key
        from numba_cuda_mlir.descriptor import MLIRDispatcher

        original = MLIRDispatcher.__dict__["_find_launch_config_overload_locked"]
    except (ImportError, KeyError):
        return

    def find(self: Any, argtypes: Any, launch_config_key: Any) -> Any:  # called with the dispatcher's lock held
        found = original(self, argtypes, launch_config_key)
        if found is not None or not is_launch_key(launch_config_key):
            return found
        same_block = launch_config_key[1:]  # (block, sharedmem, cluster): all but the grid
        for (sig_args, key), cres in tuple(self._launch_config_overloads.items()):
            if (is_launch_key(key) and key[1:] == same_block and cres.metadata.get(GRID_FREE)
                    and len(sig_args) == len(argtypes)
                    and all(self._can_reuse_overload(s, r) for s, r in zip(sig_args, argtypes, strict=True))):
                # Published under this grid's key too, so the next lookup is exact and evicting the first grid's
                # entry (numba-cuda-mlir keeps a bounded number of launch configurations) leaves this one.
                self._launch_config_overloads.setdefault((argtypes, launch_config_key), cres)
                return cres
        return None

    find.__wrapped__ = original  # type: ignore[attr-defined]
    MLIRDispatcher._find_launch_config_overload_locked = find
    _share_loaded_kernels_across_grids(MLIRDispatcher, is_launch_key)


# A reused build still cost a module load per new grid (about 3 ms on the H200): numba-cuda-mlir 0.6 makes a native
# dispatcher per launch configuration, and each loads the cubins it launches. A new grid therefore takes the native
# dispatcher of a configuration that differs in the grid only and holds grid-free builds alone. A shared native
# dispatcher must never load a build that is not grid-free (one made while another planner was registered, say),
# since it would serve it at every grid it is shared by: such a launch gets a native dispatcher of its own first.
def _share_loaded_kernels_across_grids(dispatcher_type: Any, is_launch_key: Callable[[Any], bool]) -> None:
    try:
        get_native = dispatcher_type.__dict__["_get_launch_config_dispatcher_and_generation"]
        prepare = dispatcher_type.__dict__["_prepare_for_launch"]
        from numba_cuda_mlir._launch_config import _launch_config_key as launch_key
    except (ImportError, KeyError):
        return

    def grid_free_sibling(self: Any, key: Any) -> Any:  # the launch-config lock is held
        builds: dict[object, bool] = {}  # key -> every build published under it is grid-free
        for (_, built_key), cres in self._launch_config_overloads.items():
            builds[built_key] = builds.get(built_key, True) and bool(cres.metadata.get(GRID_FREE))
        for other, native in self._launch_config_dispatchers.items():
            if is_launch_key(other) and other[1:] == key[1:] and builds.get(other):
                return native
        return None

    def get_native_dispatcher(self: Any, launch_config: Any) -> Any:
        key = launch_key(launch_config)
        if is_launch_key(key) and _only_cuda_coop_reads_the_launch(self.extensions):
            with self._launch_config_lock:
                if key not in self._launch_config_dispatchers:
                    native = grid_free_sibling(self, key)
                    if native is not None:
                        self._remember_kernel_dispatcher_locked(key, native)
                        return native, self._launch_config_generation
        return get_native(self, launch_config)

    def prepare_for_launch(self: Any, *args: Any) -> Any:
        ready = prepare(self, *args)
        native, generation, launch_config, required_shared_memory = ready
        key = launch_key(launch_config)
        if not is_launch_key(key):
            return ready
        with self._launch_config_lock:
            shared = sum(other is native for other in self._launch_config_dispatchers.values()) > 1
            if not shared or generation != self._launch_config_generation or all(
                    cres.metadata.get(GRID_FREE) for (_, built_key), cres in self._launch_config_overloads.items()
                    if built_key == key):
                return ready
            own = self._new_kernel_dispatcher()
            self._remember_kernel_dispatcher_locked(key, own)  # the shared one stays with the other grids
            return own, generation, launch_config, required_shared_memory

    get_native_dispatcher.__wrapped__ = get_native  # type: ignore[attr-defined]
    prepare_for_launch.__wrapped__ = prepare  # type: ignore[attr-defined]
    dispatcher_type._get_launch_config_dispatcher_and_generation = get_native_dispatcher
    dispatcher_type._prepare_for_launch = prepare_for_launch



# --- numba-cuda-mlir's disk cache for kernels without cuda.coop -------------------------------
# numba-cuda-mlir 0.6 neither reads nor writes its on-disk kernel cache while any planner is registered
# (``if not _planner_registry._planners``), since a cached build skips the planners. cuda.coop's planner changes only
# kernels that call cuda.coop, and those never reach that cache: every one is specialised on its launch
# configuration, which numba-cuda-mlir does not cache on disk. So cuda.coop's planner alone does not count there
# (issue 19, item 3); any other planner still does. ``has_planners`` keeps counting every planner, so launches stay
# on the planner-aware path that sizes a cuda.coop kernel's dynamic shared memory.


class _Planners(list[type]):
    """The registry's planner list; false when it holds cuda.coop's planner only."""

    def __bool__(self) -> bool:
        return any(planner is not _own_planner for planner in self)


@once
def keep_disk_cache_for_plain_kernels() -> None:
    """Idempotent; a numba-cuda-mlir whose registry is not what 0.6 has keeps its own behaviour."""
    registry_type = type(_planner_registry)
    if not isinstance(getattr(_planner_registry, "_planners", None), list) or not isinstance(
            registry_type.__dict__.get("has_planners"), property):
        return

    def has_planners(self: Any) -> bool:
        with self._lock:
            return len(self._planners) > 0

    with _planner_registry._lock:
        registry_type.has_planners = property(has_planners)
        _planner_registry._planners = _Planners(_planner_registry._planners)


# --- launch cost while cuda.coop's planner is registered --------------------------------------
# With a planner registered, numba-cuda-mlir 0.6 asks on every launch whether the launcher is still ready
# (``_get_ready_launch``), which it skips when none is: a plain kernel hashes its argument types to find its build
# again, and a kernel specialised on its launch configuration (every cuda.coop kernel) also normalises that
# configuration into a key and checks that its native dispatcher is still the registered one; a few microseconds
# per launch in all. The answer changes only when a build or a native dispatcher is dropped or replaced: a
# recompile or new literal arguments replace the generic native dispatcher and advance the generation, and evicting
# or replacing a launch configuration's native dispatcher goes through ``_remember_kernel_dispatcher_locked``, which
# forgets the answers here. So a launcher (known by its launch configuration dict) asking again with the same
# argument types, native dispatcher and generation gets the answer it got before.
_READY_MEMO_LIMIT = 256


@once
def memoize_ready_launches() -> None:
    """Idempotent; a numba-cuda-mlir without these private names keeps its own (slower, same) path."""
    try:
        from numba_cuda_mlir._launch_config import _launch_config_key as launch_key
        from numba_cuda_mlir.descriptor import MLIRDispatcher

        ready = MLIRDispatcher.__dict__["_get_ready_launch"]
        remember = MLIRDispatcher.__dict__["_remember_kernel_dispatcher_locked"]
    except (ImportError, KeyError):
        return

    def remember_kernel_dispatcher(self: Any, *args: Any, **kwargs: Any) -> Any:  # the launch-config lock is held
        self.__dict__.pop("_coop_ready", None)
        return remember(self, *args, **kwargs)

    def get_ready_launch(self: Any, argtypes: Any, available: Any, configured: Any, native: Any,
                         generation: Any) -> Any:
        state = self.__dict__  # read directly: attribute lookups through the dispatcher's class cost more here
        memo = state.get("_coop_ready")
        entry = memo.get(id(available)) if memo is not None else None
        if (entry is not None and entry[0] is available and entry[1] is configured and entry[2] is native
                and entry[3] == generation and entry[4] == state["_launch_config_generation"]
                and entry[5] is state["_c"] and entry[6] == state["_requires_launch_config"]
                and entry[7] == argtypes):
            if entry[8] is None:
                return entry[9]
            with state["_launch_config_lock"]:
                try:
                    state["_launch_config_dispatchers"].move_to_end(entry[8])  # as the full check does (LRU)
                    return entry[9]
                except KeyError:  # evicted by another thread since: ask again
                    pass
        with self._launch_config_lock:  # the state an answer rests on changes under this lock only
            result = ready(self, argtypes, available, configured, native, generation)
            if result is not None:
                memo = state.setdefault("_coop_ready", {})
                if len(memo) >= _READY_MEMO_LIMIT:
                    memo.clear()
                memo[id(available)] = (available, configured, native, generation, self._launch_config_generation,
                                       self._c, self._requires_launch_config, tuple(argtypes),
                                       launch_key(result[2]), result)
            return result

    remember_kernel_dispatcher.__wrapped__ = remember  # type: ignore[attr-defined]
    get_ready_launch.__wrapped__ = ready  # type: ignore[attr-defined]
    MLIRDispatcher._remember_kernel_dispatcher_locked = remember_kernel_dispatcher
    MLIRDispatcher._get_ready_launch = get_ready_launch


# --- a compile-only build's target -----------------------------------------------------------
# numba-cuda-mlir 0.6 links for the device's compute capability when the target is older than it (and asks the
# driver for it). A compile-only build is for its own target alone: present the target as the device for the
# duration of that compile, then put the process's value back.
_target_lock = threading.RLock()


@contextlib.contextmanager
def compile_only_target(cc: tuple[int, int]) -> Iterator[None]:
    """numba-cuda-mlir's device compute capability is ``cc`` inside (one compile-only build at a time)."""
    from numba_cuda_mlir import tools

    with _target_lock:
        previous = tools._cached_cc
        tools._cached_cc = cc
        try:
            yield
        finally:
            tools._cached_cc = previous


_DISPATCHER = "numba_cuda_mlir.descriptor:MLIRDispatcher."
_LAUNCH_CONFIG = "numba_cuda_mlir._launch_config:"
_PLANNERS = "numba_cuda_mlir._whole_function_planners:"
_OPTIMIZATION = "numba_cuda_mlir.mlir_optimization:"

#: Every patch, in the order ``install`` applies those of one moment.
PATCHES: tuple[Patch, ...] = (
    Patch(
        "serialise_launches",
        targets=(_DISPATCHER + "__init__", _DISPATCHER + "_configure_cached"),
        reason="threads share a configured launcher, which keeps per-launch state (host copy-backs); 0.6 serialises "
               "a dispatcher's launches only on free-threaded Python, so every dispatcher gets that build's launch "
               "lock (issue 18)",
        removal="numba-cuda-mlir serialising launches with the GIL too (every dispatcher made with _launch_lock)",
        when=AT_REGISTER, where="numba_mlir._register_backend", install=serialise_launches),
    Patch(
        "reuse_builds_across_grids",
        targets=(_DISPATCHER + "_find_launch_config_overload_locked",
                 _DISPATCHER + "_get_launch_config_dispatcher_and_generation", _DISPATCHER + "_prepare_for_launch"),
        reason="0.6 keys a planner kernel's builds and loaded modules on the whole launch configuration (the launch "
               "metadata of NVIDIA/numba-cuda-mlir#203); cuda.coop's planner reads the block shape only, so a new grid "
               "reuses the build and its loaded module (issue 19, item 1)",
        removal="numba-cuda-mlir letting a planner say which parts of the launch configuration its build reads",
        when=AT_REGISTER, where="numba_mlir._register_backend", install=reuse_builds_across_grids,
        relies_on=(_LAUNCH_CONFIG + "_is_launch_config_key_tuple", _LAUNCH_CONFIG + "_launch_config_key",
                   _DISPATCHER + "_can_reuse_overload", _DISPATCHER + "_remember_kernel_dispatcher_locked",
                   _DISPATCHER + "_new_kernel_dispatcher")),
    Patch(
        "keep_disk_cache_for_plain_kernels",
        targets=(_PLANNERS + "_WholeFunctionPlannerRegistry.has_planners", _PLANNERS + "_planner_registry._planners"),
        reason="0.6 turns its disk cache off for every kernel while any planner is registered (as "
               "NVIDIA/numba-cuda-mlir#202 made it); cuda.coop's planner changes only kernels with cuda.coop calls, "
               "which that cache never holds (issue 19, item 3)",
        removal="numba-cuda-mlir skipping its disk cache only for kernels a planner changed",
        when=AT_REGISTER, where="numba_mlir._register_backend", install=keep_disk_cache_for_plain_kernels),
    Patch(
        "memoize_ready_launches",
        targets=(_DISPATCHER + "_get_ready_launch", _DISPATCHER + "_remember_kernel_dispatcher_locked"),
        reason="with a planner registered, 0.6 checks on every launch that the launcher is still ready (a few "
               "microseconds); the answer is remembered until a build or native dispatcher is replaced "
               "(benchmarks/RESULTS.md, launch cost 2b)",
        removal="numba-cuda-mlir remembering the ready launch itself, as it does with no planner registered",
        when=AT_REGISTER, where="numba_mlir._register_backend", install=memoize_ready_launches,
        relies_on=(_LAUNCH_CONFIG + "_launch_config_key",)),
    Patch(
        "translate_cooperative_kernels",
        targets=(_OPTIMIZATION + "_get_llvm70_capi", _OPTIMIZATION + "_call_llvm70_capi"),
        reason="0.6 translates kernels below sm_100 with 64-bit shared pointers and declares a block as a maximum at "
               "most (maxntid); kernels with cuda.coop calls get NVRTC's 32-bit shared pointers (p3:32:32:32: CUB's "
               "shared indexing folds as in CUB C++, 56 -> 40 registers in a 256x16 exchange) and their LTO-IR "
               "declares the exact block they are built for (reqntid: no divergent fallback around CUB's warp "
               "shuffles), compiled by the same libNVVM with the translation's options",
        removal="numba-cuda-mlir translating with 32-bit shared pointers (or taking the data layout as an option) and "
                "emitting reqntid for a kernel specialised on its block shape",
        when=AT_FIRST_KERNEL, where="numba_mlir._planner.CoopPlanner.run", install=translate_cooperative_kernels,
        relies_on=(_OPTIMIZATION + "_get_single_gpu_module", _OPTIMIZATION + "_get_libnvvm_path",
                   "numba_cuda_mlir.lowering_utilities.llvm_utils:NVPTX64_DATALAYOUT",
                   "numba_cuda_mlir.numba_cuda.cudadrv.libs:get_libdevice",
                   "numba_cuda_mlir.tools:get_gpu_compute_capability")),
    Patch(
        "memoize_literal_launch_types",
        targets=(_DISPATCHER + "_literal_type_for_value",),
        reason="0.6 rebuilds an integer argument's literal type on every launch of a kernel specialised on it "
               "(about 5 us each); literal types are interned, so a memo returns the same object",
        removal="numba-cuda-mlir memoising literal argument types on its launch path",
        when=AT_FIRST_LITERAL, where="numba_mlir._planner.KernelPlan._static", install=memoize_literal_launch_types),
    Patch(
        "compile_only_target",
        targets=("numba_cuda_mlir.tools:_cached_cc",),
        reason="0.6 links for the device's compute capability (asking the driver) when the target is older; a "
               "compile-only build presents its own target as the device for the compile, then puts it back",
        removal="numba-cuda-mlir linking for the requested target without asking the device",
        when=AROUND_A_CALL, where="numba_mlir._compat.compile_for_launch"),
)
