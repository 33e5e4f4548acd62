"""A full TCP mesh between the members of one table: reliable FIFO links that survive reconnects.

Each link carries length-prefixed msgpack frames (4-byte big-endian length, then the body) of at
most ``max_frame`` bytes. A connection opens with a hello from each side (protocol version, table
id, peer id, display name, incarnation, and how far this side has received the other's frames);
a mismatched version or table is refused with a message the user can read.

Application frames are numbered per link and kept until the other side acknowledges them, so when
a TCP connection drops (Wi-Fi hiccup, a laptop lid) the next connection resends what was lost:
within one incarnation of each peer every link is reliable and FIFO, which the ordering core
relies on. A peer that restarts comes back with a new incarnation: both sides start the link
afresh and the application is told (it catches up from a snapshot).

Ephemeral frames are the other kind, for what is stale a moment later (a pointer position): at
most ``MAX_EPHEMERAL`` bytes, no number, never queued nor resent, written only while the link is
up, and handed to ``on_ephemeral``. Their envelope is checked like every frame (a malformed one
closes the connection, as any protocol breach does); a well-formed one whose payload is over the
limit is dropped and reported to ``on_problem`` but keeps the link, and so does a payload the
application rejects: the ordered frames are never disturbed by a bad pointer update.

A table may have a code (``table_code``), shown on the host's screen and typed by the others. A
connection to a coded table adds, after the hellos, a SPAKE2 exchange (one message each way), so
knowing the code is proven without a captured connection allowing an offline search for it, and
then a key confirmation from each side, dialer first. Both the confirmations and the keys are
bound to both hellos (table id, peer ids, incarnations, resume numbers, listening addresses), so
no unauthenticated hello field can be altered or spliced from another table. From then on every
frame, both ways, ends with a 16-byte HMAC-SHA256 tag over a frame counter (implicit: both ends
count) and the frame body, under a key of this connection and this direction (the length prefix
counts the tag): a forged, altered,
replayed, reordered or dropped frame fails the check and closes the connection (the link dials
again and the numbered frames are resent, so nothing is lost). Keys are fresh per connection, so
frames recorded on one connection are worthless on another. A peer with a code and one without
never link, each side saying why. Online guessing is slowed: every failed code check costs
``wrong_code_delay`` seconds during which this mesh checks no other code, whatever number of
connections the guesser opens. The key exchange is pure-Python curve arithmetic, some 5 to 10 ms
of CPU a step at each end, run off the event loop. Tables without a code run the original
protocol byte for byte.

Every connection may send us at most so many frames and bytes a second (``RateLimits``, token
buckets with a burst): over it we stop reading from that connection until the bucket refills, so
TCP backpressure slows the flooder alone while the event loop serves the other links as usual.
Ephemeral frames have a bucket of their own, and the ones over it are dropped.

Everything here runs in one asyncio loop; the callbacks are called from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import ipaddress
import itertools
import logging
import socket
import struct
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ifaddr
import msgpack
import spake2  # type: ignore[import-untyped]

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
    "RateLimits",
]

TRANSPORT_VERSION = 1
DEFAULT_MAX_FRAME = (4 << 20) + 4096
"""Largest frame body accepted: the ordering core's largest frame (4 MiB) and our envelope."""

_HEADER = struct.Struct(">I")
_KIND_HELLO, _KIND_DATA, _KIND_ACK, _KIND_REFUSE, _KIND_PEERS = 0, 1, 2, 3, 4
_KIND_EPHEMERAL, _KIND_KEY_EXCHANGE, _KIND_CONFIRM = 5, 6, 7
MAX_EPHEMERAL = 512
"""Largest payload of an ephemeral frame, in bytes."""
CODE_NEEDED = "this table needs a code"
"""Refusal of a peer without a code by a peer with one (each side refuses the other)."""
NO_CODE_HERE = "this table has no code"
"""Refusal of a peer with a code by a peer without one."""
WRONG_CODE = "wrong table code"
"""Refusal when the key confirmation fails: the two peers typed different codes."""
_MAX_GOSSIP = 32
_DUPLICATE = "duplicate connection"
_MAX_TEXT = 200
_HANDSHAKE_TIMEOUT = 5.0
_CODE_SCHEME = "spake2"
"""The tenth hello field of a peer with a code; a peer without one sends the original nine."""
_KEY_EXCHANGE_ID = b"net.transport table "
_KEY_EXCHANGE_SIZE = 33
_CONFIRMATION_SIZE = 32
_TAG_SIZE = 16
_COUNTER = struct.Struct(">Q")
_FRAMES_PER_TURN = 32
"""Frames read from one connection before the other connections get a turn of the loop."""

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Hello:
    """Who is at this end of a connection."""

    protocol: int
    table: str
    peer: str
    name: str
    incarnation: int


@dataclass(frozen=True)
class RateLimits:
    """What one connection may send us, as token buckets (a sustained rate and a burst).

    The defaults are far above what an honest game sends on one link (heartbeats every 100 ms, a
    few actions a second, acknowledgements, pointer updates at 30 a second, a rare snapshot of
    up to 4 MiB, and a burst of resends after a reconnect)."""

    frames_per_second: float = 500.0
    frame_burst: float = 2000.0
    bytes_per_second: float = 8 << 20
    byte_burst: float = 16 << 20
    ephemeral_per_second: float = 90.0
    """Ephemeral frames over this bucket are dropped (never delivered) instead of waited for."""
    ephemeral_burst: float = 180.0

    def __post_init__(self) -> None:
        if min(vars(self).values()) <= 0:
            raise ValueError(f"every rate and burst must be positive: {self}")


DEFAULT_RATE_LIMITS = RateLimits()


@dataclass(eq=False)
class _Link:
    peer: str
    address: tuple[str, int] | None = None
    remote_incarnation: int | None = None
    next_out: int = 1
    unacked: deque[tuple[int, bytes]] = field(default_factory=deque)
    received: int = 0
    acked_received: int = 0
    writer: asyncio.StreamWriter | None = None
    dialer: asyncio.Task[None] | None = None
    dialed_by_me: bool = False
    wanted: bool = True
    ack_scheduled: bool = False
    release_at: float = 0.0


class Mesh:
    """The TCP links of one peer to the other members of its table."""

    def __init__(
        self,
        me: Hello,
        on_frame: Callable[[str, bytes], None],
        on_connected: Callable[[Hello, bool], None] = lambda hello, restarted: None,
        on_disconnected: Callable[[str], None] = lambda peer: None,
        on_problem: Callable[[str, str], None] = lambda who, reason: None,
        max_frame: int = DEFAULT_MAX_FRAME,
        retry_interval: float = 0.1,
        accept: Callable[[Hello], str | None] = lambda hello: None,
        gossip: bool = True,
        delay: Callable[[], float] | None = None,
        on_ephemeral: Callable[[str, bytes], None] = lambda peer, data: None,
        table_code: str | None = None,
        wrong_code_delay: float = 1.0,
        rate_limits: RateLimits | None = DEFAULT_RATE_LIMITS,
    ) -> None:
        """``on_connected(hello, restarted)``: a link is up (``restarted`` when the peer came
        back with a new incarnation). ``on_problem(who, reason)``: a connection was closed for a
        protocol problem. ``accept(hello)`` returns None to accept an incoming peer, or the
        reason to refuse it. With ``gossip``, peers tell each other the listening addresses
        they know, and each peer dials the ones it has no link to, so that a newcomer who knows
        one member ends up linked to all. ``on_ephemeral(peer, data)``: an ephemeral frame
        arrived (see ``send_ephemeral``).

        ``table_code``: link only with peers that know this code (compared exactly, as UTF-8:
        normalising what people type is the application's business), and authenticate every
        frame. On both sides of a refused connection ``on_problem`` gets exactly ``WRONG_CODE``
        (the codes differ), ``CODE_NEEDED`` (a peer without a code met one with a code) or
        ``NO_CODE_HERE`` (the other way round), and the link keeps dialing.
        ``wrong_code_delay``: seconds each failed code check holds back every other code check
        of this mesh (online guessing gets about one guess per delay). ``rate_limits``: what one
        connection may send us (None: no limit)."""
        if table_code is not None and not table_code:
            raise ValueError("a table code cannot be empty (None means no code)")
        self.gossip = gossip
        self.delay = delay
        """Fault injection for tests: seconds to hold back each outgoing frame (order kept)."""
        self._listen: tuple[str, int] | None = None
        self.me = me
        self._on_frame = on_frame
        self._on_connected = on_connected
        self._on_disconnected = on_disconnected
        self._on_problem = on_problem
        self._on_ephemeral = on_ephemeral
        self._accept = accept
        self.max_frame = max_frame
        self.retry_interval = retry_interval
        self._links: dict[str, _Link] = {}
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False
        self.port = 0
        self._table_code = table_code
        self.wrong_code_delay = wrong_code_delay
        self.rate_limits = rate_limits
        self._code_checks_open_at = 0.0
        """Loop time before which no code is checked: ``wrong_code_delay`` after a failed one."""
        self._frame_keys: weakref.WeakKeyDictionary[asyncio.StreamWriter, _FrameTags] = (
            weakref.WeakKeyDictionary()
        )
        """The tags of what we write on each authenticated connection."""

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
        if link.writer is not None:
            link.writer.close()

    def send(self, peer: str, data: bytes) -> None:
        """Queue ``data`` for ``peer``: delivered once, in order, even across reconnects."""
        link = self._link(peer)
        seq = link.next_out
        link.next_out += 1
        link.unacked.append((seq, data))
        if link.writer is None:
            return
        if self.delay is None:
            self._write(link.writer, [_KIND_DATA, seq, data])
            return
        loop = asyncio.get_running_loop()
        release = max(link.release_at, loop.time() + self.delay())
        link.release_at = release
        loop.call_at(release, self._write_late, link, link.writer, seq, data)

    def send_ephemeral(self, peer: str, data: bytes) -> bool:
        """Write ``data`` to ``peer`` now if its link is up, else drop it; True when written.

        Best effort: no sequence number, never queued, never resent after a reconnect, and it may
        overtake ordered frames held back by ``delay``. ``ValueError`` above ``MAX_EPHEMERAL``.
        """
        if len(data) > MAX_EPHEMERAL:
            raise ValueError(f"an ephemeral frame carries at most {MAX_EPHEMERAL} bytes")
        link = self._links.get(peer)
        if link is None or link.writer is None or link.writer.is_closing():
            return False
        self._write(link.writer, [_KIND_EPHEMERAL, bytes(data)])
        return True

    def addresses(self) -> dict[str, tuple[str, int]]:
        """The listening address of every peer we know one for."""
        return {p: link.address for p, link in self._links.items() if link.address is not None}

    def connected(self) -> set[str]:
        """Peers with a live connection now."""
        return {peer for peer, link in self._links.items() if link.writer is not None}

    def queued(self, peer: str) -> int:
        """Frames sent to ``peer`` and not yet acknowledged."""
        link = self._links.get(peer)
        return len(link.unacked) if link else 0

    async def async_close(self) -> None:
        self._closing = True
        if self._server is not None:
            self._server.close()
        for link in self._links.values():
            if link.writer is not None:
                link.writer.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    # --- helpers -------------------------------------------------------------------------------

    def _link(self, peer: str) -> _Link:
        link = self._links.get(peer)
        if link is None:
            link = self._links[peer] = _Link(peer)
        return link

    def _spawn(self, coroutine: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _dial_forever(self, link: _Link) -> None:
        while link.wanted and not self._closing:
            if link.writer is None and link.address is not None:
                try:
                    reader, writer = await asyncio.wait_for(
                        asyncio.open_connection(*link.address), timeout=2.0
                    )
                except (OSError, asyncio.TimeoutError):
                    await asyncio.sleep(self.retry_interval)
                    continue
                await self._run_connection(reader, writer, expected=link.peer)
            await asyncio.sleep(self.retry_interval)

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
        _tune(writer)
        who = expected or _address_of(writer)
        link: _Link | None = None
        try:
            dialer_hello = b""
            if expected is not None:
                dialer_hello = self._send_hello(writer, self._link(expected))
            hello, resume, listen, their_hello = await self._read_hello(reader, who)
            if expected is not None and hello.peer != expected:
                raise _Refused(f"expected peer {expected!r} but {hello.peer!r} answered")
            if self._existing_connection_wins(hello.peer):
                raise _Refused(_DUPLICATE)
            if expected is None:
                dialer_hello = their_hello
                listener_hello = self._send_hello(writer, self._links.get(hello.peer))
            else:
                listener_hello = their_hello
            incoming_tags: _FrameTags | None = None
            if self._table_code is not None:
                incoming_tags = await self._authenticate(
                    reader, writer, who, expected is not None, dialer_hello, listener_hello
                )
                # The key exchange let other connections run: the pair may have linked meanwhile.
                if self._existing_connection_wins(hello.peer):
                    raise _Refused(_DUPLICATE)
            link = self._link(hello.peer)
            if link.writer is not None:
                link.writer.close()  # one connection per pair: this one wins (see above)
            restarted = (
                link.remote_incarnation is not None and link.remote_incarnation != hello.incarnation
            )
            if restarted or link.remote_incarnation is None:
                if restarted:
                    # Both ends number afresh. What we queued is kept and renumbered: frames are
                    # addressed to the peer, not to an incarnation, and some of them (a welcome
                    # into the group) were meant for the new one.
                    link.received = link.acked_received = 0
                    queued = [data for _, data in link.unacked]
                    link.unacked = deque(enumerate(queued, start=1))
                    link.next_out = len(queued) + 1
                link.remote_incarnation = hello.incarnation
            link.writer = writer
            link.dialed_by_me = expected is not None
            if listen is not None and _on_our_networks(listen[0]):
                link.address = listen
            self._trim(link, resume)
            for seq, data in list(link.unacked):
                self._write(writer, [_KIND_DATA, seq, data])
            self._share_addresses(link)
            self._on_connected(hello, restarted)
            await self._pump(reader, writer, link, incoming_tags)
        except _Refused as refusal:
            self._write(writer, [_KIND_REFUSE, str(refusal)[:_MAX_TEXT]])
            if str(refusal) != _DUPLICATE:
                self._on_problem(who, str(refusal))
        except _Broken as problem:
            if not str(problem).endswith(_DUPLICATE):  # the other end kept its twin connection
                log.warning("closing connection to %s: %s", who, problem)
                self._on_problem(who, str(problem))
        except (OSError, asyncio.IncompleteReadError, ConnectionError, asyncio.TimeoutError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()
            if link is not None and link.writer is writer:
                link.writer = None
                if not self._closing:
                    self._on_disconnected(link.peer)

    def _existing_connection_wins(self, peer: str) -> bool:
        """One connection per pair: of two, the one dialed by the smaller peer id wins."""
        link = self._links.get(peer)
        if link is None or link.writer is None:
            return False
        return (self.me.peer < peer) == link.dialed_by_me

    async def _authenticate(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        who: str,
        dialed: bool,
        dialer_hello: bytes,
        listener_hello: bytes,
    ) -> _FrameTags:
        """Prove both ends know the table code; the tags of the frames the other end writes.

        The dialer confirms first and the listener answers only a right confirmation, so a
        guesser who dials learns nothing before its guess is checked, and every check waits
        its turn behind the penalty of a failed one."""
        assert self._table_code is not None
        loop = asyncio.get_running_loop()
        exchange = spake2.SPAKE2_Symmetric(
            self._table_code.encode(), idSymmetric=_KEY_EXCHANGE_ID + self.me.table.encode()
        )
        # Pure-Python curve arithmetic (about 10 ms a step): off the loop, so other links flow.
        outbound = await loop.run_in_executor(None, exchange.start)
        self._write(writer, [_KIND_KEY_EXCHANGE, outbound])
        inbound = await self._read_handshake(reader, who, _KIND_KEY_EXCHANGE, _KEY_EXCHANGE_SIZE)
        try:
            shared = await loop.run_in_executor(None, exchange.finish, inbound)
        except Exception:  # spake2 raises several types for a bad point or a reflected message
            raise _Broken(f"bad key exchange message from {who}") from None
        keys = _SessionKeys.derive(shared, dialer_hello, listener_hello, dialed)
        if dialed:
            await self._code_check_turn()
            self._write(writer, [_KIND_CONFIRM, keys.my_confirmation])
            try:
                answer = await self._read_handshake(reader, who, _KIND_CONFIRM, _CONFIRMATION_SIZE)
                if not hmac.compare_digest(answer, keys.their_confirmation):
                    raise _Refused(WRONG_CODE)
            except Exception:
                # Our confirmation answered one guess of whoever listens there: hold the other
                # checks back as a listener does (but report this failure at once).
                self._hold_code_checks()
                raise
        else:
            answer = await self._read_handshake(reader, who, _KIND_CONFIRM, _CONFIRMATION_SIZE)
            await self._code_check_turn()
            if not hmac.compare_digest(answer, keys.their_confirmation):
                self._hold_code_checks()
                await asyncio.sleep(self.wrong_code_delay)  # the guesser waits for its answer too
                raise _Refused(WRONG_CODE)
            self._write(writer, [_KIND_CONFIRM, keys.my_confirmation])
        self._frame_keys[writer] = _FrameTags(keys.outgoing)
        return _FrameTags(keys.incoming)

    async def _code_check_turn(self) -> None:
        """Wait until no failed check holds the code checks back; a handshake that would wait
        past its time limit is given up. No await may come between this and the check itself:
        then whoever is let in first and fails holds back the others let in at the same time."""
        loop = asyncio.get_running_loop()
        give_up_at = loop.time() + _HANDSHAKE_TIMEOUT
        while (wait := self._code_checks_open_at - loop.time()) > 0:
            if self._code_checks_open_at > give_up_at:
                raise asyncio.TimeoutError
            await asyncio.sleep(wait)

    def _hold_code_checks(self) -> None:
        loop = asyncio.get_running_loop()
        self._code_checks_open_at = max(
            self._code_checks_open_at, loop.time() + self.wrong_code_delay
        )

    async def _read_handshake(
        self, reader: asyncio.StreamReader, who: str, kind: int, size: int
    ) -> bytes:
        """The payload of the next handshake frame, of ``kind`` and ``size`` bytes."""
        raw = await asyncio.wait_for(self._read_raw(reader, who, None), _HANDSHAKE_TIMEOUT)
        body = self._decode(raw, who)
        if _is_refusal(body):
            raise _refusal_from(who, body[1])
        if not (
            isinstance(body, list)
            and len(body) == 2
            and body[0] == kind
            and isinstance(body[1], bytes)
            and len(body[1]) == size
        ):
            raise _Broken(f"malformed handshake frame from {who}")
        payload: bytes = body[1]
        return payload

    async def _pump(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        link: _Link,
        incoming_tags: _FrameTags | None,
    ) -> None:
        meter = _Meter(self.rate_limits, asyncio.get_running_loop().time())
        for handled in itertools.count(1):
            raw = await self._read_raw(reader, link.peer, incoming_tags)
            wait = meter.charge(len(raw), asyncio.get_running_loop().time())
            if handled % _FRAMES_PER_TURN == 0 and wait <= 0:
                # Reading buffered frames never yields: let the other links have the loop.
                await asyncio.sleep(0)
            if wait > 0:
                # Over its rate: read nothing more from this peer for now. Its bytes pile up in
                # the socket buffers until TCP stops it; the other links are not held up.
                await asyncio.sleep(wait)
                if link.writer is not writer:
                    return  # replaced by a newer connection (or forgotten) meanwhile
            body = self._decode(raw, link.peer)
            kind = body[0] if isinstance(body, list) and body else None
            if (
                kind == _KIND_DATA
                and len(body) == 3
                and isinstance(body[1], int)
                and isinstance(body[2], bytes)
            ):
                seq = body[1]
                if seq <= link.received:
                    continue  # a resend of something already delivered
                if seq != link.received + 1:
                    raise _Broken(f"frame {seq} from {link.peer} skips {link.received + 1}")
                link.received = seq
                self._on_frame(link.peer, body[2])
                if not link.ack_scheduled:
                    # One acknowledgement per burst: it runs once the buffered frames are read.
                    link.ack_scheduled = True
                    asyncio.get_running_loop().call_soon(self._ack, link, writer)
            elif kind == _KIND_EPHEMERAL and len(body) == 2 and isinstance(body[1], bytes):
                if meter.allow_ephemeral(asyncio.get_running_loop().time()):
                    self._ephemeral(link.peer, body[1])
            elif kind == _KIND_ACK and len(body) == 2 and isinstance(body[1], int):
                self._trim(link, body[1])
            elif kind == _KIND_PEERS and len(body) == 2 and isinstance(body[1], list):
                self._learn_addresses(link.peer, body[1])
            elif kind == _KIND_REFUSE and len(body) == 2 and isinstance(body[1], str):
                raise _Broken(f"{link.peer} closed the connection: {body[1][:_MAX_TEXT]}")
            else:
                raise _Broken(f"malformed frame from {link.peer}")

    def _ephemeral(self, peer: str, data: bytes) -> None:
        if len(data) > MAX_EPHEMERAL:
            self._on_problem(peer, f"dropped an ephemeral frame of {len(data)} bytes")
            return
        try:
            self._on_ephemeral(peer, data)
        except Exception:  # a bad pointer update must not cost the ordered link
            log.exception("ephemeral frame from %s", peer)

    def _write_late(self, link: _Link, writer: asyncio.StreamWriter, seq: int, data: bytes) -> None:
        if link.writer is writer and any(s == seq for s, _ in link.unacked):
            self._write(writer, [_KIND_DATA, seq, data])

    def _ack(self, link: _Link, writer: asyncio.StreamWriter) -> None:
        link.ack_scheduled = False
        if link.writer is writer and link.received != link.acked_received:
            link.acked_received = link.received
            self._write(writer, [_KIND_ACK, link.received])

    @staticmethod
    def _trim(link: _Link, acknowledged: int) -> None:
        while link.unacked and link.unacked[0][0] <= acknowledged:
            link.unacked.popleft()

    def _share_addresses(self, new: _Link) -> None:
        """Tell a new link every address we know, and every other link the new one's."""
        if not self.gossip:
            return
        book = [
            [peer, link.address[0], link.address[1]]
            for peer, link in sorted(self._links.items())
            if link.address is not None and peer != new.peer
        ][:_MAX_GOSSIP]
        if new.writer is not None and book:
            self._write(new.writer, [_KIND_PEERS, book])
        if new.address is not None:
            for peer, link in self._links.items():
                if peer != new.peer and link.writer is not None:
                    entry = [new.peer, new.address[0], new.address[1]]
                    self._write(link.writer, [_KIND_PEERS, [entry]])

    def _learn_addresses(self, source: str, book: list[Any]) -> None:
        if not self.gossip:
            return
        for item in book[:_MAX_GOSSIP]:
            if not (
                isinstance(item, list)
                and len(item) == 3
                and isinstance(item[0], str)
                and isinstance(item[1], str)
                and type(item[2]) is int
            ):
                raise _Broken(f"malformed address list from {source}")
            peer, host, port = item
            if peer == self.me.peer or not _is_ipv4(host) or not 0 < port < 65536:
                continue
            if not _on_our_networks(host):
                log.warning(
                    "%s told us of %s at %s, not on our networks: ignored", source, peer, host
                )
                continue
            link = self._links.get(peer)
            if link is None or link.writer is None:
                # A restarted peer listens on a new port: dial the address heard most recently.
                self.connect(peer, host, port)

    def _send_hello(self, writer: asyncio.StreamWriter, link: _Link | None) -> bytes:
        """Write our hello; its body, which the key confirmation covers."""
        me = self.me
        resume = link.received if link is not None else 0
        known = link.remote_incarnation if link is not None else None
        listen = list(self._listen) if self._listen is not None else None
        hello: list[Any] = [
            _KIND_HELLO,
            me.protocol,
            me.table,
            me.peer,
            me.name,
            me.incarnation,
            resume,
            -1 if known is None else known,
            listen,
        ]
        if self._table_code is not None:
            hello.append(_CODE_SCHEME)
        return self._write(writer, hello)

    async def _read_hello(
        self, reader: asyncio.StreamReader, who: str
    ) -> tuple[Hello, int, tuple[str, int] | None, bytes]:
        """The other side's hello, its resume number, listening address and body."""
        raw = await asyncio.wait_for(self._read_raw(reader, who, None), _HANDSHAKE_TIMEOUT)
        body = self._decode(raw, who)
        if _is_refusal(body):
            raise _refusal_from(who, body[1])
        if not (isinstance(body, list) and len(body) in (9, 10) and body[0] == _KIND_HELLO):
            raise _Broken(f"malformed hello from {who}")
        _, protocol, table, peer, name, incarnation, resume, known, listen_field = body[:9]
        scheme = body[9] if len(body) == 10 else None
        listen: tuple[str, int] | None = None
        if listen_field is not None:
            if not (
                isinstance(listen_field, list)
                and len(listen_field) == 2
                and isinstance(listen_field[0], str)
                and _is_ipv4(listen_field[0])
                and type(listen_field[1]) is int
                and 0 < listen_field[1] < 65536
            ):
                raise _Broken(f"hello field 'listen' from {who} is malformed")
            listen = (listen_field[0], listen_field[1])
        for label, value, kind in (
            ("protocol", protocol, int),
            ("table", table, str),
            ("peer", peer, str),
            ("name", name, str),
            ("incarnation", incarnation, int),
            ("resume", resume, int),
            ("known incarnation", known, int),
        ):
            if not isinstance(value, kind) or isinstance(value, bool):
                raise _Broken(f"hello field {label!r} from {who} has the wrong type")
            if isinstance(value, str) and not 0 < len(value) <= _MAX_TEXT:
                raise _Broken(f"hello field {label!r} from {who} has a bad length")
        hello = Hello(protocol, table, peer, name, incarnation)
        if protocol != self.me.protocol:
            raise _Refused(
                f"protocol version {protocol} does not match ours "
                f"({self.me.protocol}): update nerts-lan on every laptop"
            )
        if table != self.me.table:
            raise _Refused(f"this is table {self.me.table}, not {table}")
        if peer == self.me.peer:
            raise _Refused("a peer cannot connect to itself")
        if scheme is None and self._table_code is not None:
            raise _Refused(CODE_NEEDED)
        if scheme is not None and self._table_code is None:
            raise _Refused(NO_CODE_HERE)
        if scheme is not None and scheme != _CODE_SCHEME:
            raise _Refused(f"table code scheme {str(scheme)[:40]!r} is not ours: update every peer")
        refusal = self._accept(hello)
        if refusal is not None:
            raise _Refused(refusal)
        # A resume number only counts for the incarnation it was recorded against.
        return hello, resume if known == self.me.incarnation else 0, listen, raw

    async def _read_raw(
        self, reader: asyncio.StreamReader, who: str, tags: _FrameTags | None
    ) -> bytes:
        """The body of the next frame; with ``tags``, the checked body without its tag."""
        header = await reader.readexactly(_HEADER.size)
        (length,) = _HEADER.unpack(header)
        limit = self.max_frame if tags is None else self.max_frame + _TAG_SIZE
        if length > limit:
            raise _Broken(f"frame of {length} bytes from {who} is over the {limit} byte limit")
        raw = await reader.readexactly(length)
        if tags is None:
            return raw
        number = tags.count + 1
        body, tag = raw[:-_TAG_SIZE], raw[-_TAG_SIZE:]
        if len(raw) < _TAG_SIZE or not hmac.compare_digest(tag, tags.next_tag(body)):
            raise _Broken(f"frame {number} from {who} failed authentication")
        return body

    def _decode(self, raw: bytes, who: str) -> Any:
        try:
            return msgpack.unpackb(
                raw,
                raw=False,
                strict_map_key=True,
                use_list=True,
                max_bin_len=self.max_frame,
                max_str_len=self.max_frame,
                max_array_len=64,
                max_map_len=64,
                max_ext_len=0,
            )
        except Exception as error:  # msgpack raises several types for hostile input
            raise _Broken(f"undecodable frame from {who}: {type(error).__name__}") from None

    def _write(self, writer: asyncio.StreamWriter, body: list[Any]) -> bytes:
        """Write one frame (with its tag on an authenticated connection); the body written."""
        data: bytes = msgpack.packb(body, use_bin_type=True)
        tags = self._frame_keys.get(writer)
        if tags is None:
            writer.write(_HEADER.pack(len(data)) + data)
        else:
            writer.write(_HEADER.pack(len(data) + _TAG_SIZE) + data + tags.next_tag(data))
        return data


class _FrameTags:
    """The tags of one direction of an authenticated connection: HMAC-SHA256, cut to 16 bytes,
    over the number of the frame in that direction (counted from 1 by both ends) and its body."""

    def __init__(self, key: bytes) -> None:
        self._mac = hmac.new(key, digestmod=hashlib.sha256)
        self.count = 0

    def next_tag(self, body: bytes) -> bytes:
        self.count += 1
        mac = self._mac.copy()
        mac.update(_COUNTER.pack(self.count))
        mac.update(body)
        return mac.digest()[:_TAG_SIZE]


@dataclass(frozen=True)
class _SessionKeys:
    """What one end of a connection derives from the SPAKE2 key and both hellos."""

    my_confirmation: bytes
    their_confirmation: bytes
    outgoing: bytes
    incoming: bytes

    @classmethod
    def derive(
        cls, shared: bytes, dialer_hello: bytes, listener_hello: bytes, dialed: bool
    ) -> _SessionKeys:
        # Every hello field was sent in the clear: binding both hellos into the session key
        # makes the confirmation fail if anyone changed one (or spliced another table's).
        transcript = hashlib.sha256()
        for hello in (dialer_hello, listener_hello):
            transcript.update(_HEADER.pack(len(hello)) + hello)
        session = hmac.digest(shared, b"net.transport session " + transcript.digest(), "sha256")

        def key(label: bytes) -> bytes:
            return hmac.digest(session, label, "sha256")

        # Each direction has its own confirmation and frame key, so nothing one end writes can
        # be reflected back at it.
        by_dialer = key(b"confirm dialer to listener"), key(b"frames dialer to listener")
        by_listener = key(b"confirm listener to dialer"), key(b"frames listener to dialer")
        mine, theirs = (by_dialer, by_listener) if dialed else (by_listener, by_dialer)
        return cls(mine[0], theirs[0], mine[1], theirs[1])


class _TokenBucket:
    """Tokens refill at ``rate`` a second up to ``burst``; taking may run into debt."""

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = now

    def take(self, amount: float, now: float) -> float:
        """Take ``amount`` tokens; the seconds until the debt, if any, is paid back."""
        self._refill(now)
        self.tokens -= amount
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate

    def take_if_there(self, amount: float, now: float) -> bool:
        self._refill(now)
        if self.tokens < amount:
            return False
        self.tokens -= amount
        return True

    def _refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now


class _Meter:
    """The rate limits of what one connection sends us (none when ``limits`` is None)."""

    def __init__(self, limits: RateLimits | None, now: float) -> None:
        self._buckets: tuple[_TokenBucket, _TokenBucket, _TokenBucket] | None = None
        if limits is not None:
            self._buckets = (
                _TokenBucket(limits.frames_per_second, limits.frame_burst, now),
                _TokenBucket(limits.bytes_per_second, limits.byte_burst, now),
                _TokenBucket(limits.ephemeral_per_second, limits.ephemeral_burst, now),
            )

    def charge(self, size: int, now: float) -> float:
        """Count one frame of ``size`` bytes; the seconds to stop reading for."""
        if self._buckets is None:
            return 0.0
        frames, octets, _ = self._buckets
        return max(frames.take(1, now), octets.take(size, now))

    def allow_ephemeral(self, now: float) -> bool:
        return self._buckets is None or self._buckets[2].take_if_there(1, now)


class _Refused(Exception):
    """We refuse the connection, telling the other side why."""


class _Broken(Exception):
    """The other side broke the protocol: close the connection."""


def _refusal_from(who: str, reason: str) -> _Broken:
    """The other side refused us during the handshake. A code refusal is reported as its bare
    constant, as the refusing side reports it, so that the application can tell the user."""
    if reason in (CODE_NEEDED, NO_CODE_HERE, WRONG_CODE):
        return _Broken(reason)
    return _Broken(f"{who} refused the connection: {reason[:_MAX_TEXT]}")


def _is_refusal(body: Any) -> bool:
    return (
        isinstance(body, list)
        and len(body) == 2
        and body[0] == _KIND_REFUSE
        and isinstance(body[1], str)
    )


def _tune(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _on_our_networks(host: str) -> bool:
    """Whether we may dial ``host`` because a peer said so (gossip, a hello's listening address):
    only an address on the network of one of our own interfaces. The members of a table share
    one link (mDNS does not cross routers), so this costs them nothing, and no one can make us
    connect anywhere else (another machine's services, the internet)."""
    address = ipaddress.IPv4Address(host)
    return any(address in network for network in _local_networks())


_NETWORKS_TTL = 10.0
_networks_cache: tuple[float, tuple[ipaddress.IPv4Network, ...]] = (-_NETWORKS_TTL, ())


def _local_networks() -> tuple[ipaddress.IPv4Network, ...]:
    """The IPv4 networks of this machine's interfaces (loopback included), looked up again at
    most every ``_NETWORKS_TTL`` seconds (a laptop changes Wi-Fi)."""
    global _networks_cache
    now = time.monotonic()
    checked, networks = _networks_cache
    if now - checked >= _NETWORKS_TTL:
        found = {ipaddress.IPv4Network("127.0.0.0/8")}
        with contextlib.suppress(OSError, ValueError):
            for adapter in ifaddr.get_adapters():
                for ip in adapter.ips:
                    if isinstance(ip.ip, str):
                        found.add(
                            ipaddress.IPv4Network(f"{ip.ip}/{ip.network_prefix}", strict=False)
                        )
        networks = tuple(sorted(found))
        _networks_cache = (now, networks)
    return networks


def _is_ipv4(text: str) -> bool:
    try:
        socket.inet_aton(text)
    except OSError:
        return False
    return text.count(".") == 3


def _address_of(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "unknown peer"
