"""Run-length decode markers: a block expands a blocked tile of runs into decoded items."""
from __future__ import annotations

from typing import Any

from .records import ONE_DIMENSIONAL_BLOCK, Extension, Operation, declare
from .groups import ThreadGroup
from .temp_storage import TempStorage
from .thread_data import ThreadData


# qualified options (docs: operations/run_length_decode, "Qualified additions")
@declare(Operation("run_length_decode", "run_length", "decode one window of run-length encoded runs",
                   ONE_DIMENSIONAL_BLOCK, form=(("offset", "decoded_window_offset"),), explainer="decoded_window",
                   extends=Extension(options=("total_decoded_size", "relative_offsets", "decoded_offset_dtype"))))
def run_length_decode(group: ThreadGroup, run_values: ThreadData, run_lengths: ThreadData, /, *,
                      decoded_items_per_thread: int, decoded_window_offset: Any = 0,
                      temp_storage: TempStorage | None = None) -> ThreadData:
    """Decode one window of a block's run-length encoded stream; returns a fresh payload of run values.

    The runs are blocked: slot ``i`` of member ``t`` holds run ``t*R + i``. The stream is the runs' values, each
    repeated by its length; member ``t`` receives decoded items ``offset + t*D`` to ``offset + t*D + D - 1``.
    Positions past the end of the stream are zero, so an offset at or beyond the total gives all zeros. Each
    call rebuilds the run table: decode further windows by calling again with a larger offset.

    Args:
        group: a one-dimensional block.
        run_values: a ThreadData of any numeric dtype (left unchanged).
        run_lengths: a ThreadData of any integer dtype with the same extent ``R`` (left unchanged). Positive
            lengths come first, then zero padding; all zeros is an empty stream. A zero followed by a positive
            length, a negative length, or a total that does not fit ``uint32`` traps on the device.
        decoded_items_per_thread: compile-time positive ``D``, the extent of the result.
        decoded_window_offset: the block-uniform position of the window's first item (default 0; it may start
            inside a run). A runtime integer; a negative value traps.
        temp_storage: an explicit ``TempStorage``; the call's scratch holds the run table (values and offsets).

    Returns:
        A fresh ThreadData of ``D`` items of the run-value dtype, defined in every member.

    See Also:
        :doc:`Run-length decode </operations/run_length_decode>` in the cuda-coop documentation.
    """


# qualified options (docs: operations/run_length_decode, "Qualified additions")
@declare(Operation("run_length_decode_into", "run_length", "decode run-length encoded runs into an array",
                   ONE_DIMENSIONAL_BLOCK, form=(("offset", "destination_offset"), ("into", True)),
                   extends=Extension(options=("decoded_offset_dtype", "relative_offsets_destination"))))
def run_length_decode_into(group: ThreadGroup, run_values: ThreadData, run_lengths: ThreadData, destination: Any,
                           /, *, decoded_items_per_thread: int, destination_offset: Any = 0,
                           temp_storage: TempStorage | None = None) -> Any:
    """Decode a block's whole run-length encoded stream into ``destination``; returns the total as ``uint32``.

    Builds the run table once, then decodes ``T*D`` items per window and writes the stream to
    ``destination[destination_offset : destination_offset + total]``. An empty stream writes nothing.

    Args:
        group: a one-dimensional block.
        run_values: a ThreadData of any numeric dtype (left unchanged).
        run_lengths: a ThreadData of any integer dtype with the same extent (left unchanged); the stream rules of
            ``run_length_decode`` apply (violations trap).
        destination: a one-dimensional contiguous array of the run-value dtype, the same array in every member.
            Its capacity is checked before any write: ``destination_offset + total > len(destination)`` traps.
        decoded_items_per_thread: compile-time positive ``D``: items each member decodes per window.
        destination_offset: where the stream starts in ``destination`` (default 0); a negative runtime value traps.
        temp_storage: an explicit ``TempStorage``.

    Returns:
        The number of decoded items (``uint32``), in every member.

    See Also:
        :doc:`Run-length decode </operations/run_length_decode>` in the cuda-coop documentation.
    """
