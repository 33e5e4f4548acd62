"""Where a peer listens, how the others learn it, and following it when it changes.

A laptop that roams between access points or renews its lease can get a new address mid-game.
Its connections from the old address are dead (nothing can be sent from an address the machine
no longer has, and nothing reaches it), but neither end's TCP says so for minutes. So the mesh
watches the addresses it uses (``AddressWatch``, every ``MeshConfig.address_check_interval``
seconds): a connection whose local address is gone is dropped at once, and every peer whose
address we know is dialed again; once the interface has its new address, a mesh listening on the
old one listens on the new one (the same port if it can), and the application hears
``MeshListener.address_changed``. The new connections' hellos carry the new listening address,
and each peer that links with us gossips it on (``Roaming.linked``). The other end keeps its old
connection until ours replaces it: a connection linked longer than ``MeshConfig.replace_after``
seconds gives way to a new one from the same peer (the peer dials only when it lost its end; two
peers dialing each other at once, both fresh, still keep the tie rule of ``net._mesh.link``).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, NamedTuple

from net._codec import KIND_PEERS
from net._mesh.addresses import MAX_GOSSIP, LocalNetworks, parse_gossip, reachable_listen
from net._mesh.connection import Connection
from net._mesh.handshake import NONCE_SIZE, Hello, hello_body
from net._mesh.link import existing_connection_wins
from net._mesh.parts import MeshConfig, MeshLink, MeshListener
from net.interfaces import read_interfaces

__all__ = [
    "AddressWatch",
    "Moved",
    "Roaming",
    "RoamingHooks",
    "adapter_addresses",
    "interface_addresses",
    "interface_having",
    "local_address",
]

log = logging.getLogger(__name__)

WILDCARD = "0.0.0.0"
"""Listening on every interface: the address a hello gives is then the connection's own."""


class Moved(NamedTuple):
    """An address we used went away and ``new``, of the same interface, took its place."""

    old: str
    new: str


def adapter_addresses() -> dict[str, tuple[str, ...]]:
    """The IPv4 addresses of each of this machine's interfaces, by interface name."""
    found: dict[str, tuple[str, ...]] = {}
    for interface in read_interfaces():
        found[interface.name] = (*found.get(interface.name, ()), interface.address)
    return found


def interface_having(address: str) -> str | None:
    """The name of the interface that has ``address`` now (None: none has it)."""
    return _interface_of(address, adapter_addresses())


def interface_addresses(name: str) -> tuple[str, ...]:
    """The IPv4 addresses interface ``name`` has now (none while a lease is being renewed)."""
    return adapter_addresses().get(name, ())


class AddressWatch:
    """Which of the addresses we use are gone, and what replaced each (pure: ``lookup`` gives
    the addresses by interface, as ``adapter_addresses`` does)."""

    def __init__(self, lookup: Callable[[], dict[str, tuple[str, ...]]] = adapter_addresses):
        self._lookup = lookup
        self._adapters = lookup()
        self._lost: dict[str, str | None] = {}
        """Addresses we used that are gone, each with the interface that had it (if known)."""

    def check(self, in_use: Iterable[str]) -> tuple[frozenset[str], list[Moved]]:
        """Look again: the addresses of ``in_use`` that are gone now, and the moves complete
        (a gone address whose interface has an address again; ``old == new`` when the same
        address came back)."""
        now = self._lookup()
        present = {address for addresses in now.values() for address in addresses}
        gone = frozenset(a for a in in_use if a != WILDCARD and a not in present)
        for address in gone:
            if address not in self._lost:
                self._lost[address] = _interface_of(address, self._adapters)
        moved = []
        for old, interface in sorted(self._lost.items()):
            candidates = () if interface is None else now.get(interface, ())
            if old in present:
                moved.append(Moved(old, old))
            elif candidates:
                known = set(self._adapters.get(interface or "", ()))
                fresh = [a for a in candidates if a not in known]
                moved.append(Moved(old, (fresh or list(candidates))[0]))
            else:
                continue
            del self._lost[old]
        self._adapters = now
        return gone, moved


class Roaming:
    """Where this mesh listens and which hosts it may dial, the addresses it gossips and learns,
    the rule by which a peer's new connection replaces its old one, and following our address
    when it changes (see the module). The mesh hands it what it reads: its `links` and open
    `connections` (read, never changed here), its `listener`, and the `hooks` to act through."""

    def __init__(
        self,
        config: MeshConfig,
        me: Hello,
        links: Mapping[str, MeshLink],
        connections: AbstractSet[Connection],
        listener: MeshListener,
        hooks: RoamingHooks,
    ) -> None:
        self._config = config
        self._me = me
        self._links = links
        self._connections = connections
        self._listener = listener
        self._hooks = hooks
        self._networks = LocalNetworks(config.local_networks)
        self._listen: tuple[str, int] | None = None
        self._closing = False

    def listening_at(self, host: str, port: int) -> None:
        """The mesh listens at ``host:port`` now: our hellos say so."""
        self._listen = (host, port)

    def may_dial(self, host: str) -> bool:
        """Whether a peer may make us dial ``host`` (see ``LocalNetworks.may_dial``)."""
        return self._networks.may_dial(host)

    def close(self) -> None:
        """The mesh is closing: stop following its addresses."""
        self._closing = True

    async def follow(self, watch: AddressWatch) -> None:
        """Watch the addresses the mesh uses until it closes (see the module)."""
        interval = self._config.address_check_interval
        while interval is not None and not self._closing:
            await asyncio.sleep(interval)
            used = {connection: local_address(connection) for connection in self._connections}
            listening = self._listen[0] if self._listen is not None else WILDCARD
            gone, moves = watch.check({listening, *(a for a in used.values() if a is not None)})
            dropped = [c for c, address in used.items() if address in gone]
            for connection in dropped:
                connection.abort()  # it can neither send nor hear: its link dials again
            for old, new in moves:
                if old == listening and new != old and not self._closing:
                    await self._listen_on(new)
                if new != old:
                    log.warning("our address %s changed to %s: dialing every peer again", old, new)
                    self._listener.address_changed(old, new)
            if dropped or moves:
                self._dial_everyone()

    def send_hello(self, connection: Connection, link: MeshLink | None) -> bytes:
        """Write our hello (with a fresh nonce); its body, which the key confirmation covers. A
        mesh listening on every interface gives the address of this connection's end as its own."""
        resume = link.state.received if link is not None else 0
        known = link.state.remote_incarnation if link is not None else None
        coded = self._config.table_code is not None
        nonce = secrets.token_bytes(NONCE_SIZE)
        listen = reachable_listen(self._listen, connection.writer)
        return connection.write(hello_body(self._me, resume, known, listen, coded, nonce))

    def linked(self, new: MeshLink, listen: tuple[str, int] | None) -> None:
        """``new`` linked, its hello saying it listens at ``listen``: keep that address if we may
        dial it, tell the new link every address we know, and every other link the new one's."""
        if listen is not None and self.may_dial(listen[0]):
            new.address = listen
        if not self._config.gossip:
            return
        book = [
            [peer, link.address[0], link.address[1]]
            for peer, link in sorted(self._links.items())
            if link.address is not None and peer != new.peer
        ][:MAX_GOSSIP]
        if new.connection is not None and book:
            new.connection.write([KIND_PEERS, book])
        if new.address is not None:
            for peer, link in self._links.items():
                if peer != new.peer and link.connection is not None:
                    entry = [new.peer, new.address[0], new.address[1]]
                    link.connection.write([KIND_PEERS, [entry]])

    def learn_addresses(self, source: str, book: list[Any]) -> None:
        """Dial the peers ``source`` tells us of that we have no connection to."""
        if not self._config.gossip:
            return
        for entry in parse_gossip(book, source, self._me.peer):
            if not self.may_dial(entry.host):
                log.warning(
                    "%s told us of %s at %s, not on our networks: ignored",
                    source,
                    entry.peer,
                    entry.host,
                )
                continue
            link = self._links.get(entry.peer)
            if link is None or link.connection is None:
                # A restarted peer listens on a new port: dial the address heard most recently.
                self._hooks.dial(entry.peer, entry.host, entry.port)

    def existing_connection_wins(self, peer: str) -> bool:
        """Whether the pair's connection we have (if any) wins over a new one from ``peer``: one
        linked for over ``MeshConfig.replace_after`` seconds gives way, else the tie rule of
        ``net._mesh.link`` decides."""
        link = self._links.get(peer)
        if link is None or link.connection is None:
            return False
        if asyncio.get_running_loop().time() - link.linked_at > self._config.replace_after:
            return False  # the peer lost its end of it (its address changed): it dials anew
        return existing_connection_wins(self._me.peer, peer, link.dialed_by_me)

    async def _listen_on(self, host: str) -> None:
        """Listen on ``host`` instead: on the same port if it is free there, else on another."""
        server = self._hooks.server()
        try:
            await self._hooks.listen(host, self._hooks.port())
        except OSError:
            try:
                await self._hooks.listen(host, 0)
            except OSError as error:  # the address went again already: the next look tries anew
                log.warning("cannot listen on %s: %s", host, error)
                return
        if server is not None:
            server.close()

    def _dial_everyone(self) -> None:
        """Dial every peer whose address we know (a link that is up is left alone)."""
        for peer, link in sorted(self._links.items()):
            if link.address is not None and link.known:
                self._hooks.dial(peer, *link.address)


class RoamingHooks(NamedTuple):
    """What roaming does through its mesh: dial a peer (``Mesh.connect``), listen again
    (``Mesh.async_listen``), the port and the server the mesh listens with now (the server is
    closed once another replaces it)."""

    dial: Callable[[str, str, int], None]
    listen: Callable[[str, int], Awaitable[int]]
    port: Callable[[], int]
    server: Callable[[], asyncio.Server | None]


def local_address(connection: Connection) -> str | None:
    """The address of our end of ``connection``."""
    ours = connection.writer.get_extra_info("sockname")
    return str(ours[0]) if isinstance(ours, tuple) else None


# --- helpers -------------------------------------------------------------------------------------


def _interface_of(address: str, adapters: dict[str, tuple[str, ...]]) -> str | None:
    return next((name for name, addresses in adapters.items() if address in addresses), None)
