"""How many seeds a seed sweep of the suite runs: all of them on Linux; one in ``WINDOWS_SHARE``
under Windows, where the Windows lane (Windows Python under Wine on this 2-core machine) is
several times slower. Seeds pinned because they once failed run everywhere. ``NERTS_ALL_SEEDS=1``
runs every seed on Windows too."""

from __future__ import annotations

import os

from tests.platforms import WINDOWS

__all__ = ["WINDOWS_SHARE", "sweep"]

WINDOWS_SHARE = 4
"""Under Windows, a sweep runs every fourth of its seeds."""


def sweep(seeds: range) -> list[int]:
    """The seeds of ``seeds`` this run plays (see the module's docstring)."""
    if WINDOWS and os.environ.get("NERTS_ALL_SEEDS") != "1":
        return list(seeds)[::WINDOWS_SHARE]
    return list(seeds)
