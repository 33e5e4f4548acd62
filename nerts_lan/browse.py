"""The tables on the LAN, live: one browser under both front ends (the window's lobby and
``nerts-lan tables`` / ``join --headless``).

``TableBrowser`` watches the mDNS adverts of Nerts tables in a network thread of its own, from
its creation until ``close()``. The thread posts each change (an advert seen, updated or gone);
``tables()`` applies what arrived and returns the tables this version of the game can join.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
from concurrent.futures import Future
from dataclasses import dataclass

from net.discovery import Advert, Discovery
from net.runtime import NetworkThread

from .advert import PROTOCOL, SERVICE_TYPE, TableInfo, table_from_advert

__all__ = ["TableBrowser"]


class TableBrowser:
    """Nerts tables advertised on the LAN (one interface, or every one)."""

    def __init__(self, interface: str | None = None) -> None:
        """``interface``: one IPv4 address to browse on (None: every interface)."""
        self._network = NetworkThread("nerts-browse")
        self._tables: dict[str, TableInfo] = {}
        """By mDNS instance name."""
        self._closed = False

        def seen(name: str, advert: Advert | None) -> None:
            self._network.post(_AdvertChanged(name, advert))

        async def start() -> Discovery:
            discovery = Discovery(interface)
            discovery.browse(SERVICE_TYPE, seen)
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
            self._network.run(self._discovery.result(5).async_close(), timeout=5)
        self._network.stop()

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
