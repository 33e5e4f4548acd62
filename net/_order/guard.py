"""The order and clock checks of incoming frames. Private to `net._order.core`; see "Clocks and
table time" in docs/protocol.md.

A frame breaks the protocol when its timestamp
- does not increase on its link;
- is not above every timestamp its ``seen`` acknowledges (its sender merged those first);
- (a member's frame) jumps more than ``max_clock_jump`` ahead of our clock and table time.

Clocks held back are no protocol violation here: the clock (`TableClock`) flags a member whose
stamps lag the table by more than the bound (`ClockSuspected`), and names members whose frames
were beyond every honest delay for two spans (`clock_suspects`): grounds for removal that a
majority must back, like silence, while every frame of theirs (decisions included) still counts.
A violator we ignore still tells us that we were removed (`Expulsion`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from net._order.clock import TableClock
from net._order.messages import Expulsion, Message
from net.errors import RemoteProtocolError
from net.events import ClockSuspected, Event

__all__ = ["FrameGuard"]


class FrameGuard:
    """The last (incarnation, timestamp) received from each peer, and the peer incarnations
    whose frames we ignore because they broke the protocol."""

    def __init__(
        self, max_clock_jump: int, table: TableClock, emit: Callable[[Event], None]
    ) -> None:
        self._max_clock_jump = max_clock_jump
        self._table = table
        self._emit = emit
        self._last_ts: dict[str, tuple[int, int]] = {}
        self._poisoned: set[tuple[str, int]] = set()

    def admit(self, peer: str, msg: Message, now: float, *, from_member: bool) -> bool:
        """False for a frame to ignore; raises `RemoteProtocolError` (and ignores the sender
        from then on) on a frame whose timestamp breaks the rules above. A violator's
        expulsions still pass: the group's word that we are out, which changes nothing else.
        (Not its decisions: we dropped its entries, and a decision can make what we lack of
        them stable.)"""
        inc = msg.incarnation
        if (peer, inc) in self._poisoned and not isinstance(msg, Expulsion):
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
                for flagged, lag in self._table.take_flags():
                    self._emit(ClockSuspected(flagged, lag))
            self._check(msg, last, now, from_member=from_member)
        except RemoteProtocolError:
            self._poisoned.add((peer, inc))
            raise
        self._last_ts[peer] = (inc, msg.ts)
        return True

    def poison(self, peer: str, inc: int) -> None:
        """Ignore incarnation `inc` of `peer` from now on (but for the expulsions it passes on)."""
        self._poisoned.add((peer, inc))

    def is_poisoned(self, peer: str, inc: int) -> bool:
        return (peer, inc) in self._poisoned

    def poisoned_in(self, view: Mapping[str, int]) -> set[tuple[str, int]]:
        """The members of `view` (peer, incarnation) whose frames we ignore."""
        poisoned = self._poisoned
        if not poisoned:
            return set()
        return {member for member in view.items() if member in poisoned}

    def clock_suspects(self) -> set[str]:
        """Members whose frames were beyond every honest delay for two spans (see
        `TableClock.clock_suspects`): grounds for removal, never a local verdict."""
        return self._table.clock_suspects()

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
