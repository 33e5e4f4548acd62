"""The sans-IO ordering core: one totally ordered log shared by a group of peers.

No sockets, no asyncio, no clock: the caller feeds frames and the time in, and sends what
`outgoing` returns. One `OrderingCore` per peer::

    core = OrderingCore("alice", ["alice", "bob", "carol"], now)
    entry = core.submit(payload, now)           # a local action, ordered like any other
    events = core.receive("bob", frame, now)    # one frame from bob's connection
    events += core.tick(now)                    # heartbeats, acks, suspicion, exclusion
    for dest, frame in core.outgoing(): ...     # send each frame on dest's connection
    core.next_timer()                           # when `tick` needs to run next, or None
    core.report_state_hash(index, digest)       # app state hash right after stable entry index
    core.provide_snapshot(peer, index, state)   # answer to SnapshotRequested
    core.leave(now)                             # voluntary leave

A joiner (new peer, or a returning one with a higher incarnation) starts with
``OrderingCore.joining(peer_id, contacts, now, incarnation=n)``; it may submit once `ready`.

Events (net.events), in the order the application must handle them: `EntryReceived` (a remote
entry, tentative), `EntriesStabilized` (final, in log order, with stable indices),
`EntriesRetracted` (tentative entries of a removed member beyond its cut), `MemberSuspected` /
`MemberRecovered` (local silence detector), `MemberJoined` / `MemberReturned` / `MemberLeft` /
`MemberExcluded` (stable: at the same place of the stable stream on every peer),
`SnapshotRequested` (call `provide_snapshot` with the stable state as of that event),
`SnapshotInstalled` (replace the stable state and tentative tail), `DivergenceDetected`,
`Expelled` (this core was removed: start a new incarnation) and `ProtocolViolated` (close the
connection of that peer; the core ignores it from then on and the group excludes it).

Order. Each peer stamps every frame with a Lamport timestamp, strictly increasing per link; a
frame whose timestamp does not increase is a protocol violation, and so is a member's frame
stamped more than `CoreConfig.max_clock_jump` ahead of our clock (it would push every clock; a
joiner, still behind the table, takes its welcome as it comes). Entries sort by (ts, peer).

Stability. Entry (t, X) is stable at P when, for every member Y: P received from Y a frame with
timestamp >= t (links are FIFO, so no entry of Y sorting before it can still arrive), and Y
reported (in the ``seen`` vector every frame carries) a frame of X with timestamp >= t (so Y holds
all of X's entries up to t). Hence a stable entry is held by every member, and any later cut of a
removed member keeps it. Receivers acknowledge actions after `CoreConfig.ack_delay`; idle peers
send heartbeats every `CoreConfig.heartbeat_interval`.

Views. Membership changes by agreement, one epoch at a time. A peer silent for
`exclude_timeout`, a leave notice or a join request starts a view change: each remaining member
freezes (keeps aside, unprocessed, the frames of) the members to remove, and sends a proposal
holding its frozen frontier of each, its clock, the additions, the entries of removed members the
receiver may lack, and its own observations (whom it has heard nothing from for
`exclude_timeout`). Additions, leaves, violations and replaced incarnations are adopted by
everyone; a silent member X only on grounds: X is silent to us too (`suspect_timeout`), or a
majority of the others observe X silent, or X and a lower peer Y each observe the other silent
while Y is not itself observed silent by a majority (a link between them is down: the lower id
stays). So one member's bad link never removes a member the others hear; its proposal stays
unbacked, and a member whose grounds nobody backs for `exclude_timeout` leaves (its links are the
bad ones), as does one without a quorum. A member that loses its grounds (it hears X again)
releases X (processing the kept frames) and, if nothing is left to change, withdraws with an
empty proposal and stabilises nothing past the change's clock until every member acknowledged
the withdrawal (someone may have decided with its earlier proposal: that decision then arrives
first); a set proposed again meanwhile repeats its earlier content. A member decides once every
remaining member sent the same sets; the cut of a removed member is the highest frozen
frontier, so every entry any member holds or stabilized is kept, and the relayed entries give
everyone the same set. The change itself sits in the log at key (T + 1, "") where T bounds every
cut and every member's clock at the start of the change (no member stabilizes past its clock
during a change). Deciders tell everyone (a member that missed a proposal adopts the decision,
but not from a member added after it last heard a removed member while an older survivor is
there: that joiner holds none of the removed member's entries from before its own marker, so
its relay may lack some we lack; the older survivor's decision brings them).
Joiners get, from each member, its entries after the marker, and a snapshot of the stable state
at the marker from the lowest remaining member. A joiner sends nothing to a member before that
member's decision welcomed it, and members added after it need no welcome. Until its snapshot
comes, a joiner proposes but decides nothing (it adopts the decision of a member holding the
table's state, or leaves like a member without a quorum): alone, it could decide a view in
which nobody holds that state, and no snapshot would ever come.

Splits. Either side of a cut through a view of two goes on alone; and a member cut off from the
others can still reach a quorum alone by counting a rejoining incarnation as staying, deciding
an epoch they already decided with its earlier proposal. Two groups then play on apart, each
having removed the other's members. They find out when frames flow between them again: an
expulsion carries its sender's view (its ``seen`` keys and itself), and a member expelled by a
former member it removed (nobody else speaks for a group split from ours) ranks the two groups
(the bigger first, then the one holding the lowest peer id, a newer incarnation first). The
rival's view may be out of date and dissolving cannot be undone, so members we hold do not count
for it; if our group still ranks lower, the member dissolves it: it expels its group's members
and itself, and each rejoins the other group as a new incarnation, catching up from its
snapshot. A member that stays answers the rival with its own view, and again whenever either
view changes, so each side ends up judging by the other's latest view and one of them dissolves.
What the dissolved group stabilised since the split is replaced by the other group's log; that
group loses nothing.

State hashes. The application reports the hash of its state right after stable entry N; members
exchange them; when all members reported N the majority digest (ties: the group holding the
lowest peer id) is authoritative, each other digest is reported as `DivergenceDetected`, and a
diverged core resynchronises: it holds back stable events, asks the lowest authoritative peer
for a snapshot and installs it.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from net.errors import LocalProtocolError, RemoteProtocolError
from net.events import (
    DivergenceDetected,
    EntriesRetracted,
    EntriesStabilized,
    EntryReceived,
    Event,
    Expelled,
    LogEntry,
    MemberExcluded,
    MemberJoined,
    MemberLeft,
    MemberRecovered,
    MemberReturned,
    MemberSuspected,
    Payload,
    ProtocolViolated,
    SnapshotInstalled,
    SnapshotRequested,
)
from net.messages import (
    MAX_INT,
    REASON_EXCLUDED,
    REASON_LEFT,
    Action,
    Expulsion,
    Heartbeat,
    JoinRequest,
    LeaveNotice,
    Limits,
    Message,
    Removal,
    Snapshot,
    SnapshotRequest,
    StateHash,
    ViewDecision,
    ViewProposal,
    decode_message,
    encode_message,
    normalize_payload,
)

__all__ = ["CoreConfig", "OrderingCore", "Phase"]

Key = tuple[int, str]


@dataclass(frozen=True)
class CoreConfig:
    """Timers (seconds) and limits of the core.

    `max_clock_jump` bounds how far (in Lamport ticks) a member's frame may be stamped ahead of
    our clock: honest clocks only move by one per frame and by merging, so within a group they
    stay far closer than that; a frame beyond it is a protocol violation."""

    heartbeat_interval: float = 0.1
    ack_delay: float = 0.002
    suspect_timeout: float = 1.0
    exclude_timeout: float = 3.0
    join_retry_interval: float = 0.5
    snapshot_timeout: float = 1.0
    hash_window: int = 64
    max_clock_jump: int = 1_000_000
    limits: Limits = field(default_factory=Limits)


class Phase(Enum):
    """Life cycle of a core."""

    JOINING = "joining"
    MEMBER = "member"
    EXPELLED = "expelled"
    LEFT = "left"


class OrderingCore:
    """Orders the actions of a group into one log; see the module docstring."""

    def __init__(
        self,
        peer_id: str,
        members: Iterable[str],
        now: float,
        config: CoreConfig | None = None,
        incarnation: int = 0,
        *,
        join: bool = False,
    ) -> None:
        """A founding member (all founders at incarnation 0) or, with ``join=True``, a joiner
        that asks `members` (its contacts) to add it."""
        self.config = config or CoreConfig()
        _check_peer_id(peer_id, self.config.limits)
        if incarnation < 0:
            raise LocalProtocolError("incarnation must be >= 0")
        others = sorted(set(members) - {peer_id})
        for peer in others:
            _check_peer_id(peer, self.config.limits)
        self.peer_id: Final = peer_id
        self.incarnation: Final = incarnation
        self._now = now
        self._clock = 0
        self._epoch = 0
        self._view: dict[str, int] = {}
        self._since: dict[str, Key] = {}
        self._frontier: dict[str, int] = {}
        self._reports: dict[str, dict[str, int]] = {}
        self._last_ts: dict[str, tuple[int, int]] = {}
        self._poisoned: set[tuple[str, int]] = set()
        self._removed: dict[tuple[str, int], int] = {}
        self._expelled_told: set[tuple[str, int]] = set()
        # Members of a group split from ours that removed us (see "Splits").
        self._rivals: dict[str, _Rival] = {}
        self._last_heard: dict[str, float] = {}
        self._suspected: set[str] = set()
        self._last_sent: dict[str, float] = {}
        self._ack_due: float | None = None
        self._pending: dict[Key, LogEntry | _Marker] = {}
        self._heap: list[Key] = []
        self._last_stable_key: Key = (0, "")
        self._stable_count: int | None = 0
        self._stable_epoch = 0
        self._epoch_index: dict[int, int] = {0: 0}
        self._vc: _ViewChange | None = None
        # This epoch: each member's latest proposal, removals that need no confirmation (a
        # leave, a violation, a replaced incarnation), and after a withdrawn view change the
        # stability limit kept until every member acknowledged the withdrawal (ts sent to it).
        self._proposals: dict[str, ViewProposal] = {}
        self._strong: dict[str, str] = {}
        self._settle: tuple[int, dict[str, int]] | None = None
        # The content (clock, frozen frontiers) of each set we proposed this epoch, with the
        # number of withdrawals before it was last sent: proposing a set again while an old
        # proposal of it may still count somewhere must repeat it exactly, or two members could
        # decide the same sets with different cuts.
        self._votes: dict[object, tuple[int, int, dict[str, Removal]]] = {}
        self._withdrawals = 0
        # Violators count as grounds for removal from the next tick on.
        self._violators: set[tuple[str, int]] = set()
        self._out: list[tuple[str, bytes]] = []
        self._events: list[Event] = []
        self._batch: list[LogEntry] = []
        self._batch_first = 0
        # Delivery of stable events is held back while a snapshot is awaited.
        self._holding = False
        self._held: list[tuple[int, LogEntry | _Marker]] = []
        self._snapshot_in: Snapshot | None = None
        self._snap_candidates: list[tuple[str, int]] = []
        self._resyncing = False
        self._snap_deadline: float | None = None
        self._snap_min_index = 0
        self._join_epoch: int | None = None
        self._contacts = others
        self._join_deadline: float | None = None
        # Snapshot duties: requests waiting for our stable index, and answers the app owes.
        self._snap_waiting: dict[str, tuple[int, int | None]] = {}
        self._snap_owed: dict[tuple[str, int], tuple[int, int | None]] = {}
        # State hashes: index -> peer -> digest.
        self._hashes: dict[int, dict[str, bytes]] = {}
        self._hash_done: set[int] = set()
        self._member_from: dict[str, int] = {}
        # A joiner talks to a member only once that member's decision welcomed it.
        self._welcomed: set[str] | None = None
        self._early: list[tuple[str, Message]] = []
        if join:
            self.phase = Phase.JOINING
            self._stable_count = None
            self._holding = True
            self._send_join_requests(now)
        else:
            self.phase = Phase.MEMBER
            self._view = {p: 0 for p in [*others, peer_id]}
            if incarnation != 0:
                raise LocalProtocolError("founders start at incarnation 0; join to return")
            for peer in others:
                self._frontier[peer] = 0
                self._reports[peer] = {}
                self._last_heard[peer] = now
                self._last_sent[peer] = now - self.config.heartbeat_interval

    @classmethod
    def joining(
        cls,
        peer_id: str,
        contacts: Iterable[str],
        now: float,
        config: CoreConfig | None = None,
        incarnation: int = 0,
    ) -> OrderingCore:
        """A core that asks `contacts` to add it (incarnation > 0 for a returning peer)."""
        return cls(peer_id, contacts, now, config, incarnation, join=True)

    # --- public API -------------------------------------------------------------------------

    @property
    def members(self) -> dict[str, int]:
        """The current view: peer id -> incarnation (empty while joining)."""
        return dict(sorted(self._view.items()))

    @property
    def epoch(self) -> int:
        """Number of view changes decided so far in this group."""
        return self._epoch

    @property
    def stable_index(self) -> int | None:
        """Number of stable entries (None while a joiner does not know its place yet)."""
        return self._stable_count

    @property
    def ready(self) -> bool:
        """True when `submit` may be called (a member, not waiting for a snapshot)."""
        return self.phase is Phase.MEMBER and not self._holding

    @property
    def clock(self) -> int:
        """The Lamport clock."""
        return self._clock

    def tentative(self) -> list[LogEntry]:
        """Entries received but not yet stable, in log order."""
        return sorted(e for e in self._pending.values() if isinstance(e, LogEntry))

    def submit(self, payload: Payload, now: float) -> LogEntry:
        """Order a local action: stamp it, queue it for every member and return its entry."""
        if self.phase is not Phase.MEMBER or self._holding:
            raise LocalProtocolError(f"cannot submit while {self._state_name()}")
        payload = normalize_payload(payload, self.config.limits)
        self._now = now
        ts = self._tick_clock()
        entry = LogEntry(ts, self.peer_id, payload)
        self._insert(entry)
        self._broadcast(Action(ts, self.incarnation, self._seen(), payload), self._dests())
        self._ack_due = None
        self._stabilize()  # alone in the group, an entry is stable at once
        return entry

    def receive(self, from_peer: str, data: bytes, now: float) -> list[Event]:
        """Decode and process one frame from `from_peer`; never raises on bad input."""
        self._begin(now)
        if self.phase in (Phase.EXPELLED, Phase.LEFT):
            return self._end()
        try:
            message = decode_message(data, self.config.limits)
            self._handle(from_peer, message)
        except RemoteProtocolError as exc:
            self._violation(from_peer, exc.field, exc.reason)
        self._after_input()
        return self._end()

    def tick(self, now: float) -> list[Event]:
        """Run the timers: acks, heartbeats, suspicion, exclusion, retries."""
        self._begin(now)
        if self.phase is Phase.JOINING:
            if self._join_deadline is not None and now >= self._join_deadline:
                self._send_join_requests(now)
        elif self.phase is Phase.MEMBER:
            self._check_silence(now)
            self._check_quorum_wait(now)
            self._check_snapshot_retry(now)
            self._send_beats(now)
        self._after_input()
        return self._end()

    def next_timer(self) -> float | None:
        """The earliest time at which `tick` has work to do, or None."""
        if self._events or self._batch:
            return self._now  # events are waiting to be returned by tick
        if self.phase is Phase.JOINING:
            return self._join_deadline
        if self.phase is not Phase.MEMBER:
            return None
        cfg = self.config
        times: list[float] = []
        dests = self._dests()
        if self._ack_due is not None and dests:
            times.append(self._ack_due)
        for peer in dests:
            times.append(self._last_sent[peer] + cfg.heartbeat_interval)
        removing = self._vc.removals if self._vc else {}
        for peer in self._view:
            if peer == self.peer_id or peer in removing:
                continue
            heard = self._last_heard[peer]
            if peer not in self._suspected:
                times.append(heard + cfg.suspect_timeout)
            times.append(heard + cfg.exclude_timeout)
            if (peer, self._view[peer]) in self._poisoned:
                times.append(self._now)
        if self._snap_deadline is not None and self._holding:
            times.append(self._snap_deadline)
        if self._vc is not None and self._vc.no_quorum_since is not None:
            times.append(self._vc.no_quorum_since + cfg.exclude_timeout)
        if self._vc is not None and self._vc.unbacked_since is not None:
            times.append(self._vc.unbacked_since + cfg.exclude_timeout)
        return min(times) if times else None

    def outgoing(self) -> list[tuple[str, bytes]]:
        """Drain the frames to send, each as (destination peer id, bytes), in order."""
        out, self._out = self._out, []
        return out

    def report_state_hash(self, stable_index: int, digest: bytes) -> list[Event]:
        """Report the digest of the application state right after stable entry `stable_index`.

        The digest goes to every member; the returned events report any divergence found."""
        if self.phase is not Phase.MEMBER:
            raise LocalProtocolError(f"cannot report a hash while {self._state_name()}")
        if not isinstance(digest, bytes) or not 1 <= len(digest) <= 64:
            raise LocalProtocolError("digest must be 1 to 64 bytes")
        if self._stable_count is None or not 0 <= stable_index <= self._stable_count:
            raise LocalProtocolError(f"stable index {stable_index} not reached")
        self._begin(self._now)
        ts = self._tick_clock()
        self._broadcast(
            StateHash(ts, self.incarnation, self._seen(), stable_index, digest), self._dests()
        )
        self._record_hash(self.peer_id, stable_index, digest)
        self._after_input()
        return self._end()

    def provide_snapshot(self, to_peer: str, stable_index: int, snapshot: Payload) -> None:
        """Send the application state asked for by `SnapshotRequested(to_peer, stable_index)`."""
        owed = self._snap_owed.pop((to_peer, stable_index), None)
        if owed is None:
            raise LocalProtocolError(f"no snapshot requested by {to_peer} at {stable_index}")
        state = normalize_payload(snapshot, self.config.limits)
        if self.phase is not Phase.MEMBER or to_peer not in self._view:
            return
        epoch, anchor = owed
        ts = self._tick_clock()
        frame = Snapshot(ts, self.incarnation, self._seen(), stable_index, epoch, anchor, state)
        self._send(to_peer, frame)

    def leave(self, now: float) -> None:
        """Leave the group on purpose; the others order the departure in the log."""
        if self.phase is not Phase.MEMBER:
            raise LocalProtocolError(f"cannot leave while {self._state_name()}")
        self._now = now
        ts = self._tick_clock()
        self._broadcast(LeaveNotice(ts, self.incarnation, self._seen()), self._dests())
        self.phase = Phase.LEFT

    # --- private: frame handling ------------------------------------------------------------

    def _handle(self, peer: str, msg: Message) -> None:
        inc = msg.incarnation
        if (peer, inc) in self._poisoned:
            return
        last = self._last_ts.get(peer)
        if last is not None and last[0] > inc:
            return  # a late frame of an older incarnation
        if last is not None and last[0] == inc and msg.ts <= last[1]:
            self._poisoned.add((peer, inc))
            raise RemoteProtocolError("ts", f"timestamp {msg.ts} does not exceed {last[1]}")
        if (
            self.phase is Phase.MEMBER
            and self._view.get(peer) == inc
            and msg.ts - self._clock > self.config.max_clock_jump
        ):
            # Only a member's frames move our clock. A joiner's clock is behind the table's
            # until its welcome, and a rival group's expulsion moves nothing.
            self._poisoned.add((peer, inc))
            raise RemoteProtocolError(
                "ts", f"timestamp {msg.ts} jumps too far ahead of our clock {self._clock}"
            )
        self._last_ts[peer] = (inc, msg.ts)
        if self._hold_frozen(peer, msg):
            return
        if self.phase is Phase.JOINING and not isinstance(msg, ViewDecision):
            # A co-joiner may talk to us before our first decision tells us the view.
            if len(self._early) < _MAX_EARLY_FRAMES:
                self._early.append((peer, msg))
            return
        self._dispatch(peer, msg)
        if self._early and self.phase is Phase.MEMBER:
            early, self._early = self._early, []
            for early_peer, early_msg in early:
                try:
                    self._dispatch(early_peer, early_msg)
                except RemoteProtocolError as exc:
                    self._violation(early_peer, exc.field, exc.reason)

    def _hold_frozen(self, peer: str, msg: Message) -> bool:
        """Keep the frames of a member we are removing, in order, in case the removal is
        withdrawn; they also tell us it is alive. True when `msg` was kept."""
        vc = self._vc
        if vc is None or self.phase is not Phase.MEMBER:
            return False
        frozen = vc.removals.get(peer)
        if frozen is None or frozen.incarnation != msg.incarnation:
            return False
        if isinstance(msg, Expulsion):
            if msg.target == self.incarnation:
                self._become_expelled(msg.epoch)
            return True
        if isinstance(msg, ViewDecision) and msg.epoch == self._epoch + 1:
            self._release(peer)  # a decision taken without us: catch up with its sender
            return False
        self._last_heard[peer] = self._now
        if isinstance(msg, ViewProposal):
            # Its grounds may change ours (and it cannot be kept waiting behind our freeze):
            # take them in now. A proposal changes nothing else of its sender's stream.
            self._on_proposal(peer, msg)
            return True
        held = vc.held.setdefault(peer, [])
        if len(held) >= _MAX_EARLY_FRAMES:
            self._poisoned.add((peer, msg.incarnation))
            return True
        held.append(msg)
        return True

    def _release(self, peer: str) -> None:
        """Stop removing `peer`: accept its frames again, starting with those kept."""
        vc = self._vc
        assert vc is not None
        del vc.removals[peer]
        for msg in vc.held.pop(peer, []):
            if self.phase is not Phase.MEMBER:
                return
            try:
                self._dispatch(peer, msg)
            except RemoteProtocolError as exc:
                self._violation(peer, exc.field, exc.reason)

    def _dispatch(self, peer: str, msg: Message) -> None:
        inc = msg.incarnation
        if self.phase is Phase.JOINING or (
            self._welcomed is not None and peer in self._view and peer not in self._welcomed
        ):
            if isinstance(msg, ViewDecision):
                self._joiner_decision(peer, msg)
            return
        if isinstance(msg, JoinRequest):
            self._on_join_request(peer, inc)
            return
        if not self._is_live_member(peer, inc):
            if isinstance(msg, Expulsion) and msg.target == self.incarnation:
                self._on_rival_expulsion(peer, msg)
            if self.phase is Phase.MEMBER:
                self._maybe_tell_expelled(peer, inc)
            return
        self._clock = max(self._clock, msg.ts)
        self._last_heard[peer] = self._now
        if peer in self._suspected:
            self._suspected.discard(peer)
            self._events.append(MemberRecovered(peer))
        self._frontier[peer] = msg.ts
        reports = self._reports.setdefault(peer, {})
        for author, (author_inc, ts) in msg.seen.items():
            if self._view.get(author) == author_inc and ts > reports.get(author, 0):
                reports[author] = ts

        if isinstance(msg, Action):
            self._on_entry(LogEntry(msg.ts, peer, msg.payload))
            self._schedule_ack()
        elif isinstance(msg, Heartbeat):
            pass
        elif isinstance(msg, StateHash):
            self._record_hash(peer, msg.index, msg.digest)
        elif isinstance(msg, LeaveNotice):
            self._strong[peer] = REASON_LEFT
        elif isinstance(msg, ViewProposal):
            self._on_proposal(peer, msg)
        elif isinstance(msg, ViewDecision):
            self._on_decision(peer, msg)
        elif isinstance(msg, SnapshotRequest):
            self._snap_waiting[peer] = (msg.min_index, msg.anchor_epoch)
        elif isinstance(msg, Snapshot):
            self._on_snapshot(msg)
        elif isinstance(msg, Expulsion) and msg.target == self.incarnation:
            self._become_expelled(msg.epoch)

    def _is_live_member(self, peer: str, inc: int) -> bool:
        if self._view.get(peer) != inc or peer == self.peer_id:
            return False
        return not (self._vc is not None and peer in self._vc.removals)

    def _on_entry(self, entry: LogEntry) -> None:
        if entry.key <= self._last_stable_key or entry.key in self._pending:
            return
        self._insert(entry)
        if not self._holding:
            self._events.append(EntryReceived(entry))

    def _on_join_request(self, peer: str, inc: int) -> None:
        if self.phase is not Phase.MEMBER or peer == self.peer_id:
            return
        current = self._view.get(peer)
        if current is not None and current >= inc:
            return
        if (peer, inc) in self._removed:
            self._maybe_tell_expelled(peer, inc)
            return
        vc = self._enter_view_change()
        if vc.additions.get(peer, -1) >= inc:
            return
        vc.additions[peer] = inc
        if current is not None:
            self._strong[peer] = REASON_EXCLUDED  # replaced by its new incarnation

    def _on_rival_expulsion(self, peer: str, msg: Expulsion) -> None:
        """A group we are not in removed us: the group split in two, each side deciding its own
        views (see "Splits" in the module docstring). The lower-ranked side dissolves."""
        if (peer, msg.incarnation) not in self._removed:
            return  # only a former member of ours can speak for a group split from ours
        theirs = {p: inc for p, (inc, _) in msg.seen.items()}
        theirs[peer] = msg.incarnation
        if theirs.get(self.peer_id) == self.incarnation:
            return  # not a group that removed us: a member of ours that dissolved
        if self._view.get(peer, -1) > msg.incarnation:
            return  # its sender has rejoined us since
        # Their view may be out of date (sent while the link was down), and dissolving cannot
        # be undone: members we hold do not count for them. Our own changes reach them below.
        rival = {p: inc for p, inc in theirs.items() if self._view.get(p, -1) < inc}
        if _group_rank(rival) < _group_rank(self._view):
            self._dissolve()
            return
        known = self._rivals.get(peer)
        if known is None or known.incarnation != msg.incarnation:
            known = self._rivals[peer] = _Rival(msg.incarnation)
        if theirs != known.heard:
            # Answer a new view with ours, even unchanged: it judges again by our latest.
            known.heard = theirs
            known.told = {}
        self._tell_rivals()

    def _tell_rivals(self) -> None:
        """Send rival members our view when it changed since we last told them: each side
        judges the split by the other's latest view, so one of them dissolves."""
        for peer, rival in sorted(self._rivals.items()):
            if self._view.get(peer, -1) >= rival.incarnation:
                del self._rivals[peer]  # it joined us
            elif rival.told != self._view:
                rival.told = dict(self._view)
                ts = self._tick_clock()
                target = rival.incarnation
                self._send(peer, Expulsion(ts, self.incarnation, self._seen(), self._epoch, target))

    def _dissolve(self) -> None:
        """Expel every member of our group, then ourselves: each rejoins the rival group."""
        for dest in self._dests():
            ts = self._tick_clock()
            expulsion = Expulsion(ts, self.incarnation, self._seen(), self._epoch, self._view[dest])
            self._send(dest, expulsion)
        self._become_expelled(self._epoch)

    def _enter_view_change(self) -> _ViewChange:
        if self._vc is None:
            self._vc = _ViewChange(self._epoch, self._clock)
        return self._vc

    def _freeze(self, peer: str, reason: str) -> None:
        """Stop accepting frames from `peer` and propose to remove it with our frontier."""
        vc = self._enter_view_change()
        if peer not in self._view or peer == self.peer_id:
            return
        current = vc.removals.get(peer)
        if current is not None:
            if reason == REASON_LEFT and current.reason != REASON_LEFT:
                vc.removals[peer] = Removal(current.incarnation, current.ts, reason)
            return
        inc = self._view[peer]
        vc.removals[peer] = Removal(inc, self._frontier.get(peer, 0), reason)

    def _observations(self) -> dict[str, int]:
        """Members we have heard nothing from for the exclusion timeout (or that broke the
        protocol): our own grounds to remove them."""
        timeout = self.config.exclude_timeout
        return {
            p: inc
            for p, inc in self._view.items()
            if p != self.peer_id
            and (self._now - self._last_heard[p] >= timeout or (p, inc) in self._violators)
        }

    def _observed_by(self, peer: str, mine: Mapping[str, int]) -> Mapping[str, int]:
        if peer == self.peer_id:
            return mine
        if peer in self._strong:
            return {}  # leaving or replaced: its view of the others no longer matters
        proposal = self._proposals.get(peer)
        return proposal.observed if proposal is not None else {}

    def _confirmed(self, target: str, mine: Mapping[str, int]) -> bool:
        """Whether we back removing `target`, which some member observed silent: it is silent
        to us too, or a majority of the others observe it silent, or it and a lower peer each
        observe the other silent (a link between them is down: the lower id stays, as in the
        quorum rule). One member's bad link alone never removes a member the others hear."""
        if self._now - self._last_heard[target] >= self.config.suspect_timeout:
            return True
        if self._majority_accused(target, mine):
            return True
        theirs = self._observed_by(target, mine)
        return any(
            p < target
            and theirs.get(p) == self._view[p]
            and self._observed_by(p, mine).get(target) == self._view[target]
            and not self._majority_accused(p, mine)  # then p is the one cut off
            for p in self._view
        )

    def _majority_accused(self, target: str, mine: Mapping[str, int]) -> bool:
        inc = self._view[target]
        others = [p for p in self._view if p != target]
        accusers = [p for p in others if self._observed_by(p, mine).get(target) == inc]
        return 2 * len(accusers) > len(others)

    def _reconsider(self) -> None:
        """Bring our view change in line with our grounds: freeze the members we have reason
        to remove, release those we no longer have reason to, withdraw a change left empty."""
        for _ in range(8):
            if self.phase is not Phase.MEMBER or not self._reconsider_once():
                return

    def _reconsider_once(self) -> bool:
        vc = self._vc
        mine = self._observations()
        if (
            vc is None
            and not mine
            and not self._strong
            and not any(p.removals or p.observed for p in self._proposals.values())
        ):
            return False
        desired: dict[str, str] = {}
        for target, reason in self._strong.items():
            if target in self._view and target != self.peer_id:
                desired[target] = reason
        for target in mine:
            desired.setdefault(target, REASON_EXCLUDED)
        candidates: set[str] = set()
        for sender, proposal in self._proposals.items():
            if sender in self._strong:
                continue
            candidates.update(proposal.removals)
            candidates.update(proposal.observed)
        for target in sorted(candidates):
            if target in desired or target not in self._view or target == self.peer_id:
                continue
            if self._confirmed(target, mine):
                desired[target] = REASON_EXCLUDED
        if vc is None:
            if not desired:
                return False
            vc = self._enter_view_change()
        if not desired and not vc.additions:
            self._abandon()
            return True
        changed = False
        for target in sorted(vc.removals):
            if target not in desired:
                self._release(target)
                changed = True
        for target, reason in sorted(desired.items()):
            self._freeze(target, reason)
        unbacked = [
            t
            for t in mine
            if t not in self._strong
            and not any(
                t in proposal.removals
                for peer, proposal in self._proposals.items()
                if peer in self._view and peer not in vc.removals
            )
        ]
        if not unbacked:
            vc.unbacked_since = None
        elif vc.unbacked_since is None:
            vc.unbacked_since = self._now
        if self._vc is vc:
            self._propose(mine)
        return changed

    def _abandon(self) -> None:
        """Drop a view change that lost its grounds: tell everyone, and stabilise nothing past
        its clock until each member acknowledged (someone may have decided it already)."""
        vc = self._vc
        assert vc is not None
        for peer in sorted(vc.removals):
            self._release(peer)
        if self._vc is not vc:
            return  # a kept frame carried a decision
        self._vc = None
        limit = vc.clock if self._settle is None else min(vc.clock, self._settle[0])
        acks: dict[str, int] = {}
        for dest in self._dests():
            ts = self._tick_clock()
            acks[dest] = ts
            self._send(
                dest,
                ViewProposal(ts, self.incarnation, self._seen(), self._epoch, vc.clock, {}, {}, ()),
            )
        self._settle = (limit, acks)
        self._withdrawals += 1

    def _check_settled(self) -> None:
        if self._settle is None:
            return
        for peer, ts in self._settle[1].items():
            if peer in self._view and self._reports.get(peer, {}).get(self.peer_id, 0) < ts:
                return
        self._settle = None
        # Everyone has our withdrawal: what we proposed before it can no longer be decided.
        self._votes = {k: v for k, v in self._votes.items() if v[0] >= self._withdrawals}

    def _on_proposal(self, peer: str, msg: ViewProposal) -> None:
        if msg.epoch != self._epoch:
            return  # stale, or ahead of a decision that is on its way to us
        # Only what the proposer observed itself counts as grounds (see _confirmed); adopting
        # every removal of anyone would let one member's bad link remove a healthy member.
        _check_relayed(msg.entries, msg.removals, "propose.entries", bounded=False)
        # The clock and frontiers it proposes end up in the marker, hence in every clock: they
        # are bounded by its timestamp, which the jump check bounded.
        if msg.clock > msg.ts:
            raise RemoteProtocolError("propose.clock", "ahead of the frame's timestamp")
        for target, removal in msg.removals.items():
            if removal.ts > msg.ts:
                raise RemoteProtocolError(f"propose.removals[{target}]", "ahead of the frame")
        for target, removal in msg.removals.items():
            if self._view.get(target) != removal.incarnation:
                raise RemoteProtocolError(f"propose.removals[{target}]", "not a current member")
        for target, inc in msg.additions.items():
            if self._view.get(target, -1) >= inc:
                raise RemoteProtocolError(f"propose.additions[{target}]", "already a member")
        for target, removal in sorted(msg.removals.items()):
            if removal.reason == REASON_LEFT and target != self.peer_id:
                self._strong[target] = REASON_LEFT
        if msg.additions:
            vc = self._enter_view_change()
            for target, inc in sorted(msg.additions.items()):
                if vc.additions.get(target, -1) < inc:
                    vc.additions[target] = inc
                if target in self._view:
                    self._strong[target] = REASON_EXCLUDED
        for entry in msg.entries:
            self._on_entry(entry)
        self._proposals[peer] = msg

    def _propose(self, observed: Mapping[str, int]) -> None:
        """Send our proposal if it changed, then decide if everyone agrees."""
        vc = self._vc
        assert vc is not None
        signature = (vc.signature(), tuple(sorted(observed.items())))
        if signature != vc.sent:
            vc.sent = signature
            key = vc.signature()
            _, clock, removals = self._votes.get(key, (0, vc.clock, vc.removals))
            vc.clock = min(vc.clock, clock)
            vc.removals = {t: removals.get(t, r) for t, r in vc.removals.items()}
            self._votes[key] = (self._withdrawals, vc.clock, dict(vc.removals))
            for dest in [p for p in self._dests() if p not in vc.removals]:
                ts = self._tick_clock()
                proposal = ViewProposal(
                    ts,
                    self.incarnation,
                    self._seen(),
                    vc.epoch,
                    vc.clock,
                    dict(vc.removals),
                    dict(vc.additions),
                    self._relay_for(dest, {p: None for p in vc.removals}),
                    dict(observed),
                )
                self._send(dest, proposal)
        self._try_decide()

    def _try_decide(self) -> None:
        vc = self._vc
        if vc is None:
            return
        signature = vc.signature()
        proposals = []
        for peer in self._survivors():
            proposal = self._proposals.get(peer)
            if proposal is None or _signature(proposal.removals, proposal.additions) != signature:
                return
            proposals.append(proposal)
        removals: dict[str, Removal] = {}
        for target, mine in vc.removals.items():
            cut = max([mine.ts] + [p.removals[target].ts for p in proposals])
            left = mine.reason == REASON_LEFT or any(
                p.removals[target].reason == REASON_LEFT for p in proposals
            )
            removals[target] = Removal(mine.incarnation, cut, REASON_LEFT if left else mine.reason)
        if not self._has_quorum(removals, vc.additions) or self._stable_count is None:
            # The other side of a partition may be going on without us: wait, and if no quorum
            # comes back in time, give up membership and rejoin (see _check_quorum_wait). A
            # joiner still waiting for its snapshot decides nothing: a group it alone decided
            # could be left with nobody holding the table's state.
            if vc.no_quorum_since is None:
                vc.no_quorum_since = self._now
            return
        top = max([vc.clock] + [p.clock for p in proposals] + [r.ts for r in removals.values()])
        survivors = {p: self._view[p] for p in self._view if p not in removals}
        members = {**survivors, **vc.additions}
        self._apply_decision(self._epoch + 1, top + 1, members, removals, dict(vc.additions))

    def _has_quorum(self, removals: Mapping[str, Removal], additions: Mapping[str, int]) -> bool:
        """True when the members staying are a quorum of the view they leave behind.

        Without it both sides of a partition would each exclude the other and play on apart. A
        quorum is more than half of the view, not counting members who left on purpose; exactly
        half is enough for the half holding the lowest peer id. A member replaced by its own new
        incarnation counts as staying.

        A view of two is the exception: a dead laptop and a cut cable look the same from here,
        and a two-laptop table must survive a death, so either of two may go on alone.
        """
        electorate = {
            p for p in self._view if not (p in removals and removals[p].reason == REASON_LEFT)
        }
        if len(electorate) <= 2:
            return True
        staying = {p for p in electorate if p not in removals or p in additions}
        twice = 2 * len(staying)
        return twice > len(electorate) or (twice == len(electorate) and min(electorate) in staying)

    def _on_decision(self, peer: str, msg: ViewDecision) -> None:
        if msg.epoch <= self._epoch:
            return
        if msg.epoch != self._epoch + 1:
            raise RemoteProtocolError("decide.epoch", f"skips from {self._epoch} to {msg.epoch}")
        if msg.marker > msg.ts:
            raise RemoteProtocolError("decide.marker", "ahead of the frame's timestamp")
        mine = msg.removals.get(self.peer_id)
        if mine is not None and mine.incarnation == self.incarnation:
            self._become_expelled(msg.epoch)
            return
        expected = {p: i for p, i in self._view.items() if p not in msg.removals}
        expected.update(msg.additions)
        if expected != dict(msg.members):
            raise RemoteProtocolError("decide.members", "inconsistent with the current view")
        for target, removal in msg.removals.items():
            if self._view.get(target) != removal.incarnation:
                raise RemoteProtocolError(f"decide.removals[{target}]", "not a member")
        if self._misses_relayed_entries(peer, msg.removals):
            return  # the same decision comes from the others, with what we lack
        _check_relayed(msg.entries, msg.removals, "decide.entries")
        for entry in msg.entries:
            self._on_entry(entry)
        self._apply_decision(
            msg.epoch, msg.marker, dict(msg.members), dict(msg.removals), dict(msg.additions)
        )

    def _misses_relayed_entries(self, sender: str, removals: Mapping[str, Removal]) -> bool:
        """Whether a decision of `sender` may lack entries of a removed member that we lack and
        another survivor holds.

        A member added after we last heard the removed member holds none of its entries from
        before its own join marker (they reach it in its snapshot), so its relay cannot give us
        those; a survivor that was there before it can, and it tells us the same decision."""
        joined = self._since.get(sender)
        if joined is None or not any(self._frontier.get(t, 0) < joined[0] for t in removals):
            return False
        return any(
            p not in removals
            and p not in (sender, self.peer_id)
            and self._since.get(p, (0, "")) < joined
            for p in self._view
        )

    def _apply_decision(
        self,
        epoch: int,
        marker: int,
        members: dict[str, int],
        removals: dict[str, Removal],
        additions: dict[str, int],
    ) -> None:
        marker_key: Key = (marker, "")
        # Lower bounds of what each survivor holds of each removed member (for the relay).
        held: dict[str, dict[str, int]] = {}
        for sender, proposal in self._proposals.items():
            held[sender] = {t: r.ts for t, r in proposal.removals.items() if t in removals}
        cuts = {t: r.ts for t, r in removals.items()}
        relays = {
            dest: self._relay_for(
                dest,
                cuts,
                {
                    t: max(held.get(dest, {}).get(t, 0), self._reports.get(dest, {}).get(t, 0))
                    for t in removals
                },
            )
            for dest in members
            if dest != self.peer_id and dest not in additions
        }  # computed before the view changes below (a returning member's `since` moves)
        retracted: list[LogEntry] = []
        for target, removal in sorted(removals.items()):
            since = self._since.get(target, (0, ""))
            for key in [k for k in self._pending if k[1] == target and k > since]:
                if key[0] > removal.ts:
                    item = self._pending.pop(key)
                    assert isinstance(item, LogEntry)
                    retracted.append(item)
            self._removed[(target, removal.incarnation)] = epoch
            for table in (self._since, self._frontier, self._reports, self._last_heard):
                table.pop(target, None)
            self._last_sent.pop(target, None)
            self._suspected.discard(target)
            self._member_from.pop(target, None)
            del self._view[target]
        for target, inc in sorted(additions.items()):
            self._view[target] = inc
            self._since[target] = marker_key
            self._frontier[target] = 0
            self._reports[target] = {}
            self._last_heard[target] = self._now
            self._last_sent[target] = self._now
            self._member_from[target] = MAX_INT  # until its marker is stable
        for reports in self._reports.values():
            for target in removals:
                reports.pop(target, None)
        self._epoch = epoch
        kept = self._vc.held if self._vc is not None else {}
        self._vc = None
        self._proposals = {}
        self._strong = {}
        self._settle = None
        self._votes = {}
        self._clock = max(self._clock, marker)
        provider = min(p for p in members if p not in additions)
        self._insert(_Marker(marker, epoch, removals, additions, provider))
        if retracted and not self._holding:
            self._events.append(EntriesRetracted(tuple(sorted(retracted))))
        # Members added after our own join start from the same marker as we do: nothing is
        # owed either way, so they need no welcome of theirs.
        if self._welcomed is not None:
            self._welcomed.update(additions)
        # Tell everyone: survivors may lack relayed entries, joiners need our later entries.
        # (Not a member that has not welcomed us yet: its welcome brings it our entries, and
        # anything sent before would make that catch-up go back in time on the link.)
        for dest in sorted(members):
            if dest == self.peer_id or (self._welcomed is not None and dest not in self._welcomed):
                continue
            if dest in additions:
                own = tuple(
                    sorted(
                        e
                        for k, e in self._pending.items()
                        if k[1] == self.peer_id and k > marker_key and isinstance(e, LogEntry)
                    )
                )
                entries: tuple[LogEntry, ...] = own
            else:
                entries = relays[dest]
            ts = self._tick_clock()
            self._send(
                dest,
                ViewDecision(
                    ts,
                    self.incarnation,
                    self._seen(),
                    epoch,
                    marker,
                    members,
                    removals,
                    additions,
                    entries,
                ),
            )
        for target, removal in sorted(removals.items()):
            ts = self._tick_clock()
            self._send(
                target,
                Expulsion(ts, self.incarnation, self._seen(), epoch, removal.incarnation),
            )
            self._expelled_told.add((target, removal.incarnation))
        self._tell_rivals()
        self._check_welcomed()
        self._schedule_ack()
        # Frames kept from members we were removing but that stay: take them in, in order.
        for peer, frames in sorted(kept.items()):
            for frame in frames:
                if self.phase is not Phase.MEMBER or self._view.get(peer) != frame.incarnation:
                    break
                try:
                    self._dispatch(peer, frame)
                except RemoteProtocolError as exc:
                    self._violation(peer, exc.field, exc.reason)

    def _joiner_decision(self, peer: str, msg: ViewDecision) -> None:
        if msg.members.get(self.peer_id) != self.incarnation:
            return
        if peer not in msg.members or peer in msg.additions:
            raise RemoteProtocolError("decide.members", "sender is not an established member")
        if self._join_epoch is None:
            self._join_epoch = msg.epoch
            self._epoch = msg.epoch
            self._view = dict(msg.members)
            marker_key: Key = (msg.marker, "")
            self._last_stable_key = marker_key
            self._stable_epoch = msg.epoch
            self._since = {p: marker_key for p in msg.additions}
            self._clock = max(self._clock, msg.marker)
            for other in self._view:
                if other == self.peer_id:
                    continue
                self._frontier[other] = 0
                self._reports[other] = {}
                self._last_heard[other] = self._now
                self._last_sent[other] = self._now
            self.phase = Phase.MEMBER
            # Co-joiners start from the same marker: no catch-up is owed either way.
            self._welcomed = {p for p in msg.additions if p != self.peer_id}
            self._join_deadline = None
            self._snap_candidates = sorted(
                (p, inc)
                for p, inc in self._view.items()
                if p not in msg.additions and p != self.peer_id
            )
            self._snap_deadline = self._now + self.config.snapshot_timeout
            self._schedule_ack()
        elif msg.epoch != self._join_epoch:
            return
        if self._welcomed is None or peer in self._welcomed or peer not in self._view:
            return
        for entry in msg.entries:
            if entry.peer != peer or entry.key <= self._last_stable_key:
                raise RemoteProtocolError("decide.entries", "catch-up entry not after the marker")
        self._clock = max(self._clock, msg.ts)
        self._last_heard[peer] = self._now
        self._frontier[peer] = msg.ts
        self._welcomed.add(peer)
        for entry in msg.entries:
            self._on_entry(entry)
        # Our own entries so far went only to the members that had welcomed us.
        for entry in self.tentative():
            if entry.peer == self.peer_id:
                self._send(peer, Action(entry.ts, self.incarnation, self._seen(), entry.payload))
        self._check_welcomed()
        if self._vc is not None:
            self._vc.sent = None  # the newly welcomed member has not seen our proposal

    def _check_welcomed(self) -> None:
        if self._welcomed is not None and all(
            p in self._welcomed for p in self._view if p != self.peer_id
        ):
            self._welcomed = None

    def _on_snapshot(self, msg: Snapshot) -> None:
        if not self._holding or self._snapshot_in is not None:
            return
        if self._stable_count is None:
            if msg.anchor is None or msg.epoch < (self._join_epoch or 0):
                raise RemoteProtocolError("snapshot.anchor", "a joiner needs the anchor index")
            self._stable_count = msg.anchor
            self._epoch_index[self._stable_epoch] = msg.anchor
        elif msg.index < self._snap_min_index:
            raise RemoteProtocolError("snapshot.index", "older than requested")
        self._snapshot_in = msg

    def _check_snapshot_retry(self, now: float) -> None:
        if self._snap_deadline is None or now < self._snap_deadline or not self._holding:
            return
        if self._snapshot_in is not None:
            return
        self._snap_deadline = now + self.config.snapshot_timeout
        candidates = [(p, i) for p, i in self._snap_candidates if self._view.get(p) == i]
        if not candidates and self._resyncing:
            # Every authoritative peer is gone: their verdict no longer stands. Carry on; the
            # next hash exchange among the current members judges again.
            self._stop_holding()
            return
        if not candidates:
            candidates = sorted((p, i) for p, i in self._view.items() if p != self.peer_id)
        if not candidates:
            return
        # The first try of a joiner is the provider's own push; later tries ask in turn.
        target = candidates[0][0]
        self._snap_candidates = [*candidates[1:], candidates[0]]
        ts = self._tick_clock()
        anchor_epoch = self._join_epoch if self._stable_count is None else None
        self._send(
            target,
            SnapshotRequest(ts, self.incarnation, self._seen(), self._snap_min_index, anchor_epoch),
        )

    def _serve_snapshot_requests(self) -> None:
        if self._holding or self._stable_count is None:
            return
        for peer in sorted(self._snap_waiting):
            min_index, anchor_epoch = self._snap_waiting[peer]
            if peer not in self._view:
                del self._snap_waiting[peer]
                continue
            if self._stable_count < min_index:
                continue
            anchor = None
            if anchor_epoch is not None:
                if anchor_epoch not in self._epoch_index:
                    continue
                anchor = self._epoch_index[anchor_epoch]
            del self._snap_waiting[peer]
            self._request_snapshot_from_app(peer, self._stable_count, self._stable_epoch, anchor)

    def _request_snapshot_from_app(
        self, peer: str, index: int, epoch: int, anchor: int | None
    ) -> None:
        owed = self._snap_owed.get((peer, index))
        if owed is not None:
            # The joiner asked for what we push it anyway: the app's one answer serves both.
            self._snap_owed[(peer, index)] = (epoch, owed[1] if anchor is None else anchor)
            return
        self._flush_batch()
        self._snap_owed[(peer, index)] = (epoch, anchor)
        self._events.append(SnapshotRequested(peer, index))

    def _try_install(self) -> None:
        snap = self._snapshot_in
        if snap is None or self._stable_count is None:
            return
        if self._stable_count < snap.index or self._stable_epoch < snap.epoch:
            return
        self._flush_batch()
        self._held = [
            (position, item)
            for position, item in self._held
            if (item.epoch > snap.epoch if isinstance(item, _Marker) else position > snap.index)
        ]
        self._events.append(
            SnapshotInstalled(snap.index, snap.epoch, snap.state, tuple(self.tentative()))
        )
        self._stop_holding()

    def _stop_holding(self) -> None:
        """Deliver what was held back and resume normal delivery."""
        held, self._held = self._held, []
        self._holding = self._resyncing = False
        self._snapshot_in = None
        self._snap_deadline = None
        for position, item in held:
            self._announce(position, item)
        self._flush_batch()

    # --- private: stability -----------------------------------------------------------------

    def _insert(self, item: LogEntry | _Marker) -> None:
        key = item.key
        self._pending[key] = item
        heapq.heappush(self._heap, key)

    def _stabilize(self) -> None:
        if self.phase is not Phase.MEMBER or self._stable_count is None:
            return
        limits = [self._vc.clock] if self._vc is not None else []
        if self._settle is not None:
            limits.append(self._settle[0])
        limit = min(limits) if limits else None
        while self._heap:
            key = self._heap[0]
            item = self._pending.get(key)
            if item is None:
                heapq.heappop(self._heap)
                continue
            if limit is not None and key[0] > limit:
                break
            if not self._is_stable(key):
                break
            heapq.heappop(self._heap)
            del self._pending[key]
            self._last_stable_key = key
            if isinstance(item, LogEntry):
                self._stable_count += 1
            else:
                self._stable_epoch = item.epoch
                self._epoch_index[item.epoch] = self._stable_count
                for peer in item.additions:
                    self._member_from[peer] = self._stable_count
            if self._holding:
                self._held.append((self._stable_count, item))
            else:
                self._announce(self._stable_count, item)

    def _is_stable(self, key: Key) -> bool:
        ts, author = key
        author_required = author in self._view and self._since.get(author, (0, "")) < key
        for peer in self._view:
            if peer == self.peer_id:
                continue
            since = self._since.get(peer)
            if since is not None and since >= key:
                continue  # joined after this entry
            if self._frontier[peer] < ts:
                return False
            if author_required and peer != author and self._reports[peer].get(author, 0) < ts:
                return False
        return True

    def _announce(self, position: int, item: LogEntry | _Marker) -> None:
        if isinstance(item, LogEntry):
            if not self._batch:
                self._batch_first = position
            self._batch.append(item)
            return
        self._flush_batch()
        for target, removal in sorted(item.removals.items()):
            if removal.reason == REASON_LEFT:
                self._events.append(MemberLeft(target, removal.incarnation, item.epoch, position))
            else:
                self._events.append(
                    MemberExcluded(target, removal.incarnation, removal.ts, item.epoch, position)
                )
        for target, inc in sorted(item.additions.items()):
            cls = MemberReturned if inc > 0 else MemberJoined
            self._events.append(cls(target, inc, item.epoch, position))
        if item.provider == self.peer_id:
            for target in sorted(item.additions):
                if target in self._view and target != self.peer_id:
                    self._request_snapshot_from_app(target, position, item.epoch, position)

    def _flush_batch(self) -> None:
        if self._batch:
            self._events.append(EntriesStabilized(self._batch_first, tuple(self._batch)))
            self._batch = []

    # --- private: state hashes --------------------------------------------------------------

    def _record_hash(self, peer: str, index: int, digest: bytes) -> None:
        if index in self._hash_done:
            return
        self._hashes.setdefault(index, {})[peer] = digest
        while len(self._hashes) > self.config.hash_window:
            del self._hashes[min(self._hashes)]
        self._check_hash(index)

    def _check_hash(self, index: int) -> None:
        reports = self._hashes.get(index, {})
        required = [
            p for p in self._view if self._member_from.get(p, 0) <= index or p == self.peer_id
        ]
        if self.peer_id not in reports or any(p not in reports for p in required):
            return
        del self._hashes[index]
        self._hash_done.add(index)
        if len(self._hash_done) > 4 * self.config.hash_window:
            self._hash_done.discard(min(self._hash_done))
        groups: dict[bytes, list[str]] = {}
        for peer in sorted(reports):
            if peer in required:
                groups.setdefault(reports[peer], []).append(peer)
        ranked = sorted(groups.items(), key=lambda g: (-len(g[1]), min(g[1])))
        expected, authority = ranked[0]
        for peer in sorted(reports):
            if peer in required and reports[peer] != expected:
                self._events.append(DivergenceDetected(peer, index, reports[peer], expected))
        if reports[self.peer_id] != expected and not self._holding:
            self._start_resync(sorted(authority))

    def _start_resync(self, authority: list[str]) -> None:
        assert self._stable_count is not None
        self._flush_batch()
        self._holding = True
        self._held = []
        self._snap_min_index = self._stable_count
        self._snap_candidates = [(p, self._view[p]) for p in authority if p in self._view]
        self._resyncing = True
        self._snap_deadline = self._now  # ask right away, then retry in turn
        self._check_snapshot_retry(self._now)

    # --- private: timers and sending --------------------------------------------------------

    def _check_silence(self, now: float) -> None:
        cfg = self.config
        removing = self._vc.removals if self._vc else {}
        for peer in sorted(self._view):
            if peer == self.peer_id or peer in removing or peer not in self._view:
                continue  # (a decision taken inside this loop may have removed it)
            silence = now - self._last_heard[peer]
            if silence >= cfg.suspect_timeout and peer not in self._suspected:
                self._suspected.add(peer)
                self._events.append(MemberSuspected(peer))
        self._violators = {(p, inc) for p, inc in self._view.items() if (p, inc) in self._poisoned}

    def _send_beats(self, now: float) -> None:
        dests = self._dests()
        if self._ack_due is not None and now >= self._ack_due:
            due = dests
            self._ack_due = None
        else:
            interval = self.config.heartbeat_interval
            due = [d for d in dests if now >= self._last_sent[d] + interval]
        if due:
            self._broadcast(Heartbeat(self._tick_clock(), self.incarnation, self._seen()), due)

    def _schedule_ack(self) -> None:
        if self._ack_due is None:
            self._ack_due = self._now + self.config.ack_delay

    def _send_join_requests(self, now: float) -> None:
        ts = self._tick_clock()
        self._broadcast(JoinRequest(ts, self.incarnation, {}), self._contacts)
        self._join_deadline = now + self.config.join_retry_interval

    def _maybe_tell_expelled(self, peer: str, inc: int) -> None:
        epoch = self._removed.get((peer, inc))
        if epoch is None or (peer, inc) in self._expelled_told:
            return
        self._expelled_told.add((peer, inc))
        self._send(peer, Expulsion(self._tick_clock(), self.incarnation, self._seen(), epoch, inc))

    def _check_quorum_wait(self, now: float) -> None:
        """A minority that could not decide for ``exclude_timeout`` leaves the group: the
        application starts a new incarnation that joins whoever holds the quorum, once it can
        reach them, and catches up from their stable state."""
        vc = self._vc
        if vc is None or self.phase is not Phase.MEMBER:
            return
        timeout = self.config.exclude_timeout
        if vc.no_quorum_since is not None and now - vc.no_quorum_since >= timeout:
            self._become_expelled(self._epoch)
        elif vc.unbacked_since is not None and now - vc.unbacked_since >= timeout:
            # Nobody else backs our grounds to remove a member that they hear: our own links
            # are the bad ones, so we are the one to leave (and rejoin through the others).
            self._become_expelled(self._epoch)

    def _become_expelled(self, epoch: int) -> None:
        self.phase = Phase.EXPELLED
        self._flush_batch()
        self._events.append(Expelled(epoch))

    def _violation(self, peer: str, field: str, reason: str) -> None:
        inc = self._view.get(peer)
        if inc is not None:
            self._poisoned.add((peer, inc))
        self._events.append(ProtocolViolated(peer, field, reason))

    def _dests(self) -> list[str]:
        """Members we send to. Members we are removing still get our frames: should the
        removal be withdrawn, they must not have missed any."""
        welcomed = self._welcomed
        return [
            p
            for p in sorted(self._view)
            if p != self.peer_id and (welcomed is None or p in welcomed)
        ]

    def _survivors(self) -> list[str]:
        """Members that stay in the view being changed (welcomed by us or not)."""
        removing = self._vc.removals if self._vc else {}
        return [p for p in sorted(self._view) if p != self.peer_id and p not in removing]

    def _relay_for(
        self,
        dest: str,
        removals: Mapping[str, int | None],
        bounds: Mapping[str, int] | None = None,
    ) -> tuple[LogEntry, ...]:
        """Entries of members being removed that `dest` may lack (above what it reported)."""
        result = []
        for target, cut in removals.items():
            low = (bounds or {}).get(target)
            if low is None:
                low = self._reports.get(dest, {}).get(target, 0)
            since = self._since.get(target, (0, ""))
            for key, item in self._pending.items():
                if (
                    key[1] == target
                    and key > since
                    and key[0] > low
                    and (cut is None or key[0] <= cut)
                    and isinstance(item, LogEntry)
                ):
                    result.append(item)
        return tuple(sorted(result))

    def _seen(self) -> dict[str, tuple[int, int]]:
        return {p: (self._view[p], ts) for p, ts in self._frontier.items() if p in self._view}

    def _tick_clock(self) -> int:
        self._clock += 1
        return self._clock

    def _send(self, dest: str, message: Message) -> None:
        self._out.append((dest, encode_message(message)))
        if dest in self._last_sent:
            self._last_sent[dest] = self._now

    def _broadcast(self, message: Message, dests: Iterable[str]) -> None:
        data = encode_message(message)
        for dest in dests:
            self._out.append((dest, data))
            if dest in self._last_sent:
                self._last_sent[dest] = self._now

    def _begin(self, now: float) -> None:
        # Events raised outside receive/tick (e.g. by submit) wait here for the next call.
        self._now = max(self._now, now)

    def _after_input(self) -> None:
        if self.phase is not Phase.MEMBER:
            return
        self._reconsider()
        if not self._is_member():
            return  # expelled by a kept frame
        self._check_settled()
        self._stabilize()
        self._flush_batch()
        self._serve_snapshot_requests()
        self._try_install()
        if self.config.ack_delay <= 0 and self._ack_due is not None:
            self._send_beats(self._now)

    def _is_member(self) -> bool:
        return self.phase is Phase.MEMBER

    def _end(self) -> list[Event]:
        self._flush_batch()
        events, self._events = self._events, []
        return events

    def _state_name(self) -> str:
        return "resynchronising" if self._holding else self.phase.value


# --- private helpers -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Marker:
    """A decided view change, placed in the log at key (ts, "")."""

    ts: int
    epoch: int
    removals: dict[str, Removal]
    additions: dict[str, int]
    provider: str

    @property
    def key(self) -> Key:
        return (self.ts, "")


@dataclass
class _ViewChange:
    epoch: int
    clock: int
    removals: dict[str, Removal] = field(default_factory=dict)
    additions: dict[str, int] = field(default_factory=dict)
    held: dict[str, list[Message]] = field(default_factory=dict)
    sent: object = None
    no_quorum_since: float | None = None
    unbacked_since: float | None = None

    def signature(self) -> object:
        return _signature(self.removals, self.additions)


@dataclass
class _Rival:
    """A member of a group split from ours: its incarnation, the latest view it told us and the
    view we last told it."""

    incarnation: int
    heard: dict[str, int] = field(default_factory=dict)
    told: dict[str, int] = field(default_factory=dict)


def _signature(removals: dict[str, Removal] | object, additions: object) -> object:
    assert isinstance(removals, dict) and isinstance(additions, dict)
    return (
        tuple(sorted((p, r.incarnation) for p, r in removals.items())),
        tuple(sorted(additions.items())),
    )


_MAX_EARLY_FRAMES: Final = 10_000


def _group_rank(view: Mapping[str, int]) -> tuple[int, list[tuple[str, int]]]:
    """Orders the groups of a split, lowest first: the bigger group, then the one holding the
    lowest peer id (a newer incarnation of it first: the older one is a dead process)."""
    return (-len(view), sorted((peer, -inc) for peer, inc in view.items()))


def _check_relayed(
    entries: tuple[LogEntry, ...], removals: Mapping[str, Removal], field: str, bounded: bool = True
) -> None:
    """Relayed entries must come from removed members (and, in a decision, be within the cut)."""
    for entry in entries:
        removal = removals.get(entry.peer)
        if removal is None or (bounded and entry.ts > removal.ts):
            raise RemoteProtocolError(field, f"relayed entry {entry.key} outside the removals")


def _check_peer_id(peer: object, limits: Limits) -> None:
    if not isinstance(peer, str) or not 1 <= len(peer) <= limits.max_peer_id_len:
        raise LocalProtocolError(f"bad peer id {peer!r}")
