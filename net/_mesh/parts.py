"""The parts of ``net._mesh.mesh`` that are not the mesh itself: its configuration, what it tells
its application (``MeshListener``), and what it keeps per link and per connection.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from net._identity import PeerKey
from net._mesh.connection import FRAME_TIMEOUT, Connection
from net._mesh.dialing import Connector
from net._mesh.handshake import Hello
from net._mesh.link import LinkState
from net._mesh.ratelimit import DEFAULT_RATE_LIMITS, RateLimits

__all__ = ["DEFAULT_MAX_FRAME", "MeshConfig", "MeshLink", "MeshListener", "Opened", "Shed"]

DEFAULT_MAX_FRAME = (4 << 20) + 4096
"""Largest frame body accepted: the ordering core's largest frame (4 MiB) and our envelope."""


@dataclass(frozen=True)
class MeshConfig:
    """How a mesh links: limits, timers, the table code and the address policy."""

    max_frame: int = DEFAULT_MAX_FRAME
    """Largest frame body accepted, in bytes (the tag of a coded table comes on top)."""
    retry_interval: float = 0.1
    """Seconds between two dials of a link that is down."""
    gossip: bool = True
    """Peers tell each other the listening addresses they know, and each peer dials the ones it
    has no link to, so that a newcomer who knows one member ends up linked to all."""
    table_code: str | None = None
    """Link only with peers that know this code (compared exactly, as UTF-8: normalising what
    people type is the application's business), and authenticate every frame. On both sides of a
    refused connection the listener's ``problem`` gets exactly ``WRONG_CODE`` (the codes differ),
    ``CODE_NEEDED`` (a peer without a code met one with a code) or ``NO_CODE_HERE`` (the other
    way round), and the link keeps dialing."""
    wrong_code_delay: float = 1.0
    """Seconds each failed code check holds back every other code check from the same source
    address (online guessing gets about one guess per delay per address; the others, and the
    returning members, are not held back)."""
    handshakes_per_second: float = 2.0
    handshake_burst: float = 10.0
    """How many key exchanges one source address may start: a burst, then so many a second
    (over it a connection is closed before its key exchange)."""
    stranger_timeout: float = 5.0
    """Seconds a connection we accepted has to finish its handshake and, from a peer this mesh
    does not know, to send its first frame (before which it is not linked)."""
    max_strangers: int = 64
    max_strangers_per_address: int = 8
    """Most connections, in all and from one address, that are not known to be a member's (the
    total is lowered to a quarter of the process's file limit if that is less)."""
    frame_timeout: float = FRAME_TIMEOUT
    """Seconds a frame may take to arrive once begun (between frames a link may be silent)."""
    rate_limits: RateLimits | None = DEFAULT_RATE_LIMITS
    """What one connection may send us (None: no limit)."""
    local_networks: Callable[[], Iterable[ipaddress.IPv4Network]] | None = None
    """Looks up the networks of our interfaces, the only ones a peer can make us dial (None:
    ask the operating system)."""
    datagrams: bool = True
    """Send small numbered frames by UDP datagram too, beside TCP, and resend them by datagram
    when unacknowledged (``net._mesh.fastpath``): a lost TCP segment then holds no frame for TCP's
    200 ms retransmission timeout. Off: TCP alone (as a peer that never announces datagrams)."""
    key: PeerKey | None = None
    """Our peer key, whose id the hello's peer id must be: every handshake then proves that each
    end holds the key of the id it claims, and links only with peers that have one (None: no
    keys, and links only with peers without one)."""

    connect: Connector | None = None
    """How to open a TCP connection to a peer (None: ``asyncio.open_connection``); fault
    injection for tests."""
    address_check_interval: float | None = 0.5
    """Seconds between two looks at our own addresses (a laptop that roams gets a new one:
    see ``net._mesh.roaming``); None: never look."""
    replace_after: float = 1.0
    """Seconds after which a linked connection gives way to a new one from the same peer: that
    peer dials only when it lost its end (its address changed), and two dials crossing each
    other are both younger."""

    def __post_init__(self) -> None:
        if self.table_code is not None and not self.table_code:
            raise ValueError("a table code cannot be empty (None means no code)")


class MeshListener:
    """What a mesh tells its application; every method does nothing unless overridden."""

    def frame_received(self, peer: str, data: bytes) -> None:
        """An ordered frame from ``peer``: once, in order, within one incarnation of each end."""

    def ephemeral_received(self, peer: str, data: bytes) -> None:
        """An ephemeral frame from ``peer`` (see ``Mesh.send_ephemeral``)."""

    def link_up(self, hello: Hello, restarted: bool) -> None:
        """A link is up (``restarted`` when the peer came back with a new incarnation)."""

    def link_down(self, peer: str) -> None:
        """The connection to ``peer`` ended (the link dials again if it is ours to dial)."""

    def problem(self, who: str, reason: str) -> None:
        """A connection was closed for a protocol problem."""

    def address_changed(self, old: str, new: str) -> None:
        """Our address ``old`` was replaced by ``new`` (roaming, a lease renewed): the mesh
        listens there if it listened on ``old``, and dials every peer again."""

    def refusal(self, hello: Hello) -> str | None:
        """None to accept a peer that said ``hello``, or the reason to refuse it."""
        return None


@dataclass(eq=False)
class MeshLink:
    """A link's numbering, and what the adapter keeps for it: its address, connection, dialer."""

    state: LinkState
    address: tuple[str, int] | None = None
    connection: Connection | None = None
    dialer: asyncio.Task[None] | None = None
    dialed_by_me: bool = False
    linked_at: float = 0.0
    """When the connection was linked (the event loop's clock)."""
    wanted: bool = True
    known: bool = False
    """The application dialed or wrote to this peer: its connections are no stranger's."""

    @property
    def peer(self) -> str:
        return self.state.peer


class Shed(Exception):
    """A connection closed without a word: its address starts key exchanges too often."""


@dataclass(frozen=True)
class Opened:
    """A connection past its handshake: who answered, how far it received our frames (counted
    for our present incarnation) and where it listens."""

    hello: Hello
    resume: int
    listen: tuple[str, int] | None
