"""A guard that fails a test which leaves a thread, an asyncio task or a socket behind.

zeroconf's habit: a test that leaks a thread or a task hides a close that does not close, and
the next test pays for it. The guard notes what is alive before the test, lets what the test
started wind down (waiting for that condition, with a generous bound, never for a fixed time),
and fails the test naming whatever is still there.

Tasks are checked in every loop that ``asyncio.run`` makes during the test: a task still
pending when the test's coroutine returns was never awaited or cancelled by the code under test
(``asyncio.run`` would cancel it silently).
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["no_leaks"]

_WIND_DOWN = 10.0
"""How long threads and sockets a test started may take to close after it ends."""


@contextmanager
def no_leaks() -> Iterator[None]:
    """Fail (AssertionError) if the block leaves threads, pending tasks or sockets behind."""
    threads_before = set(threading.enumerate())
    sockets_before = _open_sockets()
    leaked_tasks: list[str] = []
    policy_before = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(_CheckingPolicy(leaked_tasks))
    try:
        yield
    finally:
        asyncio.set_event_loop_policy(policy_before)
    problems = list(leaked_tasks)
    deadline = time.monotonic() + _WIND_DOWN
    while True:
        threads = [
            t
            for t in threading.enumerate()
            if t not in threads_before and t.is_alive() and not _process_wide(t)
        ]
        sockets = _open_sockets() - sockets_before
        if not threads and not sockets:
            break
        if time.monotonic() > deadline:
            problems += [f"thread {t.name!r} ({_target(t)}) still running" for t in threads]
            problems += [f"{len(sockets)} socket(s) left open"] if sockets else []
            break
        gc.collect()  # a socket object nobody holds is closed by its finaliser
        time.sleep(0.01)
    if problems:
        raise AssertionError("the test leaked: " + "; ".join(problems))


def _process_wide(thread: threading.Thread) -> bool:
    """pyglet's media worker starts with the first sound and serves the process until it ends."""
    return type(thread).__name__ == "PlayerWorkerThread"


def _target(thread: threading.Thread) -> str:
    """What the thread runs, to find who started it (threads are often left unnamed)."""
    target = getattr(thread, "_target", None)
    if target is None:
        return f"a {type(thread).__module__}.{type(thread).__qualname__}"
    return str(getattr(target, "__qualname__", target))


def _open_sockets() -> set[str]:
    """The inodes of this process's open sockets (Linux /proc; empty where there is none)."""
    found = set()
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return found
    for name in names:
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if target.startswith("socket:"):
            found.add(target)
    return found


class _CheckingLoop(asyncio.SelectorEventLoop):
    """A loop that notes tasks still pending when its first ``run_until_complete`` returns."""

    def __init__(self, leaked: list[str]) -> None:
        super().__init__()
        self._leaked = leaked
        self._main_done = False

    def run_until_complete(self, future: Any) -> Any:
        result = super().run_until_complete(future)
        if not self._main_done:
            # asyncio.run's first call runs the test's coroutine; later ones are its cleanup.
            self._main_done = True
            for task in asyncio.all_tasks(self):
                if not task.done():
                    self._leaked.append(f"task {task.get_coro()!r} still pending")
        return result


class _CheckingPolicy(asyncio.DefaultEventLoopPolicy):
    def __init__(self, leaked: list[str]) -> None:
        super().__init__()
        self._leaked = leaked

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        return _CheckingLoop(self._leaked)
