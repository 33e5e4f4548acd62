"""Which addresses a peer may make us dial: the listening addresses peers gossip, and the rule that
we dial only hosts on the networks of our own interfaces.

The members of a table share one link (mDNS does not cross routers), so the rule costs them
nothing, and no one can make us connect anywhere else (another machine's services, the internet).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from net._codec import Broken
from net.interfaces import read_interfaces

__all__ = [
    "MAX_GOSSIP",
    "NETWORKS_TTL",
    "GossipEntry",
    "LocalNetworks",
    "interface_networks",
    "is_ipv4",
    "parse_gossip",
    "parse_listen_address",
    "reachable_listen",
]

MAX_GOSSIP = 32
"""Most addresses in one gossip frame, sent or read."""
NETWORKS_TTL = 10.0
"""Seconds between two lookups of our interfaces (a laptop changes Wi-Fi)."""
_LOOPBACK = ipaddress.IPv4Network("127.0.0.0/8")


class GossipEntry(NamedTuple):
    """A peer's listening address, as one peer tells another."""

    peer: str
    host: str
    port: int


class LocalNetworks:
    """The IPv4 networks of this machine's interfaces (loopback included), looked up with
    ``lookup`` again at most every ``ttl`` seconds of ``clock``."""

    def __init__(
        self,
        lookup: Callable[[], Iterable[ipaddress.IPv4Network]] | None = None,
        clock: Callable[[], float] = time.monotonic,
        ttl: float = NETWORKS_TTL,
    ) -> None:
        self._lookup = lookup or interface_networks
        self._clock = clock
        self._ttl = ttl
        self._checked: float | None = None
        self._networks: tuple[ipaddress.IPv4Network, ...] = ()

    def networks(self) -> tuple[ipaddress.IPv4Network, ...]:
        """Our networks now (the last lookup if it is recent enough)."""
        now = self._clock()
        if self._checked is None or now - self._checked >= self._ttl:
            self._networks = tuple(sorted(set(self._lookup())))
            self._checked = now
        return self._networks

    def may_dial(self, host: str) -> bool:
        """Whether we may dial ``host`` (an IPv4 address) because a peer said so (gossip, a
        hello's listening address): only a host on one of our networks."""
        address = ipaddress.IPv4Address(host)
        return any(address in network for network in self.networks())


def interface_networks() -> list[ipaddress.IPv4Network]:
    """The IPv4 networks of this machine's interfaces (as ``net.interfaces.read_interfaces``
    lists them), and loopback."""
    found = [_LOOPBACK]
    with contextlib.suppress(ValueError):
        for interface in read_interfaces():
            network = f"{interface.address}/{interface.prefix}"
            found.append(ipaddress.IPv4Network(network, strict=False))
    return found


def parse_gossip(book: list[Any], source: str, me: str) -> Iterator[GossipEntry]:
    """The usable entries of a gossiped address list (at most ``MAX_GOSSIP`` read), in order: not
    about ``me``, an IPv4 host and a real port. ``Broken`` on reaching an entry of the wrong
    shape (the entries before it have been yielded)."""
    for item in book[:MAX_GOSSIP]:
        if not (
            isinstance(item, list)
            and len(item) == 3
            and isinstance(item[0], str)
            and isinstance(item[1], str)
            and type(item[2]) is int
        ):
            raise Broken(f"malformed address list from {source}")
        peer, host, port = item
        if peer != me and is_ipv4(host) and 0 < port < 65536:
            yield GossipEntry(peer, host, port)


def parse_listen_address(field: Any, who: str) -> tuple[str, int] | None:
    """The listening address a hello gives (None: it listens nowhere); ``Broken`` if malformed."""
    if field is None:
        return None
    if not (
        isinstance(field, list)
        and len(field) == 2
        and isinstance(field[0], str)
        and is_ipv4(field[0])
        and type(field[1]) is int
        and 0 < field[1] < 65536
    ):
        raise Broken(f"hello field 'listen' from {who} is malformed")
    return (field[0], field[1])


def reachable_listen(
    listen: tuple[str, int] | None, writer: asyncio.StreamWriter
) -> tuple[str, int] | None:
    """Where the peer at the other end of ``writer``'s connection can reach our listener, as our
    hello tells it: ``listen``; for a listener on every interface (0.0.0.0, which no peer can
    dial) the address this connection runs from, on the interface that reaches that peer (None
    if unknown). Without it, a peer that gives no ``--interface`` is never gossiped to others."""
    if listen is None or listen[0] not in ("0.0.0.0", ""):
        return listen
    local = writer.get_extra_info("sockname")
    if isinstance(local, tuple) and is_ipv4(str(local[0])) and local[0] != "0.0.0.0":
        return (str(local[0]), listen[1])
    return None


def is_ipv4(text: str) -> bool:
    """Whether ``text`` is a dotted-quad IPv4 address."""
    try:
        socket.inet_aton(text)
    except OSError:
        return False
    return text.count(".") == 3
