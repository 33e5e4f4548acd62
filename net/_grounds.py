"""The grounds for removing members: whom we observe silent, and whom the others' observations
let us back removing. Private to `net.core`; see "Membership (views)" in docs/protocol.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from net.messages import REASON_EXCLUDED, ViewProposal

__all__ = ["Grounds", "observe"]


@dataclass(frozen=True)
class Grounds:
    """One evaluation of the grounds in the current view: `mine` holds the members we observe
    silent, `proposals` the latest proposal of each member, `unconfirmed` the removals that need
    no confirmation (leaves, violations, replaced incarnations) and `silence` how long we have
    not heard a member."""

    me: str
    view: Mapping[str, int]
    mine: Mapping[str, int]
    proposals: Mapping[str, ViewProposal]
    unconfirmed: Mapping[str, str]
    silence: Callable[[str], float]
    suspect_timeout: float

    def desired_removals(self) -> dict[str, str]:
        """The members we have grounds to remove now, with the reason of each."""
        me, view = self.me, self.view
        desired: dict[str, str] = {}
        for target, reason in self.unconfirmed.items():
            if target in view and target != me:
                desired[target] = reason
        for target in self.mine:
            desired.setdefault(target, REASON_EXCLUDED)
        candidates: set[str] = set()
        for sender, proposal in self.proposals.items():
            if sender in self.unconfirmed:
                continue
            candidates.update(proposal.removals)
            candidates.update(proposal.observed)
        for target in sorted(candidates):
            if target in desired or target not in view or target == me:
                continue
            if self.confirmed(target):
                desired[target] = REASON_EXCLUDED
        return desired

    def confirmed(self, target: str) -> bool:
        """Whether we back removing `target`, which some member observed silent: it is silent
        to us too, or a majority of the others observe it silent, or it and a lower peer each
        observe the other silent (a link between them is down: the lower id stays, as in the
        quorum rule). One member's bad link alone never removes a member the others hear."""
        if self.silence(target) >= self.suspect_timeout:
            return True
        if self.majority_accused(target):
            return True
        view = self.view
        theirs = self.observed_by(target)
        return any(
            p < target
            and theirs.get(p) == view[p]
            and self.observed_by(p).get(target) == view[target]
            and not self.majority_accused(p)  # then p is the one cut off
            for p in view
        )

    def majority_accused(self, target: str) -> bool:
        inc = self.view[target]
        others = [p for p in self.view if p != target]
        accusers = [p for p in others if self.observed_by(p).get(target) == inc]
        return 2 * len(accusers) > len(others)

    def unbacked(self, removing: Mapping[str, object]) -> list[str]:
        """The members we observe silent whose removal no other member (staying, not being
        removed) proposes and that need confirmation."""
        return [
            t
            for t in self.mine
            if t not in self.unconfirmed
            and not any(
                t in proposal.removals
                for peer, proposal in self.proposals.items()
                if peer in self.view and peer not in removing
            )
        ]

    def observed_by(self, peer: str) -> Mapping[str, int]:
        """The members `peer` observes silent, as far as we know."""
        if peer == self.me:
            return self.mine
        if peer in self.unconfirmed:
            return {}  # leaving or replaced: its view of the others no longer matters
        proposal = self.proposals.get(peer)
        return proposal.observed if proposal is not None else {}


def observe(
    view: Mapping[str, int],
    me: str,
    silence: Callable[[str], float],
    exclude_timeout: float,
    violators: set[tuple[str, int]],
) -> dict[str, int]:
    """Members we have heard nothing from for the exclusion timeout (or that broke the
    protocol): our own grounds to remove them."""
    return {
        p: inc
        for p, inc in view.items()
        if p != me and (silence(p) >= exclude_timeout or (p, inc) in violators)
    }
