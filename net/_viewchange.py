"""The records of a view change in progress, and the pure rules of the ballots: the quorum, and
the change a proposer may propose from the promises of a quorum. Private to `net.core`; see
"Membership (views)" in docs/protocol.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from net.messages import REASON_EXCLUDED, REASON_LEFT, Promise, Removal, Seen

__all__ = [
    "NO_BALLOT",
    "Acceptor",
    "Ballot",
    "Change",
    "Proposal",
    "VoteRecord",
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
