"""One way for tests to wait: for a condition, never for a fixed time.

``until`` polls from a plain thread (processes, the window, a network thread); ``async_until``
polls inside an asyncio loop. Both fail the test with ``what`` when the deadline passes. The
deadlines are generous on purpose: a loaded CI machine may be slow, and a passing test never
waits for them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

__all__ = ["async_until", "until"]


def until(
    condition: Callable[[], object],
    timeout: float = 10.0,
    what: str = "condition",
    step: float = 0.005,
    between: Callable[[], object] | None = None,
) -> None:
    """Poll ``condition()`` until it is true; ``between()`` runs between polls (a pump, a frame)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        if between is not None:
            between()
        time.sleep(step)


async def async_until(
    condition: Callable[[], object],
    timeout: float = 5.0,
    what: str = "condition",
    step: float = 0.002,
) -> None:
    """Poll ``condition()`` inside the running loop until it is true."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(step)
