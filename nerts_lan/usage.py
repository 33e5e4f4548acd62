"""The one kind of usage error: a bad argument or input file, named in one line.

Raised anywhere below the command line; ``nerts-lan`` (``cli.main``) prints ``line()`` on standard
error and exits 2, never with a traceback.
"""

from __future__ import annotations

from typing import Final

__all__ = ["USAGE_EXIT", "UsageError"]

USAGE_EXIT: Final = 2
"""The exit status of every usage error."""


class UsageError(Exception):
    """``command`` (``""`` for ``nerts-lan`` itself) was given something it cannot use."""

    def __init__(self, command: str, message: str) -> None:
        super().__init__(message)
        self.command = command
        self.message = message

    def line(self) -> str:
        """The one line for standard error, without its newline."""
        program = f"nerts-lan {self.command}" if self.command else "nerts-lan"
        return f"{program}: error: {self.message}"
