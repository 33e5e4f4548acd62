"""Membership of the core: the view (peer id -> incarnation) and its epoch, who was removed,
the welcomes a joiner waits for, and applying a decided view change.

Private to `net.core`. See "Membership (views)" in docs/protocol.md; the agreement on each
change is in net/_agreement.py.
"""

from __future__ import annotations

from collections.abc import Mapping

from net._liveness import Liveness
from net._log import Key, Marker, OrderedLog
from net._outbox import Outbox
from net.errors import RemoteProtocolError
from net.events import EntriesRetracted, LogEntry
from net.messages import Action, Expulsion, Removal, ViewDecision

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
        self._expelled_told: set[tuple[str, int]] = set()
        # A joiner talks to a member only once that member's decision welcomed it.
        self._welcomed: set[str] | None = None
        self.join_epoch: int | None = None

    def dests(self) -> list[str]:
        """Members we send to. Members we are removing still get our frames: should the
        removal be withdrawn, they must not have missed any."""
        me, welcomed = self._out.peer_id, self._welcomed
        return [p for p in sorted(self.view) if p != me and (welcomed is None or p in welcomed)]

    def awaits_welcome(self, peer: str) -> bool:
        """Whether `peer` is a member whose decision has not welcomed us (a joiner) yet."""
        welcomed = self._welcomed
        return welcomed is not None and peer in self.view and peer not in welcomed

    def was_removed(self, peer: str, inc: int) -> bool:
        return (peer, inc) in self._removed

    def maybe_tell_expelled(self, peer: str, inc: int) -> None:
        epoch = self._removed.get((peer, inc))
        if epoch is None or (peer, inc) in self._expelled_told:
            return
        self._expelled_told.add((peer, inc))
        out = self._out
        out.send(peer, Expulsion(out.tick_clock(), out.incarnation, out.seen(), epoch, inc))

    def adopt_first_decision(self, msg: ViewDecision) -> list[tuple[str, int]]:
        """A joiner's first decision that adds it: take its view. Returns the members that
        hold the table's state (who may send us our snapshot)."""
        me, now = self._out.peer_id, self._out.now
        self.join_epoch = msg.epoch
        self.epoch = msg.epoch
        self.view = dict(msg.members)
        self._log.start_at((msg.marker, ""), msg.epoch, msg.additions)
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
        self._check_welcomed()
        return True

    def apply_decision(
        self,
        epoch: int,
        marker: int,
        members: dict[str, int],
        removals: dict[str, Removal],
        additions: dict[str, int],
        relays: Mapping[str, tuple[LogEntry, ...]],
    ) -> None:
        """Install decided view `epoch` (its marker in the log at key (marker, "")) and tell
        everyone: survivors get the `relays` they may lack, joiners our later entries."""
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
        self._send_decision(marker_key, members, removals, additions, relays)
        for target, removal in sorted(removals.items()):
            if target == out.peer_id:
                continue
            ts = out.tick_clock()
            expulsion = Expulsion(ts, out.incarnation, out.seen(), epoch, removal.incarnation)
            out.send(target, expulsion)
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
        removals: dict[str, Removal],
        additions: dict[str, int],
        relays: Mapping[str, tuple[LogEntry, ...]],
    ) -> None:
        """Tell everyone: survivors may lack relayed entries, joiners need our later entries.
        (Not a member that has not welcomed us yet: its welcome brings it our entries, and
        anything sent before would make that catch-up go back in time on the link.)"""
        out = self._out
        me = out.peer_id
        for dest in sorted(members):
            if dest == me or (self._welcomed is not None and dest not in self._welcomed):
                continue
            if dest in additions:
                entries = self._log.own_entries_after(me, marker_key)
            else:
                entries = relays[dest]
            ts = out.tick_clock()
            decision = ViewDecision(
                ts,
                out.incarnation,
                out.seen(),
                self.epoch,
                marker_key[0],
                members,
                removals,
                additions,
                entries,
            )
            out.send(dest, decision)

    def _check_welcomed(self) -> None:
        me = self._out.peer_id
        if self._welcomed is not None and all(p in self._welcomed for p in self.view if p != me):
            self._welcomed = None
