"""Signed votes and the certificates that make a decision prove itself, at a signed table.
Private to `net._order.core` (the agreement, net/_order/agreement.py, uses them); see "Identity
and signatures" in docs/protocol.md.

A voter signs each `Accepted` over the table, the epoch, the ballot and the change's digest; the
proposer keeps each vote it gets for its change, and decides only once the signed votes of a
quorum hold (`certify`): the decision then carries them, and every receiver checks them
(`net._order.viewchange.check_certified`), so no member can make up a decision.
"""

from __future__ import annotations

from collections.abc import Mapping

from net._order.messages import Accepted, ViewDecision
from net._order.outbox import Outbox
from net._order.signatures import UnprovenClaim, change_digest, prior_view, signed_voters
from net._order.viewchange import (
    NOT_CERTIFIED,
    Ballot,
    Certified,
    Change,
    Proposal,
    certificate_holds,
    is_quorum,
    leavers_in,
)
from net._order.wirefields import REASON_LEFT, Removal

__all__ = [
    "certify",
    "check_view_told",
    "keep_own_vote",
    "reasons_with_proofs",
    "send_vote",
    "take_vote",
]


def vote_proof(out: Outbox, epoch: int, ballot: Ballot, change: Change) -> bytes | None:
    """Our signed vote for `change` under `ballot` (None at an unsigned table)."""
    identity = out.identity
    if identity is None:
        return None
    digest = change_digest(change.marker, change.removals, change.additions)
    return identity.sign_vote(epoch, ballot, digest)


def send_vote(out: Outbox, proposer: str, epoch: int, ballot: Ballot, change: Change) -> None:
    """Tell the proposer we accepted its ballot's change (signed, at a signed table)."""
    proof = vote_proof(out, epoch, ballot, change)
    accepted = Accepted(out.tick_clock(), out.incarnation, out.seen(), epoch, *ballot, proof)
    out.send(proposer, accepted)


def keep_own_vote(out: Outbox, epoch: int, proposal: Proposal) -> None:
    """Our own vote for our ballot's change, among the ones our decision will carry."""
    assert proposal.value is not None
    proof = vote_proof(out, epoch, proposal.ballot, proposal.value)
    if proof is not None:
        proposal.certificate[out.peer_id] = proof


def take_vote(
    out: Outbox, proposal: Proposal, view: Mapping[str, int], peer: str, msg: Accepted
) -> None:
    """Keep `peer`'s signed vote for our ballot's change; `RemoteProtocolError` unless it is
    one (at an unsigned table there is nothing to keep)."""
    identity, value = out.identity, proposal.value
    if identity is None or value is None:
        return
    digest = change_digest(value.marker, value.removals, value.additions)
    votes = {peer: msg.proof} if msg.proof is not None else {}
    ballot = (msg.ballot, msg.proposer)
    if not signed_voters(identity.table, msg.epoch, ballot, digest, votes, view):
        raise UnprovenClaim("accepted.proof", f"not {peer}'s vote for our change")
    proposal.certificate[peer] = votes[peer]


def certify(
    out: Outbox, proposal: Proposal, epoch: int, view: Mapping[str, int]
) -> Certified | None:
    """What our decision of `proposal` rests on, or None while its acceptances are not a
    quorum or (at a signed table) the signed votes we hold are not a quorum's for exactly its
    change: every receiver checks them, so we wait for more."""
    identity, value = out.identity, proposal.value
    if not is_quorum(view, proposal.accepted_by, leavers_in(proposal.promises.values())):
        return None
    if identity is None:
        return NOT_CERTIFIED
    assert value is not None
    certified = Certified(*proposal.ballot, dict(proposal.certificate))
    return certified if certificate_holds(identity.table, epoch, certified, value, view) else None


def check_view_told(out: Outbox, msg: ViewDecision, view: Mapping[str, int]) -> None:
    """At a signed table a decision's certificate holds for the view it tells (the core
    checked): `RemoteProtocolError` unless that view is ours."""
    told = prior_view(msg.members, msg.removals, msg.additions)
    if out.identity is not None and told != dict(view):
        raise UnprovenClaim("decide.members", "certified for another view")


def reasons_with_proofs(
    reasons: Mapping[str, str], proofs: Mapping[str, bytes], view: Mapping[str, int]
) -> dict[str, Removal]:
    """Our removals that need no confirmation, for our promise: a leave carries the leaver's
    signed notice (at a signed table), so that the others can check it."""
    return {
        t: Removal(view[t], 0, r, proofs.get(t) if r == REASON_LEFT else None)
        for t, r in sorted(reasons.items())
        if t in view
    }
