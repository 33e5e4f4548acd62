"""The reliable FIFO link to one peer, as a pure state machine.

Application frames are numbered per link and kept until the other side acknowledges them, so
when a connection drops the next one resends what was lost: within one incarnation of each peer
the link is reliable and FIFO. A peer that restarts comes back with a new incarnation: both ends
number afresh, and what we queued is renumbered and kept (frames are addressed to the peer, not to
an incarnation, and some of them, a welcome into the group, were meant for the new one).

No sockets and no clock: the asyncio adapter (``net.transport.Mesh``) tells it what happened.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from ._codec import Broken

__all__ = ["LinkState", "QueuedFrame", "existing_connection_wins"]


class QueuedFrame(NamedTuple):
    """An application frame sent and not yet acknowledged."""

    seq: int
    data: bytes


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
