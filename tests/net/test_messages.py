"""The wire codec: every message type round-trips; every malformed frame is a protocol error
naming the field, never an exception, and the core reports it as a violation of that peer."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from net._order.core import OrderingCore
from net._order.messages import (
    PROTOCOL_VERSION,
    Accept,
    Accepted,
    Action,
    Expulsion,
    Heartbeat,
    JoinRequest,
    LeaveNotice,
    Message,
    Prepare,
    Promise,
    Snapshot,
    SnapshotRequest,
    StateHash,
    ViewDecision,
    decode_message,
    encode_message,
    normalize_payload,
)
from net._order.wirefields import Limits, Removal
from net.errors import LocalProtocolError, RemoteProtocolError
from net.events import LogEntry, ProtocolViolated

SEEN = {"alice": (0, 7), "bob": (2, 9)}
ENTRIES = (LogEntry(3, "carol", {"card": "10H", "to": [1, 2]}), LogEntry(5, "carol", None))
EXAMPLES: list[Message] = [
    Action(10, 0, SEEN, {"move": "play", "cards": ["10H", "JS"], "raw": b"\x00\xff", "ok": True}),
    Heartbeat(11, 0, SEEN),
    StateHash(12, 1, SEEN, 40, b"\x01" * 32),
    JoinRequest(1, 3, {}),
    LeaveNotice(13, 0, SEEN),
    Prepare(14, 0, SEEN, 2, 3),
    Promise(
        14,
        0,
        SEEN,
        2,
        3,
        "bob",
        12,
        SEEN,
        {"erin": 0},
        {"carol": Removal(0, 0, "left")},
        {"dave": 1},
        2,
        "alice",
        13,
        {"carol": Removal(0, 5, "excluded")},
        {"dave": 1},
        ENTRIES,
    ),
    Promise(14, 0, SEEN, 2, 3, "bob", 12, {}, {}, {}, {}, 0, "", 0, {}, {}, ()),
    Accept(14, 0, SEEN, 2, 3, 13, {"carol": Removal(0, 5, "excluded")}, {"dave": 1}, ENTRIES),
    Accepted(14, 0, SEEN, 2, 3, "bob"),
    ViewDecision(
        15,
        0,
        SEEN,
        3,
        13,
        {"alice": 0, "bob": 2, "dave": 1},
        {"carol": Removal(0, 5, "left")},
        {"dave": 1},
        ENTRIES,
    ),
    SnapshotRequest(16, 0, SEEN, 40, None),
    SnapshotRequest(17, 0, SEEN, 0, 3),
    Snapshot(18, 0, SEEN, 40, 3, 38, {"state": [1, 2, 3]}),
    Snapshot(19, 0, SEEN, 40, 3, None, None),
    Expulsion(20, 0, {}, 4, 1),
    # At a signed table: a leave with its proof, a signed vote, a decision with its certificate
    # (a leaver's removal carrying its signed notice), an expulsion carrying its decision.
    LeaveNotice(13, 0, SEEN, b"\x07" * 96),
    Accepted(14, 0, SEEN, 2, 3, "bob", b"\x08" * 96),
    ViewDecision(
        15,
        0,
        SEEN,
        3,
        13,
        {"alice": 0, "bob": 2},
        {"carol": Removal(0, 5, "left", b"\x09" * 96)},
        {},
        ENTRIES,
        3,
        "bob",
        {"alice": b"\x0a" * 96, "bob": b"\x0b" * 96},
    ),
    Expulsion(
        20,
        0,
        {},
        4,
        1,
        13,
        {"alice": 0},
        {"bob": Removal(1, 5, "excluded")},
        {},
        3,
        "alice",
        {"alice": b"\x0c" * 96},
    ),
]


@pytest.mark.parametrize("message", EXAMPLES, ids=lambda m: type(m).__name__)
def test_every_message_type_round_trips(message: Message) -> None:
    assert decode_message(encode_message(message)) == message


def test_the_clock_fields_round_trip_and_are_left_out_when_empty() -> None:
    beat = Heartbeat(11, 0, SEEN)
    data = encode_message(beat, 9, {"bob": 300}, None, {"bob": (20, 150)})
    back = decode_message(data)
    assert (back.table_time, back.ages, back.echoes) == (9, {"bob": 300}, {"bob": (20, 150)})
    assert b"ec" not in encode_message(beat, 9, {"bob": 300}, None, {})


def frame(kind: str = "beat", **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"v": PROTOCOL_VERSION, "k": kind, "ts": 5, "inc": 0, "seen": {}}
    base.update(fields)
    return base


def pack(obj: object) -> bytes:
    data: bytes = msgpack.packb(obj, use_bin_type=True)
    return data


def action(**fields: Any) -> dict[str, Any]:
    return frame("action", payload=fields.pop("payload", 1), **fields)


DEEP: Any = 0
for _ in range(40):
    DEEP = [DEEP]

EXPEL: dict[str, Any] = {
    "epoch": 1, "target": 0, "marker": 3, "members": {"a": 0}, "removals": {}, "additions": {},
    "ballot": 1, "proposer": "a", "certificate": {},
}  # fmt: skip

MALFORMED: list[tuple[str, bytes, str]] = [
    ("not msgpack", b"\xc1", "frame"),
    ("truncated", pack(frame())[:-3], "frame"),
    ("extra bytes", pack(frame()) + b"\x00", "frame"),
    ("not a map", pack([1, "beat"]), "frame"),
    ("no version", pack({k: v for k, v in frame().items() if k != "v"}), "v"),
    ("wrong version", pack(frame(v=PROTOCOL_VERSION + 1)), "v"),
    ("version as string", pack(frame(v="1")), "v"),
    ("unknown kind", pack(frame("teleport")), "k"),
    ("missing ts", pack({k: v for k, v in frame().items() if k != "ts"}), "ts"),
    ("negative ts", pack(frame(ts=-1)), "ts"),
    ("zero ts", pack(frame(ts=0)), "ts"),
    ("echoes not a map", pack(frame(ec=[1, 2])), "ec"),
    ("echo not a pair", pack(frame(ec={"bob": [5]})), "ec[bob]"),
    ("echo stamp zero", pack(frame(ec={"bob": [0, 10]})), "ec[bob].stamp"),
    ("echo age negative", pack(frame(ec={"bob": [5, -1]})), "ec[bob].age"),
    ("huge ts", pack(frame(ts=2**64 - 1)), "ts"),
    ("bool ts", pack(frame(ts=True)), "ts"),
    ("float ts", pack(frame(ts=5.0)), "ts"),
    ("negative incarnation", pack(frame(inc=-2)), "inc"),
    ("seen not a map", pack(frame(seen=[1])), "seen"),
    ("seen bad pair", pack(frame(seen={"bob": [1]})), "seen[bob]"),
    ("seen bad ts", pack(frame(seen={"bob": [0, "x"]})), "seen[bob].ts"),
    ("seen empty peer", pack(frame(seen={"": [0, 1]})), "seen"),
    ("int map key", pack(frame(seen={1: [0, 1]})), "frame"),
    ("unexpected field", pack(frame(extra=1)), "beat.extra"),
    ("missing payload", pack(frame("action")), "action.payload"),
    ("float payload", pack(action(payload={"x": 1.5})), "action.payload"),
    ("deep payload", pack(action(payload=DEEP)), "action.payload"),
    ("ext type", pack(action(payload=msgpack.ExtType(5, b"xy"))), "frame"),
    ("timestamp ext", pack(action(payload=msgpack.Timestamp(1, 0))), "frame"),
    ("bad utf-8", pack(frame())[:-1] + b"\x81\xa1\xff\x01", "frame"),
    ("hash digest type", pack(frame("hash", index=1, digest="abc")), "hash.digest"),
    ("hash digest empty", pack(frame("hash", index=1, digest=b"")), "hash.digest"),
    ("hash negative index", pack(frame("hash", index=-1, digest=b"x")), "hash.index"),
    (
        "bad removal reason",
        pack(
            frame(
                "accept",
                epoch=0,
                ballot=1,
                marker=5,
                removals={"bob": [0, 3, "bored"]},
                additions={},
                entries=[],
            )
        ),
        "accept.removals[bob].reason",
    ),
    (
        "bad entry",
        pack(
            frame(
                "accept",
                epoch=0,
                ballot=1,
                marker=5,
                removals={},
                additions={},
                entries=[[1, "b"]],
            )
        ),
        "accept.entries[0]",
    ),
    (
        "entry with empty peer",
        pack(
            frame(
                "accept",
                epoch=0,
                ballot=1,
                marker=5,
                removals={},
                additions={},
                entries=[[1, "", 0]],
            )
        ),
        "accept.entries[0].peer",
    ),
    (
        "empty view",
        pack(
            frame(
                "decide",
                epoch=1,
                marker=3,
                members={},
                removals={},
                additions={},
                entries=[],
                ballot=0,
                proposer="",
                certificate={},
            )
        ),
        "decide.members",
    ),
    (
        "snapreq anchor type",
        pack(frame("snapreq", min_index=0, anchor_epoch="x")),
        "snapreq.anchor_epoch",
    ),
    ("expel target", pack(frame("expel", **{**EXPEL, "target": None})), "expel.target"),
    (
        "expel certificate proof",
        pack(frame("expel", **{**EXPEL, "certificate": {"bob": b"short"}})),
        "expel.certificate[bob]",
    ),
    (
        "decide removal proof",
        pack(
            frame(
                "decide",
                epoch=1,
                marker=3,
                members={"a": 0},
                removals={"bob": [0, 2, "left", b"x"]},
                additions={},
                entries=[],
                ballot=1,
                proposer="a",
                certificate={},
            )
        ),
        "decide.removals[bob].proof",
    ),
]


@pytest.mark.parametrize(
    ("data", "field"), [(d, f) for _, d, f in MALFORMED], ids=[name for name, _, _ in MALFORMED]
)
def test_malformed_frames_raise_remote_error_naming_the_field(data: bytes, field: str) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_message(data)
    assert info.value.field == field


def test_limits_reject_oversized_frames_and_long_values() -> None:
    limits = Limits(max_frame_bytes=200, max_str_len=10, max_array_len=5, max_map_len=5)
    with pytest.raises(RemoteProtocolError, match="exceeds the limit") as info:
        decode_message(pack(action(payload="x" * 300)), limits)
    assert info.value.field == "frame"
    for payload in ["x" * 11, list(range(6)), {str(i): i for i in range(6)}]:
        with pytest.raises(RemoteProtocolError) as info:
            decode_message(pack(action(payload=payload)), limits)
        assert info.value.field == "frame"
    # msgpack's own stack limit: far deeper than our depth limit, still no crash.
    with pytest.raises(RemoteProtocolError):
        decode_message(b"\x91" * 100_000 + b"\x00")


@pytest.mark.parametrize(("data", "field"), [(d, f) for _, d, f in MALFORMED[:12]])
def test_core_reports_malformed_frames_as_violations_of_that_peer(data: bytes, field: str) -> None:
    core = OrderingCore("alice", ["alice", "bob"], 0.0)
    events = core.receive("bob", data, 0.1)
    assert events == [ProtocolViolated("bob", field, events[0].reason)]  # type: ignore[union-attr]


@pytest.mark.parametrize("ts", [5, 4])
def test_a_frame_again_or_an_older_one_is_ignored_not_held_against_its_sender(ts: int) -> None:
    """Links are FIFO: a frame whose timestamp does not increase was handled already (a resend
    bug, a replay). Counting it as a violation excluded honest peers and wedged view changes."""
    core = OrderingCore("alice", ["alice", "bob"], 0.0)
    assert core.receive("bob", encode_message(Action(5, 0, {}, "first")), 0.1) != []
    assert core.receive("bob", encode_message(Action(ts, 0, {}, "again")), 0.2) == []
    assert core.stable_index == 1  # "first" only
    core.tick(0.4)
    assert core.members == {"alice": 0, "bob": 0}


def test_a_violating_peer_is_ignored_then_excluded() -> None:
    core = OrderingCore("alice", ["alice", "bob"], 0.0)
    core.receive("bob", encode_message(Heartbeat(5, 0, {})), 0.1)
    core.receive("bob", b"garbage", 0.2)
    # Its stream is broken: a later valid action must not be ordered.
    assert core.receive("bob", encode_message(Action(9, 0, {}, "x")), 0.3) == []
    core.tick(0.4)
    assert core.members == {"alice": 0}


def test_payloads_are_normalized_as_peers_will_decode_them() -> None:
    assert normalize_payload(("a", (1, 2))) == ["a", [1, 2]]
    for bad in [1.5, {1: "int key"}, object(), {"x": {2.0}}]:
        with pytest.raises(LocalProtocolError):
            normalize_payload(bad)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_never_raise_from_receive(data: bytes) -> None:
    core = OrderingCore("alice", ["alice", "bob"], 0.0)
    for event in core.receive("bob", data, 0.1):
        assert isinstance(event, ProtocolViolated)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(EXAMPLES), st.data())
def test_mutated_frames_never_raise_from_receive(message: Message, data: st.DataObject) -> None:
    raw = bytearray(encode_message(message))
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    core = OrderingCore("alice", ["alice", "bob", "carol"], 0.0)
    core.receive("bob", bytes(raw), 0.1)
    core.tick(0.2)
