"""Recovery from durable prefixes: the stable state a restarted laptop brings back, and the one
member left without a snapshot taking the longest of them. Private to `net._order.core`; see
"Recovery from durable prefixes" in docs/protocol.md.

A laptop keeps what was stable on disk as it goes (the game's match log), so a restart loses
only what was not stable yet. The core says what it holds durably (`durable_position`: the
stable position, with the stable index of each view change's marker it knows); the application
keeps its stable state at that position beside it, and a new incarnation starts with both
(`Recovered`). A returning incarnation answers a member's snapshot request with its recovered
prefix (`RecoveredPrefix`). A member that waits for its joiner's snapshot while every member
that held the state was replaced by a new incarnation (all of them restarted before the hand-
over: no live copy is left) asks those incarnations for their prefixes, and takes the longest that
reaches the marker that added it (`Recovery`), as if a provider had sent it; with a state it may
propose again, and the table goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from net._order.messages import Snapshot, SnapshotRequest
from net._order.outbox import Outbox
from net.events import Payload

if TYPE_CHECKING:
    from net._order.log import OrderedLog
    from net._order.transfer import SnapshotTransfer

__all__ = ["DurablePosition", "Recovered", "RecoveredPrefix", "Recovery", "durable_position"]


class DurablePosition(NamedTuple):
    """Where a core's stable stream stands: `stable_index` stable entries, the view changes up
    to `epoch`, and the stable index of each view change's marker it knows (epoch -> index)."""

    stable_index: int
    epoch: int
    anchors: Mapping[int, int]


class Recovered(NamedTuple):
    """What a restarted laptop brings back: the durable position of its last incarnation that
    held the table's state, and the application's stable state at exactly that position."""

    position: DurablePosition
    state: Payload


def durable_position(log: OrderedLog) -> DurablePosition | None:
    """The position of the stable stream `log` delivered, or None while it holds no state of its
    own (a joiner before its snapshot, a diverged member resynchronising: its state is no
    prefix) or stable entries wait to be handed out (the application is behind the log)."""
    if log.stable_count is None or log.holding or log.has_batch():
        return None
    return DurablePosition(log.stable_count, log.stable_epoch, log.epoch_anchors())


class RecoveredPrefix:
    """A joining incarnation's recovered prefix, offered to a member that asks for a snapshot."""

    def __init__(self, outbox: Outbox, recovered: Recovered | None) -> None:
        self._out = outbox
        self._recovered = recovered

    def answer(self, peer: str, msg: SnapshotRequest) -> None:
        """Offer our prefix to a joiner member that asks for its snapshot, with the stable index
        of the marker that added it if our prefix holds it (the asker judges)."""
        if self._recovered is not None and msg.anchor_epoch is not None:
            out, epoch = self._out, msg.anchor_epoch
            out.send(peer, prefix_offer(out.tick_clock(), out.incarnation, self._recovered, epoch))


def prefix_offer(ts: int, incarnation: int, recovered: Recovered, epoch: int) -> Snapshot:
    """A recovered prefix as a snapshot frame for a joiner that joined at `epoch`: its anchor
    is the stable index of that epoch's marker, None when the prefix does not hold it."""
    index, last_epoch, anchors = recovered.position
    anchor = anchors.get(epoch) if last_epoch >= epoch else None
    return Snapshot(ts, incarnation, {}, index, last_epoch, anchor, recovered.state)


class Recovery:
    """A member's wait for its joiner's snapshot once no live member holds the state: the
    prefixes it asked the new incarnations for, and the longest, once every one answered."""

    def __init__(
        self,
        outbox: Outbox,
        transfer: SnapshotTransfer,
        own: Recovered | None,
        interval: float,
    ) -> None:
        self._out = outbox
        self._transfer = transfer
        self._own = own
        self._interval = interval
        self._epoch = 0
        self._unheard_removed = False
        self._asked: dict[str, int] = {}
        self._offers: dict[str, Snapshot] = {}
        self._deadline: float | None = None

    def timer(self) -> float | None:
        """When the new incarnations are asked again (None: not recovering)."""
        return self._deadline

    def check(self, now: float, view: Mapping[str, int], successors: Mapping[str, int]) -> None:
        """Ask for the recovered prefixes once every member that held the state was replaced
        by a new incarnation (`successors`: peer -> the incarnation that asked to join in its
        predecessor's place): its process died, with its copy of the state."""
        waiting = self._transfer.awaited_join()
        if waiting is None:
            self._reset()
            return
        epoch, holders, removed = waiting
        held = [(p, inc) for p, inc in holders if view.get(p) == inc]
        if any(successors.get(p, -1) <= inc for p, inc in held):
            self._reset()  # a member that holds the state may be alive: it provides
            return
        replaced = {p: successors[p] for p, _ in held}
        if self._deadline is not None and now < self._deadline:
            return
        # Of the laptops our marker removed, only our own predecessor offers (what we kept).
        me = self._out.peer_id
        self._unheard_removed = bool(removed - {me}) or (me in removed and self._own is None)
        self._ask(now, epoch, replaced)

    def on_offer(self, peer: str, msg: Snapshot) -> None:
        """A new incarnation's recovered prefix, which we asked for."""
        if self._asked.get(peer) != msg.incarnation:
            return
        if msg.anchor is not None and (msg.anchor > msg.index or msg.epoch < self._epoch):
            return  # not a prefix that holds our marker
        self._offers[peer] = msg
        self._take_longest()

    def _ask(self, now: float, epoch: int, replaced: Mapping[str, int]) -> None:
        out = self._out
        if self._epoch != epoch:
            self._offers = {}
        self._epoch = epoch
        self._asked = dict(sorted(replaced.items()))
        self._deadline = now + self._interval
        for peer in self._asked:
            if peer not in self._offers:
                # It acknowledges nothing (no `seen`): asked of the new incarnation, not of the
                # member whose slot it takes, which is how it tells this from a request of ours
                # for its predecessor's snapshot (those it keeps, and does not answer).
                out.send(peer, SnapshotRequest(out.tick_clock(), out.incarnation, {}, 0, epoch))
        if self._own is not None:  # our own predecessor's prefix counts too
            self._offers[out.peer_id] = prefix_offer(0, out.incarnation, self._own, epoch)
        self._take_longest()

    def _take_longest(self) -> None:
        """Once every member that held the state offered its prefix: install the longest (the
        lowest peer id among equals), as if a provider had sent it. Every one is a prefix of
        the one stable log, so the longest holds the others; when it ends before the marker
        that added us, that marker was stable nowhere, and what lay before it past the longest
        prefix was stable nowhere either."""
        if not self._asked or any(p not in self._offers for p in self._asked):
            return
        offers = sorted(self._offers.items(), key=lambda o: (-o[1].index, -o[1].epoch, o[0]))
        best = offers[0][1]
        if best.anchor is None and (best.epoch != self._epoch - 1 or self._unheard_removed):
            # A view change between it and our marker that no prefix holds, or a laptop our
            # marker removed that offered nothing: either may hide stable entries. We wait.
            return
        self._reset()
        self._transfer.adopt_recovered(best)

    def _reset(self) -> None:
        self._asked = {}
        self._offers = {}
        self._deadline = None
