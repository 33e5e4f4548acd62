"""The ordering core in memory, frame by frame (like h11's ConnectionPair)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from net._order.core import CoreConfig, OrderingCore, Phase
from net._order.log import tie_draw
from net._order.messages import (
    Expulsion,
    Heartbeat,
    Message,
    Promise,
    ViewDecision,
    encode_message,
)
from net.errors import LocalProtocolError
from net.events import (
    EntriesStabilized,
    EntryReceived,
    Event,
    LogEntry,
    MemberExcluded,
    MemberJoined,
    MemberLeft,
    MemberSuspected,
    ProtocolViolated,
    SnapshotInstalled,
    SnapshotRequested,
)

CONFIG = CoreConfig(suspect_timeout=0.3, exclude_timeout=0.6, ack_delay=0.0)


class Group:
    """Cores wired by perfect FIFO links; frames move only when asked."""

    def __init__(self, names: Iterable[str], config: CoreConfig = CONFIG) -> None:
        self.names = sorted(names)
        self.now = 0.0
        self.config = config
        self.cores = {n: OrderingCore(n, self.names, 0.0, config) for n in self.names}
        self.events: dict[str, list[Event]] = {n: [] for n in self.names}
        self.wire: list[tuple[str, str, bytes]] = []
        self.dead: set[str] = set()

    def collect(self) -> None:
        for name, core in self.cores.items():
            for dest, data in core.outgoing():
                if name not in self.dead:
                    self.wire.append((name, dest, data))

    def deliver(self, only: set[tuple[str, str]] | None = None) -> None:
        """Deliver queued frames (only those on the given links) until the wire is quiet."""
        self.collect()
        while True:
            moved = False
            keep = []
            for src, dest, data in self.wire:
                if dest in self.dead or (only is not None and (src, dest) not in only):
                    if dest not in self.dead:
                        keep.append((src, dest, data))
                    continue
                self.events[dest] += self.cores[dest].receive(src, data, self.now)
                moved = True
            self.wire = keep
            self.collect()
            if not moved or not any(
                only is None or (s, d) in only for s, d, _ in self.wire if d not in self.dead
            ):
                break

    def advance(self, seconds: float, step: float = 0.02) -> None:
        end = self.now + seconds
        while self.now < end:
            self.now = min(end, self.now + step)
            for name in self.names:
                if name not in self.dead:
                    self.events[name] += self.cores[name].tick(self.now)
            self.deliver()

    def stable(self, name: str) -> list[LogEntry]:
        return [
            e for ev in self.events[name] if isinstance(ev, EntriesStabilized) for e in ev.entries
        ]


def of_type(events: list[Event], kind: type) -> list[Event]:
    return [e for e in events if isinstance(e, kind)]


def test_remote_entry_is_reported_at_once_and_stable_only_after_every_ack() -> None:
    g = Group(["a", "b", "c"])
    entry = g.cores["a"].submit({"play": 1}, 0.0)
    g.deliver(only={("a", "b")})
    assert g.events["b"] == [EntryReceived(entry)]
    assert g.stable("b") == []
    g.deliver()
    for name in g.names:
        assert g.stable(name) == [entry]


def test_concurrent_entries_get_the_same_order_everywhere() -> None:
    g = Group(["a", "b", "c"])
    first = g.cores["b"].submit("from b", 0.0)
    second = g.cores["a"].submit("from a", 0.0)
    third = g.cores["c"].submit("from c", 0.0)
    assert first.ts == second.ts == third.ts
    g.deliver()
    # Equal timestamps are ordered by the table's draw, not by peer id (issue 14).
    drawn = sorted([first, second, third], key=lambda e: tie_draw(b"", e.ts, e.peer))
    for name in g.names:
        assert g.stable(name) == drawn


def test_an_entry_submitted_after_receiving_another_is_ordered_after_it() -> None:
    g = Group(["a", "b", "c"])
    for _ in range(5):
        g.cores["c"].submit("c", 0.0)
    g.deliver()
    earlier = g.cores["a"].submit("cause", 0.0)
    g.deliver(only={("a", "b")})
    later = g.cores["b"].submit("effect", 0.0)
    g.deliver()
    assert earlier < later
    assert g.stable("c")[-2:] == [earlier, later]


def test_idle_members_send_heartbeats_and_stay_members() -> None:
    g = Group(["a", "b", "c"])
    g.advance(2.0)
    for name in g.names:
        assert g.cores[name].members == {"a": 0, "b": 0, "c": 0}
        assert of_type(g.events[name], MemberSuspected) == []


def test_an_entry_of_a_dead_peer_seen_by_one_survivor_is_kept_by_all() -> None:
    g = Group(["a", "b", "c"])
    g.cores["a"].submit("warm-up", 0.0)
    g.deliver()
    last = g.cores["c"].submit("last words", 0.0)
    g.deliver(only={("c", "a")})
    g.dead.add("c")
    g.wire = [w for w in g.wire if w[0] != "c"]
    assert last not in g.stable("a")
    g.advance(1.0)
    for name in ["a", "b"]:
        assert g.cores[name].members == {"a": 0, "b": 0}
        assert g.stable(name)[-1] == last
        (excluded,) = of_type(g.events[name], MemberExcluded)
        assert isinstance(excluded, MemberExcluded)
        assert (excluded.peer, excluded.stable_index) == ("c", 2)
        assert excluded.cut >= last.ts
    after = g.cores["b"].submit("after", g.now)
    g.deliver()
    assert g.stable("a")[-1] == after


def test_an_entry_nobody_received_from_a_dead_peer_is_never_stable() -> None:
    g = Group(["a", "b", "c"])
    lost = g.cores["c"].submit("lost", 0.0)
    g.dead.add("c")
    g.wire = []
    g.advance(1.0)
    assert lost not in g.stable("a")
    assert g.cores["a"].members == g.cores["b"].members == {"a": 0, "b": 0}


def test_a_leave_is_ordered_in_the_log() -> None:
    g = Group(["a", "b", "c"])
    mine = g.cores["c"].submit("bye", 0.0)
    g.cores["c"].leave(0.0)
    assert g.cores["c"].phase is Phase.LEFT
    g.deliver()
    g.advance(0.2)
    for name in ["a", "b"]:
        assert g.stable(name) == [mine]
        assert of_type(g.events[name], MemberLeft) == [MemberLeft("c", 0, 1, 1)]
        assert g.cores[name].members == {"a": 0, "b": 0}


def test_a_new_peer_joins_at_one_place_in_the_log_and_gets_a_snapshot() -> None:
    g = Group(["a", "b"])
    g.cores["a"].submit("before", 0.0)
    g.deliver()
    d = OrderingCore.joining("d", ["a", "b"], g.now, CONFIG)
    g.cores["d"], g.names, g.events["d"] = d, ["a", "b", "d"], []
    g.deliver()
    g.advance(0.1)
    for name in ["a", "b"]:
        assert of_type(g.events[name], MemberJoined) == [MemberJoined("d", 0, 1, 1)]
    (request,) = of_type(g.events["a"], SnapshotRequested)
    assert request == SnapshotRequested("d", 1, epoch=1)  # the state after the marker adding d
    assert of_type(g.events["b"], SnapshotRequested) == []
    g.cores["a"].provide_snapshot("d", 1, {"state": "after 1"})
    g.deliver()
    (installed,) = of_type(g.events["d"], SnapshotInstalled)
    assert installed == SnapshotInstalled(1, 1, {"state": "after 1"}, ())
    entry = g.cores["d"].submit("hello", g.now)
    g.deliver()
    for name in g.names:
        assert g.stable(name)[-1] == entry


def test_local_misuse_raises_local_protocol_error() -> None:
    core = OrderingCore("a", ["a", "b"], 0.0)
    with pytest.raises(LocalProtocolError):
        core.provide_snapshot("b", 0, None)
    with pytest.raises(LocalProtocolError):
        core.submit(1.5, 0.0)
    with pytest.raises(LocalProtocolError):
        core.report_state_hash(3, b"x")
    with pytest.raises(LocalProtocolError):
        OrderingCore("", ["b"], 0.0)
    joiner = OrderingCore.joining("c", ["a"], 0.0)
    with pytest.raises(LocalProtocolError):
        joiner.submit("too early", 0.0)


def test_only_a_former_member_speaks_for_a_group_split_from_ours() -> None:
    """An expulsion from a peer outside our view is how a split group learns of a rival one
    (see test_partition.py); from a stranger, even with a big view, it is nothing."""
    g = Group(["a", "b", "c"])
    big = {name: (0, 1) for name in ["v", "w", "x", "y", "z"]}
    events = g.cores["a"].receive("mallory", encode_message(Expulsion(9, 0, big, 4, 0)), 0.0)
    assert events == []
    assert g.cores["a"].phase is Phase.MEMBER
    assert g.cores["a"].outgoing() == []


# --- a timestamp far ahead of the table's clock ------------------------------------------------

JUMP = 1000
BOUNDED = CoreConfig(suspect_timeout=0.3, exclude_timeout=0.6, ack_delay=0.0, max_clock_jump=JUMP)


@pytest.mark.parametrize(("ahead", "refused"), [(JUMP, False), (JUMP + 1, True)])
def test_a_frame_stamped_beyond_the_jump_bound_is_a_violation(ahead: int, refused: bool) -> None:
    g = Group(["a", "b", "c"], BOUNDED)
    g.cores["b"].submit("warm-up", 0.0)
    g.deliver()
    clock = g.cores["a"].clock
    events = g.cores["a"].receive("b", encode_message(Heartbeat(clock + ahead, 0, {})), g.now)
    if refused:
        assert events == [ProtocolViolated("b", "ts", _reason(events))]
        assert g.cores["a"].clock == clock
    else:
        assert events == []
        assert g.cores["a"].clock == clock + ahead


def test_a_member_pushing_the_clock_far_ahead_is_excluded_and_the_others_agree() -> None:
    g = Group(["a", "b", "c"], BOUNDED)
    for name in g.names:
        g.cores[name].submit(f"from {name}", 0.0)
    g.deliver()
    clocks = {name: g.cores[name].clock for name in ["a", "c"]}
    forged = encode_message(Heartbeat(g.cores["b"].clock + 10**12, 0, {}))
    for name in ["a", "c"]:
        events = g.cores[name].receive("b", forged, g.now)
        assert events == [ProtocolViolated("b", "ts", _reason(events))]
        assert g.cores[name].clock == clocks[name]
    g.advance(1.5)  # b goes on sending, but a and c ignore it from now on
    for name in ["a", "c"]:
        assert g.cores[name].members == {"a": 0, "c": 0}
        excluded = of_type(g.events[name], MemberExcluded)
        assert [e.peer for e in excluded if isinstance(e, MemberExcluded)] == ["b"]
        # Stamps are microseconds of table time: the clock moved with the time, not the forgery.
        assert g.cores[name].clock < clocks[name] + JUMP + int(g.now * 1_000_000)
    assert g.cores["b"].phase is Phase.EXPELLED
    after = g.cores["c"].submit("after", g.now)
    g.deliver()
    assert g.stable("a") == g.stable("c")
    assert g.stable("a")[-1] == after


@pytest.mark.parametrize(
    ("forged", "field"),
    [
        (
            Promise(50, 0, {}, 0, 1, "b", 10**9, {}, {}, {}, {}, 0, "", 0, {}, {}, ()),
            "promise.clock",
        ),
        (ViewDecision(50, 0, {}, 1, 10**9, {"a": 0, "b": 0, "c": 0}, {}, {}, ()), "decide.marker"),
    ],
    ids=["promise", "decision"],
)
def test_a_view_change_stamped_ahead_of_its_own_frame_is_a_violation(
    forged: Message, field: str
) -> None:
    """The clock a promise carries and a decision's marker end up in every member's clock:
    they may not get around the jump bound by running ahead of the frame's own timestamp."""
    g = Group(["a", "b", "c"], BOUNDED)
    events = g.cores["a"].receive("b", encode_message(forged), g.now)
    assert events == [ProtocolViolated("b", field, _reason(events))]
    assert g.cores["a"].clock == forged.ts  # the frame's own timestamp was within the bound
    assert g.cores["a"].epoch == 0


def test_a_joiner_far_behind_the_tables_clock_is_welcomed() -> None:
    """A joiner's clock starts at zero: the bound applies from its welcome on."""
    g = Group(["a", "b"], BOUNDED)
    for i in range(2 * JUMP):
        g.cores["a"].submit(i, 0.0)
    g.deliver()
    d = OrderingCore.joining("d", ["a", "b"], g.now, BOUNDED)
    g.cores["d"], g.names, g.events["d"] = d, ["a", "b", "d"], []
    g.deliver()
    g.cores["a"].provide_snapshot("d", 2 * JUMP, "state")
    g.advance(0.3)
    assert d.ready
    assert d.clock > 2 * JUMP
    for name in g.names:
        assert of_type(g.events[name], ProtocolViolated) == []
        assert g.cores[name].members == {"a": 0, "b": 0, "d": 0}
    entry = d.submit("hello", g.now)
    g.deliver()
    for name in g.names:
        assert g.stable(name)[-1] == entry


def _reason(events: list[Event]) -> str:
    """The reason of the first event, when it is a violation (the text is not under test)."""
    return events[0].reason if events and isinstance(events[0], ProtocolViolated) else ""
