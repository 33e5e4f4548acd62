"""Agreement on the next view: ballot-numbered votes of the current view's members, decided by
a quorum of them. Private to `net._order.core`; see "Membership (views)" in docs/protocol.md.

Each epoch is one instance of single-decree Paxos whose voters are the view's members and whose
value is the next view change (`Change`). A member with grounds (a silent member, a leave, a
join request) freezes and prepares a ballot; a member that promises a ballot freezes too. A
frozen member's clock and ``seen`` are fixed for the epoch: every other member counts its frames
only up to them for stability until the epoch is decided, so no entry can become stable beyond
what a quorum's promises bound, and the decided cuts and marker keep every stable entry in
place. Once any member froze, the epoch ends only with a decision, maybe one that changes
nothing; a member without a quorum waits (its table is paused) and never decides alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import NamedTuple, Protocol

from net._order.certify import (
    certify,
    check_view_told,
    keep_own_vote,
    reasons_with_proofs,
    send_vote,
    take_vote,
)
from net._order.grounds import note_grounds, observe
from net._order.liveness import Liveness
from net._order.log import OrderedLog
from net._order.membership import Membership
from net._order.messages import Accept, Accepted, Prepare, Promise, ViewDecision
from net._order.outbox import Outbox
from net._order.viewchange import (
    NO_BALLOT,
    Acceptor,
    Ballot,
    Certified,
    Change,
    Proposal,
    VoteRecord,
    check_change,
    check_decision,
    check_promise,
    check_relayed,
    choose_change,
    hands_on,
    highest_accepted,
    is_quorum,
    kept_can_redecide,
    leavers_in,
    misses_relayed_entries,
    promise_relay,
)
from net._order.wirefields import REASON_EXCLUDED, REASON_LEFT, Removal
from net.errors import RemoteProtocolError
from net.events import LogEntry

__all__ = ["MAX_KEPT_FRAMES", "AgreementHost", "Timeouts", "ViewAgreement"]

MAX_KEPT_FRAMES = 10_000
"""Frames kept aside per peer (before a joiner's welcome)."""

MAX_BACKOFF = 8
"""A ballot that fails is tried again after the retry interval, doubled up to this factor."""


class AgreementHost(Protocol):
    """What the agreement asks of the core that coordinates it."""

    def expel(self, epoch: int) -> None:
        """This core was removed from the group (or gives up its membership)."""

    def is_member(self) -> bool:
        """True while this core is a member (not expelled nor left)."""

    def caps(self, view: Mapping[str, int]) -> dict[str, int]:
        """The highest cut of each member of `view` we hold a proof of equivocation against."""


class Timeouts(NamedTuple):
    """The silences after which a member is suspected and, on grounds, excluded; `retry` is how
    long a ballot may go without progress before a member tries a higher one."""

    suspect: float
    exclude: float
    retry: float


class ViewAgreement:
    """This epoch's ballots: our vote (`Acceptor`), our own ballot (`Proposal`), the grounds we
    gathered, and the decision, which `Membership` applies."""

    def __init__(
        self,
        outbox: Outbox,
        log: OrderedLog,
        liveness: Liveness,
        members: Membership,
        host: AgreementHost,
        timeouts: Timeouts,
    ) -> None:
        self._out = outbox
        self._log = log
        self._liveness = liveness
        self._members = members
        self._host = host
        self._timeouts = timeouts
        self._voter: Acceptor | None = None
        self._removed_record: VoteRecord | None = None  # our vote in the change removing us
        self._proposal: Proposal | None = None
        # Grounds gathered this epoch: removals that need no confirmation (leaves) and join
        # requests; the members frozen so far (their promise); violators (from the guard).
        self._reasons: dict[str, str] = {}
        self._leave_proofs: dict[str, bytes] = {}  # each leaver's signed notice (signed table)
        self._joiners: dict[str, int] = {}
        self._frozen_peers: dict[str, Promise] = {}
        self._violators: set[tuple[str, int]] = set()
        # Members we observe silent that a decided change did not remove: our links to them
        # may be the bad ones (since when).
        self._unbacked: dict[str, float] = {}
        # When we may try again for each of them: the others may be about to observe it too.
        self._retry_unbacked: dict[str, float] = {}

    # --- queries ------------------------------------------------------------------------------

    def survivors(self) -> list[str]:
        """The other members: those whose silence we watch."""
        me = self._out.peer_id
        return [p for p in sorted(self._members.view) if p != me]

    def stability_limit(self) -> int | None:
        """Nothing past this timestamp may become stable here (we froze for a view change)."""
        return self._voter.clock if self._voter is not None else None

    @property
    def paused(self) -> bool:
        """True while a view change waits for a quorum for longer than the retry interval."""
        voter = self._voter
        return voter is not None and self._out.now - voter.since >= self._timeouts.retry

    def vote_record(self) -> VoteRecord:
        """Our vote in this epoch's change, for a successor incarnation to continue."""
        if self._removed_record is not None:
            return self._removed_record
        return _record(self._members.epoch, self._voter, self._members.view)

    def timers(self) -> list[float]:
        times = []
        if self._voter is not None and self._log.stable_count is not None:
            times.append(self._retry_due())  # (a joiner without its snapshot tries no ballot)
        proposal = self._proposal
        if proposal is not None and proposal.value is None and self._gathered_by() > self._out.now:
            times.append(self._gathered_by())
        if self._out.peer_id not in self._reasons:
            times += [since + self._timeouts.exclude for since in self._unbacked.values()]
            times += [t for t in self._retry_unbacked.values() if t > self._out.now]
        return times

    # --- inputs -------------------------------------------------------------------------------

    def note_violators(self, violators: set[tuple[str, int]]) -> None:
        self._violators = violators

    def violators_noted(self) -> set[tuple[str, int]]:
        return self._violators

    def on_leave(self, peer: str, proof: bytes | None) -> None:
        self._reasons[peer] = REASON_LEFT
        self._leave_proofs.update({peer: proof} if proof is not None else {})

    def on_join_request(self, peer: str, inc: int) -> None:
        if not self._host.is_member() or peer == self._out.peer_id:
            return
        current = self._members.view.get(peer)
        if current is not None and current >= inc:
            return
        if self._members.was_removed(peer, inc):
            self._members.maybe_tell_expelled(peer, inc)
            return
        if self._joiners.get(peer, -1) < inc:
            self._joiners[peer] = inc

    def on_prepare(self, peer: str, msg: Prepare) -> None:
        if msg.epoch != self._members.epoch:
            return
        ballot = Ballot(msg.ballot, peer)
        voter, fresh = self._freeze()
        if ballot > voter.promised:
            voter.promised = ballot
            voter.progress = self._out.now
            if self._proposal is not None and self._proposal.ballot < ballot:
                self._proposal = None  # outbid: vote for the higher ballot instead
        self._send_promise(peer, fresh)

    def on_promise(self, peer: str, msg: Promise) -> None:
        if msg.epoch != self._members.epoch:
            return
        check_promise(msg, self._members.view)
        if peer not in self._frozen_peers and msg.incarnation == self._members.view.get(peer):
            # Its frames count for stability only up to what it froze, until the decision.
            self._log.freeze_member(peer, msg.clock, msg.frozen, self._members.view)
            self._frozen_peers[peer] = msg
            self._pass_on_observations(peer, msg)
        grounds = (self._reasons, self._leave_proofs, self._joiners)
        note_grounds(msg, self._out.peer_id, self._members.view, *grounds)
        proposal = self._proposal
        adopted = msg.value_removals if highest_accepted(proposal, msg) else {}
        _take_entries(self._log, msg.entries, adopted)
        if proposal is None or proposal.value is not None:
            return
        if Ballot(msg.ballot, msg.proposer) == proposal.ballot:
            if msg.incarnation != self._members.view.get(peer) and peer in proposal.promises:
                return  # the slot already voted, through its predecessor
            proposal.promises[peer] = msg
            self._try_phase_two()
        elif Ballot(msg.ballot, msg.proposer) > proposal.ballot:
            self._proposal = None  # outbid

    def _pass_on_observations(self, peer: str, msg: Promise) -> None:
        """The proposer we promised may choose its change before it hears `peer` (a link of its
        may be down): tell it what `peer` observes (our promise again, its `heard` grown)."""
        voter = self._voter
        if voter is None or voter.value is not None or not msg.observed:
            return
        proposer = voter.promised.proposer
        if proposer not in (peer, self._out.peer_id) and proposer in self._members.view:
            self._out.send(proposer, self._promise_message(proposer))

    def on_accept(self, peer: str, msg: Accept) -> None:
        if msg.epoch != self._members.epoch:
            return
        ballot = Ballot(msg.ballot, peer)
        change = Change(msg.marker, dict(msg.removals), dict(msg.additions))
        check_change(change, self._members.view, msg.ts)
        check_relayed(msg.entries, msg.removals, "accept.entries")
        voter, fresh = self._freeze()
        if ballot < voter.promised:
            if fresh:
                self._send_promise(None, fresh)
            return
        voter.promised = voter.accepted = ballot
        voter.value = change
        voter.progress = self._out.now
        if fresh:
            self._send_promise(None, fresh)
        self._log.adopt(msg.entries)  # the versions of the change we accept
        send_vote(self._out, peer, msg.epoch, ballot, change)

    def on_accepted(self, peer: str, msg: Accepted) -> None:
        proposal = self._proposal
        if msg.epoch != self._members.epoch or proposal is None or proposal.value is None:
            return
        if Ballot(msg.ballot, msg.proposer) != proposal.ballot:
            return
        take_vote(self._out, proposal, self._members.view, peer, msg)
        proposal.accepted_by.add(peer)
        self._check_accepted()

    def on_decision(self, peer: str, msg: ViewDecision) -> None:
        if msg.epoch <= self._members.epoch:
            return
        if msg.epoch != self._members.epoch + 1:
            raise RemoteProtocolError(
                "decide.epoch", f"skips from {self._members.epoch} to {msg.epoch}"
            )
        if msg.marker > msg.ts:
            raise RemoteProtocolError("decide.marker", "ahead of the frame's timestamp")
        mine = msg.removals.get(self._out.peer_id)
        if mine is not None and mine.incarnation == self._out.incarnation:
            self._host.expel(msg.epoch)
            return
        check_decision(msg, self._members.view)
        check_view_told(self._out, msg, self._members.view)
        if misses_relayed_entries(
            self._log, self._members.view, self._out.peer_id, peer, msg.removals
        ):
            return  # the same decision comes from the others, with what we lack
        check_relayed(msg.entries, msg.removals, "decide.entries")
        self._log.adopt(msg.entries)  # the sender applied it: its versions are the decided ones
        change = Change(msg.marker, dict(msg.removals), dict(msg.additions))
        certified = Certified(msg.ballot, msg.proposer, dict(msg.certificate))
        self._decide_change(change, self._frozen_peers, {}, certified)

    def proposal_unseen(self, peer: str) -> None:
        """A member newly welcomed us (we are a joiner): it has not seen our vote."""
        if self._voter is not None:
            self._out.send(peer, self._promise_message(peer))

    # --- our ballots --------------------------------------------------------------------------

    def reconsider(self) -> None:
        """Freeze and prepare a ballot when we have grounds for a change and none is under way."""
        if not self._host.is_member() or self._voter is not None:
            return
        if self._log.stable_count is None:
            return  # a joiner without its snapshot proposes nothing (it votes, though)
        mine = self._observed()
        for target in [t for t in self._unbacked if t not in mine]:
            del self._unbacked[target]
            self._retry_unbacked.pop(target, None)
        now = self._out.now
        grounds = {t for t in mine if self._retry_unbacked.get(t, now) <= now}
        view = self._members.view
        if any(t in view for t in self._reasons):
            grounds.add("reasons")
        if self._joiners:
            grounds.add("joiners")
        if grounds:
            self._prepare(0)

    def check_timers(self, now: float) -> None:
        """Try a higher ballot when ours (or the one we promised) made no progress in time, and
        volunteer our own removal when our grounds against a member the others hear stayed
        unbacked for the exclusion timeout: our own links are then the bad ones. (A decision
        removes us, never a member's own exit: two members leaving at once could take the
        quorum with them.)"""
        if not self._host.is_member():
            return
        me = self._out.peer_id
        if any(now - since >= self._timeouts.exclude for since in self._unbacked.values()):
            self._reasons[me] = REASON_EXCLUDED
        proposal = self._proposal
        if proposal is not None and proposal.value is None and now >= self._gathered_by():
            self._try_phase_two()
        if self._voter is not None and now >= self._retry_due():
            if self._log.stable_count is None:
                return  # a joiner without its snapshot proposes nothing
            attempt = self._proposal.attempt + 1 if self._proposal is not None else 0
            self._prepare(attempt)

    def _gathered_by(self) -> float:
        """Until when a proposal whose own grounds are not backed waits for more observations."""
        assert self._proposal is not None
        return self._proposal.started + self._timeouts.retry / 4

    def _retry_due(self) -> float:
        assert self._voter is not None
        view, me = self._members.view, self._out.peer_id
        return _retry_due(self._voter, self._proposal, view, me, self._timeouts.retry)

    def _prepare(self, attempt: int) -> None:
        voter, fresh = self._freeze()
        number = max(voter.promised.number, self._proposal.ballot.number if self._proposal else 0)
        ballot = Ballot(number + 1, self._out.peer_id)
        voter.promised = ballot
        voter.progress = self._out.now
        self._proposal = Proposal(ballot, self._out.now, attempt)
        self._proposal.promises[self._out.peer_id] = self._promise_message(self._out.peer_id)
        if fresh:
            self._send_promise(None, fresh)
        out = self._out
        epoch = self._members.epoch
        prepare = Prepare(out.tick_clock(), out.incarnation, out.seen(), epoch, ballot.number)
        out.broadcast(prepare, self._members.dests())
        self._try_phase_two()

    def _try_phase_two(self) -> None:
        proposal = self._proposal
        assert proposal is not None
        view = self._members.view
        promises = proposal.promises
        if not is_quorum(view, promises, leavers_in(promises.values())):
            return
        # What the voters heard the others observe, then what we heard ourselves.
        heard = {peer: seen for m in promises.values() for peer, seen in m.heard.items()}
        heard.update({p: m.observed for p, m in self._frozen_peers.items()})
        change = choose_change(view, promises, heard, self._log.join_markers(promises))
        if not hands_on(change, promises, self._log.join_markers(promises)):
            return  # wait for a voter holding what it keeps, or for its decision
        mine = promises[self._out.peer_id].observed
        if any(t not in change.removals for t in mine) and self._out.now < self._gathered_by():
            return  # our grounds are not backed yet: the voters may pass on more observations
        proposal.value = change
        voter = self._voter
        assert voter is not None
        voter.accepted = proposal.ballot
        voter.value = change
        out = self._out
        dests = self._members.dests()
        _send_accepts(out, self._log, dests, self._members.epoch, proposal, change)
        proposal.accepted_by.add(out.peer_id)
        keep_own_vote(out, self._members.epoch, proposal)
        self._check_accepted()

    def _check_accepted(self) -> None:
        """Decide once a quorum accepted our ballot's change."""
        proposal = self._proposal
        assert proposal is not None and proposal.value is not None
        certified = certify(self._out, proposal, self._members.epoch, self._members.view)
        if certified is None:
            return  # no quorum yet (at a signed table: of signed votes for exactly this)
        view, markers = self._members.view, self._log.join_markers
        if not kept_can_redecide(proposal, view, self._frozen_peers, markers):
            return  # were our decision lost, the members kept could not redo it: wait
        mine = proposal.promises[self._out.peer_id].observed
        self._decide_change(proposal.value, proposal.promises, mine, certified)

    def successors(self) -> dict[str, int]:
        """The newer incarnations that asked to join in place of a member of the view (each
        votes for its predecessor's slot)."""
        view = self._members.view
        return {p: i for p, i in self._joiners.items() if p in view and view[p] < i}

    # --- votes ----------------------------------------------------------------------------------

    def _freeze(self) -> tuple[Acceptor, bool]:
        """Join this epoch's view change: fix our clock and ``seen`` for it. True with it when
        we just froze (the caller then tells everyone, with `_send_promise`)."""
        if self._voter is not None:
            return self._voter, False
        out = self._out
        self._voter = Acceptor(out.clock, dict(out.seen()), out.now, progress=out.now)
        self._log.freeze_self(self._voter.frozen, self._members.view)
        return self._voter, True

    def _send_promise(self, to: str | None, everyone: bool) -> None:
        """Send our vote: to the proposer of the ballot we promised (with the entries it may
        lack) and, when we just froze, to every other member (they cap our frames by it)."""
        voter = self._voter
        assert voter is not None
        dests = set(self._members.dests()) if everyone else set()
        proposer = voter.promised.proposer
        if to is not None:
            dests.add(to)
        out = self._out
        for dest in sorted(dests):
            if dest == out.peer_id or dest not in self._members.view:
                continue
            out.send(dest, self._promise_message(dest, relay=dest == proposer))

    def _promise_message(self, dest: str, relay: bool = False) -> Promise:
        voter = self._voter
        assert voter is not None
        out, view = self._out, self._members.view
        reasons = reasons_with_proofs(self._reasons, self._leave_proofs, view)
        entries: tuple[LogEntry, ...] = ()
        if relay:
            others = {
                p: ts for p, (inc, ts) in voter.frozen.items() if view.get(p) == inc and p != dest
            }
            entries = promise_relay(self._log, dest, others, voter.value)
        ts = out.tick_clock() if dest != out.peer_id else out.clock
        grounds = (self._observed(), reasons, dict(self._joiners))
        holds_state = self._log.stable_count is not None
        promise = _promise(out, ts, self._members.epoch, voter, grounds, entries, holds_state)
        heard = {p: dict(m.observed) for p, m in sorted(self._frozen_peers.items()) if m.observed}
        caps = self._host.caps(view)
        return replace(promise, heard=heard, caps=caps) if heard or caps else promise

    def _observed(self) -> dict[str, int]:
        view, me = self._members.view, self._out.peer_id
        last_heard, now = self._liveness.last_heard, self._out.now
        return observe(view, me, last_heard, now, self._timeouts.exclude, self._violators)

    # --- the decision ---------------------------------------------------------------------------

    def _decide_change(
        self, change: Change, promises: Mapping[str, Promise], mine: Mapping[str, int],
        certified: Certified,
    ) -> None:  # fmt: skip
        """Have membership apply a decided change (and tell everyone, with the `certified`
        votes it rests on). `mine` holds what we observed silent in our own promise, when the
        decision is our ballot's: a member left in the view despite it is unbacked."""
        view = self._members.view
        members = change.members(view)
        removals, additions = dict(change.removals), dict(change.additions)
        relays = _relays(self._log, promises, self._out.peer_id, members, removals, additions)
        if self._out.peer_id in removals:  # our successor votes on in this epoch: see `_record`
            self._removed_record = self.vote_record()
        self._voter = None
        self._proposal = None
        self._reasons = {}
        self._leave_proofs = {}
        self._joiners = {p: i for p, i in self._joiners.items() if members.get(p, -1) < i}
        self._frozen_peers = {}
        self._log.thaw_members()
        epoch = self._members.epoch + 1
        self._members.apply_decision(epoch, change, members, relays, certified)
        if self._out.peer_id in removals:
            self._host.expel(epoch)  # we volunteered: rejoin through the others
            return
        now = self._out.now
        for target, inc in mine.items():
            if members.get(target) == inc:
                self._unbacked.setdefault(target, now)
                self._retry_unbacked[target] = now + self._timeouts.retry


def _take_entries(
    log: OrderedLog, entries: tuple[LogEntry, ...], adopted: Mapping[str, object]
) -> None:
    """Take a promise's entries: those of a member the change we accepted removes (`adopted`)
    are the versions that change carries, and replace ours; the others are merely new to us."""
    for entry in entries:
        if entry.peer in adopted:
            log.adopt((entry,))
        else:
            log.on_entry(entry)


def _record(epoch: int, voter: Acceptor | None, view: Mapping[str, int]) -> VoteRecord:
    """Our vote in `epoch`'s change. A member that decides its own removal keeps its vote of that
    epoch, not the next (it is no voter there): the others may not hear of the decision from
    it, and its successor must vote on in that epoch (stalls seed 30076)."""
    if voter is None:
        return VoteRecord(epoch, NO_BALLOT, NO_BALLOT, None, dict(view))
    return VoteRecord(epoch, voter.promised, voter.accepted, voter.value, dict(view))


def _retry_due(
    voter: Acceptor, proposal: Proposal | None, view: Mapping[str, int], me: str, retry: float
) -> float:
    """When we try a higher ballot: our own after a backoff, else the one we promised."""
    if proposal is not None:
        factor: int = min(2 ** min(proposal.attempt, 3), MAX_BACKOFF)
        return proposal.started + retry * factor
    # Voters take over a stalled ballot one after another, by rank, so they rarely duel.
    ranked = sorted(view)
    rank = ranked.index(me) if me in ranked else 0
    return max(voter.progress, voter.since) + retry * (1 + rank / max(1, len(ranked)))


def _send_accepts(
    out: Outbox, log: OrderedLog, dests: list[str], epoch: int, proposal: Proposal, change: Change
) -> None:
    """Phase 2 of our ballot: its change to every member, with the entries of removed members
    up to their cut that each may lack (above what its promise froze or it reported)."""
    cuts = {t: r.ts for t, r in change.removals.items()}
    for dest in dests:
        held = proposal.promises.get(dest)
        bounds = {
            t: max(held.frozen.get(t, (0, 0))[1] if held else 0, log.reported(dest, t))
            for t in cuts
        }
        entries = log.relay_for(dest, cuts, bounds, versions=True)
        accept = Accept(
            out.tick_clock(), out.incarnation, out.seen(), epoch, proposal.ballot.number,
            change.marker, dict(change.removals), dict(change.additions), entries,
        )  # fmt: skip
        out.send(dest, accept)


def _promise(
    out: Outbox,
    ts: int,
    epoch: int,
    voter: Acceptor,
    grounds: tuple[dict[str, int], dict[str, Removal], dict[str, int]],
    entries: tuple[LogEntry, ...],
    holds_state: bool,
) -> Promise:
    """Our promise frame: our vote (`voter`), our grounds (observed, reasons, joiners)."""
    value = voter.value or Change(0, {}, {})
    observed, reasons, joiners = grounds
    return Promise(
        ts, out.incarnation, out.seen(), epoch, voter.promised.number,
        voter.promised.proposer or out.peer_id, voter.clock, dict(voter.frozen), observed,
        reasons, joiners, voter.accepted.number, voter.accepted.proposer, value.marker,
        dict(value.removals), dict(value.additions), entries, holds_state,
    )  # fmt: skip


def _relays(
    log: OrderedLog,
    promises: Mapping[str, Promise],
    me: str,
    members: Mapping[str, int],
    removals: Mapping[str, Removal],
    additions: Mapping[str, int],
) -> dict[str, tuple[LogEntry, ...]]:
    """For each survivor, the entries of removed members up to their cut it may lack."""
    held: dict[str, dict[str, int]] = {}
    for sender, promise in promises.items():
        held[sender] = {t: promise.frozen[t][1] for t in removals if t in promise.frozen}
    cuts = {t: r.ts for t, r in removals.items()}
    return {
        dest: log.relay_for(
            dest,
            cuts,
            {t: max(held.get(dest, {}).get(t, 0), log.reported(dest, t)) for t in removals},
            versions=True,
        )
        for dest in members
        if dest != me and dest not in additions
    }
