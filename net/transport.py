"""A full TCP mesh between the members of one table: reliable FIFO links that survive reconnects.

Each link carries length-prefixed msgpack frames (4-byte big-endian length, then the body) of at
most ``MeshConfig.max_frame`` bytes. A connection opens with a hello from each side (protocol
version, table id, peer id, display name, incarnation, and how far this side has received the
other's frames); a mismatched version or table is refused with a message the user can read.

Application frames are numbered per link and kept until the other side acknowledges them, so when
a TCP connection drops (Wi-Fi hiccup, a laptop lid) the next connection resends what was lost:
within one incarnation of each peer every link is reliable and FIFO, which the ordering core
relies on. A peer that restarts comes back with a new incarnation: both sides start the link
afresh and the application is told (it catches up from a snapshot).

Ephemeral frames are the other kind, for what is stale a moment later (a pointer position): at
most ``MAX_EPHEMERAL`` bytes, no number, never queued nor resent, written only while the link is
up, and handed to ``MeshListener.ephemeral_received``. Their envelope is checked like every frame
(a malformed one closes the connection, as any protocol breach does); a well-formed one whose
payload is over the limit is dropped and reported to ``MeshListener.problem`` but keeps the link,
and so does a payload the application rejects: the ordered frames are never disturbed by a bad
pointer update.

A table may have a code (``MeshConfig.table_code``), shown on the host's screen and typed by the
others. A connection to a coded table adds, after the hellos, a SPAKE2 exchange (one message each
way), so knowing the code is proven without a captured connection allowing an offline search for
it, and then a key confirmation from each side, dialer first. Both the confirmations and the keys
are bound to both hellos (table id, peer ids, incarnations, resume numbers, listening addresses),
so no unauthenticated hello field can be altered or spliced from another table. From then on every
frame, both ways, ends with a 16-byte HMAC-SHA256 tag over a frame counter (implicit: both ends
count) and the frame body, under a key of this connection and this direction (the length prefix
counts the tag): a forged, altered, replayed, reordered or dropped frame fails the check and
closes the connection (the link dials again and the numbered frames are resent, so nothing is
lost). Keys are fresh per connection, so frames recorded on one connection are worthless on
another. A peer with a code and one without never link, each side saying why. Online guessing is
slowed: every failed code check costs ``MeshConfig.wrong_code_delay`` seconds during which this
mesh checks no other code, whatever number of connections the guesser opens. The key exchange is
pure-Python curve arithmetic, some 5 to 10 ms of CPU a step at each end, run off the event loop.
Tables without a code run the original protocol byte for byte.

Every connection may send us at most so many frames and bytes a second (``RateLimits``, token
buckets with a burst): over it we stop reading from that connection until the bucket refills, so
TCP backpressure slows the flooder alone while the event loop serves the other links as usual.
Ephemeral frames have a bucket of their own, and the ones over it are dropped.

The pure parts live in private modules and are tested in memory: the link state machine
(``net._link``), the hello codec, session keys, frame tags and the code check gate
(``net._handshake``), the rate limits (``net._ratelimit``), the address policy
(``net._addresses``) and the frame codec (``net._codec``). ``Mesh`` is the asyncio adapter that
drives them over TCP (``net._connection`` frames one connection). Everything here runs in one
asyncio loop; the listener is called from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import logging
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ._addresses import MAX_GOSSIP, LocalNetworks, parse_gossip
from ._codec import (
    KIND_ACK,
    KIND_DATA,
    KIND_EPHEMERAL,
    KIND_PEERS,
    KIND_REFUSE,
    MAX_TEXT,
    Broken,
    Refused,
)
from ._connection import Connection, authenticate
from ._handshake import (
    CODE_NEEDED,
    NO_CODE_HERE,
    WRONG_CODE,
    CodeCheckGate,
    Hello,
    check_hello,
    hello_body,
    parse_hello,
)
from ._link import LinkState, QueuedFrame, existing_connection_wins
from ._ratelimit import DEFAULT_RATE_LIMITS, Meter, RateLimits

__all__ = [
    "CODE_NEEDED",
    "DEFAULT_MAX_FRAME",
    "DEFAULT_RATE_LIMITS",
    "MAX_EPHEMERAL",
    "NO_CODE_HERE",
    "TRANSPORT_VERSION",
    "WRONG_CODE",
    "Hello",
    "Mesh",
    "MeshConfig",
    "MeshListener",
    "RateLimits",
]

TRANSPORT_VERSION = 1
DEFAULT_MAX_FRAME = (4 << 20) + 4096
"""Largest frame body accepted: the ordering core's largest frame (4 MiB) and our envelope."""
MAX_EPHEMERAL = 512
"""Largest payload of an ephemeral frame, in bytes."""
_DUPLICATE = "duplicate connection"
_FRAMES_PER_TURN = 32
"""Frames read from one connection before the other connections get a turn of the loop."""
_DIAL_TIMEOUT = 2.0
CLOSE_GRACE = 1.0
"""Seconds a closing mesh gives its tasks and unsent bytes before it drops them."""

log = logging.getLogger(__name__)


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
    """Seconds each failed code check holds back every other code check of this mesh (online
    guessing gets about one guess per delay)."""
    rate_limits: RateLimits | None = DEFAULT_RATE_LIMITS
    """What one connection may send us (None: no limit)."""
    local_networks: Callable[[], Iterable[ipaddress.IPv4Network]] | None = None
    """Looks up the networks of our interfaces, the only ones a peer can make us dial (None:
    ask the operating system)."""

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

    def refusal(self, hello: Hello) -> str | None:
        """None to accept a peer that said ``hello``, or the reason to refuse it."""
        return None


class Mesh:
    """The TCP links of one peer to the other members of its table."""

    def __init__(self, me: Hello, listener: MeshListener, config: MeshConfig | None = None) -> None:
        """``me``: what our hellos say; ``listener`` hears what happens on the links, from the
        event loop; ``config``: limits, timers, the table code (defaults: ``MeshConfig()``)."""
        self.me = me
        self.config = config or MeshConfig()
        self.port = 0
        self._listener = listener
        self._listen: tuple[str, int] | None = None
        self._links: dict[str, _Link] = {}
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._connections: set[Connection] = set()
        """Every open connection, linked or still in its handshake."""
        self._closing = False
        self._networks = LocalNetworks(self.config.local_networks)
        self._gate = CodeCheckGate(self.config.wrong_code_delay, _loop_time)

    async def async_listen(self, host: str, port: int = 0) -> int:
        """Accept connections on ``host:port`` (0 picks a free port); the port."""
        self._server = await asyncio.start_server(self._serve, host, port)
        self.port = self._server.sockets[0].getsockname()[1]
        self._listen = (host, self.port)
        return self.port

    def connect(self, peer: str, host: str, port: int) -> None:
        """Keep a link to ``peer`` at ``host:port``, dialing again whenever it drops."""
        link = self._link(peer)
        link.address = (host, port)
        link.wanted = True
        if link.dialer is None or link.dialer.done():
            link.dialer = self._spawn(self._dial_forever(link))

    def forget(self, peer: str) -> None:
        """Drop the link to ``peer`` and everything queued for it."""
        link = self._links.pop(peer, None)
        if link is None:
            return
        link.wanted = False
        if link.dialer is not None:
            link.dialer.cancel()
        if link.connection is not None:
            link.connection.close()

    def send(self, peer: str, data: bytes) -> None:
        """Queue ``data`` for ``peer``: delivered once, in order, even across reconnects."""
        link = self._link(peer)
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
        """Peers with a live connection now."""
        return {peer for peer, link in self._links.items() if link.connection is not None}

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
        if self._server is not None:
            self._server.close()
        # Closing every connection, not only the linked ones, ends every task that reads one,
        # even one whose cancellation asyncio.wait_for swallowed (before Python 3.12).
        connections = list(self._connections)
        for connection in connections:
            connection.close()
        await _cancel_within(set(self._tasks), CLOSE_GRACE, connections)
        dropped = [c for c in connections if c.unsent()]
        for connection in dropped:
            connection.abort()  # else its socket lives on until the peer acknowledges
        if dropped:
            await asyncio.sleep(0)  # an abort closes the socket on the loop's next turn
        if self._server is not None:
            # From Python 3.12 this waits for every served connection to be closed.
            await _cancel_within({asyncio.ensure_future(self._server.wait_closed())}, CLOSE_GRACE)

    # --- for subclasses (fault injection) ------------------------------------------------------

    def _send_data(self, link: _Link, frame: QueuedFrame) -> None:
        """Write a numbered frame on the link's live connection."""
        assert link.connection is not None
        link.connection.write([KIND_DATA, frame.seq, frame.data])

    # --- helpers -------------------------------------------------------------------------------

    def _link(self, peer: str) -> _Link:
        link = self._links.get(peer)
        if link is None:
            link = self._links[peer] = _Link(LinkState(peer))
        return link

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _dial_forever(self, link: _Link) -> None:
        while link.wanted and not self._closing:
            if link.connection is None and link.address is not None:
                try:
                    reader, writer = await asyncio.wait_for(
                        asyncio.open_connection(*link.address), timeout=_DIAL_TIMEOUT
                    )
                except (OSError, asyncio.TimeoutError):
                    await asyncio.sleep(self.config.retry_interval)
                    continue
                await self._run_connection(reader, writer, expected=link.peer)
            await asyncio.sleep(self.config.retry_interval)

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
        connection = Connection(reader, writer, who, self.config.max_frame)
        if self._closing:
            connection.close()
            return
        self._connections.add(connection)
        link: _Link | None = None
        try:
            opened = await self._handshake(connection, expected)
            link = self._attach(connection, opened, dialed=expected is not None)
            await self._pump(connection, link)
        except Refused as refusal:
            connection.write([KIND_REFUSE, str(refusal)[:MAX_TEXT]])
            if str(refusal) != _DUPLICATE:
                self._listener.problem(who, str(refusal))
        except Broken as problem:
            if not str(problem).endswith(_DUPLICATE):  # the other end kept its twin connection
                log.warning("closing connection to %s: %s", who, problem)
                self._listener.problem(who, str(problem))
        except (OSError, asyncio.IncompleteReadError, ConnectionError, asyncio.TimeoutError):
            pass
        finally:
            self._connections.discard(connection)
            with contextlib.suppress(Exception):
                connection.close()
            if link is not None and link.connection is connection:
                link.connection = None
                if not self._closing:
                    self._listener.link_down(link.peer)

    async def _handshake(self, connection: Connection, expected: str | None) -> _Opened:
        """Exchange hellos (the dialer, ``expected`` set, first) and, at a coded table, prove the
        code; ``Refused`` or ``Broken`` when the two may not link."""
        dialer_hello = b""
        if expected is not None:
            dialer_hello = self._send_hello(connection, self._link(expected))
        raw = await connection.read_handshake_raw()
        received = parse_hello(connection.decode(raw), connection.who)
        coded = self.config.table_code is not None
        resume = check_hello(received, self.me, coded)
        hello = received.hello
        refusal = self._listener.refusal(hello)
        if refusal is not None:
            raise Refused(refusal)
        if expected is not None and hello.peer != expected:
            raise Refused(f"expected peer {expected!r} but {hello.peer!r} answered")
        if self._existing_connection_wins(hello.peer):
            raise Refused(_DUPLICATE)
        if expected is None:
            hellos = (raw, self._send_hello(connection, self._links.get(hello.peer)))
        else:
            hellos = (dialer_hello, raw)
        if self.config.table_code is not None:
            dialed = expected is not None
            code = self.config.table_code
            await authenticate(connection, code, self.me.table, self._gate, dialed, hellos)
            # The key exchange let other connections run: the pair may have linked meanwhile.
            if self._existing_connection_wins(hello.peer):
                raise Refused(_DUPLICATE)
        return _Opened(hello, resume, received.listen)

    def _attach(self, connection: Connection, opened: _Opened, dialed: bool) -> _Link:
        """Make ``connection`` the link's one connection and resend what was not acknowledged."""
        link = self._link(opened.hello.peer)
        if link.connection is not None:
            link.connection.close()  # one connection per pair: this one wins (see the handshake)
        restarted = link.state.connected(opened.hello.incarnation, opened.resume)
        link.connection = connection
        link.dialed_by_me = dialed
        connection.who = link.peer
        if opened.listen is not None and self._networks.may_dial(opened.listen[0]):
            link.address = opened.listen
        for frame in list(link.state.unacked):
            connection.write([KIND_DATA, frame.seq, frame.data])
        self._share_addresses(link)
        self._listener.link_up(opened.hello, restarted)
        return link

    def _existing_connection_wins(self, peer: str) -> bool:
        link = self._links.get(peer)
        if link is None or link.connection is None:
            return False
        return existing_connection_wins(self.me.peer, peer, link.dialed_by_me)

    def _send_hello(self, connection: Connection, link: _Link | None) -> bytes:
        """Write our hello; its body, which the key confirmation covers."""
        resume = link.state.received if link is not None else 0
        known = link.state.remote_incarnation if link is not None else None
        coded = self.config.table_code is not None
        return connection.write(hello_body(self.me, resume, known, self._listen, coded))

    async def _pump(self, connection: Connection, link: _Link) -> None:
        loop = asyncio.get_running_loop()
        meter = Meter(self.config.rate_limits, loop.time())
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

    def _handle(self, connection: Connection, link: _Link, meter: Meter, body: Any) -> None:
        """Act on one frame read after the handshake."""
        kind = body[0] if isinstance(body, list) and body else None
        size = len(body) if isinstance(body, list) else 0
        if (
            kind == KIND_DATA
            and size == 3
            and isinstance(body[1], int)
            and isinstance(body[2], bytes)
        ):
            if link.state.receive(body[1]):
                self._listener.frame_received(link.peer, body[2])
                self._schedule_ack(link, connection)
        elif kind == KIND_EPHEMERAL and size == 2 and isinstance(body[1], bytes):
            if meter.allow_ephemeral(asyncio.get_running_loop().time()):
                self._ephemeral(link.peer, body[1])
        elif kind == KIND_ACK and size == 2 and isinstance(body[1], int):
            link.state.trim(body[1])
        elif kind == KIND_PEERS and size == 2 and isinstance(body[1], list):
            self._learn_addresses(link.peer, body[1])
        elif kind == KIND_REFUSE and size == 2 and isinstance(body[1], str):
            raise Broken(f"{link.peer} closed the connection: {body[1][:MAX_TEXT]}")
        else:
            raise Broken(f"malformed frame from {link.peer}")

    def _schedule_ack(self, link: _Link, connection: Connection) -> None:
        # One acknowledgement per burst: it runs once the buffered frames are read.
        if not link.ack_scheduled:
            link.ack_scheduled = True
            asyncio.get_running_loop().call_soon(self._ack, link, connection)

    def _ack(self, link: _Link, connection: Connection) -> None:
        link.ack_scheduled = False
        if link.connection is connection and (received := link.state.ack_due()) is not None:
            connection.write([KIND_ACK, received])

    def _ephemeral(self, peer: str, data: bytes) -> None:
        if len(data) > MAX_EPHEMERAL:
            self._listener.problem(peer, f"dropped an ephemeral frame of {len(data)} bytes")
            return
        try:
            self._listener.ephemeral_received(peer, data)
        except Exception:  # a bad pointer update must not cost the ordered link
            log.exception("ephemeral frame from %s", peer)

    def _share_addresses(self, new: _Link) -> None:
        """Tell a new link every address we know, and every other link the new one's."""
        if not self.config.gossip:
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

    def _learn_addresses(self, source: str, book: list[Any]) -> None:
        if not self.config.gossip:
            return
        for entry in parse_gossip(book, source, self.me.peer):
            if not self._networks.may_dial(entry.host):
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
                self.connect(entry.peer, entry.host, entry.port)


@dataclass(eq=False)
class _Link:
    """A link's numbering, and what the adapter keeps for it: its address, connection, dialer."""

    state: LinkState
    address: tuple[str, int] | None = None
    connection: Connection | None = None
    dialer: asyncio.Task[None] | None = None
    dialed_by_me: bool = False
    wanted: bool = True
    ack_scheduled: bool = False

    @property
    def peer(self) -> str:
        return self.state.peer


@dataclass(frozen=True)
class _Opened:
    """A connection past its handshake: who answered, how far it received our frames (counted
    for our present incarnation) and where it listens."""

    hello: Hello
    resume: int
    listen: tuple[str, int] | None


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


def _address_of(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "unknown peer"


async def _cancel_within(
    tasks: set[asyncio.Future[Any]], grace: float, connections: Sequence[Connection] = ()
) -> None:
    """Cancel ``tasks`` and wait for them at most ``grace`` seconds; if some live on (a cancel
    swallowed on the way), drop ``connections`` so their reads fail, and give them as long
    again. Whatever still runs then is logged, not waited for."""
    for task in tasks:
        task.cancel()
    if not tasks:
        return
    _, pending = await asyncio.wait(tasks, timeout=grace)
    if pending:
        for connection in connections:
            connection.abort()
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=grace)
    for task in pending:
        log.warning("closing the mesh: a task did not end: %r", task)
    for task in tasks - pending:
        if not task.cancelled():
            task.exception()  # retrieved: a failure while closing is not worth a report
