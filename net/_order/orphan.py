"""A view none of whose processes lives on: its restarted laptops decide its change among
themselves. Private to `net._order.core`; see "Recovery from durable prefixes" in
docs/protocol.md.

Recovery from durable prefixes needs one member of the view alive: it takes the prefixes the
restarted laptops kept. When every laptop of a view restarted before a change admitted any of
them (a rolling restart whose last change was accepted but never decided: rolling 80196), every
one is a joiner holding its predecessor's vote and its stable prefix, a quorum of the view's
places, and a joiner may not propose: nobody is ever admitted.

So a joiner whose predecessor's `VoteRecord` names its view runs that view's ballot in its
predecessor's place, once it heard a newer incarnation of every member of that view ask to join
(its own included): every process that held the view's state then died, so no live member holds
entries a decision would have to hand on, and the decision carries none. The places vote as they
always do (`SlotVoter`); the lowest place proposes first, the others in turn if no decision
comes. The value is the usual one: the change accepted under the highest ballot, else one that
puts the proposer in its predecessor's place. A decision that adds a laptop makes it the one
member of a view of dead places, which is what recovery covers: it takes the longest prefix and
admits the others. One that adds nobody (an accepted exclusion) moves the ballot to the next
epoch, among the places left.
"""

from __future__ import annotations

from collections.abc import Mapping

from net._order.certify import vote_proof
from net._order.messages import Accept, Accepted, Prepare, Promise, ViewDecision
from net._order.outbox import Outbox
from net._order.slotvote import SlotVoter
from net._order.viewchange import Ballot, Change, VoteRecord, accepted_change, is_quorum
from net._order.wirefields import REASON_EXCLUDED, Removal

__all__ = ["OrphanBallot"]


class OrphanBallot:
    """A joiner's ballot in its predecessor's place for a view whose processes all died."""

    def __init__(
        self, outbox: Outbox, slot: SlotVoter, record: VoteRecord | None, retry: float
    ) -> None:
        self._out = outbox
        self._slot = slot
        self._retry = retry
        view = record.view if record is not None else None
        self._epoch = record.epoch if record is not None and view is not None else None
        self._view: dict[str, int] = dict(view or {})
        self._number = record.promised.number if record is not None else 0
        self._successors: dict[str, int] = {}
        self._due: float | None = None
        self._ballot: Ballot | None = None
        self._promises: dict[str, Promise] = {}
        self._value: Change | None = None
        self._accepted: set[str] = set()
        self._certificate: dict[str, bytes] = {}

    def timer(self) -> float | None:
        """When we propose (again); None: not our turn, or no view whose processes all died."""
        return self._due

    def heard_join(self, peer: str, incarnation: int, now: float) -> None:
        """A co-joiner asked to join: a newer incarnation of a place of the view may be it."""
        if self._epoch is None or peer not in self._view or incarnation <= self._view[peer]:
            return
        if incarnation > self._successors.get(peer, -1):
            self._successors[peer] = incarnation
        self._arm(now)

    def check(self, now: float) -> ViewDecision | None:
        """Propose when our turn came and no decision has come (the decision at once if our
        own place is a quorum of the view)."""
        if self._due is None or now < self._due or self._epoch is None:
            return None
        self._due = now + self._retry * (len(self._view) + 1)
        return self._prepare()

    def on_promise(self, peer: str, msg: Promise) -> ViewDecision | None:
        """A place's vote for our ballot (or, for a higher ballot, a sign to go higher); the
        decision, when our own place alone was a quorum (None otherwise)."""
        ballot = self._ballot
        if ballot is None or msg.epoch != self._epoch or not self._is_successor(peer, msg):
            return None
        self._number = max(self._number, msg.ballot)
        if Ballot(msg.ballot, msg.proposer) != ballot or self._value is not None:
            return None
        self._promises[peer] = msg
        if not is_quorum(self._view, [*self._promises, self._out.peer_id], ()):
            return None
        return self._propose(ballot)

    def on_accepted(self, peer: str, msg: Accepted) -> ViewDecision | None:
        """A place accepted our change: the decision, once a quorum did (None before). The
        core applies it if it adds us; we send it to the laptops it adds."""
        ballot, value = self._ballot, self._value
        if ballot is None or value is None or msg.epoch != self._epoch:
            return None
        if Ballot(msg.ballot, msg.proposer) != ballot or not self._is_successor(peer, msg):
            return None
        self._accepted.add(peer)
        if msg.proof is not None:
            self._certificate[peer] = msg.proof
        return self._decide_if_quorum(ballot, value)

    # --- private helpers --------------------------------------------------------------------

    def _arm(self, now: float) -> None:
        """Once every place has a newer incarnation, the lowest of them proposes first."""
        if self._due is not None or not self._all_replaced():
            return
        places = sorted(self._view)
        me = self._out.peer_id
        rank = places.index(me) if me in self._view else len(places)
        self._due = now + self._retry * rank

    def _is_successor(self, peer: str, msg: Promise | Accepted) -> bool:
        """Whether `msg` comes from a newer incarnation of a place of the view (one that votes
        in its predecessor's place; the view's own processes all died)."""
        return peer in self._view and msg.incarnation > self._view[peer]

    def _all_replaced(self) -> bool:
        me = self._out.peer_id
        return bool(self._view) and all(
            (p == me and self._out.incarnation > inc) or self._successors.get(p, -1) > inc
            for p, inc in self._view.items()
        )

    def _prepare(self) -> ViewDecision | None:
        assert self._epoch is not None
        out = self._out
        number = max(self._number, self._slot.promised(self._epoch).number) + 1
        ballot = Ballot(number, out.peer_id)
        self._number = number
        self._ballot, self._promises, self._value = ballot, {}, None
        self._accepted, self._certificate = set(), {}
        if self._slot.promise_own(self._epoch, ballot) is None:
            return None
        prepare = Prepare(out.tick_clock(), out.incarnation, {}, self._epoch, ballot.number)
        out.broadcast(prepare, [p for p in sorted(self._view) if p != out.peer_id])
        if not is_quorum(self._view, [out.peer_id], ()):
            return None
        return self._propose(ballot)

    def _propose(self, ballot: Ballot) -> ViewDecision | None:
        assert self._epoch is not None
        out = self._out
        own = self._slot.promise_own(self._epoch, ballot)
        if own is None:
            return None
        value = _chosen(own, self._promises) or self._replacement()
        if value is None or not self._slot.accept_own(self._epoch, ballot, value):
            return None
        self._value = value
        proof = vote_proof(out, self._epoch, ballot, value)
        if proof is not None:
            self._certificate[out.peer_id] = proof
        out.merge_clock(value.marker)
        accept = Accept(
            out.tick_clock(), out.incarnation, {}, self._epoch, ballot.number, value.marker,
            dict(value.removals), dict(value.additions), (),
        )  # fmt: skip
        out.broadcast(accept, [p for p in sorted(self._view) if p != out.peer_id])
        return self._decide_if_quorum(ballot, value)

    def _replacement(self) -> Change | None:
        """The change that puts us (else the lowest place with a successor) in our
        predecessor's place: no entries of it are kept (every process of the view died)."""
        me = self._out.peer_id
        if me in self._view:
            target, inc = me, self._out.incarnation
        else:
            known = sorted(p for p in self._view if p in self._successors)
            if not known:
                return None
            target, inc = known[0], self._successors[known[0]]
        marker = self._out.tick_clock()
        removal = Removal(self._view[target], 0, REASON_EXCLUDED)
        return Change(marker, {target: removal}, {target: inc})

    def _decide_if_quorum(self, ballot: Ballot, value: Change) -> ViewDecision | None:
        assert self._epoch is not None
        if not is_quorum(self._view, [*self._accepted, self._out.peer_id], ()):
            return None
        out = self._out
        members = value.members(self._view)
        decision = ViewDecision(
            out.tick_clock(), out.incarnation, {}, self._epoch + 1, value.marker, members,
            dict(value.removals), dict(value.additions), (), ballot.number, ballot.proposer,
            dict(self._certificate),
        )  # fmt: skip
        for peer in sorted(value.additions):
            if peer != out.peer_id:
                out.send(peer, decision)
        self._ballot, self._value, self._promises = None, None, {}
        self._accepted, self._certificate = set(), {}
        if value.additions:
            # The laptop it adds is the one member of a view of dead places: it recovers
            # from the prefixes and admits the rest of us (we ask it to join, as before).
            self._epoch, self._due = None, None
        else:  # an exclusion: on to the next epoch, among the places left
            self._epoch += 1
            self._view = members
            self._number = 0
        return decision


def _chosen(own: tuple[Ballot, Change | None], promises: Mapping[str, Promise]) -> Change | None:
    """The change accepted under the highest ballot among our own slot's and the promises'."""
    ballot, change = own
    theirs = accepted_change(promises.values())
    if theirs is not None and (change is None or theirs[0] > ballot):
        return theirs[1]
    return change
