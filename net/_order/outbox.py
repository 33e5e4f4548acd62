"""What the parts of the ordering core send and report, stamped by one hybrid logical clock.

Private to `net._order.core`: every part holds the core's one `Outbox` and sends through it, so that
frames and events keep the order in which the parts produced them (see docs/protocol.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from net._order.clock import DEFAULT_BOUND, TableClock
from net._order.messages import Message, encode_message
from net._order.wirefields import Seen
from net.events import Event

if TYPE_CHECKING:
    from net._order.signatures import Identity

__all__ = ["Outbox"]


class Outbox:
    """The frames to send and the events to return, the hybrid logical clock that stamps every
    frame (`table`, see net/_order/clock.py), the time of the input being handled, and when we last
    sent to each member."""

    def __init__(
        self,
        peer_id: str,
        incarnation: int,
        now: float,
        heartbeat_interval: float = 0.1,
        identity: Identity | None = None,
        clock_bound: float = DEFAULT_BOUND,
    ) -> None:
        self.peer_id = peer_id
        self.incarnation = incarnation
        self.now = now
        # Lateness is measured over spans of ten heartbeats (see net/_order/clock.py).
        self.table = TableClock(peer_id, self._last_sent_keys, 10 * heartbeat_interval, clock_bound)
        self.frames: list[tuple[str, bytes]] = []
        self.events: list[Event] = []
        self._last_sent: dict[str, float] = {}
        self._seen: Callable[[], Seen] = dict
        self._digests: Callable[[Seen], tuple[int, tuple[bytes, ...]] | None] = lambda seen: None
        self.identity = identity
        """What the parts sign their votes and leaves with (None: an unsigned table)."""

    def bind_seen(self, seen: Callable[[], Seen]) -> None:
        """Where the ``seen`` vector every frame carries comes from (the ordered log)."""
        self._seen = seen

    def bind_digests(self, digests: Callable[[Seen], tuple[int, tuple[bytes, ...]] | None]) -> None:
        """Where the ``dg`` of a frame carrying a ``seen`` comes from (net/_order/digests.py)."""
        self._digests = digests

    @property
    def clock(self) -> int:
        """The highest timestamp issued or received so far."""
        return self.table.last

    def tick_clock(self) -> int:
        """Advance the clock for a new frame sent now and return its timestamp."""
        return self.table.stamp(self.now)

    def merge_clock(self, ts: int) -> None:
        """Move the clock up to a timestamp we received (a member's frame, a decided marker)."""
        self.table.merge(ts)

    def seen(self) -> Seen:
        """The ``seen`` vector for a frame sent now."""
        return self._seen()

    def seen_below(self, ts: int) -> Seen:
        """The ``seen`` vector for a frame stamped `ts` earlier (our own entry sent again):
        a frame acknowledges nothing stamped at or after its own timestamp."""
        return {p: (inc, min(seen_ts, ts - 1)) for p, (inc, seen_ts) in self._seen().items()}

    def emit(self, event: Event) -> None:
        """Report an event to the application."""
        self.events.append(event)

    def send(self, dest: str, message: Message) -> None:
        """Queue one frame for `dest`."""
        self.frames.append((dest, self._encode(message)))
        if dest in self._last_sent:
            self._last_sent[dest] = self.now

    def broadcast(self, message: Message, dests: Iterable[str]) -> None:
        """Queue the same frame for each of `dests`."""
        data = self._encode(message)
        for dest in dests:
            self.frames.append((dest, data))
            if dest in self._last_sent:
                self._last_sent[dest] = self.now

    def track(self, dest: str, sent_at: float) -> None:
        """Record sending times to `dest` (a member), starting as if sent at `sent_at`."""
        self._last_sent[dest] = sent_at

    def untrack(self, dest: str) -> None:
        """Stop recording sending times to `dest` (no longer a member)."""
        self._last_sent.pop(dest, None)
        self.table.forget(dest)

    def last_sent_to(self, dest: str) -> float:
        """When we last sent a frame to member `dest`."""
        return self._last_sent[dest]

    def drain_frames(self) -> list[tuple[str, bytes]]:
        """Take the frames queued so far."""
        frames, self.frames = self.frames, []
        return frames

    def drain_events(self) -> list[Event]:
        """Take the events reported so far."""
        events, self.events = self.events, []
        return events

    def _last_sent_keys(self) -> list[str]:
        return list(self._last_sent)

    def _encode(self, message: Message) -> bytes:
        """The frame, with what clock synchronisation needs: our table time, and how long ago
        we received each frame its ``seen`` reports, and the digests of what it holds."""
        table = self.table
        table_time = table.table_us(self.now) if table.synced else None
        ages, echoes = table.replies(message.seen, self.now)
        return encode_message(message, table_time, ages, self._digests(message.seen), echoes)
