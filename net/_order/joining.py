"""A joiner's side of joining: it asks its contacts until its first decision, keeps what
co-joiners send early, votes in its predecessor's place and offers its recovered prefix. Private
to `net._order.core`; see "Joiners" in docs/protocol.md.
"""

from __future__ import annotations

from net._order.agreement import MAX_KEPT_FRAMES
from net._order.messages import (
    Accepted,
    JoinRequest,
    Message,
    Promise,
    SnapshotRequest,
    ViewDecision,
)
from net._order.orphan import OrphanBallot
from net._order.outbox import Outbox
from net._order.recovery import Recovered, RecoveredPrefix
from net._order.slotvote import SlotVoter
from net._order.viewchange import VoteRecord

__all__ = ["JoinAttempt"]


class JoinAttempt:
    """The join requests to `contacts` and their retry deadline, the frames a joiner gets before
    its first decision tells it the view, and the vote of a returning incarnation."""

    def __init__(
        self,
        outbox: Outbox,
        contacts: list[str],
        retry_interval: float,
        predecessor: VoteRecord | None,
        recovered: Recovered | None = None,
    ) -> None:
        self._out = outbox
        self._contacts = contacts
        self._retry_interval = retry_interval
        self._slot = SlotVoter(outbox, predecessor)
        # Only a laptop that kept its stable prefix runs its predecessor's ballot: the one the
        # decision adds recovers from the prefixes, and without one it could not.
        record = predecessor if recovered is not None else None
        self._orphan = OrphanBallot(outbox, self._slot, record, retry_interval)
        self._prefix = RecoveredPrefix(outbox, recovered)
        self._early: list[tuple[str, Message]] = []
        self._deadline: float | None = None

    @property
    def deadline(self) -> float | None:
        """When the join requests go out again, or our ballot in our predecessor's place is
        due (None once admitted, or before the first ask)."""
        orphan = self._orphan.timer()
        if orphan is None or self._deadline is None:
            return self._deadline
        return min(self._deadline, orphan)

    def ask(self, now: float) -> None:
        """Send a join request to every contact and set the retry deadline."""
        out = self._out
        ts = out.tick_clock()
        out.broadcast(JoinRequest(ts, out.incarnation, {}), self._contacts)
        self._deadline = now + self._retry_interval

    def retry_if_due(self, now: float) -> ViewDecision | None:
        """Ask again once the deadline passed without a decision that admits us; propose in
        our predecessor's place when that is due (see `net._order.orphan`): the decision, if
        our ballot made one."""
        if self._deadline is not None and now >= self._deadline:
            self.ask(now)
        if self._deadline is None:
            return None
        return self._orphan.check(now)

    def orphan_vote(self, peer: str, msg: Message, now: float) -> ViewDecision | None:
        """A co-joiner's join request, or a place's vote for our ballot in our predecessor's
        place: the decision, once that ballot made one."""
        if self._deadline is None:
            return None  # admitted already
        if isinstance(msg, JoinRequest):
            self._orphan.heard_join(peer, msg.incarnation, now)
        elif isinstance(msg, Promise):
            return self._orphan.on_promise(peer, msg)
        elif isinstance(msg, Accepted):
            return self._orphan.on_accepted(peer, msg)
        return None

    def admitted(self) -> None:
        """The first decision admitted us: no more join requests, no ballot of ours."""
        self._deadline = None

    def vote(self, peer: str, msg: Message) -> None:
        """A member's Prepare or Accept for the view change that adds us (a returning
        incarnation votes in its predecessor's place), or its request for the prefix we
        recovered (see "Recovery from durable prefixes")."""
        if isinstance(msg, SnapshotRequest) and not msg.seen:
            self._prefix.answer(peer, msg)  # asked of us, not of our predecessor
        elif isinstance(msg, SnapshotRequest):
            self.keep(peer, msg)  # meant for our predecessor: once admitted, we may serve it
        elif self._out.incarnation > 0:
            self._slot.on_message(peer, msg)

    def vote_record(self) -> VoteRecord | None:
        """Our vote so far, for our successor (None without a predecessor's record)."""
        return self._slot.record()

    def keep(self, peer: str, msg: Message) -> None:
        """Keep a frame a co-joiner sent before our first decision, or a later decision that
        overtook the one adding us (up to `MAX_KEPT_FRAMES`)."""
        if len(self._early) < MAX_KEPT_FRAMES:
            self._early.append((peer, msg))

    def take_kept(self) -> list[tuple[str, Message]]:
        """The frames kept so far, in arrival order; none are kept after."""
        early, self._early = self._early, []
        return early
