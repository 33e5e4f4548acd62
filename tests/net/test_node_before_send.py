"""``Node(before_send=...)``: after each call into the core the application sees the core before
any frame it wants sent goes out, so a vote is kept before anyone can hear it. In memory: a real
core, the mesh's sends recorded instead of written."""

from __future__ import annotations

from typing import Any

from net._mesh.handshake import Hello
from net._order.core import OrderingCore
from net._order.messages import JoinRequest, encode_message
from net.node import Node


def test_the_application_sees_each_new_vote_before_the_frames_that_carry_it() -> None:
    core = OrderingCore("ann", ["ann"], 0.0)
    happened: list[tuple[str, Any]] = []

    def before_send(seen: OrderingCore) -> None:
        assert seen is core
        happened.append(("kept", seen.vote_record()))

    node = Node(core, Hello(1, "t", "ann", "Ann", 0), lambda events: None, before_send=before_send)
    node.mesh.send = lambda peer, data: happened.append(("sent", peer))  # type: ignore[method-assign]
    epoch_before = core.epoch

    # Bo asks to join: Ann alone is the view's quorum, so she votes and decides at once, and
    # tells Bo; her vote record changes with it.
    node._frame("bo", encode_message(JoinRequest(1, 1, {})))

    assert core.epoch == epoch_before + 1 and "bo" in core.members
    first_send = next(i for i, (what, _) in enumerate(happened) if what == "sent")
    kept_before_sending = [record for what, record in happened[:first_send] if what == "kept"]
    assert kept_before_sending and kept_before_sending[-1] == core.vote_record()
    assert kept_before_sending[-1].epoch == core.epoch
