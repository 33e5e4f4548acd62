"""Signed entries, votes and leaves: what a core signs for each entry it authors, each vote it
casts (`Accepted`) and its leave, and the check of every entry, leave and decision it receives,
directly or relayed, at a signed table (see "Identity and signatures" in docs/protocol.md).

An entry's proof signs the table, the author's peer id and incarnation, the entry's timestamp and
its payload (as msgpack, the way it travels): nobody can move it to another table, another
incarnation of its author or another place in the log, nor change what it does. The proof carries
the author's public key, which must be the key of the author's peer id (``net._identity.owns``),
so a receiver needs nobody's word about whose key it is.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from net._codec import pack
from net._identity import PeerKey, signed_message, verify_proof
from net._order.messages import (
    Accept,
    Action,
    Evidence,
    Expulsion,
    LeaveNotice,
    Message,
    Promise,
    ViewDecision,
)
from net._order.wirefields import REASON_LEFT, Removal
from net.errors import RemoteProtocolError
from net.events import LogEntry

__all__ = [
    "Identity",
    "UnprovenClaim",
    "change_digest",
    "check_entries",
    "entry_is_signed",
    "entry_message",
    "leave_is_signed",
    "signed_voters",
    "vote_message",
]

ENTRY_DOMAIN: Final = b"nerts-lan entry v1"
VOTE_DOMAIN: Final = b"nerts-lan vote v1"
LEAVE_DOMAIN: Final = b"nerts-lan leave v1"
_NUMBERS: Final = struct.Struct(">QQ")


class UnprovenClaim(RemoteProtocolError):
    """A frame claims what nobody signed for: a decision or an expulsion without a quorum's
    votes, a leave without the leaver's notice, a vote that is not the voter's. The core
    refuses it and reports it (`ProtocolViolated`), but does not act on it alone: the claim is
    the sender's word, which the receiver cannot show to the others, and a member that stops
    hearing a peer the others hear would have itself removed, not the liar."""


@dataclass(frozen=True)
class Identity:
    """What a core signs its entries with, and the table they are signed for. A core given one
    checks every entry it receives, and refuses one without a right proof."""

    key: PeerKey
    table: str = ""

    def sign(self, incarnation: int, entry: LogEntry) -> LogEntry:
        """``entry`` (ours) with its proof."""
        proof = self.key.prove(entry_message(self.table, incarnation, entry))
        return LogEntry(entry.ts, entry.peer, entry.payload, proof)

    def sign_vote(self, epoch: int, ballot: tuple[int, str], digest: bytes) -> bytes:
        """Our proof that we accepted ballot `ballot` for the view after `epoch`, whose change
        has `digest` (`change_digest`)."""
        return self.key.prove(vote_message(self.table, epoch, ballot, digest))

    def sign_leave(self, peer: str, incarnation: int) -> bytes:
        """Our proof that incarnation `incarnation` of us (`peer`) leaves the table."""
        return self.key.prove(leave_message(self.table, peer, incarnation))


def change_digest(
    marker: int, removals: Mapping[str, Removal], additions: Mapping[str, int]
) -> bytes:
    """What a vote names of the change it accepts: a hash of its marker, removals (incarnation,
    cut and reason; not the leave proofs, which only justify them) and additions."""
    body = [
        marker,
        [[p, r.incarnation, r.ts, r.reason] for p, r in sorted(removals.items())],
        sorted([p, inc] for p, inc in additions.items()),
    ]
    return hashlib.sha256(pack(body)).digest()


def vote_message(table: str, epoch: int, ballot: tuple[int, str], digest: bytes) -> bytes:
    """The bytes a vote's proof signs: the table, the epoch, the ballot and the change."""
    number, proposer = ballot
    numbers = _NUMBERS.pack(epoch, number)
    return signed_message(VOTE_DOMAIN, table.encode(), numbers, proposer.encode(), digest)


def leave_message(table: str, peer: str, incarnation: int) -> bytes:
    """The bytes a leave's proof signs: an incarnation leaves a table once, for good."""
    return signed_message(
        LEAVE_DOMAIN, table.encode(), peer.encode(), _NUMBERS.pack(incarnation, 0)
    )


def leave_is_signed(table: str, peer: str, removal: Removal) -> bool:
    """Whether `removal` (of `peer`, for leaving) carries the leaver's own proof."""
    message = leave_message(table, peer, removal.incarnation)
    return removal.proof is not None and verify_proof(peer, message, removal.proof)


def signed_voters(
    table: str,
    epoch: int,
    ballot: tuple[int, str],
    digest: bytes,
    certificate: Mapping[str, bytes],
    view: Mapping[str, int],
) -> set[str]:
    """The members of `view` whose proof in `certificate` signs that vote for that change."""
    message = vote_message(table, epoch, ballot, digest)
    return {
        voter
        for voter, proof in sorted(certificate.items())
        if voter in view and verify_proof(voter, message, proof)
    }


def prior_view(
    members: Mapping[str, int], removals: Mapping[str, Removal], additions: Mapping[str, int]
) -> dict[str, int]:
    """The view a decision changed, as the decision itself tells it: its members without the
    ones it added, with the ones it removed."""
    view = {p: inc for p, inc in members.items() if additions.get(p) != inc}
    view.update({p: r.incarnation for p, r in removals.items()})
    return view


def entry_message(table: str, incarnation: int, entry: LogEntry) -> bytes:
    """The bytes an entry's proof signs."""
    payload: bytes = pack(entry.payload)
    numbers = _NUMBERS.pack(incarnation, entry.ts)
    return signed_message(ENTRY_DOMAIN, table.encode(), entry.peer.encode(), numbers, payload)


def entry_is_signed(table: str, incarnation: int, entry: LogEntry) -> bool:
    """Whether ``entry`` carries a right proof by its author (``entry.peer``) at ``table``, as
    incarnation ``incarnation``: what anyone passing an entry on (a relay) must check first."""
    message = entry_message(table, incarnation, entry)
    return entry.proof is not None and verify_proof(entry.peer, message, entry.proof)


def check_entries(table: str, sender: str, msg: Message, view: Mapping[str, int]) -> None:
    """``RemoteProtocolError`` unless every entry ``msg`` carries (an action's own, or relayed
    in a promise, a ballot's change or a decision) has a right proof by its author. The author's
    incarnation is the sender's for its own entries, the one its removal names for a removed
    member's, and its incarnation in our `view` for a member's relayed in a promise (relayed
    entries of anyone else are refused), and the one evidence names for its author's. Also
    unless every leave it tells (a leave notice, a removal for leaving) carries the leaver's
    own proof."""
    _check_leaves(table, sender, msg)
    if isinstance(msg, Evidence):
        for i, entry in enumerate(msg.entries):
            field = f"evidence.entries[{i}].proof"
            if entry.peer != msg.author:
                raise RemoteProtocolError(field, f"an entry of {entry.peer}, not {msg.author}")
            _check(table, msg.author_incarnation, entry, field)
    elif isinstance(msg, Action):
        entry = LogEntry(msg.ts, sender, msg.payload, msg.proof)
        _check(table, msg.incarnation, entry, "action.proof")
    elif isinstance(msg, Promise | Accept | ViewDecision):
        kind = {Promise: "promise", Accept: "accept"}.get(type(msg), "decide")
        removals = {} if isinstance(msg, Promise) else msg.removals
        for i, entry in enumerate(msg.entries):
            field = f"{kind}.entries[{i}].proof"
            if entry.peer == sender:
                incarnation: int | None = msg.incarnation
            elif entry.peer in removals:
                incarnation = removals[entry.peer].incarnation
            elif isinstance(msg, Promise):
                incarnation = view.get(entry.peer)
            else:
                incarnation = None
            if incarnation is None:
                raise RemoteProtocolError(field, f"relayed entry of {entry.peer}, not removed")
            _check(table, incarnation, entry, field)


def _check_leaves(table: str, sender: str, msg: Message) -> None:
    if isinstance(msg, LeaveNotice):
        removal = Removal(msg.incarnation, 0, REASON_LEFT, msg.proof)
        if not leave_is_signed(table, sender, removal):
            raise UnprovenClaim("leave.proof", f"not signed by {sender}")
        return
    kind = {Promise: "promise", Accept: "accept", ViewDecision: "decide"}.get(type(msg), "expel")
    groups: list[tuple[str, Mapping[str, Removal]]] = []
    if isinstance(msg, Promise):
        groups = [("reasons", msg.reasons), ("value_removals", msg.value_removals)]
    elif isinstance(msg, Accept | ViewDecision | Expulsion):
        groups = [("removals", msg.removals)]
    for name, removals in groups:
        for peer, removal in sorted(removals.items()):
            if removal.reason == REASON_LEFT and not leave_is_signed(table, peer, removal):
                raise UnprovenClaim(f"{kind}.{name}[{peer}]", f"{peer} signed no leave")


def _check(table: str, incarnation: int, entry: LogEntry, field: str) -> None:
    if entry.proof is None:
        raise RemoteProtocolError(field, "unsigned entry at a signed table")
    if not entry_is_signed(table, incarnation, entry):
        raise RemoteProtocolError(field, f"not signed by {entry.peer}")
