"""``python -m cuda.coop cache info|clear``: the provider cache's location, size and entries."""
from __future__ import annotations

import argparse


def human_size(count: int) -> str:
    """``512 B``, ``3.2 KiB``, ``1.5 MiB``..."""
    if count < 1024:
        return f"{count} B"
    size = float(count)
    for unit in ("KiB", "MiB", "GiB"):
        size /= 1024
        if size < 1024 or unit == "GiB":
            break
    return f"{size:.1f} {unit}"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cache = subparsers.add_parser("cache", help="show or clear cuda.coop's provider cache",
                                  description="Show or clear the provider cache of compiled CUB code (the "
                                              "Troubleshooting page of the docs, \"The cache of generated code\").")
    actions = cache.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("info", help="location, size and entries").set_defaults(handler=info)
    actions.add_parser("clear", help="delete the files cuda.coop wrote there, precompiled headers included "
                       "(nothing else)").set_defaults(handler=clear)


def info(args: argparse.Namespace) -> int:
    from .._cub import cache_inventory as cache

    found = cache.inventory()
    print(f"location: {found.directory}")
    if found.disabled:
        print("status: disabled by CUDA_COOP_DISABLE_CACHE (builds neither read nor write it)")
    if not found.exists:
        print("status: not created yet (the first build creates it)")
        return 0
    if found.problem:
        print(f"status: not used by builds because {found.problem}; make it private (chmod 700) or set "
              "XDG_CACHE_HOME")
    print(f"entries: {found.entries}" + (f" ({found.bad_entries} unreadable: rebuilt when needed)"
                                         if found.bad_entries else ""))
    print(f"size: {human_size(found.total_bytes)} ({found.entries + found.other_files + found.pch_files} files, "
          "counting locks, header manifests and precompiled headers)")
    if found.pch_files:
        live = found.pch_files - found.pch_stale_files
        print(f"precompiled headers: {found.pch_files} ({human_size(found.pch_bytes)}): {live} of running processes "
              f"(each process uses only its own and removes them at exit), {found.pch_stale_files} left by processes "
              "that are gone (the next build removes them)")
    if found.foreign_files:
        print(f"other files: {found.foreign_files} not written by cuda.coop (cache clear leaves them alone)")
    return 0


def clear(args: argparse.Namespace) -> int:
    from .._cub import cache_inventory as cache

    directory = cache.inventory(check_entries=False).directory
    removed, freed = cache.clear()
    print(f"removed {removed} files ({human_size(freed)}) from {directory}")
    return 0
