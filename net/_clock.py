"""Table time and the hybrid logical clock that stamps every frame. Private to `net.core`; see
"Clocks and table time" in docs/protocol.md.

A timestamp is an integer number of microseconds of *table time*: the local clock (the ``now``
the caller passes in, from ``time.monotonic()``: its origin differs per machine) plus an offset
each peer estimates over the mesh. The *reference* is the lowest member that is synchronised
(its frames carry its table time); it keeps its offset, everyone else follows its table clock.
Nobody is synchronised when a table starts: the lowest member founds table time (going on from
its last stamp) once it has heard every other member. A stamp is ``max(table time, last + 1)``,
where ``last`` is the highest stamp issued or received: the Lamport rule, so a stamp is above
every stamp its frame acknowledges. Until a peer is synchronised its physical part is 0 (pure
Lamport).

The offset comes from round trips (NTP's four timestamps): each frame carries the sender's table
time (``tt``, when synchronised) and, per peer, how long ago it received the frame it reports in
``seen`` (``age``). A frame of the reference acknowledging our frame stamped ``e`` gives the round
trip ``(arrival - sent(e)) - age`` and puts the reference's table time at arrival at
``tt + round_trip / 2``. The sample with the shortest round trip wins, each aged by the drift
clocks may gather since (`MAX_DRIFT`): its error is at most half the asymmetry of that round
trip. Frames that waited in a buffer (a link stalled, a process paused) make long round trips,
which never displace a short one.

The clock also measures, per member, how late its frames arrive in table time (`Lateness`): an
honest frame is late by its one-way delay plus both clocks' errors; see `late_bound`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from net.messages import Message

__all__ = ["SAMPLE_WINDOW", "US", "Lateness", "TableClock"]

US = 1_000_000
"""Timestamps per second (microseconds)."""

SAMPLE_WINDOW = 2.0
"""Seconds for which we remember when we sent each stamp (a round trip ends well before)."""

RECENT_FRAMES = 64
"""Arrival times kept per peer, to tell how many frames it sent lately."""

MAX_DRIFT = 100e-6
"""The drift rate two clocks may have against each other (quartz: tens of ppm each): an old
round-trip sample's cost grows by twice this a second, so a shorter round trip ages out."""

LATE_MARGIN = 0.002
"""Seconds added to the measured round trips in the lateness bound (timer and processing)."""


@dataclass
class Lateness:
    """How late (in table time) the frames of one member arrive: the smallest lateness of each
    span of `span` seconds of its frames. Only spans in which the frames kept coming count: a
    gap of `gap` seconds between two of its frames (a stalled link, or our own process paused:
    then every frame in the buffer looks late) starts the measure again."""

    span: float
    gap: float
    started: float = 0.0
    current: float | None = None
    complete: list[float] = field(default_factory=list)
    last_at: float | None = None
    judge: bool = False  # a span just ended: time to judge

    def add(self, at: float, late: float) -> None:
        """A frame that arrived at local time `at`, `late` seconds after its stamp."""
        if self.last_at is None or at - self.last_at > self.gap:
            self.started, self.current, self.complete = at, late, []
        elif at - self.started >= self.span and self.current is not None:
            self.complete = [*self.complete[-1:], self.current]
            self.started, self.current = at, late
            self.judge = len(self.complete) == 2
        else:
            self.current = late if self.current is None else min(self.current, late)
        self.last_at = at

    def floor(self) -> float | None:
        """The smallest lateness of the spans measured so far (the current one included)."""
        values = [*self.complete, *([] if self.current is None else [self.current])]
        return min(values) if values else None

    def held_back(self, bound: float, floor: float) -> bool:
        """True when two whole spans in a row had no frame within `bound` of `floor`."""
        return len(self.complete) == 2 and min(self.complete) - floor > bound


@dataclass(frozen=True)
class _Sample:
    """One round trip to a peer: when it ended (local time), how long it took, and the peer's
    table time minus our local time that it implies (within half its asymmetry)."""

    at: float
    round_trip: float
    offset: float

    def cost(self, now: float) -> float:
        """Its round trip, aged by the drift two clocks may have gathered since."""
        return self.round_trip + 2 * MAX_DRIFT * (now - self.at)


@dataclass
class _Peer:
    """What the clock knows of one peer."""

    synced: bool = False
    heard: bool = False
    arrival: tuple[int, float] | None = None  # (stamp, local time) of its latest frame
    best: _Sample | None = None
    acked: int = 0  # the highest stamp of ours it acknowledged
    acked_at: float = 0.0  # when that rose last (or when we first heard it)
    trips: Lateness | None = None  # the shortest round trip of each recent span
    recent: deque[float] = field(default_factory=lambda: deque(maxlen=RECENT_FRAMES))


class TableClock:
    """The hybrid logical clock of one peer, its table-time offset, and what it measured of the
    others' clocks and delays."""

    def __init__(self, peer_id: str, members: Callable[[], Collection[str]], span: float) -> None:
        """`members` gives the other members of the current view; `span` is the lateness
        measuring span (a gap of half of it restarts the measure)."""
        self.peer_id = peer_id
        self.last = 0
        self.offset: float | None = None  # table time minus local time; None: not synchronised
        self._members = members
        self._span = span
        self._peers: dict[str, _Peer] = {}
        self._late: dict[str, Lateness] = {}
        self._sent: dict[int, float] = {}
        self._sent_order: deque[tuple[int, float]] = deque()

    # --- stamping -----------------------------------------------------------------------------

    @property
    def synced(self) -> bool:
        return self.offset is not None

    def table_time(self, now: float) -> float | None:
        """Table time (seconds) at local time `now`, None until synchronised."""
        return None if self.offset is None else now + self.offset

    def table_us(self, now: float) -> int:
        """Table time in microseconds (0 until synchronised)."""
        return 0 if self.offset is None else int((now + self.offset) * US)

    def stamp(self, now: float) -> int:
        """The stamp of a frame sent at local time `now`."""
        self._follow_reference(now)
        self.last = max(self.table_us(now), self.last + 1)
        self._sent[self.last] = now
        self._sent_order.append((self.last, now))
        while self._sent_order and self._sent_order[0][1] < now - 2 * SAMPLE_WINDOW:
            self._sent.pop(self._sent_order.popleft()[0], None)
        return self.last

    def merge(self, ts: int) -> None:
        """Move the clock up to a stamp received from a member (or a decided marker)."""
        self.last = max(self.last, ts)

    def ages(self, seen: Mapping[str, tuple[int, int]], now: float) -> dict[str, int]:
        """For each peer in `seen`, how long ago (microseconds) we received the frame reported."""
        ages = {}
        for peer, (_, ts) in seen.items():
            info = self._peers.get(peer)
            if info is not None and info.arrival is not None and info.arrival[0] == ts:
                ages[peer] = max(0, int((now - info.arrival[1]) * US))
        return ages

    # --- measuring ----------------------------------------------------------------------------

    def observe(self, peer: str, msg: Message, now: float) -> None:
        """A frame of `peer` that arrived at local time `now`: its round trip, its table time,
        and, once we are synchronised, how late it is."""
        info = self._peers.get(peer)
        if info is None:
            info = self._peers[peer] = _Peer(acked_at=now)
        info.heard = True
        info.recent.append(now)
        ack = msg.seen.get(self.peer_id)
        if ack is not None and ack[1] > info.acked:
            info.acked, info.acked_at = ack[1], now
        was_synced, info.synced = info.synced, msg.table_time is not None
        info.arrival = (msg.ts, now)
        if self._sample(info, msg, now) or was_synced != info.synced or self.offset is None:
            self._follow_reference(now)
        if self.offset is not None:
            late = (now + self.offset) - msg.ts / US
            measure = self._late.setdefault(peer, Lateness(self._span, self._span / 2))
            measure.add(now, late)

    def forget(self, peer: str) -> None:
        """`peer` is no longer a member."""
        self._peers.pop(peer, None)
        self._late.pop(peer, None)

    def acked_at(self, peer: str) -> float | None:
        """When `peer` last acknowledged a newer frame of ours (None: never heard)."""
        info = self._peers.get(peer)
        return None if info is None else info.acked_at

    def frames_since(self, peer: str, since: float) -> int:
        """How many frames of `peer` arrived since local time `since` (at most 64 counted)."""
        info = self._peers.get(peer)
        return 0 if info is None else sum(1 for at in info.recent if at >= since)

    def round_trip(self, peer: str) -> float | None:
        """The round trip of the best sample of `peer` (None before the first)."""
        info = self._peers.get(peer)
        if info is None or info.best is None:
            return None
        return info.best.round_trip

    def late_bound(self, peer: str) -> float | None:
        """How late (seconds) an honest frame of `peer` may arrive at most.

        Its one-way delay is below its round trip, the recent one included (a link stalled in
        TCP retransmission, one way only, makes both long); its clock's error minus ours is
        below half the longest round trip to the other members (each clock errs by at most
        half the asymmetry of its round trip to the reference); plus `LATE_MARGIN`. A member
        whose round trip we cannot measure (its ``age`` does not match) is held to the others'
        longest. None while we measured no round trip at all."""
        trips = {p: r for p in self._peers if (r := self.round_trip(p)) is not None}
        if not trips:
            return None
        others = [r for p, r in trips.items() if p != peer]
        own = trips.get(peer)
        longest = max(others) if others else own
        assert longest is not None
        info = self._peers.get(peer)
        recent = None if info is None or info.trips is None else info.trips.floor()
        trip = max(own if own is not None else longest, recent or 0.0)
        return trip + longest / 2 + LATE_MARGIN

    def held_back(self, peer: str) -> tuple[float, float] | None:
        """(lateness, bound) when, at the end of a span, `peer`'s frames arrived beyond the
        bound for two whole spans, compared with the least late of the other members (a delay
        of ours, in reading or processing, makes every member look late alike); else None."""
        measure = self._late.get(peer)
        if measure is None or not measure.judge:
            return None
        measure.judge = False
        bound = self.late_bound(peer)
        if bound is None:
            return None
        others = [m.floor() for p, m in self._late.items() if p != peer]
        floor = max(0.0, min((f for f in others if f is not None), default=0.0))
        if not measure.held_back(bound, floor):
            return None
        return min(measure.complete) - floor, bound

    # --- private ------------------------------------------------------------------------------

    def _sample(self, info: _Peer, msg: Message, now: float) -> bool:
        """Take the round trip the frame closes; True when it is the peer's new best."""
        echo = msg.seen.get(self.peer_id)
        age = msg.ages.get(self.peer_id)
        if echo is None or age is None or msg.table_time is None:
            return False
        sent = self._sent.get(echo[1])
        if sent is None:
            return False
        rtt = (now - sent) - age / US
        if rtt < 0:
            return False  # its age is off (or its clock runs fast): no usable sample
        if info.trips is None:
            info.trips = Lateness(self._span, self._span / 2)
        info.trips.add(now, rtt)
        sample = _Sample(now, rtt, msg.table_time / US + rtt / 2 - now)
        if info.best is None or sample.cost(now) <= info.best.cost(now):
            info.best = sample
            return True
        return False

    def _follow_reference(self, now: float) -> None:
        """Follow the reference's table clock; found table time when nobody has yet."""
        members = self._members()
        synced = [p for p in members if (info := self._peers.get(p)) is not None and info.synced]
        if self.offset is not None:
            synced.append(self.peer_id)
        if not synced:
            # Alone (a founder without company, a joiner before its view) there is nobody to
            # agree with: table time waits for members.
            heard_all = all((i := self._peers.get(p)) is not None and i.heard for p in members)
            if members and heard_all and all(self.peer_id < p for p in members):
                # The lowest member founds table time, going on from the highest stamp it
                # knows (so nobody's clock jumps, even when a dissolved table starts again).
                self.offset = self.last / US - now
            return
        reference = min(synced)
        if reference == self.peer_id:
            return
        best = self._peers[reference].best
        if best is not None:
            self.offset = best.offset
