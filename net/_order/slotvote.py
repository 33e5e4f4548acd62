"""The vote of a returning incarnation in place of its predecessor. Private to `net._order.core`;
see "Membership (views)" in docs/protocol.md.

A laptop that restarts comes back as a new incarnation and asks to join; its predecessor is
still a voter of the view (dead, it never votes again). When the view cannot reach a quorum
without that slot (a table of two whose lowest id restarted; a rolling restart of a bigger
table), the new incarnation votes in its predecessor's place, continuing the predecessor's own
vote: the application hands it the predecessor's `VoteRecord` (kept where a crash does not lose
it). It never votes in an epoch before the record's (the predecessor may have voted there), and
without a record it never votes. It holds no entries and no clock to freeze, so its promise
carries nothing but its vote.

It stamps that vote after the marker of the change it carries: the predecessor's clock had passed
that marker (it proposed the change, or took it from an `Accept` stamped after it), but a new
incarnation's clock starts again from nothing, and every member refuses a promise whose accepted
change is marked ahead of the frame (`check_promise`: a marker ends up in every clock). Stamped
before it, the vote never counted, and a table of three with one member dead and the other one
restarted waited for good (churn seed 5035).
"""

from __future__ import annotations

from net._order.certify import vote_proof
from net._order.messages import Accept, Accepted, Message, Prepare, Promise
from net._order.outbox import Outbox
from net._order.viewchange import NO_BALLOT, Ballot, Change, VoteRecord

__all__ = ["SlotVoter"]


class SlotVoter:
    """The acceptor state of a joining incarnation for each epoch it was asked about."""

    def __init__(self, outbox: Outbox, predecessor: VoteRecord | None) -> None:
        self._out = outbox
        self._first_epoch = predecessor.epoch if predecessor is not None else None
        self._view = predecessor.view if predecessor is not None else None
        # epoch -> (promised ballot, accepted ballot, accepted change)
        self._state: dict[int, tuple[Ballot, Ballot, Change | None]] = {}
        if predecessor is not None:
            self._state[predecessor.epoch] = predecessor[1:4]

    def record(self) -> VoteRecord | None:
        """Our vote so far (the latest epoch we were asked about), to hand to our successor."""
        if self._first_epoch is None:
            return None
        epoch = max(self._state)
        view = self._view if epoch == self._first_epoch else None
        return VoteRecord(epoch, *self._state[epoch], view)

    def promise_own(self, epoch: int, ballot: Ballot) -> tuple[Ballot, Change | None] | None:
        """Promise our own `ballot` in `epoch` (we propose in our predecessor's place): the
        change accepted there and its ballot, or None if we promised a higher ballot."""
        if self._first_epoch is None or epoch < self._first_epoch:
            return None
        promised, accepted, value = self._vote(epoch)
        if ballot < promised:
            return None
        self._state[epoch] = (ballot, accepted, value)
        return accepted, value

    def accept_own(self, epoch: int, ballot: Ballot, change: Change) -> bool:
        """Accept our own ballot's `change` in `epoch`; False if we promised a higher one."""
        promised, _, _ = self._vote(epoch)
        if self._first_epoch is None or epoch < self._first_epoch or ballot < promised:
            return False
        self._state[epoch] = (ballot, ballot, change)
        return True

    def promised(self, epoch: int) -> Ballot:
        """The highest ballot we promised in `epoch`."""
        return self._vote(epoch)[0]

    def on_message(self, peer: str, msg: Message) -> None:
        """Answer a member's Prepare or Accept for the view change that adds us."""
        if self._first_epoch is None or getattr(msg, "epoch", -1) < self._first_epoch:
            return
        if isinstance(msg, Prepare):
            self._on_prepare(peer, msg)
        elif isinstance(msg, Accept):
            self._on_accept(peer, msg)

    def _on_prepare(self, peer: str, msg: Prepare) -> None:
        promised, accepted, value = self._vote(msg.epoch)
        ballot = Ballot(msg.ballot, peer)
        if ballot > promised:
            promised = ballot
            self._state[msg.epoch] = (promised, accepted, value)
        out = self._out
        value = value or Change(0, {}, {})
        promise = Promise(
            _stamp_after(out, value.marker), out.incarnation, {}, msg.epoch, promised.number,
            promised.proposer, 0, {}, {}, {}, {out.peer_id: out.incarnation},
            accepted.number, accepted.proposer, value.marker, dict(value.removals),
            dict(value.additions), (), False,
        )  # fmt: skip
        out.send(peer, promise)

    def _on_accept(self, peer: str, msg: Accept) -> None:
        promised, _, _ = self._vote(msg.epoch)
        ballot = Ballot(msg.ballot, peer)
        if ballot < promised:
            return
        change = Change(msg.marker, msg.removals, msg.additions)
        self._state[msg.epoch] = (ballot, ballot, change)
        out = self._out
        proof = vote_proof(out, msg.epoch, ballot, change)  # signed with the laptop's one key
        ts = _stamp_after(out, change.marker)
        out.send(peer, Accepted(ts, out.incarnation, {}, msg.epoch, *ballot, proof))

    def _vote(self, epoch: int) -> tuple[Ballot, Ballot, Change | None]:
        """(promised, accepted, change) in `epoch`: nothing yet if never asked there."""
        return self._state.get(epoch, (NO_BALLOT, NO_BALLOT, None))


def _stamp_after(out: Outbox, marker: int) -> int:
    """A timestamp for a vote on a change marked `marker`: above it, as a member's clock is once
    it accepted that change (see the module docstring)."""
    out.merge_clock(marker)
    return out.tick_clock()
