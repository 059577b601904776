"""Qualified operations: the common contract plus the backend's extra options (SPEC 9)."""
from __future__ import annotations

import inspect
from typing import Any, Callable

from .._markers.base import qualified
from ._entry import NAMESPACE

# Options only the qualified namespace accepts, per operation (a common call naming one is C3, not C5).
QUALIFIED_OPTIONS: dict[str, tuple[str, ...]] = {
    **{name: ("prefix_op", "valid_items", "aggregate_output")  # SPEC 9.6
       for name in ("scan", "exclusive_sum", "inclusive_sum", "exclusive_scan", "inclusive_scan")},
    "merge_sort_keys": ("compare_op",), "merge_sort_pairs": ("compare_op",),  # SPEC 9.7
    "adjacent_difference": ("difference_op",), "discontinuity": ("flag_op",),  # SPEC 9.7
    "radix_rank": ("exclusive_digit_prefix",),  # SPEC 9.8
    "radix_sort_keys": ("blocked_to_striped",), "radix_sort_pairs": ("blocked_to_striped",),  # SPEC 9.8
    "run_length_decode": ("total_decoded_size", "relative_offsets", "decoded_offset_dtype"),  # SPEC 9.10
    "run_length_decode_into": ("decoded_offset_dtype", "relative_offsets_destination"),
    "exchange": ("ranks", "valid_flags", "warp_time_slicing"),  # SPEC 9.4
}


# Options of SPEC 9 this backend does not build yet: a common call naming one is C3; a qualified call is R9-shaped.
PENDING_QUALIFIED_OPTIONS: dict[str, tuple[str, ...]] = {
}


# Optional positional operands only the qualified namespace accepts, after the common operands (default None).
QUALIFIED_OPERANDS: dict[str, tuple[str, ...]] = {
    **{name: ("state",) for name in  # SPEC 9.6: the one-item state of a StatefulFunction prefix_op
       ("scan", "exclusive_sum", "inclusive_sum", "exclusive_scan", "inclusive_scan")},
}


# What the qualified variant of an operation adds to the common docstring it shares.
QUALIFIED_NOTES: dict[str, str] = {
    **{name: """
    Qualified additions (``cuda.coop.numba_mlir.{name}``): keys may also be float16, float32 or
    float64 (ordered by their bits: negatives inverted, so ``-0.0 == +0.0``); ``blocked_to_striped=True``
    returns the sorted tile in striped order (compile-time bool).
    """.format(name=name) for name in ("radix_sort_keys", "radix_sort_pairs")},
}


def qualify(common: Callable[..., Any]) -> Callable[..., Any]:
    """The marker of ``common`` in this backend's namespace, with the common contract."""
    return qualified(common, NAMESPACE)


def extended(common: Callable[..., Any]) -> Callable[..., Any]:
    """The qualified marker of ``common``, with its qualified-only keyword options (and optional positional
    operands) added (default None)."""
    marker = qualify(common)
    if marker.__qualname__ in QUALIFIED_NOTES:
        doc, note = common.__doc__ or "", QUALIFIED_NOTES[marker.__qualname__].strip("\n") + "\n\n"
        at = doc.find("    See Also:")  # before the links, so the note reads as part of the description
        marker.__doc__ = doc[:at] + note + doc[at:] if at >= 0 else doc + "\n" + note
    extra = QUALIFIED_OPTIONS.get(marker.__qualname__, ())
    operands = QUALIFIED_OPERANDS.get(marker.__qualname__, ())
    if extra or operands:
        sig = inspect.signature(marker)
        params = list(sig.parameters.values())
        cut = sum(p.kind == p.POSITIONAL_ONLY for p in params)
        params = (params[:cut]
                  + [inspect.Parameter(name, inspect.Parameter.POSITIONAL_ONLY, default=None) for name in operands]
                  + params[cut:]
                  + [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None) for name in extra])
        marker.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    return marker
