"""Poisoned output buffers, inputs that never hold the poison, and the exact comparison that sees both (shared by the
GPU tests' ``gpu_helpers`` and the conformance cases; not a test module).

An output slot the kernel never writes keeps its poison, so the poison must be a value no correct result holds there:

* signed integers: the dtype's minimum plus one; unsigned: the maximum minus one. Bounded input ranges (``-100 ...
  100``, ``-10**6 ... 10**6``) never reach it, full-range inputs are drawn without it (``full_range``), and it is not
  the extreme itself, which tests use as identities, ``oob_default`` values and initial values of max scans;
* floats: a quiet NaN whose payload NumPy's ``nan`` and the GPU's canonical NaN do not have;
* records: each field poisoned by its dtype (padding bytes 0x5A); anything else (``bool``): the 0x5A byte pattern.
"""
from __future__ import annotations

import numpy as np

#: The float poisons' bit patterns: quiet NaNs (the top mantissa bit set) with a 0x5A5A... payload.
FLOAT_POISON_BITS = {2: 0x7E5A, 4: 0x7FDA5A5A, 8: 0x7FFA5A5A5A5A5A5A}


def _bits_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"u{dtype.itemsize}")


def poison_value(dtype):
    """The poison of a scalar ``dtype``, as a NumPy scalar of that dtype (records: see ``poisoned``)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        return dtype.type(np.iinfo(dtype).min + 1)
    if dtype.kind == "u":
        return dtype.type(np.iinfo(dtype).max - 1)
    if dtype.kind == "f" and dtype.itemsize in FLOAT_POISON_BITS:
        return np.array(FLOAT_POISON_BITS[dtype.itemsize], _bits_dtype(dtype)).view(dtype)[()]
    return np.frombuffer(b"\x5a" * dtype.itemsize, dtype)[0]


def _fill(view: np.ndarray) -> None:
    dtype = view.dtype
    if dtype.names:
        for name in dtype.names:
            _fill(view[name])
    elif dtype.kind == "f" and dtype.itemsize in FLOAT_POISON_BITS:
        view.view(_bits_dtype(dtype))[...] = FLOAT_POISON_BITS[dtype.itemsize]  # the bits, whatever casts do to NaNs
    elif dtype.kind in "iu":
        view[...] = poison_value(dtype)


def poisoned(n, dtype) -> np.ndarray:
    """``n`` slots of ``dtype`` holding its poison, so that a slot the kernel never writes shows."""
    out = np.full(n * np.dtype(dtype).itemsize, 0x5A, np.uint8).view(dtype)  # a record's padding too (a copy skips it)
    _fill(out)
    return out


def full_range(rng: np.random.Generator, n: int, dtype) -> np.ndarray:
    """``n`` integers drawn uniformly from every value of ``dtype`` except its poison."""
    dtype = np.dtype(dtype)
    info, poison = np.iinfo(dtype), poison_value(dtype)
    x = rng.integers(info.min, info.max - 1, n, dtype=dtype, endpoint=True)  # one value fewer than the dtype holds
    x[x >= poison] += 1  # ... shifted over the poison
    return x


def same_values(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Per slot, whether ``got`` holds ``want``: integers by value, floats bit for bit (``-0.0`` is not ``0.0``),
    except that two NaNs match when neither is the poison (a NaN's payload is not a result, a poisoned slot is)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype.kind != "f" or got.dtype != want.dtype or got.dtype.itemsize not in FLOAT_POISON_BITS:
        return np.asarray(got == want)
    bits = _bits_dtype(got.dtype)
    got_bits, want_bits = np.ascontiguousarray(got).view(bits), np.ascontiguousarray(want).view(bits)
    poison = FLOAT_POISON_BITS[got.dtype.itemsize]
    both_nan = np.isnan(got) & np.isnan(want) & (got_bits != poison) & (want_bits != poison)
    return (got_bits == want_bits) | both_nan


def assert_same(got: np.ndarray, want: np.ndarray, err_msg: str = "") -> None:
    """``same_values`` everywhere, or an AssertionError naming the first slots that differ (values and bits)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{err_msg}: shape {got.shape} != {want.shape}"
    bad = np.flatnonzero(~same_values(got, want).reshape(-1))
    if bad.size:
        flat_got, flat_want = got.reshape(-1), want.reshape(-1)
        shown = []
        for i in bad[:8]:
            g, w = flat_got[i], flat_want[i]
            if got.dtype.kind == "f":
                bits = _bits_dtype(got.dtype)
                g_bits, w_bits = np.array(g).view(bits)[()], np.array(w).view(bits)[()]
                shown.append(f"[{i}] {g!r} (0x{g_bits:x}) != {w!r} (0x{w_bits:x})")
            else:
                shown.append(f"[{i}] {g!r} != {w!r}")
        raise AssertionError(f"{err_msg}: {bad.size} of {got.size} slots differ: " + "; ".join(shown))
