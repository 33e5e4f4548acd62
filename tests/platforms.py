"""Tests that cannot run on some OS are skipped with a reason naming it, never silently."""

from __future__ import annotations

import sys

import pytest

__all__ = ["WINDOWS", "not_on_windows"]

WINDOWS = sys.platform == "win32"


def not_on_windows(why: str) -> pytest.MarkDecorator:
    """Skip on Windows: ``why`` says what Windows lacks (a signal, /proc, POSIX modes...)."""
    return pytest.mark.skipif(WINDOWS, reason=f"Windows: {why}")
