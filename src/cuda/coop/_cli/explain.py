"""``python -m cuda.coop explain OPERATION``: which member holds which tile element before and after a call.

Every picture is computed from ``cuda.coop._semantics.layouts``, the one statement of the layout rules; the
explainer modules only choose teaching shapes and example data and word the captions.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .._markers.records import BLOCK, WARP, Operation, records
from .._markers.records import of as records_of
from .._semantics import layouts
from .._semantics.load_store import ALGORITHMS as LOAD_STORE_ALGORITHMS
from . import explain_compute as compute
from . import explain_movement as movement
from .render import Picture, to_svg, to_text
from .shapes import ExplainError, Shape

MAX_THREADS, MAX_ITEMS, MAX_CELLS = 1024, 64, 16384
Builder = Callable[[str, Shape, argparse.Namespace], Picture]


@dataclass(frozen=True)
class Explainer:
    """One kind of picture; an operation's record names the one that draws it (``Operation.explainer``)."""

    build: Builder
    shows: str  # what the picture shows (the command's help)
    options: Callable[[argparse.ArgumentParser, Operation], None] = lambda parser, op: None
    items: Callable[[argparse.Namespace], int] = lambda args: 4  # default items per thread


def drawn_groups(op: Operation) -> tuple[str, ...]:
    """The ``--group`` choices of ``op``'s picture: blocks and (logical) warps where its record accepts them."""
    return tuple(kind for kind, accepted in (("block", BLOCK), ("warp", WARP)) if accepted in op.groups.kinds)


def _int_list(text: str) -> list[int]:
    try:
        return [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, e.g. 3,1,2; got {text!r}") from None


def _load_store_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    parser.add_argument("--algorithm", default="direct", choices=LOAD_STORE_ALGORITHMS)


def _exchange_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    parser.add_argument("--mode", default="striped_to_blocked", choices=layouts.EXCHANGE_ALL_MODES)
    parser.add_argument("--ranks", type=_int_list, help="scatter modes: destination of each item, blocked order "
                        "(default: the tile reversed)")
    parser.add_argument("--flags", type=_int_list, help="scatter_to_striped_flagged: valid_flags, blocked order")


def _shuffle_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    parser.add_argument("--mode", default="down", choices=("up", "down", *layouts.SCALAR_SHUFFLE_MODES))
    parser.add_argument("--distance", type=int, default=1, help="offset/rotate only (qualified scalar shuffles)")


def _scan_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    if op.fixed("mode") is None:  # the named forms fix theirs
        parser.add_argument("--mode", default="exclusive", choices=layouts.SCAN_MODES)
    parser.add_argument("--reverse", action="store_true", help="reverse=True: scan from the last position")
    parser.add_argument("--head-flags", type=_int_list, help="head_flags, blocked order: non-zero starts a segment")


def _argreduce_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    parser.add_argument("--values", type=_int_list, help="the value at each tile position, blocked order")
    parser.add_argument("--valid-items", type=int, help="only the first N positions of each group's tile")


def _reduce_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    parser.add_argument("--no-broadcast", action="store_true", help="broadcast=False: only rank 0 gets the result")
    parser.add_argument("--valid-items", type=int, help="reduce the first N members' scalars (needs --items 1); "
                        "with --head-flags, the first N positions of each group's tile")
    parser.add_argument("--head-flags", type=_int_list, help="head_flags, blocked order: one total per segment")
    parser.add_argument("--compact", action="store_true", help="compact=True: the totals at the front, and a count")


def _reduce_items(args: argparse.Namespace) -> int:
    if args.head_flags is not None:
        return 1 if args.group == "warp" else 4
    return 1 if args.valid_items is not None else 4


def _broadcast_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    parser.add_argument("--src-rank", type=int, default=0, help="the member whose value everyone receives")


def _compaction_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    parser.add_argument("--flags", type=_int_list, help="flags, blocked order: non-zero keeps the item "
                        "(default: sample flags)")
    parser.add_argument("--valid-items", type=int, help="only the first N positions of each group's tile")


def _reduce_batched_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    parser.add_argument("--batches", type=int, default=10, help="B, the payload's extent (default 10)")
    parser.add_argument("--output-layout", default="striped", choices=("striped", "blocked"))


def _keys_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--keys", type=_int_list, help="the tile's keys, blocked order (default: sample keys)")


def _merge_sort_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    _keys_option(parser)
    parser.add_argument("--descending", action="store_true")
    parser.add_argument("--valid-items", type=int, help="sort only the first N keys of each group's tile")


def _radix_sort_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    _keys_option(parser)
    parser.add_argument("--descending", action="store_true")
    parser.add_argument("--blocked-to-striped", action="store_true", help="qualified option: striped output")


def _radix_rank_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    _keys_option(parser)
    parser.add_argument("--descending", action="store_true")
    parser.add_argument("--begin-bit", type=int, default=0)
    parser.add_argument("--radix-bits", type=int, default=4)


def _topk_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    _keys_option(parser)
    parser.add_argument("--k", type=int, default=8, help="how many keys to select (default 8)")
    parser.add_argument("--valid-items", type=int, help="only the first N keys take part")


def _histogram_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    parser.add_argument("--bins", type=int, default=12)
    parser.add_argument("--bins-per-thread", type=int, default=2)
    parser.add_argument("--samples", type=_int_list, help="bin index of each sample, blocked order")


def _run_length_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    parser.add_argument("--runs-per-thread", type=int, default=2)
    parser.add_argument("--decoded-items", type=int, default=4, help="decoded_items_per_thread (D)")
    parser.add_argument("--offset", type=int, default=0, help="decoded_window_offset")
    parser.add_argument("--run-lengths", type=_int_list, help="length of each run, blocked order")


def _adjacent_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    parser.add_argument("--direction", default="left", choices=("left", "right"))
    parser.add_argument("--boundary", action="store_true", help="pass the tile's boundary item")


def _discontinuity_options(parser: argparse.ArgumentParser, op: Operation) -> None:
    parser.add_argument("--mode", default="heads", choices=("heads", "tails", "heads_and_tails"))
    parser.add_argument("--boundary", action="store_true", help="pass the tile's boundary item(s)")


def _scalar_for_warps(args: argparse.Namespace) -> int:
    return 1 if args.group == "warp" else 4


EXPLAINERS: dict[str, Explainer] = {
    "load_pattern": Explainer(movement.explain_load_store, "global memory -> registers, per algorithm",
                              _load_store_options),
    "store_pattern": Explainer(movement.explain_load_store, "registers -> global memory, per algorithm",
                               _load_store_options),
    "layout_change": Explainer(movement.explain_exchange, "rearrange a payload between layouts", _exchange_options),
    "neighbour_moves": Explainer(movement.explain_shuffle, "move items one position up or down the tile",
                                 _shuffle_options, lambda args: 1 if args.mode in layouts.SCALAR_SHUFFLE_MODES else 4),
    "prefixes": Explainer(compute.explain_scan, "which prefix each slot receives", _scan_options, _scalar_for_warps),
    "aggregate": Explainer(compute.explain_reduce, "which member receives the aggregate (or each segment's total)",
                           _reduce_options, _reduce_items),
    "broadcast": Explainer(movement.explain_broadcast, "which member's value every member receives",
                           _broadcast_options),
    "compaction": Explainer(movement.explain_compaction, "where the kept items end up", _compaction_options),
    "extreme": Explainer(compute.explain_argreduce, "which value and index every member receives",
                         _argreduce_options),
    "batches": Explainer(compute.explain_reduce_batched, "which lane holds which batch's result",
                         _reduce_batched_options),
    "merge_order": Explainer(compute.explain_sort, "which sorted key each slot holds", _merge_sort_options),
    "radix_order": Explainer(compute.explain_sort, "which sorted key each slot holds", _radix_sort_options),
    "digit_ranks": Explainer(compute.explain_sort, "the rank of each slot's key", _radix_rank_options),
    "selection": Explainer(compute.explain_sort, "where the selected keys end up", _topk_options),
    "bins": Explainer(compute.explain_histogram, "which member counts which bin (striped)", _histogram_options),
    "decoded_window": Explainer(compute.explain_run_length_decode, "which decoded items each member receives",
                                _run_length_options),
    "differences": Explainer(compute.explain_adjacent, "which neighbours each slot subtracts", _adjacent_options),
    "flags": Explainer(compute.explain_adjacent, "which neighbours each flag compares", _discontinuity_options),
}


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    explain = subparsers.add_parser(
        "explain", help="show which thread holds which tile element before and after an operation",
        description="Show which member (thread) holds which tile element before and after an operation, on a "
                    "small teaching shape. Example: python -m cuda.coop explain load --algorithm transpose "
                    "--threads 8 --items 4")
    operations = explain.add_subparsers(dest="operation", metavar="OPERATION", required=True)
    for op in records():
        if not op.explainer:
            continue
        name, explainer, groups = op.name, EXPLAINERS[op.explainer], drawn_groups(op)
        parser = operations.add_parser(name, help=explainer.shows, description=f"{name}: {explainer.shows}.")
        parser.add_argument("--threads", type=int, default=None,
                            help="threads in the block (default 8; reduce_batched: the warp size)")
        parser.add_argument("--items", type=int, default=None, help="items per thread (default 4, or 1 for scalars)")
        parser.add_argument("--warp-size", type=int, default=4,
                            help="lanes per (teaching) warp; the hardware has 32 (default 4)")
        parser.add_argument("--group", choices=groups, default=groups[0],
                            help="block, or warp groups of --warp-size lanes")
        parser.add_argument("--svg", type=Path, metavar="FILE", help="also write the picture as SVG to FILE")
        explainer.options(parser, op)
        parser.set_defaults(handler=run, explain_parser=parser)


def picture_for(args: argparse.Namespace) -> Picture:
    """The picture the parsed ``explain`` arguments ask for; ExplainError for a shape the operation refuses."""
    op = records_of(args.operation)
    explainer = EXPLAINERS[op.explainer]
    threads = args.threads if args.threads is not None else (args.warp_size if args.group == "warp" and
                                                             drawn_groups(op) == ("warp",) else 8)
    items = args.items if args.items is not None else explainer.items(args)
    if not (1 <= threads <= MAX_THREADS and 1 <= items <= MAX_ITEMS and threads * items <= MAX_CELLS):
        raise ExplainError(f"the explainer draws at most {MAX_THREADS} threads, {MAX_ITEMS} items per thread and "
                           f"{MAX_CELLS} cells; got {threads} x {items}")
    if args.warp_size < 1:
        raise ExplainError("--warp-size must be positive")
    if args.group == "warp" and threads % args.warp_size:
        raise ExplainError(f"warp groups need complete warps: --threads must be a multiple of --warp-size "
                           f"{args.warp_size}")
    return explainer.build(args.operation, Shape(threads, items, args.warp_size, args.group), args)


def run(args: argparse.Namespace) -> int:
    try:
        picture = picture_for(args)
    except ExplainError as exc:
        args.explain_parser.error(str(exc))  # exits with status 2, like any usage error
    print(to_text(picture), end="")
    if args.svg is not None:
        args.svg.write_text(to_svg(picture), encoding="utf-8")
        print(f"\nwrote {args.svg}")
    return 0
