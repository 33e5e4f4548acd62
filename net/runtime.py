"""The network's own thread: an asyncio loop that the window or a bot talks to through queues.

pyglet owns the main thread and must never block on the network, and the network must never wait
for a frame to be drawn. ``NetworkThread`` runs an asyncio loop in a daemon thread; other threads
hand it work with ``call`` (fire and forget) or ``run`` (wait for the result), and it hands
events back through ``events``, a thread-safe queue that the main thread drains once per frame.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import queue
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["NetworkThread"]

T = TypeVar("T")


class NetworkThread:
    """An asyncio event loop in a thread of its own."""

    def __init__(self, name: str = "nerts-net") -> None:
        self.events: queue.Queue[Any] = queue.Queue()
        """Events for the main thread, in the order the network produced them."""
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()
        self._ready.wait()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def call(self, function: Callable[..., Any], *args: Any) -> None:
        """Run ``function(*args)`` in the loop soon; do not wait."""
        self._loop.call_soon_threadsafe(function, *args)

    def run(self, coroutine: Awaitable[T], timeout: float | None = 30.0) -> T:
        """Run ``coroutine`` in the loop and wait for its result (not from the loop's thread)."""
        if threading.current_thread() is self._thread:
            close = getattr(coroutine, "close", None)
            if close is not None:
                close()  # never awaited: close it rather than leak a warning
            raise RuntimeError("NetworkThread.run would deadlock when called from its own loop")
        future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(
            coroutine,  # type: ignore[arg-type]
            self._loop,
        )
        return future.result(timeout)

    def post(self, event: Any) -> None:
        """Put an event on the queue (from the loop's thread)."""
        self.events.put(event)

    def drain(self) -> list[Any]:
        """Every event waiting now, in order, without blocking."""
        drained = []
        while True:
            try:
                drained.append(self.events.get_nowait())
            except queue.Empty:
                return drained

    def stop(self, timeout: float = 5.0) -> None:
        """Cancel what is still running in the loop, stop it and join the thread."""
        if not self._thread.is_alive():
            return

        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
            self.run(cancel_all(), timeout)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(self._ready.set)
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()
