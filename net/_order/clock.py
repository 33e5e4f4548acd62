"""Table time and the hybrid logical clock that stamps every frame. Private to `net._order.core`;
see "Clocks and table time" in docs/protocol.md.

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
which never displace a short one: what we know is an interval of offsets (a sample allows those
within half its round trip), which a longer round trip, of the reference or of another member,
only narrows (`_settle`).

Stamps are bounded: each member's reports of when our frames reached it (its table time minus
their age) tell how far our clock lags the table; a stamp is raised so that it lags the soonest
arrival by at most a stated bound (`raised`). The clock also judges, per member, how late its
frames arrive in table time: each frame that closes a round trip against that round trip
(`honest_bound`, grounds for removal when two whole spans are beyond it; no round trip, no
verdict), and a flag (`take_flags`) for a member whose stamps lag by more than the bound: raised
so by itself, or later than their own round trip plus the bound.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from net._order.messages import Message

__all__ = ["DEFAULT_BOUND", "SAMPLE_WINDOW", "US", "SpanJudge", "TableClock"]

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
"""Seconds added to the lateness bounds (timer and processing)."""

DEFAULT_BOUND = 0.010
"""Seconds by which a member's stamps may lag the table time at which they arrive, at most: a
LAN link's one-way delay plus the clocks' errors stay below it (`CoreConfig.clock_bound`)."""

MAX_RAISE = 0.2
"""Seconds by which a laptop raises its stamps at most: a raise is a guess from the members'
reports, and a stamp raised past the table time of its receivers would push their clocks."""

MIN_REPORTS = 3
"""Reports of our frames' arrival each member must have sent in the last `SAMPLE_WINDOW` before
we raise our stamps (one report may be of a frame that waited in a stalled link)."""

MIN_JUDGED = 3
"""Frames with a round trip of their own a span needs before it counts for a verdict or a flag."""


@dataclass
class SpanJudge:
    """Per member, which of its frames were beyond a bound, span by span: a span of `span`
    seconds counts once it judged `MIN_JUDGED` frames, and is *beyond* when every one was;
    `spans_beyond` counts such spans in a row (a span with fewer judged frames breaks the
    row). A gap of `gap` seconds between two judged frames (a stalled link, our own process
    paused) starts the measure again."""

    span: float
    gap: float
    started: float = 0.0
    judged: int = 0
    beyond: int = 0
    last_at: float | None = None
    spans_beyond: int = 0

    def add(self, at: float, beyond: bool) -> bool | None:
        """A judged frame at local time `at`; at the end of a counted span, whether it was
        beyond (None otherwise)."""
        ended = None
        if self.last_at is None or at - self.last_at > self.gap:
            self.started, self.judged, self.beyond, self.spans_beyond = at, 0, 0, 0
        elif at - self.started >= self.span:
            if self.judged >= MIN_JUDGED:
                ended = self.judged == self.beyond
            self.spans_beyond = self.spans_beyond + 1 if ended else 0
            self.started, self.judged, self.beyond = at, 0, 0
        self.judged += 1
        self.beyond += beyond
        self.last_at = at
        return ended


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

    def bounds(self, now: float) -> tuple[float, float]:
        """The offsets it allows: the peer's table time lies within half its cost of it."""
        half = self.cost(now) / 2
        return self.offset - half, self.offset + half


@dataclass
class _Peer:
    """What the clock knows of one peer."""

    synced: bool = False
    heard: bool = False
    arrival: tuple[int, float] | None = None  # (stamp, local time) of its latest frame
    best: _Sample | None = None
    acked: int = 0  # the highest stamp of ours it acknowledged
    acked_at: float = 0.0  # when that rose last (or when we first heard it)
    recent: deque[float] = field(default_factory=lambda: deque(maxlen=RECENT_FRAMES))
    # How late our frames reached it: (local time of the report, its table time at arrival
    # minus our local time at sending), the least of the last `SAMPLE_WINDOW` first.
    outbound: deque[tuple[float, float]] = field(default_factory=deque)
    reported_at: deque[float] = field(default_factory=deque)  # when each of those came
    verdicts: SpanJudge | None = None  # its frames beyond the honest bound, with a round trip
    flags: SpanJudge | None = None  # its frames later than the stated bound, or raised to it
    flagged: bool = False

    def note_outbound(self, at: float, lag: float) -> None:
        """Keep the least lag of the window in front (a monotonic queue)."""
        while self.outbound and self.outbound[-1][1] >= lag:
            self.outbound.pop()
        self.outbound.append((at, lag))
        self.reported_at.append(at)

    def forget_outbound(self) -> None:
        self.outbound.clear()
        self.reported_at.clear()

    def least_outbound(self, now: float) -> float | None:
        """The least lag of the window, None with fewer than `MIN_REPORTS` reports in it."""
        while self.outbound and self.outbound[0][0] < now - SAMPLE_WINDOW:
            self.outbound.popleft()
        while self.reported_at and self.reported_at[0] < now - SAMPLE_WINDOW:
            self.reported_at.popleft()
        if len(self.reported_at) < MIN_REPORTS:
            return None
        return self.outbound[0][1]


class TableClock:
    """The hybrid logical clock of one peer, its table-time offset, and what it measured of the
    others' clocks and delays."""

    def __init__(
        self,
        peer_id: str,
        members: Callable[[], Collection[str]],
        span: float,
        bound: float = DEFAULT_BOUND,
    ) -> None:
        """`members` gives the other members of the current view; `span` is the lateness
        measuring span (a gap of half of it restarts the measure); `bound` is how far (seconds)
        our stamps may lag the table time at which they arrive (see `raised`)."""
        self.peer_id = peer_id
        self.last = 0
        self.offset: float | None = None  # table time minus local time; None: not synchronised
        # Where table time may lie, as a sample as wide as that interval (`_settle`): a founder's
        # is 0 wide at the founding; it widens with the drift clocks may gather since.
        self._basis: _Sample | None = None
        self._founded = False  # we founded table time (so a reference of our own: no basis to mend)
        self.bound = bound
        self._members = members
        self._span = span
        self._peers: dict[str, _Peer] = {}
        self._longest: float | None = None
        """The longest of the peers' best round trips (None: to be found again)."""
        self._sent: dict[int, float] = {}
        self._sent_order: deque[tuple[int, float]] = deque()
        self._suspects: set[str] = set()
        self._new_flags: list[tuple[str, float]] = []

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
        """The stamp of a frame sent at local time `now`: table time raised by `raised`."""
        self._follow_reference(now)
        physical = self.table_us(now)
        if physical:
            physical += int(self.raised(now) * US)
        self.last = max(physical, self.last + 1)
        self._sent[self.last] = now
        self._sent_order.append((self.last, now))
        while self._sent_order and self._sent_order[0][1] < now - 2 * SAMPLE_WINDOW:
            self._sent.pop(self._sent_order.popleft()[0], None)
        return self.last

    def raised(self, now: float) -> float:
        """How far (seconds) our stamps are raised above our table time: by how much more than
        the bound our frames of the last `SAMPLE_WINDOW` lagged, in table time, on arrival at
        the member that got them soonest (its reports say: its table time minus the age of our
        frame). An honest laptop whose clock lags (its inbound link is slower than its outbound
        one, or held back on purpose) so stamps no earlier than that arrival minus the bound:
        a clock held back gains at most the bound in races. Never more than the soonest
        arrival minus the bound, so a raised stamp is still behind every member's table time
        when it arrives (it pushes nobody's clock). Only while every member reported a few
        arrivals lately (else one of them, whose link to us stalled, would stand for all), and
        by `MAX_RAISE` at most."""
        members = self._members()
        if self.offset is None or not members:
            return 0.0
        lags = []
        for peer in members:
            info = self._peers.get(peer)
            lag = None if info is None else info.least_outbound(now)
            if lag is None:
                return 0.0
            lags.append(lag)
        return min(MAX_RAISE, max(0.0, min(lags) - self.offset - self.bound))

    def merge(self, ts: int) -> None:
        """Move the clock up to a stamp received from a member (or a decided marker)."""
        self.last = max(self.last, ts)

    def replies(
        self, seen: Mapping[str, tuple[int, int]], now: float
    ) -> tuple[dict[str, int], dict[str, tuple[int, int]]]:
        """What a frame carrying `seen` tells each peer of its latest frame, in one pass (every
        frame we send asks it):

        - *ages*: for each peer whose latest frame is the one `seen` reports, how long ago
          (microseconds) we received it;
        - *echoes*: for each peer whose latest frame is not the one `seen` reports (a member
          frozen for a view change counts only up to what it froze), that frame's stamp and
          how long ago we received it: its round trips go on while the change lasts (stalls
          seed 20036: a laptop that got none kept a 60 ms error for a second)."""
        ages: dict[str, int] = {}
        echoes: dict[str, tuple[int, int]] = {}
        peers = self._peers
        for peer, (_, ts) in seen.items():
            info = peers.get(peer)
            arrival = None if info is None else info.arrival
            if arrival is None:
                continue
            age = max(0, int((now - arrival[1]) * US))
            if arrival[0] == ts:
                ages[peer] = age
            else:
                echoes[peer] = (arrival[0], age)
        return ages, echoes

    # --- measuring ----------------------------------------------------------------------------

    def observe(self, peer: str, msg: Message, now: float) -> None:
        """A frame of `peer` that arrived at local time `now`: its round trip, its table time,
        how late our frames reached it and, once we are synchronised, how late it is."""
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
        round_trip, best = self._sample(info, msg, now)
        if best or was_synced != info.synced or self.offset is None:
            self._follow_reference(now)
        self._note_outbound(info, msg, now)
        if self.offset is not None and msg.table_time is not None:
            self._judge(peer, info, msg, now, round_trip)

    def forget(self, peer: str) -> None:
        """`peer` is no longer a member."""
        self._peers.pop(peer, None)
        self._longest = None
        self._suspects.discard(peer)

    def acked_at(self, peer: str) -> float | None:
        """When `peer` last acknowledged a newer frame of ours (None: never heard)."""
        info = self._peers.get(peer)
        return None if info is None else info.acked_at

    def frames_since(self, peer: str, since: float) -> int:
        """How many frames of `peer` arrived since local time `since` (at most 64 counted)."""
        info = self._peers.get(peer)
        return 0 if info is None else sum(1 for at in info.recent if at >= since)

    def has_frames_since(self, peer: str, since: float, count: int) -> bool:
        """Whether at least `count` frames of `peer` arrived since local time `since` (as
        ``frames_since(peer, since) >= count``, counting no further than `count`)."""
        info = self._peers.get(peer)
        if info is None or count <= 0:
            return count <= 0
        found = 0
        for at in reversed(info.recent):
            if at >= since:
                found += 1
                if found >= count:
                    return True
        return False

    def round_trip(self, peer: str) -> float | None:
        """The round trip of the best sample of `peer` (None before the first)."""
        info = self._peers.get(peer)
        if info is None or info.best is None:
            return None
        return info.best.round_trip

    def honest_bound(self, round_trip: float) -> float:
        """How late (seconds) an honest frame that closed a round trip of `round_trip` may
        arrive at most: its one-way delay is below that round trip (however asymmetric, and
        whatever waited: a stalled link or our own paused process lengthen both alike); the
        sender's raised stamps lag the soonest arrival by at most the bound (else it was not
        lagging by more: its clock's error is then below the bound plus that member's), and
        each clock errs by at most half the asymmetry of its round trip to the reference: the
        longest round trip we measured covers both (ours and the soonest member's); plus
        `LATE_MARGIN`."""
        longest = self._longest
        if longest is None:  # judged for every frame, changed only by a new best
            bests = (i.best.round_trip for i in self._peers.values() if i.best is not None)
            longest = self._longest = max(bests, default=0.0)
        return round_trip + longest + self.bound + LATE_MARGIN

    def clock_suspects(self) -> set[str]:
        """Members whose frames, each judged against its own round trip, were all beyond
        `honest_bound` for two whole spans in a row: grounds for removal (a majority must
        back them, like silence)."""
        return set(self._suspects)

    def take_flags(self) -> list[tuple[str, float]]:
        """(member, seconds) for each member newly seen lagging by more than the bound for a
        whole span (its frames late, or raised by itself): a flag, never a verdict."""
        flags, self._new_flags = self._new_flags, []
        return flags

    # --- private ------------------------------------------------------------------------------

    def _sample(self, info: _Peer, msg: Message, now: float) -> tuple[float | None, bool]:
        """The round trip the frame closes (None: none) and whether it is the peer's new best."""
        stamp, age = _echo(self.peer_id, msg)
        if stamp is None or age is None or msg.table_time is None:
            return None, False
        sent = self._sent.get(stamp)
        if sent is None:
            return None, False
        rtt = (now - sent) - age / US
        if rtt < 0:
            return None, False  # its age is off (or its clock runs fast): no usable sample
        sample = _Sample(now, rtt, msg.table_time / US + rtt / 2 - now)
        if info.best is None or sample.cost(now) <= info.best.cost(now):
            info.best = sample
            self._longest = None
            return rtt, True
        return rtt, False

    def _note_outbound(self, info: _Peer, msg: Message, now: float) -> None:
        """How late (its table time) our frame it reports reached it, against our local time
        at sending: what `raised` is made of."""
        stamp, age = _echo(self.peer_id, msg)
        if stamp is None or age is None or msg.table_time is None:
            return
        sent = self._sent.get(stamp)
        if sent is not None:
            info.note_outbound(now, (msg.table_time - age) / US - sent)

    def _judge(
        self, peer: str, info: _Peer, msg: Message, now: float, round_trip: float | None
    ) -> None:
        """Judge one frame of a synchronised member against its own round trip (without one:
        no verdict). A flag when it lags by more than the bound: raised so by itself, or later
        than its whole round trip plus the bound (what a link, however slow or stalled, cannot
        do to an honest clock)."""
        assert self.offset is not None and msg.table_time is not None
        raised = (msg.ts - msg.table_time) / US
        late = (now + self.offset) - msg.ts / US
        if round_trip is None and raised <= self.bound:
            return  # no round trip of its own: no verdict, and no flag
        lagging = raised > self.bound or (
            round_trip is not None and late - round_trip > self.bound + LATE_MARGIN
        )
        if info.flags is None:
            info.flags = SpanJudge(self._span, self._span / 2)
        if info.flags.add(now, lagging) and not info.flagged:
            info.flagged = True
            self._new_flags.append((peer, max(raised, late)))
        if round_trip is None:
            return
        if info.verdicts is None:
            info.verdicts = SpanJudge(self._span, self._span / 2)
        info.verdicts.add(now, late > self.honest_bound(round_trip))
        if info.verdicts.spans_beyond >= 2:
            self._suspects.add(peer)
        else:
            self._suspects.discard(peer)  # a span within, or the measure started again

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
                self._basis, self._founded = _Sample(now, 0.0, self.offset), True
            return
        reference = min(synced)
        if reference == self.peer_id and self._founded:
            return  # our table time is the table's
        self._founded = False  # following another's clock (or mending ours from theirs)
        before = self.offset
        self._settle(now, None if reference == self.peer_id else reference, synced)
        if before is None or self.offset is None or abs(self.offset - before) <= self.bound:
            return
        # Table time moved under us (a new reference, or a far better round trip): what the
        # members reported of our frames' arrival is measured again.
        for info in self._peers.values():
            info.forget_outbound()

    def _settle(self, now: float, reference: str | None, synced: list[str]) -> None:
        """Our offset from the reference's best round trip (`reference` None: we are the
        reference, with an offset we took from another's clock), and within what the others'
        better round trips allow.

        A sample is as good as its round trip: the first samples of a reference newly in sight
        may come from frames that waited in a stalled link (half a second off, or more). Only
        a sample as good as the one our offset stands on replaces it; a worse one keeps our
        offset within what it allows. So a member that rejoins (or a reference newly synced)
        moves nobody's table time by its first, stalled round trip, and a reference that took
        its offset from such a round trip mends it from the members' better ones."""
        offset, basis = self.offset, self._basis
        best = None if reference is None else self._peers[reference].best
        if best is not None and (
            offset is None or basis is None or best.cost(now) < basis.cost(now)
        ):
            offset, basis = best.offset, best
        if offset is None or basis is None:
            return
        low, high = basis.bounds(now)
        if best is not None and best is not basis:
            best_low, best_high = best.bounds(now)
            if best_high < low or best_low > high:
                # What we knew and the reference disagree outright: its table time is the table's.
                offset = best.offset
                low, high = best_low, best_high
            else:
                low, high = max(low, best_low), min(high, best_high)
        for peer in sorted(synced):
            if peer in (reference, self.peer_id):
                continue
            sample = self._peers[peer].best
            if sample is None or sample.cost(now) >= high - low:
                continue
            # A member's table time follows the reference's: its better round trip narrows
            # where the reference's may be, unless it contradicts what we know.
            peer_low, peer_high = sample.bounds(now)
            if peer_low <= high and peer_high >= low:
                low, high = max(low, peer_low), min(high, peer_high)
        self.offset = min(max(offset, low), high)
        # What we now know, as a round trip as wide as where the table time may be.
        self._basis = _Sample(now, high - low, (low + high) / 2)


def _echo(me: str, msg: Message) -> tuple[int | None, int | None]:
    """Which frame of ours `msg` answers (its stamp) and how long it was held (microseconds):
    the one its ``seen`` reports, or the latest it got when that one is not (`replies`)."""
    if me in msg.echoes:
        return msg.echoes[me]
    echo = msg.seen.get(me)
    return (None if echo is None else echo[1]), msg.ages.get(me)
