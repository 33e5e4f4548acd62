"""Membership of the core: the view (peer id -> incarnation) and its epoch, who was removed,
the welcomes a joiner waits for, and applying a decided view change.

Private to `net._order.core`. See "Membership (views)" in docs/protocol.md; the agreement on each
change is in net/_order/agreement.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from net._order.liveness import Liveness
from net._order.log import Key, Marker, OrderedLog
from net._order.messages import Action, Expulsion, ViewDecision
from net._order.outbox import Outbox
from net._order.signatures import change_digest, prior_view, signed_voters
from net._order.viewchange import Certified, Change, is_quorum
from net._order.wirefields import Removal
from net.errors import RemoteProtocolError
from net.events import EntriesRetracted, LogEntry

__all__ = ["Membership"]


class Membership:
    """The view and its epoch, the members removed (and whether we told them), and, for a
    joiner, the members whose decision has welcomed it."""

    def __init__(
        self,
        outbox: Outbox,
        log: OrderedLog,
        liveness: Liveness,
        view: dict[str, int],
    ) -> None:
        self._out = outbox
        self._log = log
        self._liveness = liveness
        self.view = view
        self.epoch = 0
        self._removed: dict[tuple[str, int], int] = {}
        # The expulsion that enforces each decision that removed someone (with its
        # certificate): what we tell a removed member, whenever it shows up.
        self._expulsions: dict[int, Expulsion] = {}
        self._expelled_told: set[tuple[str, int]] = set()
        # A joiner talks to a member only once that member's decision welcomed it.
        self._welcomed: set[str] | None = None
        self.join_epoch: int | None = None
        # Decisions we applied while a member had not welcomed us yet (a joiner), for it: they
        # go to it, in order, with its welcome (else it waits in its old view for ever).
        self._withheld: dict[str, list[ViewDecision]] = {}

    def dests(self) -> list[str]:
        """Members we send to. Members we are removing still get our frames: should the
        removal be withdrawn, they must not have missed any."""
        me, welcomed = self._out.peer_id, self._welcomed
        return [p for p in sorted(self.view) if p != me and (welcomed is None or p in welcomed)]

    @property
    def welcomed(self) -> set[str] | None:
        """A joiner's members whose decision welcomed it, the only ones it sends to (None: it
        sends to every member)."""
        return self._welcomed

    def awaits_welcome(self, peer: str, inc: int) -> bool:
        """Whether incarnation `inc` of `peer` is a member whose decision has not welcomed us
        (a joiner) yet. (A newer incarnation's frames come on a link of their own: the member
        whose welcome we await died without sending it.)"""
        welcomed = self._welcomed
        return welcomed is not None and self.view.get(peer) == inc and peer not in welcomed

    def was_removed(self, peer: str, inc: int) -> bool:
        return (peer, inc) in self._removed

    def maybe_tell_expelled(self, peer: str, inc: int) -> None:
        epoch = self._removed.get((peer, inc))
        if epoch is None or (peer, inc) in self._expelled_told:
            return
        self._expelled_told.add((peer, inc))
        out = self._out
        told = self._expulsions.get(epoch)
        header = (out.tick_clock(), out.incarnation, out.seen())
        if told is None:  # (an unsigned table's, or ours before we kept them)
            out.send(peer, Expulsion(*header, epoch, inc))
        else:
            out.send(peer, replace(told, ts=header[0], seen=header[2], target=inc))

    def believes_expulsion(self, msg: Expulsion) -> bool:
        """At a signed table, whether `msg` proves that a decision removed us: its change
        removes this incarnation and (its certificate holds, as the core checked) for our view
        if it is the next decision; from further ahead, a quorum of our view signed it. A
        decision we applied ourselves did not remove us."""
        out = self._out
        mine = msg.removals.get(out.peer_id)
        if mine is None or mine.incarnation != out.incarnation or msg.epoch <= self.epoch:
            return False
        if msg.epoch == self.epoch + 1:
            return prior_view(msg.members, msg.removals, msg.additions) == self.view
        identity = out.identity
        assert identity is not None
        digest = change_digest(msg.marker, msg.removals, msg.additions)
        ballot = (msg.ballot, msg.proposer)
        voters = signed_voters(
            identity.table, msg.epoch - 1, ballot, digest, msg.certificate, self.view
        )
        return is_quorum(self.view, voters, ())

    def adopt_first_decision(self, msg: ViewDecision) -> list[tuple[str, int]]:
        """A joiner's first decision that adds it: take its view. Returns the members that
        hold the table's state (who may send us our snapshot)."""
        me, now = self._out.peer_id, self._out.now
        self.join_epoch = msg.epoch
        self.epoch = msg.epoch
        self.view = dict(msg.members)
        removals, additions = dict(msg.removals), dict(msg.additions)
        self._log.start_at(Marker(msg.marker, msg.epoch, removals, additions, ""))
        self._out.merge_clock(msg.marker)
        for other in self.view:
            if other != me:
                self._log.track(other)
                self._liveness.watch(other, now, now)
        # Co-joiners start from the same marker: no catch-up is owed either way.
        self._welcomed = {p for p in msg.additions if p != me}
        self._liveness.schedule_ack(now)
        return sorted(
            (p, inc) for p, inc in self.view.items() if p not in msg.additions and p != me
        )

    def talk_to_all(self) -> None:
        """A joiner added by the restarted laptops of a view whose processes all died: no member
        is left whose welcome (and catch-up) it must wait for, so it sends to every member."""
        self._welcomed = None

    def welcome(self, peer: str, msg: ViewDecision) -> bool:
        """A joiner takes the decision of member `peer` that added it: its welcome, with its
        entries after the marker. True when it newly welcomed us."""
        if self._welcomed is None or peer in self._welcomed or peer not in self.view:
            return False
        for entry in msg.entries:
            if entry.peer != peer or self._log.settled(entry.key):
                raise RemoteProtocolError("decide.entries", "catch-up entry not after the marker")
        out = self._out
        out.merge_clock(msg.ts)
        self._liveness.heard(peer, out.now)
        self._log.advance_frontier(peer, msg.ts)
        self._welcomed.add(peer)
        for entry in msg.entries:
            self._log.on_entry(entry)
        # Our own entries so far went only to the members that had welcomed us.
        for entry in self._log.tentative():
            if entry.peer == out.peer_id:
                seen = out.seen_below(entry.ts)  # a frame acknowledges only what it follows
                action = Action(entry.ts, out.incarnation, seen, entry.payload, entry.proof)
                out.send(peer, action)
        for held in self._withheld.pop(peer, []):
            out.send(peer, replace(held, ts=out.tick_clock(), seen=out.seen()))
        self._check_welcomed()
        return True

    def apply_decision(
        self,
        epoch: int,
        change: Change,
        members: dict[str, int],
        relays: Mapping[str, tuple[LogEntry, ...]],
        certified: Certified,
    ) -> None:
        """Install decided view `epoch` (its marker in the log at key (marker, "")) and tell
        everyone, with the `certified` votes it rests on: survivors get the `relays` they may
        lack, joiners our later entries, removed members an expulsion."""
        marker, removals, additions = change.marker, dict(change.removals), dict(change.additions)
        marker_key: Key = (marker, "")
        retracted = self._remove_members(removals, epoch)
        self._add_members(additions, marker_key)
        self._log.forget_reports_about(removals)
        self.epoch = epoch
        out = self._out
        out.merge_clock(marker)
        provider = min(p for p in members if p not in additions)
        self._log.insert(Marker(marker, epoch, removals, additions, provider))
        if retracted and not self._log.holding:
            out.emit(EntriesRetracted(tuple(sorted(retracted))))
        # Members added after our own join start from the same marker as we do: nothing is
        # owed either way, so they need no welcome of theirs.
        if self._welcomed is not None:
            self._welcomed.update(additions)
        self._send_decision(marker_key, members, change, relays, certified)
        if removals:
            self._expulsions[epoch] = Expulsion(
                0, out.incarnation, {}, epoch, 0, marker, members, removals, additions,
                *certified,
            )  # fmt: skip
        for target, removal in sorted(removals.items()):
            if target == out.peer_id:
                continue
            ts = out.tick_clock()
            told = replace(self._expulsions[epoch], ts=ts, seen=out.seen())
            out.send(target, replace(told, target=removal.incarnation))
            self._expelled_told.add((target, removal.incarnation))
        self._check_welcomed()
        self._liveness.schedule_ack(out.now)

    def _remove_members(self, removals: Mapping[str, Removal], epoch: int) -> list[LogEntry]:
        """Drop the removed members, their entries beyond their cut (returned) and what we knew
        of them."""
        retracted: list[LogEntry] = []
        for target, removal in sorted(removals.items()):
            retracted += self._log.retract(target, removal.ts)
            self._removed[(target, removal.incarnation)] = epoch
            self._log.forget(target)
            self._liveness.forget(target)
            self._withheld.pop(target, None)
            del self.view[target]
        return retracted

    def _add_members(self, additions: Mapping[str, int], marker_key: Key) -> None:
        now = self._out.now
        for target, inc in sorted(additions.items()):
            self.view[target] = inc
            self._log.add_member(target, marker_key)
            self._liveness.watch(target, now, now)

    def _send_decision(
        self,
        marker_key: Key,
        members: dict[str, int],
        change: Change,
        relays: Mapping[str, tuple[LogEntry, ...]],
        certified: Certified,
    ) -> None:
        """Tell everyone: survivors may lack relayed entries, joiners need our later entries.
        (Not yet a member that has not welcomed us: its welcome brings it our entries, and
        anything sent before would make that catch-up go back in time on the link; the
        decision waits for that welcome.)"""
        out = self._out
        me = out.peer_id
        for dest in sorted(members):
            if dest == me:
                continue
            if dest in change.additions:
                entries = self._log.own_entries_after(me, marker_key)
            else:
                entries = relays[dest]
            decision = ViewDecision(
                0, out.incarnation, {}, self.epoch, marker_key[0], members,
                dict(change.removals), dict(change.additions), entries, *certified,
            )  # fmt: skip
            if self._welcomed is not None and dest not in self._welcomed:
                self._withheld.setdefault(dest, []).append(decision)
                continue
            out.send(dest, replace(decision, ts=out.tick_clock(), seen=out.seen()))

    def _check_welcomed(self) -> None:
        me = self._out.peer_id
        if self._welcomed is not None and all(p in self._welcomed for p in self.view if p != me):
            self._welcomed = None
