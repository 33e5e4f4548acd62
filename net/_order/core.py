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

The protocol, and the events in the order the application must handle them, are specified in
docs/protocol.md. `OrderingCore` coordinates private parts that each own their state: the
ordered log (net/_order/log.py), liveness (net/_order/liveness.py), membership
(net/_order/membership.py) with its ballots (net/_order/agreement.py) and snapshot transfer with
state-hash agreement (net/_order/transfer.py). It checks each frame (order, clock jump, violations),
hands it to the part it concerns, and after every input runs the parts in a fixed order (see
`_after_input`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from net._identity import owns
from net._order.admission import Admission
from net._order.agreement import Timeouts, ViewAgreement
from net._order.clock import DEFAULT_BOUND
from net._order.digests import EntryDigests
from net._order.evidence import Equivocations
from net._order.guard import FrameGuard
from net._order.joining import JoinAttempt
from net._order.liveness import Liveness
from net._order.log import OrderedLog
from net._order.membership import Membership
from net._order.messages import (
    Accept,
    Accepted,
    Action,
    JoinRequest,
    LeaveNotice,
    Message,
    Prepare,
    Promise,
    Snapshot,
    SnapshotRequest,
    StateHash,
    ViewDecision,
    decode_message,
    normalize_payload,
)
from net._order.outbox import Outbox
from net._order.recovery import DurablePosition, Recovered, Recovery, durable_position
from net._order.routing import FrameParts, MemberFrames
from net._order.signatures import Identity, UnprovenClaim, check_entries
from net._order.timers import MemberTimers, TimerParts
from net._order.transfer import SnapshotTransfer, StateHashes
from net._order.viewchange import VoteRecord, check_certified
from net._order.wirefields import Limits
from net.errors import LocalProtocolError, RemoteProtocolError
from net.events import Event, Expelled, LogEntry, Payload, ProtocolViolated

__all__ = [
    "CoreConfig",
    "OrderingCore",
    "Phase",
]


@dataclass(frozen=True)
class CoreConfig:
    """Timers (seconds) and limits of the core.

    `max_clock_jump` bounds how far (in microseconds of table time) a member's frame may be
    stamped ahead of our clock and table time: honest clocks follow one table time within
    milliseconds, so a frame beyond it is a protocol violation (see docs/protocol.md).
    `clock_bound` (seconds) is how far a stamp may lag the table time at which it arrives: a
    laptop whose stamps would lag more raises them (one-way delay on a LAN plus the clocks'
    errors stay below 10 ms; see "Clocks and table time")."""

    heartbeat_interval: float = 0.1
    ack_delay: float = 0.002
    suspect_timeout: float = 1.0
    exclude_timeout: float = 3.0
    join_retry_interval: float = 0.5
    snapshot_timeout: float = 1.0
    hash_window: int = 64
    max_clock_jump: int = 1_000_000
    clock_bound: float = DEFAULT_BOUND
    limits: Limits = field(default_factory=Limits)


class Phase(Enum):
    """Life cycle of a core."""

    JOINING = "joining"
    MEMBER = "member"
    EXPELLED = "expelled"
    LEFT = "left"


class OrderingCore:
    """Orders the actions of a group into one log; see docs/protocol.md."""

    def __init__(
        self,
        peer_id: str,
        members: Iterable[str],
        now: float,
        config: CoreConfig | None = None,
        incarnation: int = 0,
        *,
        join: bool = False,
        identity: Identity | None = None,
        predecessor: VoteRecord | None = None,
        recovered: Recovered | None = None,
        salt: bytes = b"",
    ) -> None:
        """A founding member (all founders at incarnation 0) or, with ``join=True``, a joiner
        that asks `members` (its contacts) to add it. With an `identity` (whose key `peer_id`
        must be the id of) it signs its entries and refuses every entry without its author's
        proof; without one it signs and checks nothing. `salt`, the same on every member (the
        table's id, say), seeds the draw that orders entries with equal timestamps."""
        self.config = cfg = config or CoreConfig()
        others = _checked_others(peer_id, members, incarnation, identity, cfg.limits, join=join)
        self._identity = identity
        self.peer_id: Final = peer_id
        self.incarnation: Final = incarnation
        self.phase = Phase.JOINING if join else Phase.MEMBER
        # The parts, each owning its state (see docs/protocol.md).
        beat = cfg.heartbeat_interval
        self._out = out = Outbox(peer_id, incarnation, now, beat, identity, cfg.clock_bound)
        self._digests = digests = EntryDigests(enabled=identity is not None)
        self._log = log = OrderedLog(self._out, joining=join, salt=salt, digests=digests)
        out.bind_digests(lambda seen: digests.frame_digests(log.base(), seen))
        self._liveness = Liveness(self._out, cfg.heartbeat_interval, cfg.ack_delay)
        timeouts = Timeouts(cfg.suspect_timeout, cfg.exclude_timeout, cfg.suspect_timeout)
        view = {} if join else {p: 0 for p in [*others, peer_id]}
        self._members = Membership(self._out, self._log, self._liveness, view)
        self._proofs = Equivocations(out, log, digests, self._ignore)
        host = _AgreementHost(self._expel, self._is_member, self._proofs.caps)
        self._agreement = ViewAgreement(out, log, self._liveness, self._members, host, timeouts)
        self._transfer = SnapshotTransfer(self._out, self._log, cfg.snapshot_timeout)
        self._hashes = StateHashes(self._out, cfg.hash_window)
        self._out.bind_seen(lambda: self._log.seen(self._members.view))
        self._guard = FrameGuard(cfg.max_clock_jump, self._out.table, self._out.emit)
        self._joining = JoinAttempt(out, others, cfg.join_retry_interval, predecessor, recovered)
        self._recovery = Recovery(self._out, self._transfer, recovered, cfg.snapshot_timeout)
        parts = (self._members, self._joining, self._transfer, self._become_member)
        self._admission = Admission(out, *parts, self._agreement.proposal_unseen)
        self._frames = MemberFrames(FrameParts(
            self._out, self._log, self._liveness, self._agreement, self._members,
            self._transfer, self._recovery, self._record_hash, self._expel, self._proofs,
        ))  # fmt: skip
        self._timers = MemberTimers(TimerParts(
            self._out, self._liveness, self._members, self._agreement, self._guard,
            self._transfer, self._recovery,
        ), cfg.suspect_timeout, cfg.exclude_timeout)  # fmt: skip
        if join:
            self._joining.ask(now)
        else:
            for peer in others:
                self._log.track(peer)
                self._liveness.watch(peer, now, now - cfg.heartbeat_interval)

    @classmethod
    def joining(
        cls,
        peer_id: str,
        contacts: Iterable[str],
        now: float,
        config: CoreConfig | None = None,
        incarnation: int = 0,
        *,
        identity: Identity | None = None,
        predecessor: VoteRecord | None = None,
        recovered: Recovered | None = None,
        salt: bytes = b"",
    ) -> OrderingCore:
        """A core that asks `contacts` to add it (incarnation > 0 for a returning peer). A
        returning peer passes its predecessor's `vote_record()` (kept where a crash does not
        lose it) so that it can vote in its place; see "Membership (views)". A restarted laptop
        passes the stable prefix it kept on disk (`recovered`, from a `durable_position()` and
        the application's state there); see "Recovery from durable prefixes"."""
        return cls(
            peer_id, contacts, now, config, incarnation, join=True, identity=identity,
            predecessor=predecessor, recovered=recovered, salt=salt,
        )  # fmt: skip

    # --- public API -------------------------------------------------------------------------

    @property
    def members(self) -> dict[str, int]:
        """The current view: peer id -> incarnation (empty while joining)."""
        return dict(sorted(self._members.view.items()))

    @property
    def epoch(self) -> int:
        """Number of view changes decided so far in this group."""
        return self._members.epoch

    @property
    def stable_index(self) -> int | None:
        """Number of stable entries (None while a joiner does not know its place yet)."""
        return self._log.stable_count

    @property
    def ready(self) -> bool:
        """True when `submit` may be called (a member, not waiting for a snapshot)."""
        return self.phase is Phase.MEMBER and not self._log.holding

    @property
    def paused(self) -> bool:
        """True while a view change waits for a quorum (the table is paused: entries submitted
        meanwhile stay tentative until it is back)."""
        return self.phase is Phase.MEMBER and self._agreement.paused

    @property
    def clock(self) -> int:
        """The hybrid logical clock: the highest stamp issued or received (µs of table time)."""
        return self._out.clock

    @property
    def clock_suspects(self) -> frozenset[str]:
        """Members this core holds clock grounds against (a majority must back a removal)."""
        return frozenset(self._guard.clock_suspects())

    def vote_record(self) -> VoteRecord | None:
        """Our vote in the view change, for our next incarnation to keep (None: we have none)."""
        if self.phase is Phase.JOINING:
            return self._joining.vote_record()
        return self._agreement.vote_record()

    def durable_position(self) -> DurablePosition | None:
        """Where the delivered stable stream stands, for `joining(recovered=)` (None: no state)."""
        return durable_position(self._log)

    def tentative(self) -> list[LogEntry]:
        """Entries received but not yet stable, in log order."""
        return self._log.tentative()

    def rank(self, key: tuple[int, str]) -> tuple[int, int, str]:
        """The place in this table's log of the entry named `key` (its ``LogEntry.key``): the
        log is in ascending rank, on every member alike (the same salt). Not the key itself:
        equal timestamps are ordered by a draw, not by peer id. An application that keeps
        tentative entries in order (to show them before they are stable) orders them by this."""
        return self._log.rank(key)

    def submit(self, payload: Payload, now: float) -> LogEntry:
        """Order a local action: stamp it, queue it for every member and return its entry."""
        if self.phase is not Phase.MEMBER or self._log.holding:
            raise LocalProtocolError(f"cannot submit while {self._state_name()}")
        payload = normalize_payload(payload, self.config.limits)
        out = self._out
        out.now = now
        ts = out.tick_clock()
        entry = LogEntry(ts, self.peer_id, payload)
        if self._identity is not None:
            entry = self._identity.sign(self.incarnation, entry)
        self._log.insert(entry)
        action = Action(ts, self.incarnation, out.seen(), payload, entry.proof)
        out.broadcast(action, self._members.dests())
        self._liveness.cancel_ack()
        self._stabilize()  # alone in the group, an entry is stable at once
        return entry

    def receive(self, from_peer: str, data: bytes, now: float) -> list[Event]:
        """Decode and process one frame from `from_peer`; never raises on bad input."""
        self._begin(now)
        if self.phase in (Phase.EXPELLED, Phase.LEFT):
            return self._end()
        try:
            message = decode_message(data, self.config.limits)
            if self._identity is not None:
                check_entries(self._identity.table, from_peer, message, self._members.view)
                check_certified(self._identity.table, message)
            self._handle(from_peer, message)
        except RemoteProtocolError as exc:
            unproven = isinstance(exc, UnprovenClaim)  # refused, but not acted on alone
            self._violation(from_peer, exc.field, exc.reason, poison=not unproven)
        self._after_input()
        return self._end()

    def tick(self, now: float) -> list[Event]:
        """Run the timers: acks, heartbeats, suspicion, exclusion, retries."""
        self._begin(now)
        if self.phase is Phase.JOINING:
            decision = self._joining.retry_if_due(now)
            if decision is not None:
                self._admission.on_own_decision(decision)
        elif self.phase is Phase.MEMBER:
            self._timers.run(now)
        self._after_input()
        return self._end()

    def next_timer(self) -> float | None:
        """The earliest time at which `tick` has work to do, or None."""
        if self._out.events or self._log.has_batch():
            return self._out.now  # events are waiting to be returned by tick
        if self.phase is Phase.JOINING:
            return self._joining.deadline
        if self.phase is not Phase.MEMBER:
            return None
        return self._timers.next_due()

    def outgoing(self) -> list[tuple[str, bytes]]:
        """Drain the frames to send, each as (destination peer id, bytes), in order."""
        return self._out.drain_frames()

    def report_state_hash(self, stable_index: int, digest: bytes) -> list[Event]:
        """Report the digest of the application state right after stable entry `stable_index`.

        The digest goes to every member; the returned events report any divergence found."""
        if self.phase is not Phase.MEMBER:
            raise LocalProtocolError(f"cannot report a hash while {self._state_name()}")
        if not isinstance(digest, bytes) or not 1 <= len(digest) <= 64:
            raise LocalProtocolError("digest must be 1 to 64 bytes")
        stable_count = self._log.stable_count
        if stable_count is None or not 0 <= stable_index <= stable_count:
            raise LocalProtocolError(f"stable index {stable_index} not reached")
        out = self._out
        self._begin(out.now)
        ts = out.tick_clock()
        message = StateHash(ts, self.incarnation, out.seen(), stable_index, digest)
        out.broadcast(message, self._members.dests())
        self._record_hash(self.peer_id, stable_index, digest)
        self._after_input()
        return self._end()

    def provide_snapshot(self, to_peer: str, stable_index: int, snapshot: Payload) -> None:
        """Send the application state asked for by `SnapshotRequested(to_peer, stable_index)`."""
        owed = self._transfer.take_owed(to_peer, stable_index)
        if owed is None:
            raise LocalProtocolError(f"no snapshot requested by {to_peer} at {stable_index}")
        state = normalize_payload(snapshot, self.config.limits)
        if self.phase is not Phase.MEMBER or to_peer not in self._members.view:
            return
        out = self._out
        ts = out.tick_clock()
        frame = Snapshot(
            ts, self.incarnation, out.seen(), stable_index, owed.epoch, owed.anchor, state
        )
        out.send(to_peer, frame)

    def leave(self, now: float) -> None:
        """Leave the group on purpose; the others order the departure in the log."""
        if self.phase is not Phase.MEMBER:
            raise LocalProtocolError(f"cannot leave while {self._state_name()}")
        out = self._out
        out.now = now
        ts = out.tick_clock()
        proof = (
            None
            if self._identity is None
            else self._identity.sign_leave(self.peer_id, self.incarnation)
        )
        notice = LeaveNotice(ts, self.incarnation, out.seen(), proof)
        out.broadcast(notice, self._members.dests())
        self.phase = Phase.LEFT

    # --- private: what the parts ask of the coordinator ---------------------------------------

    def _replay_early(self, peer: str, msg: Message) -> None:
        """Process a frame a joiner kept before its first decision; a violation in it is
        reported, not raised."""
        try:
            self._dispatch(peer, msg)
        except RemoteProtocolError as exc:
            self._violation(peer, exc.field, exc.reason)

    def _become_member(self) -> None:
        self.phase = Phase.MEMBER

    def _expel(self, epoch: int) -> None:
        """This core was removed from the group (or gave up its membership)."""
        self.phase = Phase.EXPELLED
        self._log.flush_batch()
        self._out.emit(Expelled(epoch))

    def _is_member(self) -> bool:
        return self.phase is Phase.MEMBER

    def _ignore(self, peer: str, inc: int) -> None:
        """A proven equivocator: ignore it (a violator, so we observe it for removal)."""
        self._guard.poison(peer, inc)

    # --- private: frame handling ------------------------------------------------------------

    def _handle(self, peer: str, msg: Message) -> None:
        from_member = self.phase is Phase.MEMBER and self._members.view.get(peer) == msg.incarnation
        if not self._guard.admit(peer, msg, self._out.now, from_member=from_member):
            if self.phase is Phase.MEMBER:
                # A violator we removed still learns it was: else it waits in its old view.
                self._members.maybe_tell_expelled(peer, msg.incarnation)
            return
        if self.phase is Phase.JOINING and isinstance(msg, Prepare | Accept | SnapshotRequest):
            self._joining.vote(peer, msg)  # a returning incarnation's slot vote, or its prefix
            return
        if self.phase is Phase.JOINING and isinstance(msg, JoinRequest | Promise | Accepted):
            # A co-joiner asking too, or a place's vote for our ballot in our predecessor's
            # place (a view whose processes all died: see `net._order.orphan`).
            decision = self._joining.orphan_vote(peer, msg, self._out.now)
            if decision is not None:
                self._admission.on_own_decision(decision)
                return
        if self.phase is Phase.JOINING and not isinstance(msg, ViewDecision):
            # A co-joiner may talk to us before our first decision tells us the view.
            self._joining.keep(peer, msg)
            return
        self._dispatch(peer, msg)
        if self.phase is Phase.MEMBER:
            for early_peer, early_msg in self._joining.take_kept():
                self._replay_early(early_peer, early_msg)

    def _dispatch(self, peer: str, msg: Message) -> None:
        inc = msg.incarnation
        members = self._members
        if self.phase is Phase.JOINING or members.awaits_welcome(peer, inc):
            if isinstance(msg, ViewDecision):
                self._admission.on_decision(peer, msg)
            return
        if isinstance(msg, JoinRequest):
            self._agreement.on_join_request(peer, inc)
            return
        if not self._is_live(peer, inc):
            slot = self._agreement.successors().get(peer) == inc
            if isinstance(msg, Promise | Accepted | Snapshot) and slot:
                self._on_member_frame(peer, msg)  # a returning incarnation's vote, its prefix
            elif self.phase is Phase.MEMBER:
                members.maybe_tell_expelled(peer, inc)
            return
        out = self._out
        out.merge_clock(msg.ts)
        self._liveness.heard(peer, out.now)
        self._liveness.recovered(peer)
        self._log.heard(peer, msg.ts, msg.seen, members.view, msg.digests)
        self._on_member_frame(peer, msg)

    def _is_live(self, peer: str, inc: int) -> bool:
        """Whether frames of incarnation `inc` of `peer` are processed as a member's."""
        return self._members.view.get(peer) == inc and peer != self.peer_id

    def _on_member_frame(self, peer: str, msg: Message) -> None:
        """Hand a frame of a live member to the part it concerns."""
        self._frames.route(peer, msg)

    def _record_hash(self, peer: str, index: int, digest: bytes) -> None:
        view = self._members.view
        authority = self._hashes.record(peer, index, digest, view, self._log.member_from)
        if authority is not None and not self._log.holding:
            self._transfer.start_resync(authority, view)

    # --- private: timers and the order of the parts ------------------------------------------

    def _stabilize(self) -> None:
        if self.phase is not Phase.MEMBER or self._log.stable_count is None:
            return
        limit = self._agreement.stability_limit()
        self._log.stabilize(self.peer_id, self._members.view, limit, self._transfer.push)

    def _violation(self, peer: str, field: str, reason: str, *, poison: bool = True) -> None:
        inc = self._members.view.get(peer)
        if inc is not None and poison:
            self._guard.poison(peer, inc)
        self._out.emit(ProtocolViolated(peer, field, reason))

    def _begin(self, now: float) -> None:
        # Events raised outside receive/tick (e.g. by submit) wait here for the next call.
        self._out.now = max(self._out.now, now)

    def _after_input(self) -> None:
        """Run the parts in their fixed order after each input."""
        if self.phase is not Phase.MEMBER:
            return
        members = self._members
        self._agreement.reconsider()
        self._stabilize()
        self._proofs.answer_mismatches(members.view)
        self._digests.prune(self._log.base(), lambda: list(members.view))
        self._log.flush_batch()
        self._transfer.serve_requests(members.view)
        self._transfer.try_install(members.view)
        if self.config.ack_delay <= 0 and self._liveness.ack_pending():
            self._liveness.send_beats(self._out.now, members.dests())

    def _end(self) -> list[Event]:
        self._log.flush_batch()
        return self._out.drain_events()

    def _state_name(self) -> str:
        return "resynchronising" if self._log.holding else self.phase.value


@dataclass(frozen=True)
class _AgreementHost:
    """What the view agreement may ask of its core (`AgreementHost`), kept off the public API."""

    expel: Callable[[int], None]
    is_member: Callable[[], bool]
    caps: Callable[[Mapping[str, int]], dict[str, int]]


def _checked_others(
    peer_id: str,
    members: Iterable[str],
    incarnation: int,
    identity: Identity | None,
    limits: Limits,
    *,
    join: bool,
) -> list[str]:
    """The members other than `peer_id`, sorted; refuses what no core may start with (a
    `LocalProtocolError`): a bad peer id, an identity whose key `peer_id` is not the id of, a
    negative incarnation, a founder's incarnation > 0."""
    _check_peer_id(peer_id, limits)
    if identity is not None and not owns(peer_id, identity.key.public_bytes):
        raise LocalProtocolError(f"peer id {peer_id!r} is not the id of the identity's key")
    if incarnation < 0:
        raise LocalProtocolError("incarnation must be >= 0")
    others = sorted(set(members) - {peer_id})
    for peer in others:
        _check_peer_id(peer, limits)
    if not join and incarnation != 0:
        raise LocalProtocolError("founders start at incarnation 0; join to return")
    return others


def _check_peer_id(peer: object, limits: Limits) -> None:
    if not isinstance(peer, str) or not 1 <= len(peer) <= limits.max_peer_id_len:
        raise LocalProtocolError(f"bad peer id {peer!r}")
