"""A full TCP mesh between the members of one table: reliable FIFO links that survive reconnects.

Each link carries length-prefixed msgpack frames (4-byte big-endian length, then the body) of at
most ``MeshConfig.max_frame`` bytes. A connection opens with a hello from each side (protocol
version, table id, peer id, display name, incarnation, and how far this side has received the
other's frames); a mismatched version or table is refused with a message the user can read. With
peer keys (``MeshConfig.key``) each end then signs both hellos to prove it holds its peer id's key.

Application frames are numbered per link and kept until the other side acknowledges them, so when
a TCP connection drops (Wi-Fi hiccup, a laptop lid) the next connection resends what was lost:
within one incarnation of each peer every link is reliable and FIFO, which the ordering core
relies on. A peer that restarts comes back with a new incarnation: both sides start the link
afresh and the application is told (it catches up from a snapshot). Small frames go by UDP
datagram too, resent within tens of milliseconds, so no lost TCP segment holds them (``_fastpath``).

Ephemeral frames are the other kind, for what is stale a moment later (a pointer position): at
most ``MAX_EPHEMERAL`` bytes, no number, never queued nor resent, written only while the link is
up, and handed to ``MeshListener.ephemeral_received``. Their envelope is checked like every frame
(a malformed one closes the connection, as any protocol breach does); a well-formed one whose
payload is over the limit is dropped and reported to ``MeshListener.problem`` but keeps the link,
and so does a payload the application rejects: the ordered frames are never disturbed by a bad
pointer update.

A table may have a code (``MeshConfig.table_code``), shown on the host's screen and typed by the
others. At a coded table the listener answers the dialer's hello with a veiled one (protocol,
table and scheme only: who listens there, under what name and where is no business of someone
who has not proven the code), then a SPAKE2 exchange (one message each way) follows, so knowing
the code is proven without a captured connection allowing an offline search for it, and then a
key confirmation from each side, dialer first; the listener's whole hello comes last, as the
first tagged frame. The confirmations and the keys are bound to both hellos sent in the clear,
so no unauthenticated hello field can be altered or spliced from another table. From then on every
frame, both ways, ends with a 16-byte HMAC-SHA256 tag over a frame counter (implicit: both ends
count) and the frame body, under a key of this connection and this direction (the length prefix
counts the tag): a forged, altered, replayed, reordered or dropped frame fails the check and
closes the connection (the link dials again and the numbered frames are resent, so nothing is
lost). Keys are fresh per connection, so frames recorded on one connection are worthless on
another. A peer with a code and one without never link, each side saying why. Online guessing is
slowed: every failed code check costs ``MeshConfig.wrong_code_delay`` seconds during which this
mesh checks no other code from that source address, whatever number of connections the guesser
opens (other addresses, a joiner or a returning member, are not held back). The key exchange is
pure-Python curve arithmetic, some 5 to 10 ms of CPU a step at each end, run off the event loop,
and one address may start only so many (``MeshConfig.handshake_burst``, then
``handshakes_per_second``). No refusal is authenticated, so "wrong table code" is believed only
in answer to our key confirmation: sent earlier, it is a stranger's forgery and the link dials
again. Tables without a code run the original protocol, plus an acknowledgement the dialer
writes as soon as it is linked.

A laptop whose address changes mid-game (roaming, a renewed lease) follows it: the mesh looks at
the addresses it uses every ``MeshConfig.address_check_interval`` seconds, drops connections from
an address that is gone, listens on the interface's new one and dials every peer again; a
connection linked for over ``MeshConfig.replace_after`` seconds gives way to the peer's new one
(see ``net._mesh.roaming``).

Strangers are bounded. A connection we accept is a stranger's until it turns out to be from a
peer the application dialed or wrote to: strangers hold at most ``MeshConfig.max_strangers``
connections (the oldest gives way to a newcomer) and ``max_strangers_per_address`` from one
address (one more is closed at once), and each must finish its handshake and, if its peer id is
new to us, send its first frame within ``stranger_timeout`` seconds, before which it is not
linked (so idle hellos never reach the application). A returning member names a known peer id
in its hello and is not displaced by newcomers meanwhile. On every link, a frame once begun must
arrive within ``frame_timeout`` seconds (a trickled or stalled frame closes the connection);
between frames a link may stay silent as long as it likes.

Every connection may send us at most so many frames and bytes a second (``RateLimits``, token
buckets with a burst): over it we stop reading from that connection until the bucket refills, so
TCP backpressure slows the flooder alone. Ephemeral frames have a bucket of their own (over it they
are dropped). A stranger may instead ask which table is here (``net._mesh.describe``, the host
answers).

The pure parts live in private modules and are tested in memory: the link state machine
(``net._mesh.link``), datagrams (``net._mesh.datagrams``), the hello codec, session keys, frame tags
and the code check gate (``net._mesh.handshake``), the rate limits, the address policy and the frame
codec. ``Mesh`` drives them over TCP (``net._mesh.connection``) in one asyncio loop, calling the
listener, with the opening of each connection in ``net._mesh.opening`` and where it listens and
what it gossips in ``net._mesh.roaming``. docs/mesh.md describes the whole protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
from collections.abc import Coroutine
from typing import Any

from net._codec import (
    KIND_ACK,
    KIND_DATA,
    KIND_EPHEMERAL,
    KIND_PEERS,
    KIND_REFUSE,
    MAX_TEXT,
    Broken,
    Refused,
)
from net._identity import PeerKey, owns
from net._mesh.connection import Connection, cancel_within
from net._mesh.describe import Description
from net._mesh.dialing import Dials
from net._mesh.fastpath import DatagramPath
from net._mesh.handshake import Hello
from net._mesh.link import LinkState, QueuedFrame
from net._mesh.opening import DUPLICATE, HandshakeParts, Handshakes
from net._mesh.parts import MeshConfig, MeshLink, MeshListener, Opened, Shed
from net._mesh.ratelimit import Meter
from net._mesh.roaming import AddressWatch, Roaming, RoamingHooks
from net._mesh.strangers import StrangerPool, descriptor_share

__all__ = [
    "MAX_EPHEMERAL",
    "TRANSPORT_VERSION",
    "Mesh",
]

TRANSPORT_VERSION = 1
MAX_EPHEMERAL = 512
"""Largest payload of an ephemeral frame, in bytes."""
_FRAMES_PER_TURN = 32
"""Frames read from one connection before the other connections get a turn of the loop."""
CLOSE_GRACE = 1.0
"""Seconds a closing mesh gives its tasks and unsent bytes before it drops them."""
_BACKLOG = 16
"""Connections the kernel holds for us to accept, and that we accept at one turn of the loop:
under a flood, at most that many descriptors more than the stranger pool, until we close them."""

log = logging.getLogger(__name__)


class Mesh:
    """The TCP links of one peer to the other members of its table."""

    def __init__(self, me: Hello, listener: MeshListener, config: MeshConfig | None = None) -> None:
        """``me``: what our hellos say; ``listener`` hears what happens on the links, from the
        event loop; ``config``: limits, timers, the table code, our key (``MeshConfig()``)."""
        self.config = config or MeshConfig()
        self.me = _with_key(me, self.config.key)
        self.port = 0
        self._listener = listener
        self._links: dict[str, MeshLink] = {}
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._connections: set[Connection] = set()
        """Every open connection, linked or still in its handshake."""
        self._closing = False
        self.description = Description(self.me.protocol, self.me.table)
        """What a stranger asking which table is here is told (``net._mesh.describe``)."""
        # Where we listen, the addresses we gossip and learn, following our own when it moves.
        hooks = RoamingHooks(
            self.connect, self.async_listen, lambda: self.port, lambda: self._server
        )
        self._roaming = Roaming(
            self.config, self.me, self._links, self._connections, listener, hooks
        )
        config = self.config
        total = min(config.max_strangers, descriptor_share())
        self._strangers = StrangerPool[Connection](total, config.max_strangers_per_address)
        parts = HandshakeParts(
            self.description, self._roaming, self._strangers, self._links, self._link
        )
        self._handshakes = Handshakes(config, self.me, listener, parts)
        self.datagrams = DatagramPath(self.me, self.config, self._links.get, self._deliver)

    async def async_listen(self, host: str, port: int = 0) -> int:
        """Accept connections on ``host:port`` (0 picks a free port); the port. From then on the
        mesh follows its addresses when they change (``net._mesh.roaming``)."""
        first = self._server is None
        self._server = await asyncio.start_server(self._serve, host, port, backlog=_BACKLOG)
        if first:
            self._spawn(self._roaming.follow(AddressWatch()))
        self.port = self._server.sockets[0].getsockname()[1]
        self._roaming.listening_at(host, self.port)
        await self.datagrams.async_open(host, self.port)
        return self.port

    def connect(self, peer: str, host: str, port: int) -> None:
        """Keep a link to ``peer`` at ``host:port``, dialing again whenever it drops."""
        link = self._link(peer)
        link.address = (host, port)
        link.wanted = True
        self._know(link)
        if link.dialer is None or link.dialer.done():
            link.dialer = self._spawn(self._dial_forever(link))

    def forget(self, peer: str) -> None:
        """Drop the link to ``peer`` and everything queued for it."""
        link = self._links.pop(peer, None)
        if link is None:
            return
        link.wanted = False
        self.datagrams.forget(peer)
        if link.dialer is not None:
            link.dialer.cancel()
        if link.connection is not None:
            link.connection.close()

    def send(self, peer: str, data: bytes) -> None:
        """Queue ``data`` for ``peer``: delivered once, in order, even across reconnects."""
        link = self._link(peer)
        self._know(link)
        frame = link.state.queue(data)
        if link.connection is not None:
            self._send_data(link, frame)

    def send_ephemeral(self, peer: str, data: bytes) -> bool:
        """Write ``data`` to ``peer`` now if its link is up, else drop it; True when written.

        Best effort: no sequence number, never queued, never resent after a reconnect, and it may
        overtake ordered frames held back by a fault injection. ``ValueError`` above
        ``MAX_EPHEMERAL``.
        """
        if len(data) > MAX_EPHEMERAL:
            raise ValueError(f"an ephemeral frame carries at most {MAX_EPHEMERAL} bytes")
        link = self._links.get(peer)
        if link is None or link.connection is None or link.connection.is_closing():
            return False
        link.connection.write([KIND_EPHEMERAL, bytes(data)])
        return True

    def addresses(self) -> dict[str, tuple[str, int]]:
        """The listening address of every peer we know one for."""
        return {p: link.address for p, link in self._links.items() if link.address is not None}

    def connected(self) -> set[str]:
        """Peers with a live connection now (not one being closed)."""
        return {peer for peer, link in self._links.items() if _live(link.connection)}

    def queued(self, peer: str) -> int:
        """Frames sent to ``peer`` and not yet acknowledged."""
        link = self._links.get(peer)
        return len(link.state.unacked) if link else 0

    async def async_close(self) -> None:
        """Stop listening and dialing, close every connection; the listener hears no more.

        Bounded: a connection whose unsent bytes cannot drain (a peer that stopped
        acknowledging, as after a one-way cut) is dropped after ``CLOSE_GRACE`` seconds, and a
        task that outlives its cancel is reported, never waited for without end."""
        self._closing = True
        self._roaming.close()
        self.datagrams.close()
        if self._server is not None:
            self._server.close()
        # Closing every connection, not only the linked ones, ends every task that reads one,
        # even one whose cancellation asyncio.wait_for swallowed (before Python 3.12).
        connections = list(self._connections)
        for connection in connections:
            connection.close()
        await cancel_within(set(self._tasks), CLOSE_GRACE, connections)
        dropped = [c for c in connections if c.unsent()]
        for connection in dropped:
            connection.abort()  # else its socket lives on until the peer acknowledges
        if dropped:
            await asyncio.sleep(0)  # an abort closes the socket on the loop's next turn
        if self._server is not None:
            # From Python 3.12 this waits for every served connection to be closed.
            await cancel_within({asyncio.ensure_future(self._server.wait_closed())}, CLOSE_GRACE)

    # --- for subclasses (fault injection) ------------------------------------------------------

    def _send_data(self, link: MeshLink, frame: QueuedFrame) -> None:
        """Write a numbered frame on the link's live connection, and send it by datagram."""
        assert link.connection is not None
        link.connection.write([KIND_DATA, frame.seq, frame.data])
        self.datagrams.send(link, frame)

    # --- helpers -------------------------------------------------------------------------------

    def _know(self, link: MeshLink) -> None:
        """The application dials or writes to ``link``'s peer: a member, no stranger."""
        if not link.known:
            link.known = True
            if link.connection is not None:
                self._strangers.release(link.connection)

    def _admit(self, connection: Connection) -> bool:
        """Whether a connection we accepted may stay: not one too many from its address (one
        too many in all displaces the oldest stranger)."""
        admitted, displaced = self._strangers.admit(connection, connection.address)
        if displaced is not None:
            displaced.abort()
        return admitted

    def _link(self, peer: str) -> MeshLink:
        link = self._links.get(peer)
        if link is None:
            link = self._links[peer] = MeshLink(LinkState(peer))
        return link

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _dial_forever(self, link: MeshLink) -> None:
        dials = Dials(self.config.connect)  # overlapping attempts: see net._mesh.dialing
        try:
            while link.wanted and not self._closing:
                if link.connection is None and link.address is not None:
                    opened = await dials.next(link.address)
                    if opened is not None:
                        await self._run_connection(*opened, expected=link.peer)
                await asyncio.sleep(self.config.retry_interval)
        finally:
            dials.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._run_connection(reader, writer, expected=None)
        except asyncio.CancelledError:
            pass  # closing: end quietly (asyncio logs a cancelled connection callback as an error)
        finally:
            if task is not None:
                self._tasks.discard(task)

    async def _run_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, expected: str | None
    ) -> None:
        """Handshake, then pump frames until the connection ends."""
        who = expected or _address_of(writer)
        connection = Connection(
            reader, writer, who, self.config.max_frame, self.config.frame_timeout
        )
        if self._closing or (expected is None and not self._admit(connection)):
            connection.abort()
            return
        self._connections.add(connection)
        link: MeshLink | None = None
        try:
            opened, first = await self._handshakes.shake(connection, expected)
            link = self._attach(connection, opened, dialed=expected is not None)
            await self._pump(connection, link, first)
        except Shed:
            pass  # too many from that address: closed without a word
        except Refused as refusal:
            connection.write([KIND_REFUSE, str(refusal)[:MAX_TEXT]])
            if str(refusal) != DUPLICATE:
                self._listener.problem(who, str(refusal))
        except Broken as problem:
            if not str(problem).endswith(DUPLICATE):  # the other end kept its twin connection
                # The listener is told and says what it means to the user (a warning, or an
                # error line of its own): a second warning here would only repeat it.
                log.info("closing connection to %s: %s", who, problem)
                self._listener.problem(who, str(problem))
        except (OSError, asyncio.IncompleteReadError, ConnectionError, asyncio.TimeoutError):
            pass
        finally:
            self._connections.discard(connection)
            self._strangers.release(connection)
            with contextlib.suppress(Exception):
                connection.close()
            if link is not None and link.connection is connection:
                link.connection = None
                if not self._closing:
                    self._listener.link_down(link.peer)

    def _attach(self, connection: Connection, opened: Opened, dialed: bool) -> MeshLink:
        """Make ``connection`` the link's one connection and resend what was not acknowledged."""
        link = self._link(opened.hello.peer)
        if link.connection is not None:
            link.connection.close()  # one connection per pair: this one wins (see the handshake)
        restarted = link.state.connected(opened.hello.incarnation, opened.resume)
        link.connection, link.linked_at = connection, _loop_time()
        link.dialed_by_me = dialed
        connection.who = link.peer
        if link.known:
            self._strangers.release(connection)
        if dialed:
            # A frame at once, whatever the application has to say: the listener links a peer
            # it does not know only once that peer has sent one.
            connection.write([KIND_ACK, link.state.received])
        for frame in list(link.state.unacked):
            connection.write([KIND_DATA, frame.seq, frame.data])
        self._roaming.linked(link, opened.listen)
        self.datagrams.attached(link, connection)
        self._listener.link_up(opened.hello, restarted)
        return link

    async def _pump(self, connection: Connection, link: MeshLink, first: bytes | None) -> None:
        loop = asyncio.get_running_loop()
        meter = Meter(self.config.rate_limits, loop.time())
        if first is not None:
            meter.charge(len(first), loop.time())
            self._handle(connection, link, meter, connection.decode(first))
        for handled in itertools.count(1):
            raw = await connection.read_raw()
            wait = meter.charge(len(raw), loop.time())
            if handled % _FRAMES_PER_TURN == 0 and wait <= 0:
                # Reading buffered frames never yields: let the other links have the loop.
                await asyncio.sleep(0)
            if wait > 0:
                # Over its rate: read nothing more from this peer for now. Its bytes pile up in
                # the socket buffers until TCP stops it; the other links are not held up.
                await asyncio.sleep(wait)
                if link.connection is not connection:
                    return  # replaced by a newer connection (or forgotten) meanwhile
            self._handle(connection, link, meter, connection.decode(raw))

    def _handle(self, connection: Connection, link: MeshLink, meter: Meter, body: Any) -> None:
        """Act on one frame read after the handshake."""
        kind = body[0] if isinstance(body, list) and body else None
        size = len(body) if isinstance(body, list) else 0
        if (
            kind == KIND_DATA
            and size == 3
            and isinstance(body[1], int)
            and isinstance(body[2], bytes)
        ):
            self._deliver(link, link.state.receive_frame(body[1], body[2]))
        elif kind == KIND_EPHEMERAL and size == 2 and isinstance(body[1], bytes):
            if meter.allow_ephemeral(asyncio.get_running_loop().time()):
                self._ephemeral(link.peer, body[1])
        elif kind == KIND_ACK and size == 2 and isinstance(body[1], int):
            self.datagrams.acknowledged(link, body[1])
        elif kind == KIND_PEERS and size == 2 and isinstance(body[1], list):
            if not self.datagrams.announced(link, connection, body[1]):
                self._roaming.learn_addresses(link.peer, body[1])
        elif kind == KIND_REFUSE and size == 2 and isinstance(body[1], str):
            raise Broken(f"{link.peer} closed the connection: {body[1][:MAX_TEXT]}")
        else:
            raise Broken(f"malformed frame from {link.peer}")

    def _deliver(self, link: MeshLink, frames: list[bytes]) -> None:
        """Hand frames the link received, in order, to the application, and acknowledge them."""
        for data in frames:
            self._listener.frame_received(link.peer, data)
        if frames:
            self.datagrams.acknowledge(link)

    def _ephemeral(self, peer: str, data: bytes) -> None:
        if len(data) > MAX_EPHEMERAL:
            self._listener.problem(peer, f"dropped an ephemeral frame of {len(data)} bytes")
            return
        try:
            self._listener.ephemeral_received(peer, data)
        except Exception:  # a bad pointer update must not cost the ordered link
            log.exception("ephemeral frame from %s", peer)


def _with_key(me: Hello, key: PeerKey | None) -> Hello:
    """Our hello, showing our public key; ``ValueError`` if its peer id is not that key's."""
    if key is not None and not owns(me.peer, key.public_bytes):
        raise ValueError(f"peer id {me.peer!r} is not the id of the mesh's key")
    return dataclasses.replace(me, public_key=None if key is None else key.public_bytes)


def _live(connection: Connection | None) -> bool:
    return connection is not None and not connection.is_closing()


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


def _address_of(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "unknown peer"
