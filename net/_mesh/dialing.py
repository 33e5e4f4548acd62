"""The dials of one link: connection attempts that overlap instead of queueing.

A dial waits ``DIAL_TIMEOUT`` seconds before it gives up: longer than Windows takes to report a
closed port (it retries the SYN for about 2 s before the refusal), so that a refusal is seen as
one and not taken for a firewall's silence. A dial still pending does not hold up the next: a
new attempt starts every ``DIAL_STAGGER`` seconds (at most ``DIALS_AT_ONCE`` at once), so a peer
that came back, or moved to an address learned meanwhile, is reached promptly. The first that
connects is taken; any other is closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from net.refusals import CONNECT, record

__all__ = ["DIALS_AT_ONCE", "DIAL_STAGGER", "DIAL_TIMEOUT", "Connector", "Dials"]

DIAL_TIMEOUT = 5.0
DIAL_STAGGER = 0.5
DIALS_AT_ONCE = 3

Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]
Connector = Callable[[str, int], Awaitable[Streams]]


class Dials:
    """The pending connection attempts of one link."""

    def __init__(self, connect: Connector | None = None) -> None:
        """``connect(host, port)``: how to open a connection (``asyncio.open_connection``;
        another for fault injection)."""
        self._connect = connect or asyncio.open_connection
        self._pending: dict[asyncio.Future[Streams], float] = {}

    async def next(self, address: tuple[str, int]) -> Streams | None:
        """Start an attempt at ``address`` (unless enough are pending) and wait up to
        ``DIAL_STAGGER`` seconds for one to connect: its connection, or None (call again after
        the retry interval; the attempts still pending go on meanwhile)."""
        loop = asyncio.get_running_loop()
        for attempt, started in list(self._pending.items()):
            if loop.time() - started > DIAL_TIMEOUT:
                self._drop(attempt)
        if len(self._pending) < DIALS_AT_ONCE:
            attempt = asyncio.ensure_future(self._attempt(*address))
            self._pending[attempt] = loop.time()
        done, _ = await asyncio.wait(
            set(self._pending), timeout=DIAL_STAGGER, return_when=asyncio.FIRST_COMPLETED
        )
        opened: Streams | None = None
        for attempt in done:
            del self._pending[attempt]
            if attempt.cancelled() or attempt.exception() is not None:
                continue
            if opened is None:
                opened = attempt.result()
            else:
                attempt.result()[1].close()  # two connected at once: one is enough
        if opened is not None:
            self.close()
        return opened

    def close(self) -> None:
        """Give up every pending attempt (any that connects meanwhile is closed)."""
        for attempt in list(self._pending):
            self._drop(attempt)

    def _drop(self, attempt: asyncio.Future[Streams]) -> None:
        del self._pending[attempt]
        attempt.cancel()
        attempt.add_done_callback(_close_if_opened)

    async def _attempt(self, host: str, port: int) -> Streams:
        try:
            return await self._connect(host, port)
        except OSError as error:
            record(CONNECT, error, host)
            raise


def _close_if_opened(attempt: asyncio.Future[Streams]) -> None:
    if not attempt.cancelled() and attempt.exception() is None:
        attempt.result()[1].close()
