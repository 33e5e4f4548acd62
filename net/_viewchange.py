"""The records of a view change in progress, and the pure rules of the ballots: the quorum, and
the change a proposer may propose from the promises of a quorum. Private to `net.core`; see
"Membership (views)" in docs/protocol.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from net.errors import RemoteProtocolError
from net.events import LogEntry
from net.messages import REASON_EXCLUDED, REASON_LEFT, Promise, Removal, Seen, ViewDecision

__all__ = [
    "NO_BALLOT",
    "Acceptor",
    "Ballot",
    "Change",
    "Proposal",
    "VoteRecord",
    "check_change",
    "check_decision",
    "check_promise",
    "check_relayed",
    "choose_change",
    "is_quorum",
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


class VoteRecord(NamedTuple):
    """What a voter must not forget across a restart: the epoch of its view, the highest ballot
    it promised in that epoch's change and the change it accepted (see `net._slotvote`)."""

    epoch: int
    promised: Ballot
    accepted: Ballot
    value: Change | None


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


def leavers_in(promises: Iterable[Promise]) -> set[str]:
    """Members that some promise reports as having left on purpose."""
    return {t for p in promises for t, r in p.reasons.items() if r.reason == REASON_LEFT}


def choose_change(
    view: Mapping[str, int],
    promises: Mapping[str, Promise],
    heard: Mapping[str, Mapping[str, int]] | None = None,
) -> Change:
    """The change a proposer holding the promises of a quorum must propose: the one accepted
    under the highest ballot if any, else the one the promises' grounds make.

    Grounds: a leave (or another removal that needs no confirmation) reported by any voter; a
    member more than half of the others observe silent; a member that observes a lower member
    silent while that lower member observes it silent too (a link between them is down: the
    lower id stays) unless the lower one is itself observed silent by a majority; a member
    replaced by a newer incarnation that asked to join. A removed member's cut is the highest
    frontier any voter froze of it, so every entry that any member can have stabilised stays;
    the marker follows every voter's frozen clock and every cut. `heard` adds what other members
    observed, from promises the proposer got for other ballots (observations only: the cuts
    must come from voters that relayed their entries)."""
    best = max(promises.values(), key=lambda p: (p.accepted, p.accepted_by), default=None)
    if best is not None and best.accepted > 0:
        return Change(best.value_marker, dict(best.value_removals), dict(best.value_additions))
    observed = {**(heard or {}), **{peer: p.observed for peer, p in promises.items()}}
    reasons: dict[str, str] = {}
    for promise in promises.values():
        for target, removal in promise.reasons.items():
            if view.get(target) == removal.incarnation and reasons.get(target) != REASON_LEFT:
                reasons[target] = removal.reason
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
        target: Removal(view[target], _cut(target, view[target], promises), reason)
        for target, reason in sorted(reasons.items())
    }
    top = max([p.clock for p in promises.values()] + [r.ts for r in removals.values()])
    return Change(top + 1, removals, additions)


def _cut(target: str, inc: int, promises: Mapping[str, Promise]) -> int:
    fronts = [
        p.frozen[target][1] for p in promises.values() if p.frozen.get(target, (-1, 0))[0] == inc
    ]
    return max(fronts, default=0)


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
