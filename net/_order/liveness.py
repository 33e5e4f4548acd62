"""Liveness of the core: heartbeats, the acknowledgement schedule, suspicion, and members that
stall the table while they still speak.

Private to `net._order.core`. See "Liveness" in docs/protocol.md.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping

from net._order.clock import RECENT_FRAMES
from net._order.messages import Heartbeat
from net._order.outbox import Outbox
from net.events import MemberRecovered, MemberSuspected

__all__ = ["Liveness"]


class Liveness:
    """When we last heard each member, whom we suspect, and when an acknowledgement is due."""

    def __init__(self, outbox: Outbox, heartbeat_interval: float, ack_delay: float) -> None:
        self._out = outbox
        self._heartbeat_interval = heartbeat_interval
        self._ack_delay = ack_delay
        self._last_heard: dict[str, float] = {}
        self._suspected: set[str] = set()
        self._ack_due: float | None = None
        self._watched_at: dict[str, float] = {}
        self._awake_since = 0.0  # since when we have been running without a gap
        self._last_check: float | None = None

    def watch(self, peer: str, now: float, sent_at: float) -> None:
        """Start watching member `peer`, heard at `now`, last sent to at `sent_at`."""
        self._last_heard[peer] = now
        self._watched_at[peer] = now
        self._out.track(peer, sent_at)

    def forget(self, peer: str) -> None:
        """Member `peer` was removed."""
        self._last_heard.pop(peer, None)
        self._watched_at.pop(peer, None)
        self._out.untrack(peer)
        self._suspected.discard(peer)

    def heard(self, peer: str, now: float) -> None:
        """A frame from member `peer` (one we are removing counts as heard, not recovered)."""
        self._last_heard[peer] = now

    def recovered(self, peer: str) -> None:
        """Member `peer`, processed normally again, is no longer suspected."""
        if peer in self._suspected:
            self._suspected.discard(peer)
            self._out.emit(MemberRecovered(peer))

    def silence(self, peer: str, now: float) -> float:
        """How long member `peer` has been silent."""
        return now - self._last_heard[peer]

    @property
    def last_heard(self) -> Mapping[str, float]:
        """When we last heard each member (local time)."""
        return self._last_heard

    def check_silence(self, now: float, watched: Iterable[str], suspect_timeout: float) -> None:
        """Report the watched members silent for `suspect_timeout` as suspected."""
        for peer in watched:
            silence = now - self._last_heard[peer]
            if silence >= suspect_timeout and peer not in self._suspected:
                self._suspected.add(peer)
                self._out.emit(MemberSuspected(peer))

    def stalled(
        self, now: float, watched: Iterable[str], exclude_after: float, calm: bool = True
    ) -> set[str]:
        """The watched members that stall the table while they still speak: grounds to remove
        them, like silence for `exclude_after`.

        - *Frozen seen*: it acknowledged no newer frame of ours for ``2 * exclude_after`` while
          we kept sending it frames (heartbeats at least): nothing of ours can become stable.
          (An honest member that cannot hear us proposes our removal within `exclude_after`,
          and the view change restarts the measure: the membership rules judge that cut.)
        - *Sparse frames*: over the last ``2 * exclude_after`` it sent fewer than a third of
          the frames its heartbeats alone would make: every entry waits for its next frame to
          become stable (one frame every 3 heartbeat intervals is the worst that stays).

        Clocks held back are protocol violations (see net/_order/guard.py). Time during which we
        were not running (a gap between two checks: our process paused) does not count, nor
        does a time that is not `calm`: both start the measure again."""
        interval = self._heartbeat_interval
        if not calm or self._last_check is None or now - self._last_check > 5 * interval:
            self._awake_since = now
        self._last_check = now
        table = self._out.table
        window = 2 * exclude_after
        needed = min(RECENT_FRAMES - 1, max(3, int(window / interval / 3)))
        stalled = set()
        for peer in watched:
            acked_at = table.acked_at(peer)
            since = max(self._awake_since, self._watched_at.get(peer, now))
            frozen_since = since if acked_at is None else max(acked_at, since)
            if (
                acked_at is not None
                and now - frozen_since >= 2 * exclude_after
                and self._out.last_sent_to(peer) > frozen_since
            ):
                stalled.add(peer)
            if now - since >= window and not table.has_frames_since(peer, now - window, needed):
                stalled.add(peer)
        return stalled

    def schedule_ack(self, now: float) -> None:
        if self._ack_due is None:
            self._ack_due = now + self._ack_delay

    def cancel_ack(self) -> None:
        """A frame to every member just acknowledged everything."""
        self._ack_due = None

    def ack_pending(self) -> bool:
        return self._ack_due is not None

    def send_beats(self, now: float, dests: list[str]) -> None:
        """Acknowledge when due (to everyone), else send heartbeats to members we left idle."""
        if self._ack_due is not None and now >= self._ack_due:
            due = dests
            self._ack_due = None
        else:
            interval = self._heartbeat_interval
            due = [d for d in dests if now >= self._out.last_sent_to(d) + interval]
        if due:
            out = self._out
            out.broadcast(Heartbeat(out.tick_clock(), out.incarnation, out.seen()), due)

    def next_due(
        self,
        view: Mapping[str, int],
        welcomed: Container[str] | None,
        now: float,
        suspect_after: float,
        exclude_after: float,
    ) -> float | None:
        """When the next ack or heartbeat is due to the members we send to (those of `view` that
        `welcomed` us, when it is not None), or the next suspicion or exclusion of a member silent
        for less than `exclude_after` (one silent that long is grounds already); None: none.
        One pass, no list: this runs after every input."""
        me = self._out.peer_id
        last_sent_to, interval = self._out.last_sent_to, self._heartbeat_interval
        last_heard, suspected = self._last_heard, self._suspected
        due: float | None = None
        sends = False
        for peer in view:
            if peer == me:
                continue
            if welcomed is None or peer in welcomed:
                sends = True
                beat = last_sent_to(peer) + interval
                if due is None or beat < due:
                    due = beat
            heard = last_heard[peer]
            if now - heard < exclude_after:
                if peer not in suspected and (due is None or heard + suspect_after < due):
                    due = heard + suspect_after
                if due is None or heard + exclude_after < due:
                    due = heard + exclude_after
        if sends and self._ack_due is not None and (due is None or self._ack_due < due):
            due = self._ack_due
        return due
