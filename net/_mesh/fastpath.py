"""A mesh's datagram path over UDP beside its TCP links, and its acknowledgements: the thin asyncio
adapter of ``net._mesh.datagrams``.

Each mesh binds a UDP socket on its TCP listener's address and port. Once a connection of a link
is up, each end tells the other over it (in an address list, ``_datagrams.announcement``, which
older peers skip) the key it accepts that link's datagrams under (random, fresh per connection;
at a coded table mixed with a secret of the connection, as the announcement itself is not
encrypted) and the UDP port it takes them on. From
then on every small numbered frame is written on TCP and also sent as one datagram to the
connection's address at that port; acknowledgements go both ways too, coalesced per turn of the
loop, and a frame not acknowledged within a short timer is resent by datagram (once resends back
off, the peer is probed, and any datagram from it makes them go at once: ``ResendTimer``). A peer
that never announces (an older one, or one with ``MeshConfig.datagrams`` off) gets TCP alone.

A datagram is looked up by the sender's peer id, never by its source address (a laptop whose
address changed keeps delivering, and our datagrams follow it there), and dropped, counted in
``DatagramPath.counts``, if it is malformed, from no linked peer, wrongly tagged, or of another
incarnation of the sender.

On Windows an ICMP "port unreachable" (a peer whose UDP port just closed) comes back to the
socket as a connection reset on its next receive, and asyncio's proactor loop on Python 3.10 and
older 3.11/3.12 releases stops reading the socket after it (cpython #91227, #117210, #127057): the
socket is told to ignore those (``net._mesh.sockets``). Should asyncio close the endpoint for
an error anyway, the path binds its address again (``connection_lost``).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from net._codec import KIND_ACK, KIND_PEERS
from net._mesh.connection import Connection
from net._mesh.datagrams import (
    DATAGRAM_KEY_SIZE,
    MAX_DATAGRAM,
    MAX_DATAGRAM_DATA,
    Datagram,
    ResendTimer,
    announcement,
    link_key,
    open_datagram,
    parse_announcement,
    seal,
)
from net._mesh.handshake import Hello
from net._mesh.link import QueuedFrame
from net._mesh.parts import MeshConfig, MeshLink
from net._mesh.sockets import udp_socket

__all__ = ["DatagramPath"]

log = logging.getLogger("net._mesh.mesh")

RESEND_BUDGET = 16_384
"""Bytes of data one link may resend by datagram at one tick of the resend timer."""
ANNOUNCE_BUDGET = 65_536
"""Bytes of frames still unacknowledged sent by datagram when a peer announces its key."""
_TICK = 0.002
"""Shortest wait between two ticks of the resend timer."""


@dataclass(eq=False)
class _Side:
    """What one link's datagram path holds for the link's present connection."""

    connection: Connection
    accept_key: bytes | None = None
    """The key datagrams from the peer are tagged with (None: we take none)."""
    send_key: bytes | None = None
    """The key the peer takes datagrams under (None: it has not announced one)."""
    destination: tuple[str, int] | None = None
    acked: int = 0
    """The last number we acknowledged by datagram."""
    timer: ResendTimer = field(default_factory=ResendTimer)


class DatagramPath(asyncio.DatagramProtocol):
    """The datagrams of one mesh: sent beside its numbered frames, received into its links."""

    def __init__(
        self,
        me: Hello,
        config: MeshConfig,
        link_of: Callable[[str], MeshLink | None],
        deliver: Callable[[MeshLink, list[bytes]], None],
    ) -> None:
        """``link_of(peer)``: the mesh's link to ``peer``; ``deliver(link, frames)`` hands
        frames the link received in order to the application."""
        self.me = me
        self.enabled = config.datagrams
        self.counts: collections.Counter[str] = collections.Counter()
        """What happened to datagrams: sent, resent, probes, received, delivered, and each reason
        to drop one (malformed, unknown sender, bad tag, other incarnation, duplicate)."""
        self.delay: Callable[[], float] | None = None
        """Fault injection: seconds to hold back each datagram sent."""
        self.port: int | None = None
        self._link_of = link_of
        self._deliver = deliver
        self._transport: asyncio.DatagramTransport | None = None
        self._sides: dict[str, _Side] = {}
        self._acks: dict[str, tuple[MeshLink, bool]] = {}
        self._resend: asyncio.TimerHandle | None = None
        self._bound: tuple[str, int] | None = None
        self._reopening: asyncio.Future[None] | None = None
        self._closed = False

    async def async_open(self, host: str, port: int) -> None:
        """Take datagrams on ``host:port`` (the TCP listener's); without it, TCP alone."""
        if not self.enabled or self._closed:
            return
        loop = asyncio.get_running_loop()
        old = self._transport  # a mesh that moved listens anew (net._mesh.roaming)
        try:
            sock = udp_socket(host, port)
            await loop.create_datagram_endpoint(lambda: self, sock=sock)
        except OSError as error:
            log.warning("no datagrams on %s:%d (TCP alone): %s", host, port, error)
            return
        if old is not None and old is not self._transport:
            old.close()  # bound to an address that is gone
        self.port = port
        self._bound = (host, port)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.DatagramTransport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        """asyncio closed an endpoint: ours, for an error (not by ``close`` nor for a move),
        means bind the same address again, so that the path goes on."""
        transport, self._transport = self._transport, None
        if transport is None or not transport.is_closing() or self._closed:
            self._transport = transport  # an old endpoint, closed after a move: not ours now
            return
        self.counts["reopened"] += 1
        log.warning("the datagram socket of %s closed (%s): opening it again", self.me.peer, exc)
        if self._bound is not None:  # kept: the loop holds only a weak reference to a task
            self._reopening = asyncio.ensure_future(self.async_open(*self._bound))

    def close(self) -> None:
        self._closed = True
        if self.counts:
            log.info("datagrams of %s: %s", self.me.peer, dict(sorted(self.counts.items())))
        if self._resend is not None:
            self._resend.cancel()
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    def attached(self, link: MeshLink, connection: Connection) -> None:
        """``connection`` is the link's new one: forget what the last agreed, announce a key."""
        side = self._sides[link.peer] = _Side(connection)
        if self._transport is None or self.port is None:
            return
        announced = secrets.token_bytes(DATAGRAM_KEY_SIZE)
        side.accept_key = link_key(announced, connection.datagram_secrets[1])
        connection.write([KIND_PEERS, announcement(announced, self.port)])

    def announced(self, link: MeshLink, connection: Connection, book: list[Any]) -> bool:
        """Whether the address list ``book`` from the peer on ``connection`` is its datagram
        announcement (and if so, take it)."""
        announced = parse_announcement(book)
        if announced is None:
            return False
        side = self._sides.get(link.peer)
        if side is None or side.connection is not connection or self._transport is None:
            return True  # we take no datagrams (or it came late): TCP alone
        side.send_key = link_key(announced[0], connection.datagram_secrets[0])
        side.destination = (connection.address, announced[1])
        spent = 0
        for frame in list(link.state.unacked):  # what TCP is resending may be stuck behind a loss
            if spent > ANNOUNCE_BUDGET:
                break
            self.send(link, frame)
            spent += len(frame.data)
        return True

    def forget(self, peer: str) -> None:
        self._sides.pop(peer, None)
        self._acks.pop(peer, None)

    def send(self, link: MeshLink, frame: QueuedFrame) -> None:
        """Send a numbered frame by datagram too, if it is small and the peer takes them."""
        side = self._sending(link)
        if side is None:
            return
        if len(frame.data) > MAX_DATAGRAM_DATA:
            self.counts["too big"] += 1
            return
        if self._send(link, side, frame):
            side.timer.sent(frame, asyncio.get_running_loop().time())
            self._arm(side.timer.next_wake())

    def acknowledged(self, link: MeshLink, upto: int) -> None:
        """The peer has received our frames up to ``upto`` (said by TCP or by datagram)."""
        link.state.trim(upto)
        side = self._sides.get(link.peer)
        if side is not None:
            side.timer.acknowledged(upto, asyncio.get_running_loop().time())

    def acknowledge(self, link: MeshLink, by_datagram: bool = False) -> None:
        """Tell the peer what we received once this turn of the loop is over (one
        acknowledgement per burst): on TCP, or by datagram for what came by datagram (the
        peer's TCP may be stuck; what TCP brought, TCP acknowledges, unless resent)."""
        if not self._acks:
            asyncio.get_running_loop().call_soon(self._send_acks)
        _, before = self._acks.get(link.peer, (link, False))
        self._acks[link.peer] = (link, before or by_datagram)

    # --- asyncio's side ------------------------------------------------------------------------

    def datagram_received(self, data: bytes, addr: Any) -> None:
        try:
            self._receive(data, addr)
        except Exception:  # hostile input must never end the path
            self.counts["failed"] += 1
            log.exception("a datagram from %s", addr)

    def error_received(self, exc: Exception) -> None:
        # A firewall's drop, an unreachable host, a peer's closed port: TCP carries on, and so
        # does this endpoint (connection_lost opens it again if asyncio closes it).
        self.counts["send errors"] += 1

    # --- helpers -------------------------------------------------------------------------------

    def _receive(self, raw: bytes, source: Any) -> None:
        self.counts["received"] += 1
        opened = open_datagram(raw, self._accept_key)
        if isinstance(opened, str):
            self.counts[opened] += 1
            return
        link = self._link_of(opened.sender)
        if link is None or link.state.remote_incarnation != opened.incarnation:
            self.counts["other incarnation"] += 1
            return
        self.acknowledged(link, opened.ack)
        side = self._sides[link.peer]  # its key let the datagram in
        now = asyncio.get_running_loop().time()
        if side.timer.heard(now):  # the peer is back: what waits out a backoff goes now
            self._arm(now)
        if opened.seq == 0:
            return
        frames = link.state.receive_datagram(opened.seq, opened.data)
        if frames is None:
            self.counts["duplicate"] += 1
            if opened.seq <= side.acked:
                self.acknowledge(link, by_datagram=True)  # resent: our acknowledgement was lost
            return
        if frames:
            self.counts["delivered"] += 1
            if side.send_key is not None and isinstance(source, tuple):
                # New frames under the link's key: the peer is there now (a laptop that roamed
                # keeps its link; a replay from elsewhere is a duplicate and moves nothing).
                side.destination = (str(source[0]), int(source[1]))
            self._deliver(link, frames)
            self.acknowledge(link, by_datagram=True)

    def _accept_key(self, peer: str) -> bytes | None:
        side = self._sides.get(peer)
        return None if side is None else side.accept_key

    def _sending(self, link: MeshLink) -> _Side | None:
        side = self._sides.get(link.peer)
        if side is None or side.send_key is None or side.connection is not link.connection:
            return None
        return side

    def _send(self, link: MeshLink, side: _Side, frame: QueuedFrame | None) -> bool:
        assert side.send_key is not None and side.destination is not None
        seq, data = (0, b"") if frame is None else frame
        datagram = Datagram(self.me.peer, self.me.incarnation, link.state.received, seq, data)
        raw = seal(side.send_key, datagram)
        if len(raw) > MAX_DATAGRAM:
            self.counts["too big"] += 1
            return False
        if self.delay is None:
            self._write(raw, side.destination)
        else:
            loop = asyncio.get_running_loop()
            loop.call_later(self.delay(), self._write, raw, side.destination)
        return True

    def _write(self, raw: bytes, destination: tuple[str, int]) -> None:
        if self._transport is not None:
            self.counts["sent"] += 1
            self._transport.sendto(raw, destination)

    def _send_acks(self) -> None:
        acks, self._acks = self._acks, {}
        for link, by_datagram in acks.values():
            side = self._sending(link)
            if by_datagram and side is not None:
                side.acked = link.state.received
                self._send(link, side, None)
                continue
            connection = link.connection
            if connection is not None and (received := link.state.ack_due()) is not None:
                connection.write([KIND_ACK, received])

    def _arm(self, when: float | None) -> None:
        """Run the resend timer at ``when`` (if it is not due to run before)."""
        if when is None or (self._resend is not None and self._resend.when() <= when):
            return
        if self._resend is not None:
            self._resend.cancel()
        loop = asyncio.get_running_loop()
        self._resend = loop.call_at(max(when, loop.time() + _TICK), self._tick)

    def _tick(self) -> None:
        self._resend = None
        now = asyncio.get_running_loop().time()
        soonest: float | None = None
        for peer, side in list(self._sides.items()):
            link = self._link_of(peer)
            if link is None or self._sending(link) is not side:
                side.timer.clear()
                continue
            for frame in side.timer.due(now, RESEND_BUDGET):
                self.counts["resent"] += 1
                self._send(link, side, frame)
            if side.timer.probe(now):  # is the peer back? its answer hurries our resends
                self.counts["probes"] += 1
                self._send(link, side, None)
            due = side.timer.next_wake()
            if due is not None and (soonest is None or due < soonest):
                soonest = due
        self._arm(soonest)
