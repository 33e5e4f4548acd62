"""The order and clock checks of incoming frames. Private to `net.core`; see "Clocks and table
time" in docs/protocol.md.

A frame breaks the protocol when its timestamp
- does not increase on its link;
- is not above every timestamp its ``seen`` acknowledges (its sender merged those first);
- (a member's frame) jumps more than ``max_clock_jump`` ahead of our clock and table time;
- (a member's frames) are held back: for two whole measuring spans in a row none arrived within
  the lateness bound (see `TableClock.held_back`): a member that holds its clock back gains at
  most that bound in races before it is flagged.
"""

from __future__ import annotations

from net._clock import US, TableClock
from net.errors import RemoteProtocolError
from net.messages import Message

__all__ = ["FrameGuard"]


class FrameGuard:
    """The last (incarnation, timestamp) received from each peer, and the peer incarnations
    whose frames we ignore because they broke the protocol."""

    def __init__(self, max_clock_jump: int, table: TableClock) -> None:
        self._max_clock_jump = max_clock_jump
        self._table = table
        self._last_ts: dict[str, tuple[int, int]] = {}
        self._poisoned: set[tuple[str, int]] = set()

    def admit(self, peer: str, msg: Message, now: float, *, from_member: bool) -> bool:
        """False for a frame to ignore; raises `RemoteProtocolError` (and ignores the sender
        from then on) on a frame whose timestamp breaks the rules above."""
        inc = msg.incarnation
        if (peer, inc) in self._poisoned:
            return False
        last = self._last_ts.get(peer)
        if last is not None and last[0] > inc:
            return False  # a late frame of an older incarnation
        if last is not None and last[0] == inc and msg.ts <= last[1]:
            # A frame again (a resend bug, a replay): links are FIFO, so it was handled already.
            return False
        try:
            if from_member and (last is None or last[0] < inc or msg.ts > last[1]):
                self._table.observe(peer, msg, now)  # its round trip may correct our offset
            self._check(msg, last, now, from_member=from_member)
            if from_member:
                self._check_held_back(peer)
        except RemoteProtocolError:
            self._poisoned.add((peer, inc))
            raise
        self._last_ts[peer] = (inc, msg.ts)
        return True

    def poison(self, peer: str, inc: int) -> None:
        """Ignore incarnation `inc` of `peer` from now on."""
        self._poisoned.add((peer, inc))

    def is_poisoned(self, peer: str, inc: int) -> bool:
        return (peer, inc) in self._poisoned

    def _check(
        self, msg: Message, last: tuple[int, int] | None, now: float, *, from_member: bool
    ) -> None:
        acknowledged = max((ts for _, ts in msg.seen.values()), default=0)
        if msg.ts <= acknowledged:
            raise RemoteProtocolError(
                "ts", f"timestamp {msg.ts} not above {acknowledged}, which its seen acknowledges"
            )
        if not from_member:
            return  # a joiner is behind the table until its welcome; a rival moves nothing
        table = self._table
        if msg.table_time is not None and not table.synced:
            return  # stamped in table time, which we do not know yet
        ours = max(table.last, table.table_us(now))
        if msg.ts - ours > self._max_clock_jump:
            raise RemoteProtocolError(
                "ts", f"timestamp {msg.ts} jumps too far ahead of our clock {ours}"
            )

    def _check_held_back(self, peer: str) -> None:
        verdict = self._table.held_back(peer)
        if verdict is not None:
            late, bound = verdict
            raise RemoteProtocolError(
                "ts",
                f"stamps held back: {late * US / 1000:.1f} ms late for two spans "
                f"(bound {bound * US / 1000:.1f} ms)",
            )
