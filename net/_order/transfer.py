"""Snapshot transfer and state-hash agreement of the core.

Private to `net._order.core`. See "Snapshot transfer and state hashes" in docs/protocol.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

from net._order.log import OrderedLog
from net._order.messages import Snapshot, SnapshotRequest
from net._order.outbox import Outbox
from net.errors import RemoteProtocolError
from net.events import DivergenceDetected, SnapshotInstalled, SnapshotRequested

__all__ = ["JoinWait", "OwedSnapshot", "SnapshotTransfer", "StateHashes"]


class OwedSnapshot(NamedTuple):
    """A snapshot the application owes a peer: the epoch it is at, and the stable index of the
    marker that added a joiner (None for a resync)."""

    epoch: int
    anchor: int | None


class JoinWait(NamedTuple):
    """A joiner awaiting its first snapshot: the epoch that added it, the members that held the
    state then (peer, incarnation), and whom that decision removed."""

    epoch: int
    holders: list[tuple[str, int]]
    removed: set[str]


class SnapshotTransfer:
    """Snapshots we await (as a joiner or to resync) and snapshots we owe others."""

    def __init__(self, outbox: Outbox, log: OrderedLog, snapshot_timeout: float) -> None:
        self._out = outbox
        self._log = log
        self._timeout = snapshot_timeout
        self._incoming: Snapshot | None = None
        self._candidates: list[tuple[str, int]] = []
        self._resyncing = False
        self._deadline: float | None = None
        self._min_index = 0
        # The epoch that added us, while we are a joiner that does not know its place yet.
        self._join_epoch: int | None = None
        self._waiting: dict[str, _WaitingRequest] = {}
        self._owed: dict[tuple[str, int], OwedSnapshot] = {}

    def start_join(self, join_epoch: int, candidates: list[tuple[str, int]], now: float) -> None:
        """A joiner, just added at `join_epoch`, awaits its snapshot from the provider, and
        asks `candidates` if it does not come in time."""
        self._join_epoch = join_epoch
        self._candidates = candidates
        self._deadline = now + self._timeout

    def timer(self) -> float | None:
        """When a late snapshot is asked for again (not once one came: it waits for our stable
        stream to reach it, and a past deadline then would make `tick` spin)."""
        if not self._log.holding or self._incoming is not None:
            return None
        return self._deadline

    def awaited_join(self) -> JoinWait | None:
        """While we are a joiner awaiting our first snapshot (none came yet): what we joined
        (see `net._order.recovery`)."""
        if self._join_epoch is None or self._incoming is not None:
            return None
        if self._log.stable_count is not None or not self._log.holding:
            return None
        return JoinWait(self._join_epoch, list(self._candidates), self._log.join_removals())

    def on_request(
        self, peer: str, incarnation: int, min_index: int, anchor_epoch: int | None
    ) -> None:
        self._waiting[peer] = _WaitingRequest(incarnation, min_index, anchor_epoch)

    def on_snapshot(self, msg: Snapshot) -> None:
        log = self._log
        if not log.holding or self._incoming is not None:
            return
        if log.stable_count is None:
            if msg.anchor is None:
                raise RemoteProtocolError("snapshot.anchor", "a joiner needs the anchor index")
            if msg.epoch < (self._join_epoch or 0):
                return  # owed to an earlier incarnation of ours (sent before its provider knew)
            log.anchor_at(msg.anchor)
        elif msg.index < self._min_index:
            raise RemoteProtocolError("snapshot.index", "older than requested")
        self._incoming = msg

    def adopt_recovered(self, msg: Snapshot) -> None:
        """Take a recovered prefix (`net._order.recovery`) as our joiner's snapshot: as a
        provider's when it holds the marker that added us; when it ends before that marker
        (stable nowhere), the marker is placed right after it: what lay between was stable
        nowhere either, and is lost with the processes that held it."""
        if msg.epoch >= (self._join_epoch or 0):
            self.on_snapshot(msg)
            return
        self._log.anchor_at(msg.index, marker_held=True)
        self._incoming = msg

    def check_retry(self, now: float, view: Mapping[str, int]) -> None:
        """Ask the candidates when the snapshot we await is late."""
        if self._deadline is None or now < self._deadline or not self._log.holding:
            return
        if self._incoming is not None:
            return
        self._deadline = now + self._timeout
        candidates = [(p, i) for p, i in self._candidates if view.get(p) == i]
        if not candidates and self._resyncing:
            # Every authoritative peer is gone: their verdict no longer stands. Carry on; the
            # next hash exchange among the current members judges again.
            self._stop_holding(view)
            return
        if not candidates:
            me = self._out.peer_id
            candidates = sorted((p, i) for p, i in view.items() if p != me)
        if not candidates:
            return
        # The first try of a joiner is the provider's own push; later tries ask every member
        # that may hold the state at once (the first answer is installed): during a rolling
        # restart, asking them in turn can outlast each of them.
        out = self._out
        anchor_epoch = self._join_epoch if self._log.stable_count is None else None
        for target, _ in candidates:
            ts = out.tick_clock()
            request = SnapshotRequest(
                ts, out.incarnation, out.seen(), self._min_index, anchor_epoch
            )
            out.send(target, request)

    def serve_requests(self, view: Mapping[str, int]) -> None:
        """Ask the application for the snapshots whose requests our stable index reached."""
        log = self._log
        if log.holding or log.stable_count is None:
            return
        for peer in sorted(self._waiting):
            incarnation, min_index, anchor_epoch = self._waiting[peer]
            if view.get(peer) != incarnation:
                # Gone, or a newer incarnation took its place: the request and its anchor were
                # its predecessor's (served to the newcomer, an older epoch's anchor misplaced
                # its stream: partners12 100048, real timers).
                del self._waiting[peer]
                continue
            if log.stable_count < min_index:
                continue
            anchor = None
            if anchor_epoch is not None:
                anchor = log.epoch_anchor(anchor_epoch)
                if anchor is None:
                    continue
            del self._waiting[peer]
            self.request_from_app(peer, log.stable_count, log.stable_epoch, anchor)

    def push(self, joiner: str, position: int, epoch: int) -> None:
        """We provide the snapshot of a joiner whose marker is stable at `position`."""
        self.request_from_app(joiner, position, epoch, position)

    def request_from_app(self, peer: str, index: int, epoch: int, anchor: int | None) -> None:
        owed = self._owed.get((peer, index))
        if owed is not None:
            # The joiner asked for what we push it anyway: the app's one answer serves both,
            # labelled with the position it answers (the epoch of the first request: a marker
            # stable since, at the same index, is not in that state and reaches the joiner in
            # its stable stream).
            self._owed[(peer, index)] = OwedSnapshot(
                owed.epoch, owed.anchor if anchor is None else anchor
            )
            return
        self._log.flush_batch()
        self._owed[(peer, index)] = OwedSnapshot(epoch, anchor)
        self._out.emit(SnapshotRequested(peer, index, epoch))

    def take_owed(self, peer: str, index: int) -> OwedSnapshot | None:
        """The snapshot the application now provides for `peer` at `index`, if one is owed."""
        return self._owed.pop((peer, index), None)

    def try_install(self, view: Mapping[str, int]) -> None:
        """Install the snapshot received once our stable stream reached it."""
        snap = self._incoming
        log = self._log
        if snap is None or log.stable_count is None:
            return
        if log.stable_count < snap.index or log.stable_epoch < snap.epoch:
            return
        log.flush_batch()
        log.drop_held_before(snap)
        self._out.emit(
            SnapshotInstalled(snap.index, snap.epoch, snap.state, tuple(log.tentative()))
        )
        self._stop_holding(view)

    def start_resync(self, authority: list[str], view: Mapping[str, int]) -> None:
        """Our state diverged from `authority`'s: hold delivery and ask them for a snapshot."""
        log = self._log
        assert log.stable_count is not None
        log.hold()
        self._min_index = log.stable_count
        self._candidates = [(p, view[p]) for p in authority if p in view]
        self._resyncing = True
        self._deadline = self._out.now  # ask right away, then retry in turn
        self.check_retry(self._out.now, view)

    def _stop_holding(self, view: Mapping[str, int]) -> None:
        self._resyncing = False
        self._incoming = None
        self._deadline = None
        self._log.release(self._out.peer_id, view, self.push)


class StateHashes:
    """The state digests members reported per stable index, until every member reported."""

    def __init__(self, outbox: Outbox, window: int) -> None:
        self._out = outbox
        self._window = window
        self._hashes: dict[int, dict[str, bytes]] = {}
        self._done: set[int] = set()

    def record(
        self,
        peer: str,
        index: int,
        digest: bytes,
        view: Mapping[str, int],
        member_from: Callable[[str], int],
    ) -> list[str] | None:
        """Record `peer`'s digest at `index`; report each divergence once every member that
        held index reported. Returns the authoritative peers when our own digest diverged."""
        if index in self._done:
            return None
        self._hashes.setdefault(index, {})[peer] = digest
        while len(self._hashes) > self._window:
            del self._hashes[min(self._hashes)]
        return self._check(index, view, member_from)

    def _check(
        self, index: int, view: Mapping[str, int], member_from: Callable[[str], int]
    ) -> list[str] | None:
        me = self._out.peer_id
        reports = self._hashes.get(index, {})
        required = [p for p in view if member_from(p) <= index or p == me]
        if me not in reports or any(p not in reports for p in required):
            return None
        del self._hashes[index]
        self._done.add(index)
        if len(self._done) > 4 * self._window:
            self._done.discard(min(self._done))
        groups: dict[bytes, list[str]] = {}
        for peer in sorted(reports):
            if peer in required:
                groups.setdefault(reports[peer], []).append(peer)
        ranked = sorted(groups.items(), key=lambda g: (-len(g[1]), min(g[1])))
        expected, authority = ranked[0]
        for peer in sorted(reports):
            if peer in required and reports[peer] != expected:
                self._out.emit(DivergenceDetected(peer, index, reports[peer], expected))
        return sorted(authority) if reports[me] != expected else None


class _WaitingRequest(NamedTuple):
    """A snapshot request of incarnation `incarnation` waiting for our stable index to reach
    `min_index`."""

    incarnation: int
    min_index: int
    anchor_epoch: int | None
