"""The reliable FIFO link to one peer, as a pure state machine.

Application frames are numbered per link and kept until the other side acknowledges them, so
when a connection drops the next one resends what was lost: within one incarnation of each peer
the link is reliable and FIFO. A peer that restarts comes back with a new incarnation: both ends
number afresh, and what we queued is renumbered and kept (frames are addressed to the peer, not to
an incarnation, and some of them, a welcome into the group, were meant for the new one).

Frames may also arrive by datagram (``net._mesh.datagrams``), out of order and more than once: one
that comes ahead of a gap is held in a bounded ``ReorderBuffer`` until the gap is filled, by a
datagram or by TCP, and whichever copy of a frame comes second is a duplicate.

No sockets and no clock: the asyncio adapter (``net._mesh.mesh.Mesh``) tells it what happened.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from net._codec import Broken

__all__ = ["LinkState", "QueuedFrame", "ReorderBuffer", "existing_connection_wins"]


class QueuedFrame(NamedTuple):
    """An application frame sent and not yet acknowledged."""

    seq: int
    data: bytes


@dataclass
class ReorderBuffer:
    """Frames that arrived by datagram ahead of a gap, held until the gap is filled (by a
    datagram or by TCP). Bounded: a frame beyond ``limit`` of the last delivered is dropped
    (TCP brings it)."""

    limit: int = 256
    _held: dict[int, bytes] = field(default_factory=dict)

    def hold(self, seq: int, data: bytes, received: int) -> bool:
        """Keep frame ``seq`` (``received``: the last delivered); False if over the bound."""
        if seq - received > self.limit:
            return False
        self._held[seq] = data
        return True

    def successors(self, received: int) -> list[bytes]:
        """The held frames that now follow ``received`` without a gap, in order (taken out)."""
        taken: list[bytes] = []
        while (data := self._held.pop(received + len(taken) + 1, None)) is not None:
            taken.append(data)
        return taken

    def clear(self) -> None:
        self._held.clear()

    def __len__(self) -> int:
        return len(self._held)


@dataclass(eq=False)
class LinkState:
    """The numbering of one link: what we sent and not yet heard acknowledged, what we received."""

    peer: str
    remote_incarnation: int | None = None
    """The incarnation of the peer at the last connection (None: never linked)."""
    next_out: int = 1
    unacked: deque[QueuedFrame] = field(default_factory=deque)
    received: int = 0
    """The number of the last frame delivered from the peer."""
    acked_received: int = 0
    """The number of the last frame we acknowledged."""
    held: ReorderBuffer = field(default_factory=ReorderBuffer)
    """Frames that came by datagram ahead of ``received + 1``."""

    def queue(self, data: bytes) -> QueuedFrame:
        """Number ``data`` and keep it until acknowledged; the frame to write."""
        frame = QueuedFrame(self.next_out, data)
        self.next_out += 1
        self.unacked.append(frame)
        return frame

    def is_unacked(self, seq: int) -> bool:
        return any(frame.seq == seq for frame in self.unacked)

    def connected(self, incarnation: int, resume: int) -> bool:
        """A connection is up to the peer's ``incarnation``, which has received our frames up to
        ``resume``; whether the peer restarted (both ends number afresh). Afterwards
        ``unacked`` is what to resend, in order."""
        restarted = self.remote_incarnation is not None and self.remote_incarnation != incarnation
        if restarted:
            self.received = self.acked_received = 0
            self.held.clear()
            queued = [frame.data for frame in self.unacked]
            self.unacked = deque(QueuedFrame(seq, data) for seq, data in enumerate(queued, 1))
            self.next_out = len(queued) + 1
        self.remote_incarnation = incarnation
        self.trim(resume)
        return restarted

    def trim(self, acknowledged: int) -> None:
        """The peer has received our frames up to ``acknowledged``: forget them."""
        while self.unacked and self.unacked[0].seq <= acknowledged:
            self.unacked.popleft()

    def receive(self, seq: int) -> bool:
        """Frame ``seq`` arrived: whether to deliver it (False: a resend already delivered).
        ``Broken`` if it skips one (a connection is FIFO: something is wrong at the other end)."""
        if seq <= self.received:
            return False
        if seq != self.received + 1:
            raise Broken(f"frame {seq} from {self.peer} skips {self.received + 1}")
        self.received = seq
        return True

    def receive_frame(self, seq: int, data: bytes) -> list[bytes]:
        """Frame ``seq`` arrived on a connection (FIFO): the frames to deliver now, in order
        (none if a datagram brought it first; ``Broken`` if it skips one)."""
        if not self.receive(seq):
            return []
        return [data, *self._release()]

    def receive_datagram(self, seq: int, data: bytes) -> list[bytes] | None:
        """Frame ``seq`` arrived by datagram: the frames to deliver now, in order (none if it is
        ahead of a gap, held or dropped over the buffer's bound); None if it is a duplicate."""
        if seq <= self.received:
            return None
        if seq > self.received + 1:
            self.held.hold(seq, data, self.received)
            return []
        self.received = seq
        return [data, *self._release()]

    def _release(self) -> list[bytes]:
        following = self.held.successors(self.received)
        self.received += len(following)
        return following

    def ack_due(self) -> int | None:
        """The acknowledgement to send now (all received so far), or None if it was sent."""
        if self.received == self.acked_received:
            return None
        self.acked_received = self.received
        return self.received


def existing_connection_wins(me: str, peer: str, dialed_by_me: bool) -> bool:
    """One connection per pair: when a second connects while one is up, the one dialed by the
    smaller peer id wins. Whether the existing one (dialed by us if ``dialed_by_me``) wins."""
    return (me < peer) == dialed_by_me
