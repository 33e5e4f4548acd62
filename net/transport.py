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

Everything here runs in one asyncio loop; the callbacks are called from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import struct
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack

__all__ = [
    "DEFAULT_MAX_FRAME",
    "MAX_EPHEMERAL",
    "TRANSPORT_VERSION",
    "Hello",
    "Mesh",
]

TRANSPORT_VERSION = 1
DEFAULT_MAX_FRAME = (4 << 20) + 4096
"""Largest frame body accepted: the ordering core's largest frame (4 MiB) and our envelope."""

_HEADER = struct.Struct(">I")
_KIND_HELLO, _KIND_DATA, _KIND_ACK, _KIND_REFUSE, _KIND_PEERS = 0, 1, 2, 3, 4
_KIND_EPHEMERAL = 5
MAX_EPHEMERAL = 512
"""Largest payload of an ephemeral frame, in bytes."""
_MAX_GOSSIP = 32
_DUPLICATE = "duplicate connection"
_MAX_TEXT = 200

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Hello:
    """Who is at this end of a connection."""

    protocol: int
    table: str
    peer: str
    name: str
    incarnation: int


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
    ) -> None:
        """``on_connected(hello, restarted)``: a link is up (``restarted`` when the peer came
        back with a new incarnation). ``on_problem(who, reason)``: a connection was closed for a
        protocol problem. ``accept(hello)`` returns None to accept an incoming peer, or the
        reason to refuse it. With ``gossip``, peers tell each other the listening addresses
        they know, and each peer dials the ones it has no link to, so that a newcomer who knows
        one member ends up linked to all. ``on_ephemeral(peer, data)``: an ephemeral frame
        arrived (see ``send_ephemeral``)."""
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
            if expected is not None:
                self._send_hello(writer, self._link(expected))
            hello, resume, listen = await self._read_hello(reader, who)
            if expected is not None and hello.peer != expected:
                raise _Refused(f"expected peer {expected!r} but {hello.peer!r} answered")
            link = self._link(hello.peer)
            if link.writer is not None:
                # One connection per pair: the one dialed by the smaller peer id wins.
                mine_wins = (self.me.peer < hello.peer) == link.dialed_by_me
                if mine_wins:
                    raise _Refused(_DUPLICATE)
                link.writer.close()
            if expected is None:
                self._send_hello(writer, link)
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
            if listen is not None:
                link.address = listen
            self._trim(link, resume)
            for seq, data in list(link.unacked):
                self._write(writer, [_KIND_DATA, seq, data])
            self._share_addresses(link)
            self._on_connected(hello, restarted)
            await self._pump(reader, writer, link)
        except _Refused as refusal:
            self._write(writer, [_KIND_REFUSE, str(refusal)[:_MAX_TEXT]])
            if str(refusal) != _DUPLICATE:
                self._on_problem(who, str(refusal))
        except _Broken as problem:
            if not str(problem).endswith(_DUPLICATE):  # the other end kept its twin connection
                log.warning("closing connection to %s: %s", who, problem)
                self._on_problem(who, str(problem))
        except (OSError, asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()
            if link is not None and link.writer is writer:
                link.writer = None
                if not self._closing:
                    self._on_disconnected(link.peer)

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, link: _Link
    ) -> None:
        while True:
            body = await self._read_frame(reader, link.peer)
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
            link = self._links.get(peer)
            if link is None or link.writer is None:
                # A restarted peer listens on a new port: dial the address heard most recently.
                self.connect(peer, host, port)

    def _send_hello(self, writer: asyncio.StreamWriter, link: _Link | None) -> None:
        me = self.me
        resume = link.received if link is not None else 0
        known = link.remote_incarnation if link is not None else None
        listen = list(self._listen) if self._listen is not None else None
        self._write(
            writer,
            [
                _KIND_HELLO,
                me.protocol,
                me.table,
                me.peer,
                me.name,
                me.incarnation,
                resume,
                -1 if known is None else known,
                listen,
            ],
        )

    async def _read_hello(
        self, reader: asyncio.StreamReader, who: str
    ) -> tuple[Hello, int, tuple[str, int] | None]:
        body = await asyncio.wait_for(self._read_frame(reader, who), timeout=5.0)
        if (
            isinstance(body, list)
            and body
            and body[0] == _KIND_REFUSE
            and len(body) == 2
            and isinstance(body[1], str)
        ):
            raise _Broken(f"{who} refused the connection: {body[1][:_MAX_TEXT]}")
        if not (isinstance(body, list) and len(body) == 9 and body[0] == _KIND_HELLO):
            raise _Broken(f"malformed hello from {who}")
        _, protocol, table, peer, name, incarnation, resume, known, listen_field = body
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
        refusal = self._accept(hello)
        if refusal is not None:
            raise _Refused(refusal)
        # A resume number only counts for the incarnation it was recorded against.
        return hello, resume if known == self.me.incarnation else 0, listen

    async def _read_frame(self, reader: asyncio.StreamReader, who: str) -> Any:
        header = await reader.readexactly(_HEADER.size)
        (length,) = _HEADER.unpack(header)
        if length > self.max_frame:
            raise _Broken(
                f"frame of {length} bytes from {who} is over the {self.max_frame} byte limit"
            )
        body = await reader.readexactly(length)
        try:
            return msgpack.unpackb(
                body,
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

    @staticmethod
    def _write(writer: asyncio.StreamWriter, body: list[Any]) -> None:
        data = msgpack.packb(body, use_bin_type=True)
        writer.write(_HEADER.pack(len(data)) + data)


class _Refused(Exception):
    """We refuse the connection, telling the other side why."""


class _Broken(Exception):
    """The other side broke the protocol: close the connection."""


def _tune(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _is_ipv4(text: str) -> bool:
    try:
        socket.inet_aton(text)
    except OSError:
        return False
    return text.count(".") == 3


def _address_of(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "unknown peer"
