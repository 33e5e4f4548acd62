"""The order check of incoming frames: Lamport timestamps strictly increasing on each link, and
no member's frame too far ahead of our clock. Private to `net.core`; see "Order and stability"
in docs/protocol.md.
"""

from __future__ import annotations

from net.errors import RemoteProtocolError
from net.messages import Message

__all__ = ["FrameGuard"]


class FrameGuard:
    """The last (incarnation, timestamp) received from each peer, and the peer incarnations
    whose frames we ignore because they broke the protocol."""

    def __init__(self, max_clock_jump: int) -> None:
        self._max_clock_jump = max_clock_jump
        self._last_ts: dict[str, tuple[int, int]] = {}
        self._poisoned: set[tuple[str, int]] = set()

    def admit(self, peer: str, msg: Message, clock: int, *, from_member: bool) -> bool:
        """False for a frame to ignore; raises `RemoteProtocolError` (and ignores the sender
        from then on) on a timestamp that does not increase on its link or, for a frame of a
        current member, that jumps too far ahead of our `clock`."""
        inc = msg.incarnation
        if (peer, inc) in self._poisoned:
            return False
        last = self._last_ts.get(peer)
        if last is not None and last[0] > inc:
            return False  # a late frame of an older incarnation
        if last is not None and last[0] == inc and msg.ts <= last[1]:
            self._poisoned.add((peer, inc))
            raise RemoteProtocolError("ts", f"timestamp {msg.ts} does not exceed {last[1]}")
        if from_member and msg.ts - clock > self._max_clock_jump:
            # Only a member's frames move our clock. A joiner's clock is behind the table's
            # until its welcome, and a rival group's expulsion moves nothing.
            self._poisoned.add((peer, inc))
            raise RemoteProtocolError(
                "ts", f"timestamp {msg.ts} jumps too far ahead of our clock {clock}"
            )
        self._last_ts[peer] = (inc, msg.ts)
        return True

    def poison(self, peer: str, inc: int) -> None:
        """Ignore incarnation `inc` of `peer` from now on."""
        self._poisoned.add((peer, inc))

    def is_poisoned(self, peer: str, inc: int) -> bool:
        return (peer, inc) in self._poisoned
