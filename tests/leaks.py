"""A guard that fails a test which leaves a thread, an asyncio task or a socket behind.

zeroconf's habit: a test that leaks a thread or a task hides a close that does not close, and
the next test pays for it. The guard notes what is alive before the test, lets what the test
started wind down (waiting for that condition, with a generous bound, never for a fixed time),
and fails the test naming whatever is still there.

Tasks are checked in every loop that ``asyncio.run`` makes during the test: a task still
pending when the test's coroutine returns was never awaited or cancelled by the code under test
(``asyncio.run`` would cancel it silently). The loops are the platform's own kind (the proactor
on Windows, the selector loop elsewhere), as a player's ``asyncio.run`` gets.

Sockets are counted from /proc/self/fd where there is one (Linux: every socket, whoever made
it). Elsewhere (Windows, macOS) the guard counts the open ``socket.socket`` objects instead, which
it learns of by wrapping ``socket.socket.__init__`` at import: a socket made by C code without a
``socket.socket`` object (none in this project or its dependencies, as far as known) goes unseen
there.
"""

from __future__ import annotations

import asyncio
import gc
import os
import socket
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["no_leaks", "open_sockets"]

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


def open_sockets() -> int:
    """How many sockets this process has open (see the module's docstring for how)."""
    return len(_open_sockets())


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
    """This process's open sockets: their inodes from /proc, or where there is none (Windows,
    macOS) the open socket objects (see the module's docstring)."""
    if not _HAS_PROC:
        return _open_socket_objects()
    found: set[str] = set()
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


_HAS_PROC = sys.platform.startswith("linux") and os.path.isdir("/proc/self/fd")
"""Linux's /proc (Windows Python under Wine sees Wine's own /proc: not what Windows has)."""

_made_sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()
"""Every ``socket.socket`` made since this module was imported (kept only while alive)."""


def _open_socket_objects() -> set[str]:
    """The ``socket.socket`` objects made since import and not yet closed, by identity."""
    return {f"socket object {id(s):#x}" for s in list(_made_sockets) if s.fileno() != -1}


def _note_sockets_made() -> None:
    """Wrap ``socket.socket.__init__`` so that ``_made_sockets`` learns of every socket object,
    accepted ones included (the loops wrap each accepted descriptor in a ``socket.socket``)."""
    original = socket.socket.__init__

    def noted(self: socket.socket, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        _made_sockets.add(self)

    socket.socket.__init__ = noted  # type: ignore[method-assign]


if not _HAS_PROC:
    _note_sockets_made()

_PlatformLoop: type[asyncio.AbstractEventLoop] = (
    asyncio.ProactorEventLoop  # type: ignore[attr-defined,unused-ignore]
    if sys.platform == "win32"
    else asyncio.SelectorEventLoop
)
"""The loop class ``asyncio.run`` makes on this platform: the proactor on Windows."""


class _CheckingLoop(_PlatformLoop):  # type: ignore[misc,valid-type]
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
