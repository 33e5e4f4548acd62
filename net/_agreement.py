"""Agreement on the next view: our view change, the members' proposals, votes, withdrawals,
the quorum and the decision. Private to `net.core`; see "Membership (views)" in
docs/protocol.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple, Protocol

from net._grounds import Grounds, observe
from net._liveness import Liveness
from net._log import OrderedLog
from net._membership import Membership
from net._outbox import Outbox
from net._viewchange import ChangeSignature, SentProposal, ViewChange, Vote, Withdrawal
from net.errors import RemoteProtocolError
from net.events import LogEntry
from net.messages import (
    REASON_EXCLUDED,
    REASON_LEFT,
    Expulsion,
    Message,
    Removal,
    ViewDecision,
    ViewProposal,
)

__all__ = ["MAX_KEPT_FRAMES", "AgreementHost", "Timeouts", "ViewAgreement"]

MAX_KEPT_FRAMES = 10_000
"""Frames kept aside per peer (of a member being removed, or before a joiner's welcome)."""


class AgreementHost(Protocol):
    """What the agreement asks of the core that coordinates it."""

    def replay(self, peer: str, msg: Message) -> None:
        """Process a frame kept aside (a violation in it is reported, not raised)."""

    def expel(self, epoch: int) -> None:
        """This core was removed from the group."""

    def is_member(self) -> bool:
        """True while this core is a member (not expelled nor left)."""

    def poison(self, peer: str, inc: int) -> None:
        """Ignore incarnation `inc` of `peer` from now on (it broke the protocol)."""


class Timeouts(NamedTuple):
    """The silences after which a member is suspected and, on grounds, excluded."""

    suspect: float
    exclude: float


class ViewAgreement:
    """Our view change in progress and what the members proposed for the next view.

    It freezes the members we have grounds to remove, proposes, decides once every member
    that stays sent the same sets with a quorum, and has `Membership` apply the decision."""

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
        self._change: ViewChange | None = None  # our view change in progress, if any
        # This epoch: each member's latest proposal, removals that need no confirmation (a
        # leave, a violation, a replaced incarnation), and after a withdrawn view change the
        # stability limit kept until every member acknowledged the withdrawal.
        self._proposals: dict[str, ViewProposal] = {}
        self._unconfirmed: dict[str, str] = {}
        self._withdrawal: Withdrawal | None = None
        # The content of each set we proposed this epoch: proposing a set again while an old
        # proposal of it may still count somewhere must repeat it exactly, or two members could
        # decide the same sets with different cuts.
        self._votes: dict[ChangeSignature, Vote] = {}
        self._withdrawals = 0
        # Violators count as grounds for removal from the next tick on.
        self._violators: set[tuple[str, int]] = set()

    # --- queries ------------------------------------------------------------------------------

    def removing(self, peer: str) -> bool:
        """Whether we are removing (have frozen) `peer`."""
        return self._change is not None and peer in self._change.removals

    def survivors(self) -> list[str]:
        """Members that stay in the view being changed (welcomed by us or not): the members
        whose silence we watch."""
        removing = self._change.removals if self._change else {}
        me = self._out.peer_id
        return [p for p in sorted(self._members.view) if p != me and p not in removing]

    def stability_limit(self) -> int | None:
        """Nothing past this timestamp may become stable (a view change is under way)."""
        limits = [self._change.clock] if self._change is not None else []
        if self._withdrawal is not None:
            limits.append(self._withdrawal.limit)
        return min(limits) if limits else None

    def timers(self) -> list[float]:
        """When waiting for a quorum or for backing next needs a tick."""
        vc, exclude = self._change, self._timeouts.exclude
        times = []
        if vc is not None and vc.no_quorum_since is not None:
            times.append(vc.no_quorum_since + exclude)
        if vc is not None and vc.unbacked_since is not None:
            times.append(vc.unbacked_since + exclude)
        return times

    # --- inputs -------------------------------------------------------------------------------

    def note_violators(self, violators: set[tuple[str, int]]) -> None:
        self._violators = violators

    def on_leave(self, peer: str) -> None:
        self._unconfirmed[peer] = REASON_LEFT

    def on_join_request(self, peer: str, inc: int) -> None:
        if not self._host.is_member() or peer == self._out.peer_id:
            return
        current = self._members.view.get(peer)
        if current is not None and current >= inc:
            return
        if self._members.was_removed(peer, inc):
            self._members.maybe_tell_expelled(peer, inc)
            return
        vc = self._enter_view_change()
        if vc.additions.get(peer, -1) >= inc:
            return
        vc.additions[peer] = inc
        if current is not None:
            self._unconfirmed[peer] = REASON_EXCLUDED  # replaced by its new incarnation

    def keep_frozen(self, peer: str, msg: Message) -> bool:
        """Keep the frames of a member we are removing, in order, in case the removal is
        withdrawn; they also tell us it is alive. True when `msg` was kept (or dropped)."""
        vc = self._change
        if vc is None or not self._host.is_member():
            return False
        frozen = vc.removals.get(peer)
        if frozen is None or frozen.incarnation != msg.incarnation:
            return False
        if isinstance(msg, Expulsion):
            if msg.target == self._out.incarnation:
                self._host.expel(msg.epoch)
            return True
        if isinstance(msg, ViewDecision) and msg.epoch == self._members.epoch + 1:
            self._release(peer)  # a decision taken without us: catch up with its sender
            return False
        self._liveness.heard(peer, self._out.now)
        if isinstance(msg, ViewProposal):
            # Its grounds may change ours (and it cannot be kept waiting behind our freeze):
            # take them in now. A proposal changes nothing else of its sender's stream.
            self.on_proposal(peer, msg)
            return True
        held = vc.held.setdefault(peer, [])
        if len(held) >= MAX_KEPT_FRAMES:
            self._host.poison(peer, msg.incarnation)
            return True
        held.append(msg)
        return True

    def on_proposal(self, peer: str, msg: ViewProposal) -> None:
        if msg.epoch != self._members.epoch:
            return  # stale, or ahead of a decision that is on its way to us
        _check_proposal(msg, self._members.view)
        for target, removal in sorted(msg.removals.items()):
            if removal.reason == REASON_LEFT and target != self._out.peer_id:
                self._unconfirmed[target] = REASON_LEFT
        if msg.additions:
            vc = self._enter_view_change()
            for target, inc in sorted(msg.additions.items()):
                if vc.additions.get(target, -1) < inc:
                    vc.additions[target] = inc
                if target in self._members.view:
                    self._unconfirmed[target] = REASON_EXCLUDED
        for entry in msg.entries:
            self._log.on_entry(entry)
        self._proposals[peer] = msg

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
        _check_decision(msg, self._members.view)
        if _misses_relayed_entries(
            self._log, self._members.view, self._out.peer_id, peer, msg.removals
        ):
            return  # the same decision comes from the others, with what we lack
        _check_relayed(msg.entries, msg.removals, "decide.entries")
        for entry in msg.entries:
            self._log.on_entry(entry)
        self._decide(
            msg.epoch, msg.marker, dict(msg.members), dict(msg.removals), dict(msg.additions)
        )

    def proposal_unseen(self) -> None:
        """A newly welcomed member has not seen our proposal: send it again."""
        if self._change is not None:
            self._change.sent = None

    # --- our view change ----------------------------------------------------------------------

    def reconsider(self) -> None:
        """Bring our view change in line with our grounds: freeze the members we have reason
        to remove, release those we no longer have reason to, withdraw a change left empty."""
        for _ in range(8):
            if not self._host.is_member() or not self._reconsider_once():
                return

    def check_settled(self) -> None:
        """Forget a withdrawal once every member acknowledged it."""
        if self._withdrawal is None:
            return
        for peer, ts in self._withdrawal.acks.items():
            if peer in self._members.view and self._log.reported(peer, self._out.peer_id) < ts:
                return
        self._withdrawal = None
        # Everyone has our withdrawal: what we proposed before it can no longer be decided.
        self._votes = {k: v for k, v in self._votes.items() if v.withdrawals >= self._withdrawals}

    def check_quorum_wait(self, now: float) -> None:
        """A minority that could not decide for ``exclude_timeout`` leaves the group: the
        application starts a new incarnation that joins whoever holds the quorum, once it can
        reach them, and catches up from their stable state."""
        vc = self._change
        if vc is None or not self._host.is_member():
            return
        timeout = self._timeouts.exclude
        if vc.no_quorum_since is not None and now - vc.no_quorum_since >= timeout:
            self._host.expel(self._members.epoch)
        elif vc.unbacked_since is not None and now - vc.unbacked_since >= timeout:
            # Nobody else backs our grounds to remove a member that they hear: our own links
            # are the bad ones, so we are the one to leave (and rejoin through the others).
            self._host.expel(self._members.epoch)

    def _release(self, peer: str) -> None:
        """Stop removing `peer`: accept its frames again, starting with those kept."""
        vc = self._change
        assert vc is not None
        del vc.removals[peer]
        for msg in vc.held.pop(peer, []):
            if not self._host.is_member():
                return
            self._host.replay(peer, msg)

    def _enter_view_change(self) -> ViewChange:
        if self._change is None:
            self._change = ViewChange(self._members.epoch, self._out.clock)
        return self._change

    def _freeze(self, peer: str, reason: str) -> None:
        """Stop accepting frames from `peer` and propose to remove it with our frontier."""
        vc = self._enter_view_change()
        if peer not in self._members.view or peer == self._out.peer_id:
            return
        current = vc.removals.get(peer)
        if current is not None:
            if reason == REASON_LEFT and current.reason != REASON_LEFT:
                vc.removals[peer] = Removal(current.incarnation, current.ts, reason)
            return
        inc = self._members.view[peer]
        vc.removals[peer] = Removal(inc, self._log.frontier(peer), reason)

    def _reconsider_once(self) -> bool:
        vc = self._change
        # Our own grounds: the members we heard nothing from for the exclusion timeout.
        view, me = self._members.view, self._out.peer_id
        mine = observe(view, me, self._silence, self._timeouts.exclude, self._violators)
        if (
            vc is None
            and not mine
            and not self._unconfirmed
            and not any(p.removals or p.observed for p in self._proposals.values())
        ):
            return False
        desired = self._grounds(mine).desired_removals()
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
        # Note since when some member we observe silent is in nobody else's proposal.
        if not self._grounds(mine).unbacked(vc.removals):
            vc.unbacked_since = None
        elif vc.unbacked_since is None:
            vc.unbacked_since = self._out.now
        if self._change is vc:
            self._propose(mine)
        return changed

    def _grounds(self, mine: Mapping[str, int]) -> Grounds:
        return Grounds(
            self._out.peer_id,
            self._members.view,
            mine,
            self._proposals,
            self._unconfirmed,
            self._silence,
            self._timeouts.suspect,
        )

    def _silence(self, peer: str) -> float:
        return self._liveness.silence(peer, self._out.now)

    def _abandon(self) -> None:
        """Drop a view change that lost its grounds: tell everyone, and stabilise nothing past
        its clock until each member acknowledged (someone may have decided it already)."""
        vc = self._change
        assert vc is not None
        for peer in sorted(vc.removals):
            self._release(peer)
        if self._change is not vc:
            return  # a kept frame carried a decision
        self._change = None
        limit = vc.clock if self._withdrawal is None else min(vc.clock, self._withdrawal.limit)
        acks: dict[str, int] = {}
        out = self._out
        for dest in self._members.dests():
            ts = out.tick_clock()
            acks[dest] = ts
            withdrawn = ViewProposal(
                ts, out.incarnation, out.seen(), self._members.epoch, vc.clock, {}, {}, ()
            )
            out.send(dest, withdrawn)
        self._withdrawal = Withdrawal(limit, acks)
        self._withdrawals += 1

    def _propose(self, observed: Mapping[str, int]) -> None:
        """Send our proposal if it changed, then decide if everyone agrees."""
        vc = self._change
        assert vc is not None
        sent = SentProposal(vc.signature(), tuple(sorted(observed.items())))
        if sent != vc.sent:
            vc.sent = sent
            key = vc.signature()
            vote = self._votes.get(key)
            if vote is not None:
                vc.clock = min(vc.clock, vote.clock)
                vc.removals = {t: vote.removals.get(t, r) for t, r in vc.removals.items()}
            self._votes[key] = Vote(self._withdrawals, vc.clock, dict(vc.removals))
            out = self._out
            for dest in [p for p in self._members.dests() if p not in vc.removals]:
                ts = out.tick_clock()
                proposal = ViewProposal(
                    ts,
                    out.incarnation,
                    out.seen(),
                    vc.epoch,
                    vc.clock,
                    dict(vc.removals),
                    dict(vc.additions),
                    self._log.relay_for(dest, {p: None for p in vc.removals}),
                    dict(observed),
                )
                out.send(dest, proposal)
        self._try_decide()

    def _try_decide(self) -> None:
        vc = self._change
        if vc is None:
            return
        signature = vc.signature()
        proposals = []
        for peer in self.survivors():
            proposal = self._proposals.get(peer)
            if proposal is None or signature != ChangeSignature.of(
                proposal.removals, proposal.additions
            ):
                return
            proposals.append(proposal)
        removals: dict[str, Removal] = {}
        for target, mine in vc.removals.items():
            cut = max([mine.ts] + [p.removals[target].ts for p in proposals])
            left = mine.reason == REASON_LEFT or any(
                p.removals[target].reason == REASON_LEFT for p in proposals
            )
            removals[target] = Removal(mine.incarnation, cut, REASON_LEFT if left else mine.reason)
        if (
            not _has_quorum(self._members.view, removals, vc.additions)
            or self._log.stable_count is None
        ):
            # The other side of a partition may be going on without us: wait, and if no quorum
            # comes back in time, give up membership and rejoin (see check_quorum_wait). A
            # joiner still waiting for its snapshot decides nothing: a group it alone decided
            # could be left with nobody holding the table's state.
            if vc.no_quorum_since is None:
                vc.no_quorum_since = self._out.now
            return
        top = max([vc.clock] + [p.clock for p in proposals] + [r.ts for r in removals.values()])
        survivors = {p: self._members.view[p] for p in self._members.view if p not in removals}
        members = {**survivors, **vc.additions}
        self._decide(self._members.epoch + 1, top + 1, members, removals, dict(vc.additions))

    def _decide(
        self,
        epoch: int,
        marker: int,
        members: dict[str, int],
        removals: dict[str, Removal],
        additions: dict[str, int],
    ) -> None:
        """Have membership apply a decided change, then take in the frames kept from members
        we were removing but that stay, in order."""
        # Computed before the view changes (a returning member's `since` moves).
        relays = _relays(
            self._log, self._proposals, self._out.peer_id, members, removals, additions
        )
        kept = self._change.held if self._change is not None else {}
        self._change = None
        self._proposals = {}
        self._unconfirmed = {}
        self._withdrawal = None
        self._votes = {}
        self._members.apply_decision(epoch, marker, members, removals, additions, relays)
        for peer, frames in sorted(kept.items()):
            for frame in frames:
                if not self._host.is_member() or self._members.view.get(peer) != frame.incarnation:
                    break
                self._host.replay(peer, frame)


def _relays(
    log: OrderedLog,
    proposals: Mapping[str, ViewProposal],
    me: str,
    members: Mapping[str, int],
    removals: Mapping[str, Removal],
    additions: Mapping[str, int],
) -> dict[str, tuple[LogEntry, ...]]:
    """For each survivor, the entries of removed members up to their cut it may lack."""
    # Lower bounds of what each survivor holds of each removed member.
    held: dict[str, dict[str, int]] = {}
    for sender, proposal in proposals.items():
        held[sender] = {t: r.ts for t, r in proposal.removals.items() if t in removals}
    cuts = {t: r.ts for t, r in removals.items()}
    return {
        dest: log.relay_for(
            dest,
            cuts,
            {t: max(held.get(dest, {}).get(t, 0), log.reported(dest, t)) for t in removals},
        )
        for dest in members
        if dest != me and dest not in additions
    }


def _has_quorum(
    view: Mapping[str, int], removals: Mapping[str, Removal], additions: Mapping[str, int]
) -> bool:
    """True when the members staying are a quorum of the view they leave behind.

    Without it both sides of a partition would each exclude the other and play on apart. A
    quorum is more than half of the view, not counting members who left on purpose; exactly
    half is enough for the half holding the lowest peer id. A member replaced by its own new
    incarnation counts as staying.

    A view of two is the exception: a dead laptop and a cut cable look the same from here,
    and a two-laptop table must survive a death, so either of two may go on alone.
    """
    electorate = {p for p in view if not (p in removals and removals[p].reason == REASON_LEFT)}
    if len(electorate) <= 2:
        return True
    staying = {p for p in electorate if p not in removals or p in additions}
    twice = 2 * len(staying)
    return twice > len(electorate) or (twice == len(electorate) and min(electorate) in staying)


def _misses_relayed_entries(
    log: OrderedLog, view: Mapping[str, int], me: str, sender: str, removals: Mapping[str, Removal]
) -> bool:
    """Whether a decision of `sender` may lack entries of a removed member that we lack and
    another survivor holds.

    A member added after we last heard the removed member holds none of its entries from
    before its own join marker (they reach it in its snapshot), so its relay cannot give us
    those; a survivor that was there before it can, and it tells us the same decision."""
    joined = log.since(sender)
    if joined is None or not any(log.frontier(t) < joined[0] for t in removals):
        return False
    return any(
        p not in removals and p not in (sender, me) and (log.since(p) or (0, "")) < joined
        for p in view
    )


def _check_proposal(msg: ViewProposal, view: Mapping[str, int]) -> None:
    """Only what the proposer observed itself counts as grounds (see Grounds.confirmed); adopting
    every removal of anyone would let one member's bad link remove a healthy member."""
    _check_relayed(msg.entries, msg.removals, "propose.entries", bounded=False)
    # The clock and frontiers it proposes end up in the marker, hence in every clock: they
    # are bounded by its timestamp, which the jump check bounded.
    if msg.clock > msg.ts:
        raise RemoteProtocolError("propose.clock", "ahead of the frame's timestamp")
    for target, removal in msg.removals.items():
        if removal.ts > msg.ts:
            raise RemoteProtocolError(f"propose.removals[{target}]", "ahead of the frame")
    for target, removal in msg.removals.items():
        if view.get(target) != removal.incarnation:
            raise RemoteProtocolError(f"propose.removals[{target}]", "not a current member")
    for target, inc in msg.additions.items():
        if view.get(target, -1) >= inc:
            raise RemoteProtocolError(f"propose.additions[{target}]", "already a member")


def _check_decision(msg: ViewDecision, view: Mapping[str, int]) -> None:
    """A decision must change the current view: remove members of it, and nothing else."""
    expected = {p: i for p, i in view.items() if p not in msg.removals}
    expected.update(msg.additions)
    if expected != dict(msg.members):
        raise RemoteProtocolError("decide.members", "inconsistent with the current view")
    for target, removal in msg.removals.items():
        if view.get(target) != removal.incarnation:
            raise RemoteProtocolError(f"decide.removals[{target}]", "not a member")


def _check_relayed(
    entries: tuple[LogEntry, ...], removals: Mapping[str, Removal], field: str, bounded: bool = True
) -> None:
    """Relayed entries must come from removed members (and, in a decision, be within the cut)."""
    for entry in entries:
        removal = removals.get(entry.peer)
        if removal is None or (bounded and entry.ts > removal.ts):
            raise RemoteProtocolError(field, f"relayed entry {entry.key} outside the removals")
