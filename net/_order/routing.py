"""Which part a live member's frame concerns: one handler per frame kind. Private to
`net._order.core`; the core checks and admits the frame first (see docs/protocol.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from net._order.agreement import ViewAgreement
from net._order.evidence import Equivocations
from net._order.liveness import Liveness
from net._order.log import OrderedLog
from net._order.membership import Membership
from net._order.messages import (
    Accept,
    Accepted,
    Action,
    Evidence,
    Expulsion,
    Heartbeat,
    LeaveNotice,
    Message,
    Prepare,
    Promise,
    Snapshot,
    SnapshotRequest,
    StateHash,
    ViewDecision,
)
from net._order.outbox import Outbox
from net._order.recovery import Recovery
from net._order.signatures import UnprovenClaim
from net._order.transfer import SnapshotTransfer
from net.events import LogEntry

__all__ = ["FrameParts", "MemberFrames"]


class FrameParts(NamedTuple):
    """The parts a member's frames go to, and what the core does itself: record a state hash
    (peer, stable index, digest) and leave the group when a decision expels us (its epoch); the
    proofs of equivocation (`evidence`)."""

    outbox: Outbox
    log: OrderedLog
    liveness: Liveness
    agreement: ViewAgreement
    members: Membership
    transfer: SnapshotTransfer
    recovery: Recovery
    record_hash: Callable[[str, int, bytes], None]
    expel: Callable[[int], None]
    evidence: Equivocations


class MemberFrames:
    """Hands each frame of a live member to the part it concerns (`route`)."""

    def __init__(self, parts: FrameParts) -> None:
        self._parts = parts

    def route(self, peer: str, msg: Message) -> None:
        """Handle one admitted frame of member `peer`; a kind no part handles here is dropped."""
        handler = _HANDLERS.get(type(msg))
        if handler is not None:
            handler(self, peer, msg)

    def _action(self, peer: str, msg: Action) -> None:
        parts = self._parts
        parts.log.on_entry(LogEntry(msg.ts, peer, msg.payload, msg.proof))
        parts.liveness.schedule_ack(parts.outbox.now)

    def _heartbeat(self, peer: str, msg: Heartbeat) -> None:
        """A heartbeat only says the member is alive (the core noted that on admitting it)."""

    def _state_hash(self, peer: str, msg: StateHash) -> None:
        self._parts.record_hash(peer, msg.index, msg.digest)

    def _leave(self, peer: str, msg: LeaveNotice) -> None:
        self._parts.agreement.on_leave(peer, msg.proof)

    def _prepare(self, peer: str, msg: Prepare) -> None:
        self._parts.agreement.on_prepare(peer, msg)

    def _promise(self, peer: str, msg: Promise) -> None:
        self._parts.agreement.on_promise(peer, msg)

    def _accept(self, peer: str, msg: Accept) -> None:
        self._parts.agreement.on_accept(peer, msg)

    def _accepted(self, peer: str, msg: Accepted) -> None:
        self._parts.agreement.on_accepted(peer, msg)

    def _decision(self, peer: str, msg: ViewDecision) -> None:
        self._parts.agreement.on_decision(peer, msg)

    def _snapshot_request(self, peer: str, msg: SnapshotRequest) -> None:
        self._parts.transfer.on_request(peer, msg.incarnation, msg.min_index, msg.anchor_epoch)

    def _snapshot(self, peer: str, msg: Snapshot) -> None:
        parts = self._parts
        if parts.members.view.get(peer) != msg.incarnation:
            parts.recovery.on_offer(peer, msg)  # a returning incarnation's recovered prefix
        else:
            parts.transfer.on_snapshot(msg)

    def _expulsion(self, peer: str, msg: Expulsion) -> None:
        parts = self._parts
        if msg.target != parts.outbox.incarnation:
            return
        if parts.outbox.identity is not None and not parts.members.believes_expulsion(msg):
            raise UnprovenClaim("expel.removals", "no decision of our view removed us")
        parts.expel(msg.epoch)

    def _evidence(self, peer: str, msg: Evidence) -> None:
        parts = self._parts
        if parts.outbox.identity is not None:
            parts.evidence.on_evidence(peer, msg, parts.members.view)


# Every kind of frame is its own class (no subclasses), so the exact type picks the handler.
_HANDLERS: dict[type[Message], Callable[[MemberFrames, str, Any], None]] = {
    Action: MemberFrames._action,
    Heartbeat: MemberFrames._heartbeat,
    StateHash: MemberFrames._state_hash,
    LeaveNotice: MemberFrames._leave,
    Prepare: MemberFrames._prepare,
    Promise: MemberFrames._promise,
    Accept: MemberFrames._accept,
    Accepted: MemberFrames._accepted,
    ViewDecision: MemberFrames._decision,
    SnapshotRequest: MemberFrames._snapshot_request,
    Snapshot: MemberFrames._snapshot,
    Expulsion: MemberFrames._expulsion,
    Evidence: MemberFrames._evidence,
}
