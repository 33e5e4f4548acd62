"""The datagram path's pure parts in memory: the codec and its tag, the reorder buffer of a link,
and the resend timer (time passed in)."""

from __future__ import annotations

import itertools
import random

import msgpack
import pytest

from net._codec import Broken
from net._mesh.addresses import parse_gossip
from net._mesh.datagrams import (
    MAX_DATAGRAM,
    Datagram,
    ResendTimer,
    announcement,
    datagram_secret,
    link_key,
    open_datagram,
    parse_announcement,
    seal,
)
from net._mesh.link import LinkState, QueuedFrame, ReorderBuffer
from tests.seeds import sweep

KEY = bytes(range(32))


def keys(peer: str) -> bytes | None:
    return KEY if peer == "a" else None


def test_a_sealed_datagram_opens_with_its_key() -> None:
    datagram = Datagram("a", 7, 3, 4, b"move")
    assert open_datagram(seal(KEY, datagram), keys) == datagram
    ack = Datagram("a", 7, 9)
    assert open_datagram(seal(KEY, ack), keys) == ack


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"", "malformed"),
        (b"\xc1" * 40, "malformed"),
        (msgpack.packb(["a", 7, 3, 4]) + bytes(16), "malformed"),  # four fields
        (msgpack.packb(["a", -1, 3, 4, b"x"]) + bytes(16), "malformed"),
        (msgpack.packb(["a", True, 3, 4, b"x"]) + bytes(16), "malformed"),
        (msgpack.packb(["a", 7, 3, 0, b"x"]) + bytes(16), "malformed"),  # data without a number
        (msgpack.packb(["a", 7, 3, 4, "text"]) + bytes(16), "malformed"),
        (msgpack.packb({"a": 1}) + bytes(16), "malformed"),
        (bytes(MAX_DATAGRAM + 1), "malformed"),
        (seal(KEY, Datagram("b", 7, 3, 4, b"x")), "unknown sender"),
        (seal(bytes(32), Datagram("a", 7, 3, 4, b"x")), "bad tag"),  # forged: another key
    ],
)
def test_what_is_not_a_datagram_of_a_known_sender_is_dropped_with_a_reason(
    raw: bytes, reason: str
) -> None:
    assert open_datagram(raw, keys) == reason


def test_any_altered_byte_fails_the_tag() -> None:
    raw = seal(KEY, Datagram("a", 7, 3, 4, b"move"))
    for index in range(len(raw)):
        garbled = bytearray(raw)
        garbled[index] ^= 0x01
        assert isinstance(open_datagram(bytes(garbled), keys), str), index


def test_a_coded_tables_datagram_key_is_not_the_announced_one() -> None:
    """The announcement goes over TCP unencrypted: at a coded table the key mixes in a secret
    that only the two ends of the connection hold."""
    announced = bytes(32)
    assert link_key(announced, b"") == announced
    secret = datagram_secret(b"frame key")
    assert link_key(announced, secret) not in (announced, secret)
    assert link_key(announced, secret) == link_key(announced, datagram_secret(b"frame key"))


def test_the_announcement_rides_in_an_address_list_that_older_peers_skip() -> None:
    """A peer older than datagrams closes a connection on an unknown frame kind, but skips an
    address-list entry whose host is no IPv4 address: it simply gets TCP alone."""
    book = announcement(KEY, 7777)
    assert parse_announcement(book) == (KEY, 7777)
    assert list(parse_gossip(book, "b", "a")) == []  # what an older peer does with it
    assert parse_announcement([["b", "10.0.0.2", 7777]]) is None  # a real address list
    assert parse_announcement([*book, *book]) is None
    for bad in (
        [["key:" + "zz" * 32, "datagrams", 7777]],
        [["key:" + KEY.hex()[:-2], "datagrams", 7777]],
        [["key:" + KEY.hex(), "datagrams", 0]],
        [["nokey", "datagrams", 7777]],
    ):
        assert parse_announcement(bad) is None, bad
        assert list(parse_gossip(bad, "b", "a")) == []
    assert parse_announcement([["key:" + KEY.hex(), "datagrams", True]]) is None


def test_datagrams_ahead_of_a_gap_wait_for_it_then_come_in_order() -> None:
    link = LinkState("b")
    link.connected(incarnation=1, resume=0)
    assert link.receive_datagram(2, b"two") == []
    assert link.receive_datagram(3, b"three") == []
    assert link.receive_datagram(1, b"one") == [b"one", b"two", b"three"]
    assert link.received == 3
    assert link.receive_datagram(2, b"two") is None  # a duplicate
    # The TCP copies come later: duplicates, dropped.
    assert link.receive_frame(1, b"one") == [] and link.receive_frame(3, b"three") == []
    assert link.receive_frame(4, b"four") == [b"four"]


def test_tcp_fills_the_gap_in_front_of_held_datagrams() -> None:
    link = LinkState("b")
    link.connected(incarnation=1, resume=0)
    assert link.receive_datagram(3, b"three") == []
    assert link.receive_frame(1, b"one") == [b"one"]
    assert link.receive_frame(2, b"two") == [b"two", b"three"]
    assert link.receive_frame(3, b"three") == []
    with pytest.raises(Broken):
        link.receive_frame(5, b"five")  # TCP is FIFO: a skip is the other end's bug


def test_the_reorder_buffer_is_bounded_and_a_restart_empties_it() -> None:
    link = LinkState("b", held=ReorderBuffer(limit=4))
    link.connected(incarnation=1, resume=0)
    assert link.receive_datagram(4, b"four") == []
    assert link.receive_datagram(5, b"five") == []  # beyond the bound: dropped, TCP brings it
    assert len(link.held) == 1
    link.connected(incarnation=2, resume=0)
    assert len(link.held) == 0
    assert link.receive_datagram(1, b"new one") == [b"new one"]


def frame(seq: int, size: int = 10) -> QueuedFrame:
    return QueuedFrame(seq, bytes(size))


def test_the_resend_timeout_follows_the_round_trip_within_its_bounds() -> None:
    timer = ResendTimer()
    assert timer.timeout == pytest.approx(0.040)  # no round trip measured yet
    timer.sent(frame(1), now=0.0)
    timer.acknowledged(1, now=0.001)
    assert timer.timeout == pytest.approx(0.015)  # 2 x 1 ms + 10 ms is under the floor
    for seq in range(2, 40):
        timer.sent(frame(seq), now=seq)
        timer.acknowledged(seq, now=seq + 0.050)
    assert timer.timeout == pytest.approx(0.040)  # a slow link: the ceiling


def test_an_unacknowledged_frame_is_resent_when_due_and_no_more_once_acknowledged() -> None:
    timer = ResendTimer()
    timer.sent(frame(1), now=0.0)
    timer.sent(frame(2), now=0.010)
    assert timer.due(now=0.030, budget=10_000) == []
    assert timer.next_due() == pytest.approx(0.040)
    assert timer.due(now=0.040, budget=10_000) == [frame(1)]
    assert timer.due(now=0.050, budget=10_000) == [frame(2)]
    timer.acknowledged(1, now=0.060)
    assert timer.smoothed_rtt is None  # a resent frame says nothing of the round trip
    assert timer.due(now=0.100, budget=10_000) == [frame(2)]
    timer.acknowledged(2, now=0.101)
    assert timer.due(now=1.0, budget=10_000) == [] and timer.next_due() is None


def test_resends_are_bounded_per_tick_and_slow_down_for_a_peer_that_never_answers() -> None:
    timer = ResendTimer()
    for seq in range(1, 11):
        timer.sent(frame(seq, size=1000), now=0.0)
    assert [f.seq for f in timer.due(now=0.040, budget=2500)] == [1, 2, 3]
    assert [f.seq for f in timer.due(now=0.040, budget=100_000)] == list(range(4, 11))
    lonely = ResendTimer()
    lonely.sent(frame(1), now=0.0)
    times = [0.0]
    while len(times) < 14:
        now = lonely.next_due() or 0.0
        if lonely.due(now, budget=1000):
            times.append(now)
    gaps = [round(b - a, 3) for a, b in itertools.pairwise(times)]
    assert gaps[:9] == [0.04] * 9  # patient: every 40 ms, so a burst's end is caught at once
    assert gaps[9:12] == [0.08, 0.16, 0.32]  # then twice as long each time
    assert max(gaps) <= 1.0


def _backed_off(timer: ResendTimer) -> float:
    """Resend ``timer``'s frames until the oldest backs off (no answer, ever); when it last went."""
    now = 0.0
    for _ in range(timer.patient + 1):
        now = timer.next_due() or 0.0
        assert timer.due(now, budget=100_000)
    return now


def test_hearing_from_the_peer_makes_the_frames_that_back_off_due_at_once() -> None:
    timer = ResendTimer()
    timer.sent(frame(1), now=0.0)
    last = _backed_off(timer)  # 9 resends, 40 ms apart: the next waits 80 ms
    timer.sent(frame(2), now=last)  # not backing off: left as it is
    assert timer.due(now=last + 0.030, budget=1000) == []
    assert timer.heard(now=last + 0.030)  # a burst of loss is over: the peer spoke
    assert timer.due(now=last + 0.030, budget=1000) == [frame(1)]
    assert timer.next_due() == pytest.approx(last + 0.040)  # frame 2, on its own schedule
    assert timer.due(now=last + 0.040, budget=1000) == [frame(2)]
    # Back to patient, not to 0: if the peer is gone again, frame 1 backs off again at once.
    assert frame(1) not in timer.due(now=last + 0.109, budget=1000)
    assert frame(1) in timer.due(now=last + 0.111, budget=1000)  # 80 ms after its resend


def test_hearing_from_the_peer_changes_nothing_when_nothing_backs_off() -> None:
    timer = ResendTimer()
    assert not timer.heard(now=0.0)
    timer.sent(frame(1), now=0.0)
    timer.sent(frame(2), now=0.010)
    assert not timer.heard(now=0.030)
    assert timer.due(now=0.040, budget=1000) == [frame(1)]
    assert not timer.heard(now=0.045)  # not after a silence: resent on time anyway
    assert timer.next_due() == pytest.approx(0.050)
    assert timer.due(now=0.045, budget=1000) == []


def test_hearing_from_the_peer_after_a_silence_makes_every_resent_frame_due_at_once() -> None:
    timer = ResendTimer()
    timer.sent(frame(1), now=0.0)
    assert timer.due(now=0.040, budget=1000) == [frame(1)]  # lost: the link is down
    timer.sent(frame(2), now=0.050)  # sent once only: not yet missed
    # The peer is heard from at last (the link is back): frame 1 need not wait until 80 ms.
    assert timer.heard(now=0.060)
    assert timer.due(now=0.060, budget=1000) == [frame(1)]
    assert timer.next_due() == pytest.approx(0.090)  # frame 2, on its own schedule
    assert not timer.heard(now=0.070)  # heard again soon: no silence, nothing hurried


def test_a_peer_is_probed_every_timeout_only_while_a_frame_backs_off_and_not_for_ever() -> None:
    timer = ResendTimer()
    timer.sent(frame(1), now=0.0)
    sent: list[tuple[float, str]] = []
    while True:
        now = timer.next_wake()
        assert now is not None
        if now > 3.0:
            break
        sent += [(now, "resend") for _ in timer.due(now, budget=1000)]
        if timer.probe(now):
            sent.append((now, "probe"))
    probes = [when for when, what in sent if what == "probe"]
    resends = [when for when, what in sent if what == "resend"]
    assert probes and min(probes) > resends[8]  # none while resends are patient
    assert max(probes) < timer.probing  # then the liveness timers take over
    # Something goes to the peer every timeout (a probe or a resend), none closer: the first
    # to get through once a burst of loss ends makes the peer resend at once (``heard``).
    during = [when for when, _ in sent if when < timer.probing]
    gaps = [round(b - a, 3) for a, b in itertools.pairwise(during)]
    assert gaps == [0.04] * len(gaps)
    timer.acknowledged(1, now=3.0)
    assert timer.next_due() is None and not timer.probe(now=3.0)


def _interleaved_run(seed: int, frames: int = 60) -> tuple[list[bytes], list[bytes]]:
    """One link's receiving end under a random mix of the two paths: TCP brings every frame in
    order (late at random), datagrams bring the small ones' copies lost, duplicated and
    reordered at random, with a small reorder buffer. What was sent, and what was delivered."""
    rng = random.Random(seed)
    link = LinkState("b", held=ReorderBuffer(limit=rng.choice([2, 4, 256])))
    link.connected(incarnation=1, resume=0)
    sent = [f"frame {seq}".encode() for seq in range(1, frames + 1)]
    small = {seq for seq in range(1, frames + 1) if rng.random() < 0.8}
    copies = [seq for seq in small for _ in range(rng.choice([0, 1, 1, 2]))]
    rng.shuffle(copies)
    tcp = list(range(1, frames + 1))
    delivered: list[bytes] = []
    while tcp or copies:
        if copies and (not tcp or rng.random() < 0.6):
            seq = copies.pop()
            delivered += link.receive_datagram(seq, sent[seq - 1]) or []
        else:
            seq = tcp.pop(0)
            delivered += link.receive_frame(seq, sent[seq - 1])
    return sent, delivered


@pytest.mark.parametrize("seed", sweep(range(300)))
def test_whatever_mix_of_paths_brings_them_every_frame_is_delivered_once_in_order(
    seed: int,
) -> None:
    # A sweep of 20,000 seeds ran outside the suite (`_interleaved_run`); these are a sample.
    sent, delivered = _interleaved_run(seed)
    assert delivered == sent
