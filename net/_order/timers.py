"""A member's timers: heartbeats and acknowledgements, suspicion, the grounds for exclusion, the
agreement's retries and snapshot retries, and when the next of them is due. Private to
`net._order.core`; see "Liveness" in docs/protocol.md.
"""

from __future__ import annotations

from typing import NamedTuple

from net._order.agreement import ViewAgreement
from net._order.guard import FrameGuard
from net._order.liveness import Liveness
from net._order.membership import Membership
from net._order.outbox import Outbox
from net._order.recovery import Recovery
from net._order.transfer import SnapshotTransfer

__all__ = ["MemberTimers", "TimerParts"]


class TimerParts(NamedTuple):
    """The parts whose timers a member runs."""

    outbox: Outbox
    liveness: Liveness
    members: Membership
    agreement: ViewAgreement
    guard: FrameGuard
    transfer: SnapshotTransfer
    recovery: Recovery


class MemberTimers:
    """Runs a member's timers (`run`) and says when they are next due (`next_due`)."""

    def __init__(self, parts: TimerParts, suspect_timeout: float, exclude_timeout: float) -> None:
        self._parts = parts
        self._suspect_timeout = suspect_timeout
        self._exclude_timeout = exclude_timeout

    def run(self, now: float) -> None:
        """Suspect the silent, note the grounds, retry ballots and snapshots, send heartbeats."""
        parts = self._parts
        self._check_silence(now)
        parts.agreement.check_timers(now)
        parts.transfer.check_retry(now, parts.members.view)
        parts.recovery.check(now, parts.members.view, parts.agreement.successors())
        parts.liveness.send_beats(now, parts.members.dests())

    def next_due(self) -> float | None:
        """The earliest time at which `run` has work to do, or None."""
        parts = self._parts
        agreement, members = parts.agreement, parts.members
        now = parts.outbox.now
        times = agreement.timers()
        # A member already silent for the exclusion timeout is grounds already: no timer.
        due = parts.liveness.next_due(
            members.view, members.welcomed, now, self._suspect_timeout, self._exclude_timeout
        )
        if due is not None:
            times.append(due)
        violators = parts.guard.poisoned_in(members.view)
        if violators and not violators <= agreement.violators_noted():
            times.append(now)
        for retry in (parts.transfer.timer(), parts.recovery.timer()):
            if retry is not None:
                times.append(retry)
        return min(times) if times else None

    def _check_silence(self, now: float) -> None:
        parts = self._parts
        agreement, liveness = parts.agreement, parts.liveness
        liveness.check_silence(now, agreement.survivors(), self._suspect_timeout)
        view = parts.members.view
        violators = parts.guard.poisoned_in(view)
        # Frames flow during view changes too (only what they count for stability is capped),
        # so a view change does not restart the measure of stalls.
        stalled = liveness.stalled(now, agreement.survivors(), self._exclude_timeout)
        violators |= {(p, view[p]) for p in stalled}
        # Clocks beyond every honest delay: grounds like silence (a majority must back them).
        violators |= {(p, view[p]) for p in parts.guard.clock_suspects() if p in view}
        agreement.note_violators(violators)
