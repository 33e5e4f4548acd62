"""The records of a view change in progress, and the pure rules of the ballots: the quorum, and
the change a proposer may propose from the promises of a quorum. Private to `net._order.core`; see
"Membership (views)" in docs/protocol.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from net._order.messages import Expulsion, Message, Promise, ViewDecision
from net._order.signatures import UnprovenClaim, change_digest, prior_view, signed_voters
from net._order.wirefields import REASON_EXCLUDED, REASON_LEFT, Removal, Seen
from net.errors import RemoteProtocolError
from net.events import LogEntry

if TYPE_CHECKING:
    from net._order.log import OrderedLog

__all__ = [
    "NOT_CERTIFIED",
    "NO_BALLOT",
    "Acceptor",
    "Ballot",
    "Certified",
    "Change",
    "Proposal",
    "VoteRecord",
    "accepted_change",
    "certificate_holds",
    "check_certified",
    "check_change",
    "check_decision",
    "check_promise",
    "check_relayed",
    "choose_change",
    "hands_on",
    "highest_accepted",
    "is_quorum",
    "kept_can_redecide",
    "misses_relayed_entries",
    "promise_relay",
]


class Ballot(NamedTuple):
    """A ballot: its number, then its proposer's peer id (ballots are totally ordered)."""

    number: int
    proposer: str


NO_BALLOT = Ballot(0, "")


@dataclass(frozen=True)
class Change:
    """A value of the ballots: the next view's change, its marker at key (marker, "")."""

    marker: int
    removals: Mapping[str, Removal]
    additions: Mapping[str, int]

    def members(self, view: Mapping[str, int]) -> dict[str, int]:
        """The view that this change makes of `view`."""
        members = {p: inc for p, inc in view.items() if p not in self.removals}
        members.update(self.additions)
        return members


class Certified(NamedTuple):
    """What a decision rests on: the ballot whose change a quorum accepted, and (at a signed
    table) the quorum's signed votes, voter -> proof."""

    ballot: int
    proposer: str
    certificate: Mapping[str, bytes]


NOT_CERTIFIED = Certified(0, "", {})
"""A decision at an unsigned table: nobody signs, nothing to check."""


def certificate_holds(
    table: str,
    epoch: int,
    certified: Certified,
    change: Change,
    view: Mapping[str, int],
) -> bool:
    """Whether `certified` holds the signed votes of a quorum of `view` (the view of `epoch`)
    for exactly `change`. Members that left on purpose (proven: their removal carries their
    signed leave) are out of the electorate, as for the proposer."""
    digest = change_digest(change.marker, change.removals, change.additions)
    ballot = (certified.ballot, certified.proposer)
    voters = signed_voters(table, epoch, ballot, digest, certified.certificate, view)
    leavers = {t for t, r in change.removals.items() if r.reason == REASON_LEFT}
    return is_quorum(view, voters, leavers)


def check_certified(table: str, msg: Message) -> None:
    """At a signed table a decision, and an expulsion, must carry the certificate of a quorum
    of the view before it, as the decision itself tells that view (`RemoteProtocolError`
    otherwise): nobody, whoever relays it, makes up a decision. (A member checks too that the
    view told is its own, `check_decision`.)"""
    if not isinstance(msg, ViewDecision | Expulsion):
        return
    kind = "decide" if isinstance(msg, ViewDecision) else "expel"
    if not msg.members:
        raise UnprovenClaim(f"{kind}.members", "empty view")
    change = Change(msg.marker, msg.removals, msg.additions)
    view = prior_view(msg.members, msg.removals, msg.additions)
    certified = Certified(msg.ballot, msg.proposer, msg.certificate)
    if not certificate_holds(table, msg.epoch - 1, certified, change, view):
        raise UnprovenClaim(f"{kind}.certificate", "no quorum signed this change")


class VoteRecord(NamedTuple):
    """What a voter must not forget across a restart: the epoch of its view, the highest ballot
    it promised in that epoch's change and the change it accepted (see `net._order.slotvote`),
    and that view (peer -> incarnation; None when unknown, as in a record of an older build):
    with it, the restarted laptops of a view none of whose processes lives on can still decide
    its change among themselves (see `net._order.orphan`)."""

    epoch: int
    promised: Ballot
    accepted: Ballot
    value: Change | None
    view: Mapping[str, int] | None = None


@dataclass
class Acceptor:
    """Our part of this epoch's agreement as a voter: the clock and ``seen`` we froze when we
    joined it (fixed for the epoch), the highest ballot promised and the change accepted."""

    clock: int
    frozen: Seen
    since: float
    promised: Ballot = NO_BALLOT
    accepted: Ballot = NO_BALLOT
    value: Change | None = None
    progress: float = 0.0  # when the ballot we promised last showed progress


@dataclass
class Proposal:
    """Our own ballot in progress: the promises of phase 1, then the change and its acceptances."""

    ballot: Ballot
    started: float
    attempt: int
    promises: dict[str, Promise] = field(default_factory=dict)
    value: Change | None = None
    accepted_by: set[str] = field(default_factory=set)
    certificate: dict[str, bytes] = field(default_factory=dict)
    """The signed votes for `value` (at a signed table), voter -> proof."""


def is_quorum(view: Mapping[str, int], voters: Iterable[str], leavers: Iterable[str]) -> bool:
    """True when `voters` are a quorum of `view`: more than half of its members that did not
    leave on purpose, or exactly half holding the lowest of them. Any two quorums of one view
    share a voter (members who left never vote again), so one epoch never decides twice."""
    electorate = set(view) - set(leavers)
    if not electorate:
        return False
    present = electorate & set(voters)
    twice = 2 * len(present)
    return twice > len(electorate) or (twice == len(electorate) and min(electorate) in present)


def highest_accepted(proposal: Proposal | None, msg: Promise) -> bool:
    """Whether promise `msg`, for our ballot, carries the highest accepted change so far: the
    change we would propose again, whose versions of the entries of the members it removes are
    the ones its voters hold (see `OrderedLog.adopt`)."""
    if proposal is None or proposal.value is not None or msg.accepted == 0:
        return False
    if Ballot(msg.ballot, msg.proposer) != proposal.ballot:
        return False
    mine = (msg.accepted, msg.accepted_by)
    return all(mine >= (p.accepted, p.accepted_by) for p in proposal.promises.values())


def promise_relay(
    log: OrderedLog, dest: str, frozen: Mapping[str, int], accepted: Change | None
) -> tuple[LogEntry, ...]:
    """What our promise to proposer `dest` relays: the entries up to what we froze that it may
    lack and, of the members the change we accepted removes, our versions (that change's)."""
    entries = log.relay_for(dest, frozen)
    if accepted is None or not accepted.removals:
        return entries
    cuts = {t: r.ts for t, r in accepted.removals.items()}
    versions = log.relay_for(dest, cuts, versions=True)
    keys = {e.key for e in versions}
    return (*versions, *(e for e in entries if e.key not in keys))


def misses_relayed_entries(
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


def leavers_in(promises: Iterable[Promise]) -> set[str]:
    """Members that some promise reports as having left on purpose."""
    return {t for p in promises for t, r in p.reasons.items() if r.reason == REASON_LEFT}


def choose_change(
    view: Mapping[str, int],
    promises: Mapping[str, Promise],
    heard: Mapping[str, Mapping[str, int]] | None = None,
    joined: Mapping[str, int] | None = None,
) -> Change:
    """The change a proposer holding the promises of a quorum must propose: the one accepted
    under the highest ballot if any, else the one the promises' grounds make.

    Grounds: a leave (or another removal that needs no confirmation) reported by any voter; a
    member more than half of the others observe silent; a member that observes a lower member
    silent while that lower member observes it silent too (a link between them is down: the
    lower id stays) unless the lower one is itself observed silent by a majority; a member
    replaced by a newer incarnation that asked to join. A removed member's cut is as far as the
    quorum can hand its entries on (`_cut`), which covers every entry any member can have
    stabilised; the marker follows every voter's frozen clock and every cut. `heard` adds what
    other members observed, from promises the proposer got for other ballots (observations
    only: the cuts must come from voters that relayed their entries). `joined` gives, for voters
    added after the proposer's own start (and the proposer itself if it joined), the timestamp
    of the marker that added them."""
    accepted = accepted_change(promises.values())
    if accepted is not None:
        return accepted[1]
    observed = {**(heard or {}), **{peer: p.observed for peer, p in promises.items()}}
    reasons: dict[str, str] = {}
    leave_proofs: dict[str, bytes] = {}  # the leavers' own signed notices (a signed table)
    for promise in promises.values():
        for target, removal in promise.reasons.items():
            if view.get(target) == removal.incarnation and reasons.get(target) != REASON_LEFT:
                reasons[target] = removal.reason
            current = view.get(target) == removal.incarnation
            if current and removal.reason == REASON_LEFT and removal.proof is not None:
                leave_proofs.setdefault(target, removal.proof)
    additions: dict[str, int] = {}
    for promise in promises.values():
        for target, inc in promise.additions.items():
            if inc > max(view.get(target, -1), additions.get(target, -1)):
                additions[target] = inc
    for target in additions:
        if target in view:
            reasons.setdefault(target, REASON_EXCLUDED)  # replaced by its new incarnation
    for target in sorted(view):
        if target not in reasons and _silent(target, view, observed):
            reasons[target] = REASON_EXCLUDED
    holders = sorted(p for p, m in promises.items() if m.holds_state and p in view)
    if holders and all(p in reasons for p in holders):
        del reasons[holders[0]]  # a voter holding the table's state must stay
    removals = {
        target: Removal(
            view[target],
            _cut(target, view[target], promises, joined or {}),
            reason,
            leave_proofs.get(target) if reason == REASON_LEFT else None,
        )
        for target, reason in sorted(reasons.items())
    }
    top = max([p.clock for p in promises.values()] + [r.ts for r in removals.values()])
    return Change(top + 1, removals, additions)


def accepted_change(promises: Iterable[Promise]) -> tuple[Ballot, Change] | None:
    """The change accepted under the highest ballot among `promises`, with that ballot (None:
    none of them accepted one)."""
    best = max(promises, key=lambda p: (p.accepted, p.accepted_by), default=None)
    if best is None or best.accepted == 0:
        return None
    change = Change(best.value_marker, dict(best.value_removals), dict(best.value_additions))
    return Ballot(best.accepted, best.accepted_by), change


def hands_on(change: Change, promises: Mapping[str, Promise], joined: Mapping[str, int]) -> bool:
    """Whether the voters of `promises` can hand on every entry the change keeps of each member
    it removes (up to that member's cut), so that the proposer may propose it.

    A change of our own grounds is cut as far as they can (`_cut`). A change accepted under an
    earlier ballot carries the cut of that ballot's quorum: a voter that accepted it holding the
    table's state adopted the change's entries and relays them; a restarted incarnation voting
    in its dead predecessor's place (or a joiner without its snapshot) holds no entries, so the
    change is handed on only if such a voter or our own quorum's cuts cover it (stalls 80375:
    the proposer re-decided a change whose one other voter was such an incarnation, without the
    removed member's last entry that the first decision's survivors had stabilised)."""
    best = max(promises.values(), key=lambda p: (p.accepted, p.accepted_by), default=None)
    if best is None or best.accepted == 0:
        return True
    ballot = (best.accepted, best.accepted_by)
    if any(p.holds_state and (p.accepted, p.accepted_by) == ballot for p in promises.values()):
        return True
    return all(
        _cut(target, removal.incarnation, promises, joined) >= removal.ts
        for target, removal in change.removals.items()
    )


def kept_can_redecide(
    proposal: Proposal,
    view: Mapping[str, int],
    frozen: Mapping[str, Promise],
    join_markers: Callable[[Iterable[str]], Mapping[str, int]],
) -> bool:
    """Whether the members that our `proposal`'s change keeps could decide it again if every
    decider's word of it were lost, so that we may decide it: one of them accepted it (it
    holds the change and the entries it keeps), or the promises we hold from them (for our
    ballot, or the first of theirs this epoch in `frozen`: a voter freezes once an epoch) cover
    every removed member's entries up to its cut, so that they re-decide it from the removed
    members' successors' votes (`hands_on`; `join_markers` gives the marker that added each
    voter). A change whose acceptors all leave with it is otherwise known only to laptops
    that rejoin as new incarnations, which know nothing of it: the members kept wait in the
    old view for good and admit nobody (stalls 110903: one ballot removed three of four
    members, exactly its three acceptors, while the fourth lacked their last entries)."""
    change = proposal.value
    assert change is not None
    promises = {**frozen, **proposal.promises}
    accepted_by = proposal.accepted_by
    kept = [p for p in view if p not in change.removals]
    if not kept or any(p in kept for p in accepted_by):
        return True
    theirs = {p: promises[p] for p in kept if p in promises}
    joined = join_markers(theirs)
    return bool(theirs) and all(
        _cut(target, removal.incarnation, theirs, joined) >= removal.ts
        for target, removal in change.removals.items()
    )


def _cut(target: str, inc: int, promises: Mapping[str, Promise], joined: Mapping[str, int]) -> int:
    """How far the quorum can hand on `target`'s entries, with no gap: the cut.

    A voter holding the table's state covers every entry of `target` up to its frozen frontier
    and, if it joined at marker M, every one before M (they were stable everywhere before its
    snapshot was taken). A joiner still waiting for its snapshot holds only the entries from
    its own marker M to its frozen frontier: they count only once the voters before reach M
    (the proposer holds state, so the cut still covers every entry any member stabilised; see
    "Why stable is final" in docs/protocol.md)."""
    holders: list[int] = []
    joiners: list[tuple[int, int]] = []
    for voter, promise in sorted(promises.items()):
        front = promise.frozen.get(target, (-1, 0))
        front_ts = front[1] if front[0] == inc else 0
        marker = joined.get(voter, 0)
        if promise.holds_state:
            holders.append(max(front_ts, marker - 1))
        else:  # added before the proposer (marker unknown: 0) its marker is covered anyway
            joiners.append((marker, front_ts))
    cut = max(holders, default=0)
    for marker, front_ts in sorted(joiners):
        if marker - 1 <= cut:
            cut = max(cut, front_ts)
    # Below an equivocation a voter proved: nobody stabilised the target's entries from there.
    caps = [promise.caps[target] for promise in promises.values() if target in promise.caps]
    return min([cut, *caps])


def _silent(
    target: str, view: Mapping[str, int], observed: Mapping[str, Mapping[str, int]]
) -> bool:
    if _majority_accused(target, view, observed):
        return True
    theirs = observed.get(target, {})
    return any(
        p < target
        and theirs.get(p) == view[p]
        and observed.get(p, {}).get(target) == view[target]
        and not _majority_accused(p, view, observed)
        for p in view
    )


def _majority_accused(
    target: str, view: Mapping[str, int], observed: Mapping[str, Mapping[str, int]]
) -> bool:
    others = [p for p in view if p != target]
    accusers = [p for p in others if observed.get(p, {}).get(target) == view[target]]
    return 2 * len(accusers) > len(others)


def check_promise(msg: Promise, view: Mapping[str, int]) -> None:
    """What a promise freezes ends up in the marker, hence in every clock: it is bounded by the
    frame's timestamp, which the jump check bounded."""
    if msg.clock > msg.ts:
        raise RemoteProtocolError("promise.clock", "ahead of the frame's timestamp")
    for peer, (_, ts) in msg.frozen.items():
        if ts > msg.ts:
            raise RemoteProtocolError(f"promise.frozen[{peer}]", "ahead of the frame")
    if msg.accepted > 0:
        check_change(
            Change(msg.value_marker, msg.value_removals, msg.value_additions), view, msg.ts
        )


def check_change(change: Change, view: Mapping[str, int], ts: int) -> None:
    """A change must remove current members (within the frame's clock) and add newcomers."""
    if change.marker > ts:
        raise RemoteProtocolError("accept.marker", "ahead of the frame's timestamp")
    for target, removal in change.removals.items():
        if view.get(target) != removal.incarnation:
            raise RemoteProtocolError(f"accept.removals[{target}]", "not a current member")
        if removal.ts >= change.marker:
            raise RemoteProtocolError(f"accept.removals[{target}]", "cut beyond the marker")
    for target, inc in change.additions.items():
        if view.get(target, -1) >= inc:
            raise RemoteProtocolError(f"accept.additions[{target}]", "already a member")
        if target in view and target not in change.removals:
            raise RemoteProtocolError(f"accept.additions[{target}]", "old incarnation stays")


def check_decision(msg: ViewDecision, view: Mapping[str, int]) -> None:
    """A decision must change the current view: remove members of it, and nothing else."""
    expected = {p: i for p, i in view.items() if p not in msg.removals}
    expected.update(msg.additions)
    if expected != dict(msg.members):
        raise RemoteProtocolError("decide.members", "inconsistent with the current view")
    for target, removal in msg.removals.items():
        if view.get(target) != removal.incarnation:
            raise RemoteProtocolError(f"decide.removals[{target}]", "not a member")


def check_relayed(
    entries: tuple[LogEntry, ...], removals: Mapping[str, Removal], field: str
) -> None:
    """Relayed entries must come from removed members, within their cut."""
    for entry in entries:
        removal = removals.get(entry.peer)
        if removal is None or entry.ts > removal.ts:
            raise RemoteProtocolError(field, f"relayed entry {entry.key} outside the removals")
