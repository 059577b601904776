"""``python -m cuda.coop``: doctor, cache and explain commands.

Importing this package stays standard-library only, like ``import cuda.coop``: each command imports what it needs
when it runs (the doctor imports the backend; the explainers never do).
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from .._errors import CoopError
from .._version import __version__
from . import cache_command, explain


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="python -m cuda.coop",
        description="cuda.coop tools: check the installation, manage the provider cache, explain layouts.")
    root.add_argument("--version", action="version", version=f"cuda-coop {__version__}")
    commands = root.add_subparsers(dest="command", metavar="COMMAND", required=True)
    doctor = commands.add_parser(
        "doctor", help="check versions, toolchain, GPU and cache, and build a sample kernel",
        description="Check that this machine can build (and run) cuda.coop kernels. One line per check: OK, "
                    "WARN or FAIL with the fix. Exit status 1 when any check fails.")
    doctor.add_argument("--no-build", action="store_true", help="skip the sample build")
    doctor.add_argument("--target", default="sm_90", help="architecture of the sample build (default sm_90)")
    doctor.set_defaults(handler=_doctor)
    cache_command.add_parser(commands)
    explain.add_parser(commands)
    return root


def _doctor(args: argparse.Namespace) -> int:
    from . import doctor

    return doctor.main(build=not args.no_build, target=args.target)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler  # set by each command's parser
    try:
        return handler(args)
    except (CoopError, OSError) as exc:  # the user's setting or path: a message and status 1, not a traceback
        print(f"python -m cuda.coop {args.command}: {exc}", file=sys.stderr)
        return 1
