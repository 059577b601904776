"""Issue 19, items 1 and 3, without a GPU: a cuda.coop build is marked grid-free and a launch configuration that
differs in the grid only finds it; numba-cuda-mlir's disk cache stays on for kernels without cuda.coop."""
from __future__ import annotations

import numpy as np
import pytest
from numba_cuda_mlir import cuda

import cuda.coop.numba_mlir as numba_coop  # noqa: F401  (registers the backend and installs the hooks)
from cuda import coop
from cuda.coop.numba_mlir import _compat, _patches


def _key(grid, block=(128, 1, 1), sharedmem=0, cluster=None):
    return (("grid", grid), ("block", block), ("sharedmem", sharedmem), ("cluster", cluster))


class _Build:
    def __init__(self, grid_free):
        self.metadata = {_patches.GRID_FREE: True} if grid_free else {}


class _Dispatcher:
    """What the lookup reads of numba-cuda-mlir's dispatcher: its launch-keyed builds and its reuse test."""

    _can_reuse_overload = staticmethod(lambda built, wanted: built == wanted)

    def __init__(self, builds):
        self._launch_config_overloads = dict(builds)


def _find(dispatcher, argtypes, key):
    from numba_cuda_mlir.descriptor import MLIRDispatcher

    return MLIRDispatcher._find_launch_config_overload_locked(dispatcher, argtypes, key)


def test_the_lookup_is_installed_over_numba_cuda_mlirs():
    from numba_cuda_mlir.descriptor import MLIRDispatcher

    assert hasattr(MLIRDispatcher._find_launch_config_overload_locked, "__wrapped__")


def test_a_grid_free_build_serves_every_grid_of_its_block_shape():
    build = _Build(grid_free=True)
    dispatcher = _Dispatcher({(("a", "b"), _key((1, 1, 1))): build})
    assert _find(dispatcher, ("a", "b"), _key((7, 1, 1))) is build
    assert dispatcher._launch_config_overloads[(("a", "b"), _key((7, 1, 1)))] is build  # the next lookup is exact
    assert _find(dispatcher, ("a", "b"), _key((9, 3, 1))) is build


@pytest.mark.parametrize("other", [_key((7, 1, 1), block=(64, 1, 1)), _key((7, 1, 1), sharedmem=1024),
                                   _key((7, 1, 1), cluster=(2, 1, 1))])
def test_another_block_shape_shared_memory_or_cluster_builds_again(other):
    dispatcher = _Dispatcher({(("a",), _key((1, 1, 1))): _Build(grid_free=True)})
    assert _find(dispatcher, ("a",), other) is None


def test_a_build_not_marked_grid_free_is_not_reused_and_other_argument_types_are_not_either():
    dispatcher = _Dispatcher({(("a",), _key((1, 1, 1))): _Build(grid_free=False),
                              (("b",), _key((2, 1, 1))): _Build(grid_free=True)})
    assert _find(dispatcher, ("a",), _key((5, 1, 1))) is None
    assert _find(dispatcher, ("c",), _key((5, 1, 1))) is None
    assert len(dispatcher._launch_config_overloads) == 2


def _built(kernel, args):
    options = {"chip": "sm_90", "__launch_config__": {"grid": (3, 1, 1), "block": (128, 1, 1), "sharedmem": 0,
                                                       "cluster": None}}
    return _compat.compile_for_launch(kernel.py_func, [_compat.typeof(a) for a in args], options)


def _tile_sum_kernel():
    @cuda.jit
    def tile_sum(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        coop.load(block, src, items, offset=cuda.blockIdx.x * 512)
        total = coop.sum(block, items)
        if block.rank() == 0:
            dst[cuda.blockIdx.x] = total

    return tile_sum


def test_the_planner_marks_a_cuda_coop_build_grid_free_and_leaves_plain_kernels_alone():
    tile_sum = _tile_sum_kernel()

    @cuda.jit
    def plain(src, dst):
        dst[cuda.grid(1)] = src[cuda.grid(1)]

    data = np.zeros(2048, np.int32)
    assert _built(tile_sum, (data, data)).metadata.get(_patches.GRID_FREE) is True
    assert _patches.GRID_FREE not in _built(plain, (data, data)).metadata


def test_another_planner_withholds_the_mark(monkeypatch):
    class Other(_compat.WholeFunctionPlanner):
        def run(self):
            return False

    state = type("State", (), {"metadata": {"targetoptions": {}}})()
    monkeypatch.setattr(_compat._planner_registry, "_planners",
                        _patches._Planners([*_compat._planner_registry._planners, Other]))
    _patches.mark_grid_free(state)
    assert _patches.GRID_FREE not in state.metadata
    monkeypatch.undo()
    _patches.mark_grid_free(state)
    assert state.metadata[_patches.GRID_FREE] is True
    launch_reader = type("Extension", (), {"uses_launch_config": True})()
    state = type("State", (), {"metadata": {"targetoptions": {"extensions": [launch_reader]}}})()
    _patches.mark_grid_free(state)
    assert _patches.GRID_FREE not in state.metadata


def test_cuda_coops_planner_alone_does_not_turn_off_the_disk_cache_but_counts_for_the_launch_path():
    registry = _compat._planner_registry
    assert list(registry._planners) == [numba_coop._entry.CoopPlannerEntry]
    assert not registry._planners  # what numba-cuda-mlir asks before reading or writing its disk cache
    assert registry.has_planners  # launches stay on the planner-aware path (dynamic shared memory of cuda.coop)
    other = type("Other", (_compat.WholeFunctionPlanner,), {"run": lambda self: False})
    assert _patches._Planners([*registry._planners, other])  # any other planner turns the cache off as before


_PLAIN_PROGRAM = """
import sys
from numba_cuda_mlir import cuda, tools
tools._cached_cc = (9, 0)  # compile without a driver
import cuda.coop.numba_mlir as numba_coop
from numba_cuda_mlir.numba_cuda import types

@cuda.jit(cache=True)
def plain(a, b):
    i = cuda.grid(1)
    b[i] = a[i] + 1

plain.compile((types.float32[::1], types.float32[::1]))
print("hits", sum(plain._cache_hits.values()), "misses", sum(plain._cache_misses.values()))
"""


def test_a_plain_kernel_is_read_back_from_numba_cuda_mlirs_disk_cache_with_cuda_coop_imported(tmp_path):
    import os
    import subprocess
    import sys

    program = tmp_path / "plain_kernel.py"
    program.write_text(_PLAIN_PROGRAM)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, str(program)], capture_output=True, text=True, env=env, timeout=300,
                           check=False) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr[-3000:]
    assert runs[0].stdout.split()[-4:] == ["hits", "0", "misses", "1"], runs[0].stdout
    assert runs[1].stdout.split()[-4:] == ["hits", "1", "misses", "0"], runs[1].stdout


class _DeviceArray:
    """A device array as numba-cuda-mlir sees one (CUDA array interface), so launches need no driver here."""

    def __init__(self, n, typestr):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": typestr, "data": (0x10000, False), "version": 3,
                                         "strides": None}


@pytest.fixture
def native_launches(monkeypatch):
    """Launches run up to numba-cuda-mlir's native launcher, which records (grid, native dispatcher) instead."""
    from numba_cuda_mlir import descriptor, tools

    launched = []

    class Launcher:
        def __init__(self, native, grid, block, stream, sharedmem, cluster):
            self.native, self.grid = native, grid

        def __call__(self, *args):
            launched.append((self.grid[0], self.native))

    monkeypatch.setattr(tools, "_cached_cc", (9, 0))  # compile for sm_90 without a driver
    monkeypatch.setattr(descriptor, "LaunchConfiguration", Launcher)
    return launched


@pytest.mark.filterwarnings("ignore::numba_cuda_mlir.numba_cuda.core.errors.NumbaPerformanceWarning")
def test_new_grids_launch_through_the_native_dispatcher_that_loaded_the_build(native_launches):
    kernel = _tile_sum_kernel()
    src, dst = _DeviceArray(4096, "<i4"), _DeviceArray(8, "<i4")
    for grid in (1, 7, 3):
        kernel[grid, 128](src, dst)
    kernel[2, 64](src, dst)  # another block shape: a build and a native dispatcher of its own
    assert [grid for grid, _ in native_launches] == [1, 7, 3, 2]
    natives = [native for _, native in native_launches]
    assert natives[0] is natives[1] is natives[2] and natives[3] is not natives[0]
    builds = kernel._launch_config_overloads  # one build per block shape, published under each grid
    assert len(builds) == 4 and len({id(build) for build in builds.values()}) == 2


@pytest.mark.filterwarnings("ignore::numba_cuda_mlir.numba_cuda.core.errors.NumbaPerformanceWarning")
def test_a_build_that_is_not_grid_free_never_loads_into_a_shared_native_dispatcher(native_launches, monkeypatch):
    kernel = _tile_sum_kernel()
    ints, int_totals = _DeviceArray(4096, "<i4"), _DeviceArray(8, "<i4")
    for grid in (1, 7, 3):
        kernel[grid, 128](ints, int_totals)
    shared = native_launches[0][1]

    class Other(_compat.WholeFunctionPlanner):  # its builds may depend on the grid
        def run(self):
            return False

    monkeypatch.setattr(_compat._planner_registry, "_planners",
                        _patches._Planners([*_compat._planner_registry._planners, Other]))
    floats, float_totals = _DeviceArray(4096, "<f4"), _DeviceArray(8, "<f4")
    kernel[7, 128](floats, float_totals)
    kernel[9, 128](ints, int_totals)  # a new grid while the other planner is registered: no sharing either
    kernel[1, 128](ints, int_totals)
    grids = [grid for grid, _ in native_launches[3:]]
    natives = [native for _, native in native_launches[3:]]
    assert grids == [7, 9, 1]
    assert natives[0] is not shared and natives[1] is not shared and natives[1] is not natives[0]
    assert natives[2] is shared  # the grids whose builds are all grid-free keep sharing
    assert kernel._launch_config_dispatchers[_key((3, 1, 1))] is shared


@pytest.mark.filterwarnings("ignore::numba_cuda_mlir.numba_cuda.core.errors.NumbaPerformanceWarning")
def test_a_remembered_ready_launch_is_asked_again_once_its_build_or_native_dispatcher_is_gone(native_launches,
                                                                                           monkeypatch):
    from numba_cuda_mlir import descriptor
    from numba_cuda_mlir.descriptor import MLIRDispatcher

    from cuda.coop.numba_mlir import _planner

    assert hasattr(MLIRDispatcher._get_ready_launch, "__wrapped__")
    builds = [0]
    original = _planner.CoopPlanner.run

    def counted(self):
        builds[0] += 1
        return original(self)

    monkeypatch.setattr(_planner.CoopPlanner, "run", counted)
    monkeypatch.setattr(descriptor, "_LAUNCH_CONFIG_CACHE_SIZE", 2)  # a third launch configuration evicts the first
    kernel = _tile_sum_kernel()
    src, dst = _DeviceArray(4096, "<i4"), _DeviceArray(8, "<i4")
    launchers = {threads: kernel[4, threads] for threads in (128, 64, 32)}
    for threads in (128, 128, 64, 64):
        launchers[threads](src, dst)
    assert builds[0] == 2
    launchers[32](src, dst)  # evicts 128's native dispatcher and its build
    launchers[128](src, dst)
    assert builds[0] == 4
    assert native_launches[-1][1] is kernel._launch_config_dispatchers[_key((4, 1, 1))]
    assert native_launches[-1][1] is not native_launches[0][1]
    kernel.recompile()
    launchers[128](src, dst)
    assert builds[0] == 5
    assert native_launches[-1][1] is kernel._launch_config_dispatchers[_key((4, 1, 1))]


def test_a_plain_kernels_remembered_launch_follows_a_recompile(native_launches):
    @cuda.jit
    def plain(src, dst):
        dst[cuda.grid(1)] = src[cuda.grid(1)]

    src, dst = _DeviceArray(512, "<i4"), _DeviceArray(512, "<i4")
    launch = plain[4, 128]
    launch(src, dst)
    launch(src, dst)
    assert native_launches[0][1] is native_launches[1][1] is plain._c
    plain.recompile()
    launch(src, dst)
    assert native_launches[2][1] is plain._c is not native_launches[0][1]
