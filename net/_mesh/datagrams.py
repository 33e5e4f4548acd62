"""The datagram path beside each TCP link, as pure parts: the datagram codec and its tag, and
the timer that resends what a peer has not acknowledged (the buffer that holds datagrams arriving
ahead of a gap is ``net._mesh.link.ReorderBuffer``). No sockets and no clock (``now`` is passed in);
``net._mesh.fastpath`` drives them.

A lost TCP segment holds its whole connection for Linux's minimum retransmission timeout (200 ms,
doubling in a burst). Every small numbered frame therefore also goes as one UDP datagram, and is
resent by datagram after a few tens of milliseconds without an acknowledgement; whichever copy
arrives first is delivered, the other is a duplicate (``net._mesh.link.LinkState``). TCP stays the
path of last resort, so the link is still reliable and FIFO within one incarnation.

A datagram is the msgpack list ``[sender peer id, sender incarnation, ack, seq, data]`` followed
by a 16-byte HMAC-SHA256 tag over it under the key the receiver announced for that link (``seq``
0: an acknowledgement alone; ``ack``: the sender has received our frames up to that number). A
datagram is hostile input: anything wrong is dropped, never an exception.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from net._codec import UndecodableError, UnpackLimits, pack_body, unpack_untrusted
from net._mesh.link import QueuedFrame

__all__ = [
    "DATAGRAM_KEY_SIZE",
    "MAX_DATAGRAM",
    "MAX_DATAGRAM_DATA",
    "Datagram",
    "ResendTimer",
    "announcement",
    "datagram_secret",
    "link_key",
    "open_datagram",
    "parse_announcement",
    "seal",
]

DATAGRAM_KEY_SIZE = 32
TAG_SIZE = 16
MAX_DATAGRAM_DATA = 1100
"""Largest frame (its data) that also goes by datagram; larger ones go by TCP alone."""
MAX_DATAGRAM = 1400
"""Largest datagram sent or accepted, in bytes: under the 1,472 of an Ethernet or Wi-Fi frame,
so that no datagram is ever fragmented (one lost fragment loses it all)."""
_LIMITS = UnpackLimits(
    max_str_len=MAX_DATAGRAM, max_bin_len=MAX_DATAGRAM, max_array_len=5, max_map_len=0
)


class Datagram(NamedTuple):
    """One datagram of a link: from ``sender`` at ``incarnation``, acknowledging our frames up to
    ``ack``, carrying frame ``seq`` (0: none) with ``data``."""

    sender: str
    incarnation: int
    ack: int
    seq: int = 0
    data: bytes = b""


_ANNOUNCED = "datagrams"
"""The host of the address-list entry that announces a datagram key: no IPv4 address, so that a
peer older than datagrams skips the entry as it skips every unusable address (a new frame kind
would make it close the connection as malformed)."""
_KEY_PREFIX = "key:"


def announcement(key: bytes, port: int) -> list[Any]:
    """The address list (``KIND_PEERS``) by which one end of a link announces the key it takes
    datagrams under, and its UDP port."""
    return [[_KEY_PREFIX + key.hex(), _ANNOUNCED, port]]


def parse_announcement(book: list[Any]) -> tuple[bytes, int] | None:
    """The key and port an address list announces; None if it is no announcement (an
    announcement with a malformed key is none either: as an address list it is skipped)."""
    if not (len(book) == 1 and isinstance(book[0], list) and len(book[0]) == 3):
        return None
    label, host, port = book[0]
    if host != _ANNOUNCED or not isinstance(label, str) or not label.startswith(_KEY_PREFIX):
        return None
    try:
        key = bytes.fromhex(label[len(_KEY_PREFIX) :])
    except ValueError:
        return None
    if len(key) != DATAGRAM_KEY_SIZE or type(port) is not int or not 0 < port < 65536:
        return None
    return key, port


def link_key(announced: bytes, secret: bytes) -> bytes:
    """The key datagrams of one direction of a link are tagged with: the key its receiver
    announced, mixed at a coded table with a secret of the connection (``secret``, empty when
    open) that someone who only watched the announcement go by does not know."""
    return hmac.digest(secret, announced, "sha256") if secret else announced


def datagram_secret(frame_key: bytes) -> bytes:
    """The secret of one direction of a coded connection (``frame_key``: its frame tag key)
    that the datagram key of that direction is mixed with."""
    return hmac.digest(frame_key, b"net.transport datagram key", hashlib.sha256)


def seal(key: bytes, datagram: Datagram) -> bytes:
    """The bytes of ``datagram``, tagged with ``key``."""
    body = pack_body(list(datagram))
    return body + hmac.digest(key, body, "sha256")[:TAG_SIZE]


def open_datagram(raw: bytes, key_of: Callable[[str], bytes | None]) -> Datagram | str:
    """The datagram in ``raw`` if it is well formed and tagged with the key ``key_of`` gives
    its sender; otherwise why it is dropped (a few words, for a counter)."""
    if not TAG_SIZE < len(raw) <= MAX_DATAGRAM:
        return "malformed"
    body, tag = raw[:-TAG_SIZE], raw[-TAG_SIZE:]
    try:
        value = unpack_untrusted(body, _LIMITS)
    except UndecodableError:
        return "malformed"
    if not _well_formed(value):
        return "malformed"
    key = key_of(value[0])
    if key is None:
        return "unknown sender"
    if not hmac.compare_digest(tag, hmac.digest(key, body, "sha256")[:TAG_SIZE]):
        return "bad tag"
    return Datagram(*value)


def _well_formed(value: object) -> bool:
    if not (isinstance(value, list) and len(value) == 5):
        return False
    sender, incarnation, ack, seq, data = value
    numbers = (incarnation, ack, seq)
    return (
        isinstance(sender, str)
        and all(type(number) is int and number >= 0 for number in numbers)
        and isinstance(data, bytes)
        and (seq > 0 or not data)
    )


_SAME_TIME = 0.001
"""A probe due this close before a resend is left to the resend."""


@dataclass
class _Flight:
    frame: QueuedFrame
    first: float
    last: float
    resends: int = 0


@dataclass
class ResendTimer:
    """When to resend by datagram the frames a peer has not acknowledged: about twice the
    smoothed round trip plus 10 ms, within ``floor`` and ``ceiling``; a frame resent
    ``patient`` times without an acknowledgement waits twice as long each time after (up to
    ``slowest``), so a dead peer is not flooded before TCP notices.

    A backoff outlasts a short loss (a Wi-Fi scan drops everything for a few hundred ms): the
    next resend could come long after the link is back. So while the oldest frame backs off, for
    ``probing`` seconds from its first send, the peer is probed (an acknowledgement alone, one
    timeout after anything last went to it), and hearing from the peer (``heard``) makes the
    frames that back off due at once, and after a silence of the peer those resent at all."""

    floor: float = 0.015
    ceiling: float = 0.040
    patient: int = 8
    slowest: float = 1.0
    probing: float = 2.0
    smoothed_rtt: float | None = None
    _flights: dict[int, _Flight] = field(default_factory=dict)
    _spoke: float = float("-inf")
    """When a datagram last went to the peer that the timer knows of (a frame or a probe)."""
    _heard: float = float("-inf")
    """When the peer was last heard from."""

    @property
    def timeout(self) -> float:
        if self.smoothed_rtt is None:
            return self.ceiling
        return min(self.ceiling, max(self.floor, 2 * self.smoothed_rtt + 0.010))

    def sent(self, frame: QueuedFrame, now: float) -> None:
        """``frame`` went by datagram for the first time."""
        self._flights[frame.seq] = _Flight(frame, now, now)
        self._spoke = now

    def acknowledged(self, upto: int, now: float) -> None:
        """The peer has received our frames up to ``upto``: stop resending them, and learn the
        round trip from the newest of them that was never resent."""
        sample = None
        while self._flights:
            seq, flight = next(iter(self._flights.items()))
            if seq > upto:
                break
            del self._flights[seq]
            if flight.resends == 0:
                sample = now - flight.first
        if sample is not None:
            old = self.smoothed_rtt
            self.smoothed_rtt = sample if old is None else 0.875 * old + 0.125 * sample

    def due(self, now: float, budget: int) -> list[QueuedFrame]:
        """The frames to resend now, oldest first, at most ``budget`` bytes of data (at least
        one frame if any is due); each is counted as resent."""
        due: list[QueuedFrame] = []
        spent = 0
        for flight in self._flights.values():
            if spent >= budget:
                break
            if now >= flight.last + self._wait(flight):
                due.append(flight.frame)
                spent += len(flight.frame.data)
                flight.last = now
                flight.resends += 1
        if due:
            self._spoke = now
        return due

    def heard(self, now: float) -> bool:
        """The peer was just heard from, so the link works: the frames that back off are due now,
        and after a silence of the peer (a timeout or more) so is every frame resent at least
        once (the link was likely down, and may just be back: none waits out its timeout).
        True: some were. Their count of resends is at most ``patient`` then, not 0: should the
        peer go quiet again, they soon back off again. Only the peer heard from is hurried, never
        another (a crashed peer is not flooded because someone else spoke)."""
        silent = now - self._heard >= self.timeout
        self._heard = now
        hurried = False
        for flight in self._flights.values():  # oldest first: the most resent
            if flight.resends <= self.patient and not silent:
                break
            if flight.resends > 0:
                flight.resends = min(flight.resends, self.patient)
                flight.last = now - self.timeout
                hurried = True
        return hurried

    def probe(self, now: float) -> bool:
        """Whether to probe the peer now (an acknowledgement alone: should it get through, the
        peer has heard from us and resends at once what backs off); if so, it counts as sent."""
        at = self._next_probe()
        if at is None or now < at:
            return False
        self._spoke = now
        return True

    def next_due(self) -> float | None:
        """When the next frame is due for a resend (None: nothing awaits an acknowledgement)."""
        return min((f.last + self._wait(f) for f in self._flights.values()), default=None)

    def next_wake(self) -> float | None:
        """When the next frame is due for a resend or the peer for a probe (None: neither)."""
        resend, probe = self.next_due(), self._next_probe()
        return resend if probe is None or (resend is not None and resend <= probe) else probe

    def clear(self) -> None:
        self._flights.clear()

    def __len__(self) -> int:
        return len(self._flights)

    def _next_probe(self) -> float | None:
        """When the peer is next probed: one timeout after a datagram last went to it, while the
        oldest frame backs off and for ``probing`` seconds from its first send (then the
        liveness timers of the link take over)."""
        oldest = next(iter(self._flights.values()), None)
        if oldest is None or oldest.resends <= self.patient:
            return None
        at = self._spoke + self.timeout
        if at >= oldest.first + self.probing:
            return None
        resend = self.next_due()
        if resend is not None and resend <= at + _SAME_TIME:
            return None  # a resend goes then (a backoff is a multiple of the timeout)
        return at

    def _wait(self, flight: _Flight) -> float:
        beyond = flight.resends - self.patient
        if beyond <= 0:
            return self.timeout
        return min(self.slowest, self.timeout * 2.0**beyond)
