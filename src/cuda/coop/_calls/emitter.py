"""How a backend passes a planned call's C parameters: the ``Emitter`` protocol, and the one switch over ``Abi``.

A backend implements one ``Emitter`` over its compiler's values (numba-cuda-mlir: MLIR values in a codegen; the CuTe
DSL: values of the traced kernel) and calls ``parameter_values``, which asks it for each parameter of a
``SiteCall`` by kind. A new ``Abi`` kind is a new method here: mypy then rejects every backend that lacks it, and
``check_emitter`` does at registration what mypy does statically.
"""
from __future__ import annotations

from typing import Mapping, Protocol, SupportsInt, TypeVar, assert_never

from .._cub.provider import Abi
from .site import Param, SiteCall

V = TypeVar("V", covariant=True)  # a value of the backend's compiler


class Emitter(Protocol[V]):
    """The value of each kind of C parameter, in the backend's compiler; ``operand`` is the index of the call operand
    that feeds the parameter (``SiteCall``'s operand order)."""

    def pointer(self, operand: int) -> V:
        """``Abi.PTR``: a pointer to the elements of an array or a payload."""

    def extent(self, operand: int) -> V:
        """``Abi.LEN``: an array's extent, as a 64-bit integer."""

    def integer(self, operand: int | None, constant: int) -> V:
        """``Abi.I64``: a 64-bit integer, from the operand or else the constant."""

    def scalar(self, operand: int | None, constant: object, dtype: str) -> V:
        """``Abi.VALUE``/``Abi.ELEM``: a value of ``dtype``, from the operand or else the constant."""

    def result_slot(self, dtype: str) -> V:
        """``Abi.OUT``: a pointer to a fresh slot the call writes a ``dtype`` result through (the backend keeps the
        slots, in order, for the call's results)."""

    def scratch(self) -> V:
        """``Abi.SCRATCH``: the call's scratch slice."""

    def stride(self) -> V:
        """``Abi.STRIDE``: the distance between two groups' scratch slices."""


EMITTER_METHODS = ("pointer", "extent", "integer", "scalar", "result_slot", "scratch", "stride")


def check_emitter(emitter: type) -> None:
    """At a backend's registration: its emitter class implements every method (what mypy checks statically)."""
    missing = [name for name in EMITTER_METHODS if not callable(getattr(emitter, name, None))]
    if missing:
        raise TypeError(f"{emitter.__qualname__} does not implement the cuda.coop Emitter protocol: it lacks "
                        f"{', '.join(missing)}")


def _operand(param: Param, site: SiteCall) -> int:
    if param.operand is None:  # a family binds every pointer and extent to an operand (site.bind)
        raise AssertionError(f"{site.symbol}: a {param.abi.value} parameter without an operand")
    return param.operand


def _dtype(dtype: str | None, param: Param, site: SiteCall) -> str:
    if dtype is None:
        raise AssertionError(f"{site.symbol}: a {param.abi.value} parameter without a dtype")
    return dtype


def _constant_int(param: Param, site: SiteCall) -> int:
    if param.operand is not None:
        return 0
    if not isinstance(param.value, SupportsInt):  # the call layer binds integers there
        raise AssertionError(f"{site.symbol}: i64 parameter bound to {param.value!r}")
    return int(param.value)


def parameter_values(site: SiteCall, emitter: Emitter[V], given: Mapping[int, V] | None = None) -> list[V]:
    """The values of ``site``'s C parameters in order; ``given``: values the backend passes itself, by index."""
    values: list[V] = []
    for index, param in enumerate(site.params):
        if given and index in given:
            values.append(given[index])
            continue
        match param.abi:
            case Abi.PTR:
                values.append(emitter.pointer(_operand(param, site)))
            case Abi.LEN:
                values.append(emitter.extent(_operand(param, site)))
            case Abi.I64:
                values.append(emitter.integer(param.operand, _constant_int(param, site)))
            case Abi.ELEM | Abi.VALUE:
                values.append(emitter.scalar(param.operand, param.value, _dtype(param.dtype or site.elem_dtype,
                                                                                param, site)))
            case Abi.OUT:
                values.append(emitter.result_slot(_dtype(param.dtype, param, site)))
            case Abi.SCRATCH:
                values.append(emitter.scratch())
            case Abi.STRIDE:
                values.append(emitter.stride())
            case _:
                assert_never(param.abi)
    return values
