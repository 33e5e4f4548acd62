"""Proofs of equivocation: an author that signed two different entries under one key (see
"Equivocation" in docs/protocol.md). Private to `net._order.core`; only at a signed table.

On a mismatch of digests (net/_order/digests.py) we send that member our own entries of the
author in the window (an `Evidence` frame). A member that then holds two entries of the author
at one key, each with a right proof and with different payloads, holds a proof anyone can check
alone: it sends those two entries to every member. Each member that checks one ignores the
author from then on (so a majority observes it and removes it; the witness stays) and caps the
author's cut below the first proven equivocation (`caps`, carried by its promises): nobody
stabilised the author's entries from there, since each half's digests differ from the other's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from net._order.digests import EntryDigests
from net._order.log import OrderedLog
from net._order.messages import Evidence
from net._order.outbox import Outbox
from net.events import LogEntry, ProtocolViolated

__all__ = ["Equivocations"]

EVIDENCE_ENTRIES = 32
"""Entries of the author sent after a mismatch, from the start of the window on."""
RESEND_AFTER = 0.5
"""Seconds before the same member is sent evidence about the same author again."""


class Equivocations:
    """The proofs of equivocation we hold ((author, incarnation) -> the two entries), and when
    we last sent each member evidence about each author."""

    def __init__(
        self,
        out: Outbox,
        log: OrderedLog,
        digests: EntryDigests,
        ignore: Callable[[str, int], None],
    ) -> None:
        self._out = out
        self._log = log
        self._digests = digests
        self._ignore = ignore
        self._proven: dict[tuple[str, int], tuple[LogEntry, LogEntry]] = {}
        self._sent: dict[tuple[str, str], float] = {}

    def caps(self, view: Mapping[str, int]) -> dict[str, int]:
        """For each member of `view` we hold a proof against: the highest timestamp its cut
        may have (below its first proven equivocation)."""
        return {
            author: first.ts - 1
            for (author, inc), (first, _) in self._proven.items()
            if view.get(author) == inc
        }

    def answer_mismatches(self, view: Mapping[str, int]) -> None:
        """Send each member whose digests differ from ours our entries of the author there."""
        out = self._out
        for peer, author, base, upto in self._digests.take_mismatches():
            inc = view.get(author)
            if inc is None or peer not in view or (author, inc) in self._proven:
                continue
            last = self._sent.get((peer, author))
            if last is not None and out.now - last < RESEND_AFTER:
                continue
            entries = self._log.entries_of(author, base, upto)[:EVIDENCE_ENTRIES]
            if not entries:
                continue
            self._sent[(peer, author)] = out.now
            ts = out.tick_clock()
            out.send(peer, Evidence(ts, out.incarnation, out.seen(), author, inc, tuple(entries)))

    def on_evidence(self, peer: str, msg: Evidence, view: Mapping[str, int]) -> None:
        """Entries of an author, their proofs already checked (`check_entries`): a proof if two
        of them, or one of them and ours, differ at one key."""
        author, inc = msg.author, msg.author_incarnation
        if view.get(author) != inc or author == self._out.peer_id:
            return
        theirs: dict[tuple[int, str], LogEntry] = {}
        for entry in msg.entries:
            if entry.peer != author:
                continue
            other = theirs.setdefault(entry.key, entry)
            ours = self._log.pending_entry(entry.key)
            for held in (other, ours):
                if held is not None and held.payload != entry.payload:
                    self._prove(author, inc, held, entry, view)
                    return

    def _prove(
        self, author: str, inc: int, first: LogEntry, second: LogEntry, view: Mapping[str, int]
    ) -> None:
        known = self._proven.get((author, inc))
        if known is not None and known[0].ts <= first.ts:
            return
        self._proven[(author, inc)] = (first, second)
        self._ignore(author, inc)
        out = self._out
        out.emit(ProtocolViolated(author, "evidence", f"two entries signed at {first.ts}"))
        dests = [p for p in sorted(view) if p not in (out.peer_id, author)]
        pair = (first, second)
        frame = Evidence(out.tick_clock(), out.incarnation, out.seen(), author, inc, pair)
        out.broadcast(frame, dests)
