"""The ``nerts-lan`` command's entry point: parse, run, and turn a usage error into one line."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from nerts_lan.cli.console import use_stand_ins
from nerts_lan.cli.parser import parse
from nerts_lan.usage import USAGE_EXIT, UsageError

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the process exit status."""
    # First of all, before --help prints: no console or pipe kills a command with a character
    # its encoding lacks (cp1252 on a Windows pipe has no "→" and no suits).
    use_stand_ins(sys.stdout, sys.stderr)
    args = parse(argv)
    try:
        return int(args.run(args))
    except UsageError as error:
        sys.stderr.write(error.line() + "\n")
        return USAGE_EXIT
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1
