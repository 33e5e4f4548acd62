"""The tables on the LAN, live: one browser under both front ends (the window's lobby and
``nerts-lan tables`` / ``join --headless``).

``TableBrowser`` watches the mDNS adverts of Nerts tables in a network thread of its own, from
its creation until ``close()``. The thread posts each change (an advert seen, updated or gone);
``tables()`` applies what arrived and returns the tables this version of the game can join.

An advert can outlive its table: a laptop that sleeps, crashes or loses the network sends no
goodbye, and mDNS caches keep the advert's pointer for an hour. A fresh browser (``nerts-lan
tables``) never sees such a table, since nobody answers its query, but a browser that lives as
long as the window would list it until then. So every few seconds the browser knocks on each
listed table's port (a TCP connect, closed at once, which a table ignores), and a table that
misses two knocks in a row is dropped as if its advert had gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
from concurrent.futures import Future
from dataclasses import dataclass

from nerts_lan.lan.advert import PROTOCOL, SERVICE_TYPE, TableInfo, table_from_advert
from nerts_lan.lan.by_address import async_table_at
from net import Advert, Discovery, NetworkThread

__all__ = ["CHECK_EVERY", "TableBrowser"]

CHECK_EVERY = 4.0
"""Seconds between two knocks on each listed table's port."""

_MISSES = 2
"""Knocks in a row a table may leave unanswered before it is dropped from the list."""


class TableBrowser:
    """Nerts tables advertised on the LAN (one interface, or every one)."""

    def __init__(self, interface: str | None = None, *, check_every: float = CHECK_EVERY) -> None:
        """``interface``: one IPv4 address to browse on (None: every interface);
        ``check_every``: seconds between two checks that a listed table still answers."""
        self._network = NetworkThread("nerts-browse")
        self._tables: dict[str, TableInfo] = {}
        """By mDNS instance name."""
        self._closed = False
        self._watched: dict[str, Advert] = {}
        """The adverts seen and not gone, by instance name (the network thread's own)."""
        self._checker: asyncio.Task[None] | None = None

        def seen(name: str, advert: Advert | None) -> None:
            if advert is None:
                self._watched.pop(name, None)
            else:
                self._watched[name] = advert
            self._network.post(_AdvertChanged(name, advert))

        async def start() -> Discovery:
            discovery = Discovery(interface)
            discovery.browse(SERVICE_TYPE, seen)
            self._checker = asyncio.ensure_future(self._check_answering(check_every))
            return discovery

        self._discovery: Future[Discovery] = asyncio.run_coroutine_threadsafe(
            start(), self._network.loop
        )

    def started(self, timeout: float = 10.0) -> None:
        """Wait until browsing has started; raise what stopped it, if something did (an
        interface that is not there, say)."""
        self._discovery.result(timeout)

    def tables(self) -> list[TableInfo]:
        """The tables seen now that speak our protocol, by name then id."""
        self._apply(self._network.drain())
        return sorted(self._tables.values(), key=lambda t: (t.name, t.table_id))

    def table(self, table_id: str) -> TableInfo | None:
        """The table ``table_id`` as its advert says now (address and port included)."""
        return next((t for t in self.tables() if t.table_id == table_id), None)

    def look_up(self, host: str, port: int) -> Future[TableInfo]:
        """Ask ``host:port`` which table is there, on the browser's thread (for a network that
        drops mDNS: ``nerts_lan.lan.by_address``): a future of the table, or of the
        ``AddressError`` that says why there is none."""
        return asyncio.run_coroutine_threadsafe(async_table_at(host, port), self._network.loop)

    def wait(self, timeout: float) -> None:
        """Block until an advert changes, or ``timeout`` seconds (terminal loops)."""
        with contextlib.suppress(queue.Empty):
            self._apply([self._network.events.get(timeout=max(timeout, 0.0))])

    def close(self) -> None:
        """Stop browsing and the browser's thread (at most a few seconds)."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):  # a discovery that failed to start has nothing open
            self._network.run(self._async_close(), timeout=5)
        self._network.stop()

    async def _async_close(self) -> None:
        if self._checker is not None:
            self._checker.cancel()
            await asyncio.gather(self._checker, return_exceptions=True)
        await asyncio.wrap_future(self._discovery)
        await self._discovery.result().async_close()

    async def _check_answering(self, every: float) -> None:
        """Drop the tables whose port misses ``_MISSES`` knocks in a row (see the module)."""
        misses: dict[str, int] = {}
        while True:
            await asyncio.sleep(every)
            watched = list(self._watched.items())
            answers = await asyncio.gather(*(_answers(advert, every) for _, advert in watched))
            for (name, advert), answered in zip(watched, answers, strict=True):
                misses[name] = 0 if answered else misses.get(name, 0) + 1
                if misses[name] >= _MISSES and self._watched.get(name) == advert:
                    del self._watched[name], misses[name]
                    self._network.post(_AdvertChanged(name, None))
            for name in set(misses) - set(self._watched):
                del misses[name]

    def _apply(self, changes: list[_AdvertChanged]) -> None:
        for change in changes:
            advert = change.advert
            table = table_from_advert(advert) if advert is not None else None
            if table is not None and table.version == PROTOCOL:
                self._tables[change.name] = table
            else:
                self._tables.pop(change.name, None)


@dataclass(frozen=True)
class _AdvertChanged:
    """The advert of instance ``name`` was seen or updated (``advert``), or is gone (None)."""

    name: str
    advert: Advert | None


async def _answers(advert: Advert, timeout: float) -> bool:
    """Whether something listens on the advertised port (connected to, then closed at once)."""
    for address in advert.addresses:
        try:
            _, writer = await asyncio.wait_for(
                asyncio.open_connection(address, advert.port), timeout
            )
        except (OSError, ValueError, asyncio.TimeoutError):  # refused, unreachable, malformed
            continue
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return True
    return False
