"""The link state machine in memory: numbering, acknowledgement, resend, a new incarnation."""

from __future__ import annotations

import pytest

from net._codec import Broken
from net._mesh.link import LinkState, QueuedFrame, existing_connection_wins


def sent(link: LinkState) -> list[tuple[int, bytes]]:
    return [(frame.seq, frame.data) for frame in link.unacked]


def test_frames_are_numbered_from_one_and_kept_until_acknowledged() -> None:
    link = LinkState("b")
    assert link.queue(b"x") == QueuedFrame(1, b"x")
    assert link.queue(b"y") == QueuedFrame(2, b"y")
    link.queue(b"z")
    link.trim(2)
    assert sent(link) == [(3, b"z")]
    link.trim(1)  # an old acknowledgement changes nothing
    assert sent(link) == [(3, b"z")]
    assert link.is_unacked(3) and not link.is_unacked(1)


def test_a_reconnection_to_the_same_incarnation_resends_from_where_the_peer_stands() -> None:
    link = LinkState("b")
    assert link.connected(incarnation=7, resume=0) is False
    for data in (b"a", b"b", b"c", b"d"):
        link.queue(data)
    # The connection drops; the next hello says the peer has the first two.
    assert link.connected(incarnation=7, resume=2) is False
    assert sent(link) == [(3, b"c"), (4, b"d")]
    assert link.queue(b"e").seq == 5


def test_a_new_incarnation_renumbers_what_is_queued_and_forgets_what_was_received() -> None:
    link = LinkState("b")
    link.connected(incarnation=1, resume=0)
    for data in (b"a", b"b", b"c"):
        link.queue(data)
    link.trim(1)
    assert link.receive(1) and link.receive(2)
    assert link.connected(incarnation=2, resume=0) is True
    # Kept, for the new incarnation (a welcome into the group), numbered from one again.
    assert sent(link) == [(1, b"b"), (2, b"c")]
    assert link.received == 0 and link.ack_due() is None
    assert link.queue(b"d").seq == 3
    assert link.remote_incarnation == 2


def test_a_resume_number_of_the_new_incarnation_trims_after_renumbering() -> None:
    link = LinkState("b")
    link.connected(incarnation=1, resume=0)
    for data in (b"a", b"b", b"c"):
        link.queue(data)
    link.connected(incarnation=2, resume=1)
    assert sent(link) == [(2, b"b"), (3, b"c")]


def test_frames_are_delivered_once_in_order_and_a_gap_breaks_the_link() -> None:
    link = LinkState("b")
    assert link.receive(1) is True
    assert link.receive(1) is False  # a resend of something already delivered
    assert link.receive(2) is True
    with pytest.raises(Broken, match="frame 4 from b skips 3"):
        link.receive(4)


def test_one_acknowledgement_covers_a_burst_and_none_is_repeated() -> None:
    link = LinkState("b")
    assert link.ack_due() is None
    for seq in (1, 2, 3):
        link.receive(seq)
    assert link.ack_due() == 3
    assert link.ack_due() is None
    link.receive(4)
    assert link.ack_due() == 4


@pytest.mark.parametrize(
    ("me", "peer", "dialed_by_me", "wins"),
    [
        ("a", "b", True, True),  # a dialed: the smaller id's dial wins
        ("a", "b", False, False),
        ("b", "a", False, True),  # a dialed b: that one wins, seen from b
        ("b", "a", True, False),
    ],
)
def test_of_two_connections_the_one_dialed_by_the_smaller_peer_id_wins(
    me: str, peer: str, dialed_by_me: bool, wins: bool
) -> None:
    assert existing_connection_wins(me, peer, dialed_by_me) is wins
