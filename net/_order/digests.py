"""Digests of each author's entries, so that a member can tell that another holds the same
entries of an author as itself (see "Equivocation" in docs/protocol.md). Private to
`net._order.core`; only at a signed table.

Every frame carries ``dg``: a base B (the sender's stable frontier: every entry stamped at or
below B is stable there) and, for each member X of its ``seen`` (X -> T), the digest of X's
entries the sender holds stamped in (B, T]: an XOR of a hash of each entry, so that anyone who
holds X's entries from B on can compute its own value for any (B, T] it has reached. A report
that equals ours confirms X's entries up to T with that member (those at or below B are stable
at the sender, so every member confirmed them); one ahead of us waits until we reach T; one that
differs is a mismatch, handed to the evidence (net/_order/evidence.py).
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable

from net._codec import pack
from net._order.wirefields import DIGEST_SIZE, Seen
from net.events import LogEntry

__all__ = ["EntryDigests", "entry_hash"]

_WAITING_CAP = 16
"""Reports ahead of us kept per (member, author): the oldest and the newest stay."""
_PRUNE_AT = 256
"""Entries of one author kept before the ones below every base in use are folded away."""


def entry_hash(entry: LogEntry) -> int:
    """An entry's share of a digest: a hash of its timestamp and payload."""
    data = pack([entry.ts, entry.payload])
    return int.from_bytes(hashlib.blake2b(data, digest_size=DIGEST_SIZE).digest(), "big")


class EntryDigests:
    """Per author, the cumulative XOR of the hashes of its entries we hold, in timestamp order;
    per member and author, how far its reports confirmed ours, the reports that wait for us,
    and the mismatches found (member, author, base, T), for the evidence to answer."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self._ts: dict[str, list[int]] = {}
        self._cum: dict[str, list[int]] = {}
        self._floor: dict[str, tuple[int, int]] = {}  # author -> (base, value there)
        self._start = 0  # a joiner holds no entry stamped at or below its marker
        self._born: dict[str, int] = {}  # a member added later: the marker that added it
        self._confirmed: dict[str, dict[str, int]] = {}
        self._waiting: dict[tuple[str, str], list[tuple[int, int, bytes]]] = {}
        self._bases: dict[str, int] = {}
        self.mismatches: list[tuple[str, str, int, int]] = []

    # --- what we hold ---------------------------------------------------------------------------

    def add(self, entry: LogEntry) -> None:
        """An entry we hold from now on (ours, received or relayed)."""
        floor = self._floor.get(entry.peer, (self._start, 0))[0]
        if not self.enabled or entry.ts <= max(floor, self._born.get(entry.peer, 0)):
            return
        stamps = self._ts.setdefault(entry.peer, [])
        cums = self._cum.setdefault(entry.peer, [])
        share = entry_hash(entry)
        at_floor = self._floor.get(entry.peer, (self._start, 0))[1]
        if not stamps or entry.ts > stamps[-1]:
            stamps.append(entry.ts)
            cums.append((cums[-1] if cums else at_floor) ^ share)
            return
        at = bisect.bisect_left(stamps, entry.ts)
        if at < len(stamps) and stamps[at] == entry.ts:
            return  # one entry per key: the first one we got stays
        stamps.insert(at, entry.ts)
        cums.insert(at, cums[at - 1] if at else at_floor)
        for i in range(at, len(cums)):
            cums[i] ^= share

    def replace(self, old: LogEntry, new: LogEntry) -> None:
        """`new` takes the place of `old` under the same key (the version a view change carries
        of a member being removed): our digests follow, and what any member confirmed of that
        author from there on matched the old version, so it counts no more."""
        stamps = self._ts.get(old.peer, [])
        at = bisect.bisect_left(stamps, old.ts)
        if not self.enabled or at == len(stamps) or stamps[at] != old.ts:
            return
        change = entry_hash(old) ^ entry_hash(new)
        cums = self._cum[old.peer]
        for i in range(at, len(cums)):
            cums[i] ^= change
        for confirmed in self._confirmed.values():
            if confirmed.get(old.peer, 0) >= old.ts:
                confirmed[old.peer] = old.ts - 1

    def start_at(self, base: int) -> None:
        """A joiner holds the entries stamped above `base` only."""
        self._start = base

    def added(self, peer: str, marker: int) -> None:
        """Member `peer` was added at `marker`: its entries (this incarnation's) come after it;
        entries of an earlier incarnation of the same id count no more."""
        self.forget(peer)
        self._born[peer] = marker

    def forget(self, peer: str) -> None:
        """Member `peer` was removed: neither its entries nor its reports matter any more."""
        for table in (self._ts, self._cum, self._floor, self._confirmed, self._bases, self._born):
            table.pop(peer, None)
        for confirmed in self._confirmed.values():
            confirmed.pop(peer, None)
        for key in [k for k in self._waiting if peer in k]:
            del self._waiting[key]

    def value(self, author: str, base: int, upto: int) -> int | None:
        """Our digest of `author`'s entries in (base, upto], None if we cannot tell."""
        floor, at_floor = self._floor.get(author, (self._start, 0))
        born = self._born.get(author, 0)
        if base < born:
            base = born  # none of its entries lies below
        if base < floor:
            return None
        stamps, cums = self._ts.get(author, []), self._cum.get(author, [])

        def cum(ts: int) -> int:
            i = bisect.bisect_right(stamps, ts)
            return cums[i - 1] if i else at_floor

        return cum(upto) ^ cum(base)

    def frame_digests(self, base: int, seen: Seen) -> tuple[int, tuple[bytes, ...]] | None:
        """The ``dg`` of a frame carrying `seen`, over `base` (None at an unsigned table)."""
        if not self.enabled:
            return None
        result = []
        for author, (_, upto) in sorted(seen.items()):
            value = self.value(author, base, upto)
            result.append(b"" if value is None else value.to_bytes(DIGEST_SIZE, "big"))
        return base, tuple(result)

    # --- what the others hold ---------------------------------------------------------------------

    def report(self, peer: str, seen: Seen, digests: tuple[int, tuple[bytes, ...]] | None) -> None:
        """A frame of member `peer` carrying `seen` and `digests` (already checked alike)."""
        if not self.enabled or digests is None:
            return
        base, values = digests
        self._bases[peer] = base
        for (author, (_, upto)), digest in zip(sorted(seen.items()), values, strict=True):
            if digest and upto > self._confirmed.get(peer, {}).get(author, 0):
                waiting = self._waiting.setdefault((peer, author), [])
                waiting.append((base, upto, digest))
                if len(waiting) > _WAITING_CAP:
                    del waiting[1]

    def confirmed(self, peer: str, author: str, reached: int) -> int:
        """How far `peer` confirmed `author`'s entries, once the reports waiting for us up to
        `reached` (our own frontier of `author`) are checked."""
        waiting = self._waiting.get((peer, author))
        if waiting:
            self._settle(peer, author, waiting, reached)
        return self._confirmed.get(peer, {}).get(author, 0)

    def _settle(
        self, peer: str, author: str, waiting: list[tuple[int, int, bytes]], reached: int
    ) -> None:
        confirmed = self._confirmed.setdefault(peer, {})
        keep = []
        for base, upto, digest in waiting:
            if upto <= confirmed.get(author, 0):
                continue
            if upto > reached:
                keep.append((base, upto, digest))
                continue
            ours = self.value(author, base, upto)
            if ours is None:
                continue  # below what we hold: a later report will do
            if ours.to_bytes(DIGEST_SIZE, "big") == digest:
                confirmed[author] = upto
            else:
                self.mismatches.append((peer, author, base, upto))
        waiting[:] = keep

    def take_mismatches(self) -> list[tuple[str, str, int, int]]:
        found, self.mismatches = self.mismatches, []
        return found

    def prune(self, own_base: int, members: Callable[[], list[str]]) -> None:
        """Fold away what no base in use reaches down to (below our stable frontier and every
        member's last base)."""
        if not any(len(stamps) > _PRUNE_AT for stamps in self._ts.values()):
            return
        low = min([own_base] + [self._bases.get(p, 0) for p in members()])
        for author, stamps in self._ts.items():
            if len(stamps) <= _PRUNE_AT or low <= self._floor.get(author, (self._start, 0))[0]:
                continue
            cut = bisect.bisect_right(stamps, low)
            if cut == 0:
                continue
            at_low = self._cum[author][cut - 1]
            del stamps[:cut]
            del self._cum[author][:cut]
            self._floor[author] = (low, at_low)
