"""The ordered log of the core: pending entries, stability, and delivery of the stable stream.

Private to `net._order.core`. See "Order and stability (the ordered log)" in docs/protocol.md.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from net._order.digests import EntryDigests
from net._order.messages import Snapshot
from net._order.outbox import Outbox
from net._order.wirefields import MAX_INT, REASON_LEFT, Removal, Seen
from net.events import (
    EntriesRetracted,
    EntriesStabilized,
    EntryReceived,
    LogEntry,
    MemberExcluded,
    MemberJoined,
    MemberLeft,
    MemberReturned,
)

__all__ = ["Key", "Marker", "OrderedLog", "PushSnapshot", "Rank", "tie_draw"]

Key = tuple[int, str]
"""What names an item of the log: (timestamp, author), markers at (ts, "")."""

Rank = tuple[int, int, str]
"""The place of an item in the log: (timestamp, tie draw, author). Items sort by timestamp;
equal timestamps by a draw (see `tie_draw`), not by peer id; a marker first at its timestamp."""

PushSnapshot = Callable[[str, int, int], None]
"""Called with (joiner, stable position, epoch) when a marker we provide for becomes stable."""


@functools.lru_cache(maxsize=1 << 14)
def tie_draw(salt: bytes, ts: int, author: str) -> int:
    """The draw that orders items with equal timestamps: a hash of the table's agreed `salt`,
    the timestamp and the author, so each timestamp gets its own fair draw among the authors
    (-1 for a marker, which comes first). A pure function of its arguments, so the latest
    draws are kept: a log ranks the same keys again and again."""
    if not author:
        return -1
    data = b"%s\x00%d\x00%s" % (salt, ts, author.encode())
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


@dataclass(frozen=True)
class Marker:
    """A decided view change, placed in the log at key (ts, "")."""

    ts: int
    epoch: int
    removals: dict[str, Removal]
    additions: dict[str, int]
    provider: str

    @property
    def key(self) -> Key:
        return (self.ts, "")


class OrderedLog:
    """Pending entries and markers, what each member holds (its frontier, what it reported of
    the others, since when it is a member), the stable position, and the delivery of stable
    items, held back while a snapshot is awaited."""

    def __init__(
        self,
        outbox: Outbox,
        *,
        joining: bool,
        salt: bytes = b"",
        digests: EntryDigests | None = None,
    ) -> None:
        self._out = outbox
        self._digests = digests or EntryDigests(enabled=False)
        self._salt = salt
        self._pending: dict[Key, LogEntry | Marker] = {}
        self._heap: list[Rank] = []
        self.last_stable_key: Key = (0, "")
        self.stable_count: int | None = None if joining else 0
        self.stable_epoch = 0
        self._epoch_index: dict[int, int] = {0: 0}
        # The stable index from which each member added since our start reports state hashes.
        self._member_from: dict[str, int] = {}
        # Per member: the highest timestamp received from it, the highest timestamp of each
        # author it reported, and the marker key of its addition (for members added later).
        self._frontier: dict[str, int] = {}
        self._reports: dict[str, dict[str, int]] = {}
        self._since: dict[str, Key] = {}
        # Members frozen for the view change under way: their frames count for stability only
        # up to what their promise froze, until the change is decided.
        self._frozen: set[str] = set()
        # What we froze ourselves (author -> timestamp): we stabilise no entry of an author
        # beyond it either, as if we had reported only that (see `freeze_self`).
        self._own_frozen: dict[str, int] | None = None
        # Delivery of stable items is held back while a snapshot is awaited.
        self.holding = joining
        self._held: list[tuple[int, LogEntry | Marker]] = []
        self._batch: list[LogEntry] = []
        self._batch_first = 0
        self._join_marker: Marker | None = None  # a joiner's: the decision that added it

    # --- entries ----------------------------------------------------------------------------

    def rank(self, key: Key) -> Rank:
        """The place of the item named `key` in the log."""
        return (key[0], tie_draw(self._salt, *key), key[1])

    def in_order(self, entries: Iterable[LogEntry]) -> list[LogEntry]:
        """`entries` in log order."""
        return sorted(entries, key=lambda e: self.rank(e.key))

    def settled(self, key: Key) -> bool:
        """Whether the item `key` sorts at or before the last stable item."""
        return self.rank(key) <= self.rank(self.last_stable_key)

    def tentative(self) -> list[LogEntry]:
        """Entries received but not yet stable, in log order."""
        return self.in_order(e for e in self._pending.values() if isinstance(e, LogEntry))

    def insert(self, item: LogEntry | Marker) -> None:
        self._pending[item.key] = item
        heapq.heappush(self._heap, self.rank(item.key))
        if isinstance(item, LogEntry):
            self._digests.add(item)

    def on_entry(self, entry: LogEntry) -> None:
        """Take in a remote entry unless we have it already."""
        if self.settled(entry.key) or entry.key in self._pending:
            return
        self.insert(entry)
        if not self.holding:
            self._out.emit(EntryReceived(entry))

    def adopt(self, entries: Iterable[LogEntry]) -> None:
        """A view change's relayed entries: its versions replace ours (an equivocator's)."""
        for entry in entries:
            held = self._pending.get(entry.key)
            if not isinstance(held, LogEntry) or held.payload == entry.payload:
                self.on_entry(entry)
                continue
            self._pending[entry.key] = entry
            self._digests.replace(held, entry)
            if not self.holding:
                self._out.emit(EntriesRetracted((held,)))
                self._out.emit(EntryReceived(entry))

    def retract(self, target: str, cut: int) -> list[LogEntry]:
        """Drop the pending entries of removed member `target` beyond its cut."""
        since = self._since.get(target, (0, ""))
        retracted = []
        for key in [k for k in self._pending if k[1] == target and k > since]:
            if key[0] > cut:
                item = self._pending.pop(key)
                assert isinstance(item, LogEntry)
                retracted.append(item)
        return retracted

    def relay_for(
        self,
        dest: str,
        removals: Mapping[str, int | None],
        bounds: Mapping[str, int] | None = None,
        *,
        versions: bool = False,
    ) -> tuple[LogEntry, ...]:
        """Entries of members being removed that `dest` may lack (above what it reported), or
        with `versions` may hold in another version (above what its digests confirmed)."""
        result = []
        for target, cut in removals.items():
            low = (bounds or {}).get(target)
            if low is None:
                low = self.reported(dest, target)
            if versions and self._digests.enabled:
                low = min(low, self._digests.confirmed(dest, target, self.frontier(target)))
            since = self._since.get(target, (0, ""))
            for key, item in self._pending.items():
                if (
                    key[1] == target
                    and key > since
                    and key[0] > low
                    and (cut is None or key[0] <= cut)
                    and isinstance(item, LogEntry)
                ):
                    result.append(item)
        return tuple(self.in_order(result))

    def own_entries_after(self, author: str, key: Key) -> tuple[LogEntry, ...]:
        """Pending entries of `author` after `key`, in log order."""
        return tuple(
            self.in_order(
                e
                for k, e in self._pending.items()
                if k[1] == author and k > key and isinstance(e, LogEntry)
            )
        )

    # --- what each member holds -------------------------------------------------------------

    def track(self, peer: str) -> None:
        """Start following what member `peer` holds, from nothing."""
        self._frontier[peer] = 0
        self._reports[peer] = {}

    def add_member(self, peer: str, marker_key: Key) -> None:
        """A member added by the view change at `marker_key`."""
        self._since[peer] = marker_key
        self._digests.added(peer, marker_key[0])
        self.track(peer)
        self._member_from[peer] = MAX_INT  # until its marker is stable

    def start_at(self, marker: Marker) -> None:
        """A joiner's log starts right after the marker that added it (and its co-joiners)."""
        marker_key = marker.key
        self.last_stable_key = marker_key
        self.stable_epoch = marker.epoch
        self._since = {p: marker_key for p in marker.additions}
        self._join_marker = marker
        self._digests.start_at(marker.ts - 1)

    def forget(self, peer: str) -> None:
        """Member `peer` was removed."""
        for table in (self._since, self._frontier, self._reports):
            table.pop(peer, None)
        self._frozen.discard(peer)
        self._member_from.pop(peer, None)
        self._digests.forget(peer)

    def forget_reports_about(self, removed: Mapping[str, Removal]) -> None:
        for reports in self._reports.values():
            for target in removed:
                reports.pop(target, None)

    def heard(
        self,
        peer: str,
        ts: int,
        seen: Seen,
        view: Mapping[str, int],
        digests: tuple[int, tuple[bytes, ...]] | None = None,
    ) -> None:
        """A frame of member `peer` stamped `ts` carrying `seen` (and its `digests`)."""
        if peer in self._frozen:
            return
        self._digests.report(peer, seen, digests)
        self._frontier[peer] = ts
        reports = self._reports.setdefault(peer, {})
        for author, (author_inc, author_ts) in seen.items():
            if view.get(author) == author_inc and author_ts > reports.get(author, 0):
                reports[author] = author_ts

    def freeze_member(self, peer: str, clock: int, frozen: Seen, view: Mapping[str, int]) -> None:
        """Member `peer` froze for a view change at `clock` with `frozen` as its ``seen``: all its
        frames up to `clock` are here (links are FIFO), and until the change is decided none of
        its later frames moves what it holds for stability."""
        if peer not in self._frontier:
            return
        self._frontier[peer] = max(self._frontier[peer], clock)
        reports = self._reports.setdefault(peer, {})
        for author, (author_inc, author_ts) in frozen.items():
            if view.get(author) == author_inc and author_ts > reports.get(author, 0):
                reports[author] = author_ts
        self._frozen.add(peer)

    def freeze_self(self, frozen: Seen, view: Mapping[str, int]) -> None:
        """We froze for a view change with `frozen` as our ``seen``: the decided cut of an author
        may be as low as what we froze of it, so we stabilise none of its entries beyond that
        (every other member's count of us is capped there too)."""
        self._own_frozen = {a: ts for a, (inc, ts) in frozen.items() if view.get(a) == inc}

    def thaw_members(self) -> None:
        """The view change was decided: frames count in full again."""
        self._frozen.clear()
        self._own_frozen = None

    def advance_frontier(self, peer: str, ts: int) -> None:
        """A joiner's welcome from `peer`, stamped `ts`."""
        self._frontier[peer] = ts

    def frontier(self, peer: str) -> int:
        return self._frontier.get(peer, 0)

    def reported(self, peer: str, author: str) -> int:
        """The highest timestamp of `author` that `peer` reported holding."""
        return self._reports.get(peer, {}).get(author, 0)

    def since(self, peer: str) -> Key | None:
        """The marker key of `peer`'s addition, if it was added after our own start."""
        return self._since.get(peer)

    def join_markers(self, peers: Iterable[str]) -> dict[str, int]:
        """The marker timestamp that added each of `peers`, for those added after our own start
        (and us, if we joined): what each can hand on of a removed member starts there."""
        return {p: self._since[p][0] for p in peers if p in self._since}

    def member_from(self, peer: str) -> int:
        return self._member_from.get(peer, 0)

    def base(self) -> int:
        """The base of our frames' digests: every entry stamped at or below it is stable here."""
        return max(0, self.last_stable_key[0] - 1)

    def entries_of(self, author: str, low: int, high: int) -> list[LogEntry]:
        """Our pending entries of `author` stamped in (low, high], in timestamp order."""
        since = self._since.get(author, (0, ""))
        found = [
            e
            for (ts, peer), e in self._pending.items()
            if peer == author and low < ts <= high and (ts, peer) > since
            if isinstance(e, LogEntry)
        ]
        return sorted(found, key=lambda e: e.ts)

    def pending_entry(self, key: Key) -> LogEntry | None:
        item = self._pending.get(key)
        return item if isinstance(item, LogEntry) else None

    def seen(self, view: Mapping[str, int]) -> dict[str, tuple[int, int]]:
        """The ``seen`` vector of our next frame."""
        return {p: (view[p], ts) for p, ts in self._frontier.items() if p in view}

    # --- stability and delivery ---------------------------------------------------------------

    def stabilize(
        self, peer_id: str, view: Mapping[str, int], limit: int | None, push: PushSnapshot
    ) -> None:
        """Move every item stable at `peer_id`, up to `limit`, to the stable stream."""
        while self._heap:
            ts, _, author = self._heap[0]
            key = (ts, author)
            item = self._pending.get(key)
            if item is None:
                heapq.heappop(self._heap)
                continue
            if limit is not None and key[0] > limit:
                break
            if not self._is_stable(key, peer_id, view):
                break
            heapq.heappop(self._heap)
            del self._pending[key]
            self.last_stable_key = key
            assert self.stable_count is not None
            if isinstance(item, LogEntry):
                self.stable_count += 1
            else:
                self.stable_epoch = item.epoch
                self._epoch_index[item.epoch] = self.stable_count
                for peer in item.additions:
                    self._member_from[peer] = self.stable_count
            if self.holding:
                self._held.append((self.stable_count, item))
            else:
                self._announce(self.stable_count, item, peer_id, view, push)

    def flush_batch(self) -> None:
        if self._batch:
            self._out.emit(EntriesStabilized(self._batch_first, tuple(self._batch)))
            self._batch = []

    def has_batch(self) -> bool:
        return bool(self._batch)

    def hold(self) -> None:
        """Hold back stable items from now on (a snapshot will replace them)."""
        self.flush_batch()
        self.holding = True
        self._held = []

    def drop_held_before(self, snapshot: Snapshot) -> None:
        """Forget the held items that an incoming snapshot already contains."""
        self._held = [
            (position, item)
            for position, item in self._held
            if (
                item.epoch > snapshot.epoch
                if isinstance(item, Marker)
                else position > snapshot.index
            )
        ]

    def release(self, peer_id: str, view: Mapping[str, int], push: PushSnapshot) -> None:
        """Deliver what was held back and resume normal delivery."""
        held, self._held = self._held, []
        self.holding = False
        for position, item in held:
            self._announce(position, item, peer_id, view, push)
        self.flush_batch()

    def join_removals(self) -> set[str]:
        """Whom the decision that added us (a joiner) removed."""
        return set(self._join_marker.removals) if self._join_marker is not None else set()

    def anchor_at(self, anchor: int, *, marker_held: bool = False) -> None:
        """A joiner learns the stable index of the marker that added it. `marker_held`: the
        state it installs ends before that marker (a recovered prefix: see
        `net._order.recovery`), so the marker is delivered right after it, as we provide it."""
        self.stable_count = anchor
        self._epoch_index[self.stable_epoch] = anchor
        if marker_held and self._join_marker is not None:
            own = replace(self._join_marker, provider=self._out.peer_id)
            self._held.append((anchor, own))

    def epoch_anchors(self) -> dict[int, int]:
        """The stable index of each view change's marker we know (epoch -> index)."""
        return dict(self._epoch_index)

    def epoch_anchor(self, epoch: int) -> int | None:
        """The stable index at which the marker of `epoch` sits, if we know it."""
        return self._epoch_index.get(epoch)

    def _is_stable(self, key: Key, peer_id: str, view: Mapping[str, int]) -> bool:
        ts, author = key
        author_required = author in view and self._since.get(author, (0, "")) < key
        own = self._own_frozen
        if own is not None and author_required and author != peer_id and own.get(author, 0) < ts:
            return False
        for peer in view:
            if peer == peer_id:
                continue
            since = self._since.get(peer)
            if since is not None and since >= key:
                continue  # joined after this entry
            if self._frontier[peer] < ts:
                return False
            if author_required and peer != author and self._reports[peer].get(author, 0) < ts:
                return False
            if author_required and peer != author and self._digests.enabled:
                reached = MAX_INT if author == peer_id else self._frontier.get(author, 0)
                if self._digests.confirmed(peer, author, reached) < ts:
                    return False  # not confirmed with the same entries of the author
        return True

    def _announce(
        self,
        position: int,
        item: LogEntry | Marker,
        peer_id: str,
        view: Mapping[str, int],
        push: PushSnapshot,
    ) -> None:
        if isinstance(item, LogEntry):
            if not self._batch:
                self._batch_first = position
            self._batch.append(item)
            return
        self.flush_batch()
        for target, removal in sorted(item.removals.items()):
            if removal.reason == REASON_LEFT:
                self._out.emit(MemberLeft(target, removal.incarnation, item.epoch, position))
            else:
                self._out.emit(
                    MemberExcluded(target, removal.incarnation, removal.ts, item.epoch, position)
                )
        for target, inc in sorted(item.additions.items()):
            cls = MemberReturned if inc > 0 else MemberJoined
            self._out.emit(cls(target, inc, item.epoch, position))
        if item.provider == peer_id:
            for target in sorted(item.additions):
                if target in view and target != peer_id:
                    push(target, position, item.epoch)
