"""Launches of one kernel from several Python threads (issue 18, item 0). ``kernel[grid, block]`` is cached per
configuration, so threads share one configured launcher, which keeps each launch's host-array copy-backs on itself;
unserialised, one thread ran and cleared another's copy-backs before that thread's kernel ran (an output never
written). These tests need no GPU: they watch the launcher's own entry point; ``tests/gpu/test_threads_gpu.py``
checks the results on a device."""
from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("numba_cuda_mlir")  # the backend raises ImportError, not a skip, without its compiler
pytest.importorskip("cuda.coop.numba_mlir")


def _kernel():
    from numba_cuda_mlir import cuda as nb_cuda

    @nb_cuda.jit
    def write_one(out):
        out[0] = 1

    return write_one


def test_one_kernels_launches_from_many_threads_run_one_at_a_time(monkeypatch):
    import warnings

    from numba_cuda_mlir.descriptor import _ArgMarshaller

    kernel = _kernel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the grid of one block warns about occupancy
        launcher = kernel[1, 32]
    assert launcher is kernel[1, 32]  # the shared object the race is about
    inside, most = 0, 0
    count_lock = threading.Lock()

    def launch_body(self, *args):  # stands in for the body that marshals, compiles, launches and copies back
        nonlocal inside, most
        with count_lock:
            inside += 1
            most = max(most, inside)
        time.sleep(0.002)  # long enough for the other threads to arrive
        with count_lock:
            inside -= 1

    monkeypatch.setattr(_ArgMarshaller, "_call_impl", launch_body)
    start = threading.Barrier(16)

    def launch_many():
        start.wait()
        for _ in range(5):
            launcher(None)

    threads = [threading.Thread(target=launch_many) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most == 1, f"{most} launches of one kernel ran at once"


def test_the_launch_lock_is_made_once_and_reentrant():
    import warnings

    kernel = _kernel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        launcher = kernel[1, 32]
    locks = set()
    start = threading.Barrier(8)

    def first_launch():
        start.wait()
        try:
            launcher(None)  # no GPU here: the launch itself fails after the lock was taken
        except Exception:  # noqa: BLE001
            pass
        locks.add(id(kernel._launch_lock))

    threads = [threading.Thread(target=first_launch) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(locks) == 1
    with kernel._launch_lock, kernel._launch_lock:  # a launch from inside a launch's callback must not deadlock
        pass


def test_a_dispatcher_without_the_lock_gets_it_before_its_next_launch_configuration():
    import warnings

    from numba_cuda_mlir.descriptor import _ArgMarshaller

    kernel = _kernel()
    assert kernel._launch_lock is not None  # made with the dispatcher
    assert not hasattr(_ArgMarshaller.__call__, "__wrapped__")  # launches pay no wrapper of cuda.coop's
    kernel._launch_lock = None  # as a dispatcher made before cuda.coop was imported has it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kernel[2, 64]
    assert kernel._launch_lock is not None
