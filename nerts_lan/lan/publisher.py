"""A LAN table's advert: its mDNS service, and the same properties as the answer its port gives a
stranger who asks which table is there (a player joins by address where the network drops mDNS:
``nerts_lan.lan.by_address``).

``AdvertPublisher`` belongs to the seat's ``TableAgent`` (``nerts_lan.lan.agent``), in the network
thread: the agent decides when its seat advertises the table, the publisher says what and where,
follows a change of this laptop's address, and withdraws.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from nerts_lan.lan.advert import PROTOCOL, SERVICE_TYPE, LanOptions
from nerts_lan.table.commands import TableSettings
from nerts_lan.table.lobby_view import LobbyView
from nerts_lan.table.machine import TablePhase
from net import Advert, Discovery, Node, read_interfaces, usable_interfaces

__all__ = ["AdvertPublisher"]

Spawn = Callable[[Coroutine[Any, Any, None]], None]
"""Runs a coroutine as a task of the network loop."""


class AdvertPublisher:
    """The advert of one seat's table (``options``: the seat's, its interface followed as it
    changes); ``spawn`` runs what has to wait for the network."""

    def __init__(self, options: LanOptions, spawn: Spawn) -> None:
        self._options = options
        self._spawn = spawn
        self._discovery: Discovery | None = None
        self._advert: Advert | None = None
        self._stopped = False

    def publish(
        self, lobby: LobbyView, settings: TableSettings, node: Node | None, table_id: str, port: int
    ) -> None:
        """Advertise the table as ``lobby`` shows it, at ``port`` (again only if that changed
        what the advert says)."""
        options = self._options
        properties = {
            "v": str(PROTOCOL),
            "name": settings.name,
            "host": options.peer_id,
            "hostname": options.name,
            "mode": "partnership" if settings.partnership else "singles",
            "seats": f"{len(lobby.seats)}/{settings.seats}",
            "state": _advert_state(lobby.phase),
            "code": "1" if options.table_code else "0",
        }
        # The same properties answer a stranger who asks this port which table is here.
        if node is not None:
            node.mesh.description.set(properties)
        if self._discovery is None:
            self._discovery = Discovery(options.interface)
        addresses = (options.interface,) if options.interface else _local_addresses()
        advert = Advert(SERVICE_TYPE, table_id, settings.name[:40], port, properties, addresses)
        if advert != self._advert:
            self._advert = advert
            self._spawn(self._publish_now())

    def withdraw(self, node: Node | None) -> None:
        """Stop advertising the table (and answering strangers with it)."""
        if node is not None:
            node.mesh.description.set(None)
        advert, self._advert = self._advert, None
        if advert is not None and self._discovery is not None:
            self._spawn(self._discovery.async_withdraw(advert))

    def moved(self, rebind: bool) -> None:
        """This laptop's address changed: the next ``publish`` says the new one; ``rebind``: the
        mDNS was bound to the old address, so it is closed (the next one binds to the seat's
        interface, which now is the new address)."""
        if rebind:
            discovery, self._discovery = self._discovery, None
            if discovery is not None:
                self._spawn(discovery.async_close())
        self._advert = None

    def stop(self) -> None:
        """The seat is leaving: nothing is published any more."""
        self._stopped = True

    async def async_close(self) -> None:
        """Stop, and close the mDNS."""
        self._stopped = True
        if self._discovery is not None:
            await self._discovery.async_close()

    async def _publish_now(self) -> None:
        if self._discovery is not None and self._advert is not None and not self._stopped:
            await self._discovery.async_publish(self._advert)


def _advert_state(phase: str) -> str:
    """What the lobby lists: a table still seating people, playing, or over."""
    if phase == TablePhase.LOBBY:
        return "lobby"
    return "over" if phase == TablePhase.OVER else "playing"


def _local_addresses() -> tuple[str, ...]:
    """What the advert of a table on every interface says it is at: every address of this
    laptop but loopback, those of the usable interfaces first, best first (a joiner dials the
    first: ``net.usable_interfaces`` ranks the default route's first), then the others (a VPN's,
    a virtual bridge's)."""
    ranked = [found.address for found in usable_interfaces()]
    every = [found.address for found in read_interfaces()]
    addresses = tuple(a for a in dict.fromkeys([*ranked, *every]) if not a.startswith("127."))
    return addresses or ("127.0.0.1",)
