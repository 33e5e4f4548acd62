"""A snapshot is labelled with the position the application's answer holds (issue 24: stalls
3064 and 3143 ended with one stable index, two states)."""

from __future__ import annotations

from net._order.log import OrderedLog
from net._order.outbox import Outbox
from net._order.transfer import SnapshotTransfer
from net.events import SnapshotRequested


def test_a_request_merged_with_an_owed_push_keeps_the_pushs_epoch() -> None:
    out = Outbox("a", 0, 0.0)
    transfer = SnapshotTransfer(out, OrderedLog(out, joining=False), 1.0)
    transfer.push("j", 40, epoch=6)  # the marker that added j is stable at index 40
    # The next marker (epoch 7) became stable at the same index before the app answered, and
    # j's own request for index 40 arrives: the app's one answer is its state as of epoch 6.
    transfer.request_from_app("j", 40, 7, 40)
    assert [e for e in out.drain_events() if isinstance(e, SnapshotRequested)] == [
        SnapshotRequested("j", 40, 6)
    ]
    owed = transfer.take_owed("j", 40)
    assert owed is not None and (owed.epoch, owed.anchor) == (6, 40)
