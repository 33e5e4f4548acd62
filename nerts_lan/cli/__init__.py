"""The ``nerts-lan`` command: one composition root for the engine, bots, network and window.

It owns every option of every subcommand (``parser``, the rules' options once in ``rules``), turns
them into typed configs and hands those to the front ends (``commands``): the headless peers, the
simulator, the window. Every subcommand checks its arguments and its input files as hostile: a
problem is a ``UsageError``, which exits 2 with one line on standard error that names it, never a
traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..console import use_stand_ins
from ..usage import USAGE_EXIT, UsageError
from .parser import build_parser, parse
from .rules import add_rule_options, options_from_args

__all__ = ["UsageError", "add_rule_options", "build_parser", "main", "options_from_args"]


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
