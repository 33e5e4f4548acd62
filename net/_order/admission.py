"""A joiner's first decisions: the one that adds it and the welcomes of the members that were
there before. Private to `net._order.core`; see "Joiners" in docs/protocol.md.
"""

from __future__ import annotations

from collections.abc import Callable

from net._order.joining import JoinAttempt
from net._order.membership import Membership
from net._order.messages import ViewDecision
from net._order.outbox import Outbox
from net._order.transfer import SnapshotTransfer
from net.errors import RemoteProtocolError

__all__ = ["Admission"]


class Admission:
    """Takes the decision that adds us (a member's, or the one our own ballot in our
    predecessor's place made) and the welcomes after it; `on_member` runs when it made us a
    member, `unseen` when a member newly welcomed us (it has not seen our vote)."""

    def __init__(
        self,
        outbox: Outbox,
        members: Membership,
        joining: JoinAttempt,
        transfer: SnapshotTransfer,
        on_member: Callable[[], None],
        unseen: Callable[[str], None],
    ) -> None:
        self._out = outbox
        self._members = members
        self._joining = joining
        self._transfer = transfer
        self._on_member = on_member
        self._unseen = unseen

    def on_decision(self, peer: str, msg: ViewDecision) -> None:
        """A decision from `peer` while we join, or before `peer` welcomed us."""
        out, members = self._out, self._members
        if msg.members.get(out.peer_id) != out.incarnation:
            return
        if peer not in msg.members or peer in msg.additions:
            raise RemoteProtocolError("decide.members", "sender is not an established member")
        if members.join_epoch is None:
            if msg.additions.get(out.peer_id) != out.incarnation:
                # A later decision (from a co-joiner, say) overtook the one that added us; that
                # one comes from each of its deciders (FIFO: before anything later), with their
                # entries after our marker. Adopting this one would skip them.
                self._joining.keep(peer, msg)
                return
            self._adopt(msg)
            if msg.members.get(peer) != msg.incarnation:
                # Decided by the restarted laptops of a view whose processes all died (its
                # sender votes in its predecessor's place): no member is left to welcome us.
                members.talk_to_all()
                return
        elif msg.epoch != members.join_epoch:
            return
        if members.welcome(peer, msg):
            self._unseen(peer)

    def on_own_decision(self, msg: ViewDecision) -> None:
        """Our ballot in our predecessor's place decided `msg` (see `net._order.orphan`): it
        added us, or we sent it to the laptops it adds."""
        if msg.additions.get(self._out.peer_id) == self._out.incarnation:
            self._adopt(msg)
            self._members.talk_to_all()

    def _adopt(self, msg: ViewDecision) -> None:
        holders = self._members.adopt_first_decision(msg)
        self._on_member()
        self._joining.admitted()
        self._transfer.start_join(msg.epoch, holders, self._out.now)
