"""The opening of a connection in memory: the hello codec and its checks, the session keys and
frame tags of a coded table, the untrusted frame decoder, and the gate that spaces out failed
code checks, in simulated time."""

from __future__ import annotations

import asyncio
import itertools

import msgpack
import pytest

from net._codec import (
    Broken,
    Refused,
    UndecodableError,
    UnpackLimits,
    pack_body,
    unpack_untrusted,
)
from net._mesh.connection import code_check_turn
from net._mesh.handshake import (
    CODE_NEEDED,
    HANDSHAKE_TIMEOUT,
    NO_CODE_HERE,
    WRONG_CODE,
    FrameTags,
    Hello,
    SessionKeys,
    check_hello,
    check_veiled_hello,
    hello_body,
    parse_handshake_frame,
    parse_hello,
    veiled_hello_body,
)
from net._mesh.strangers import CodeCheckGates

ME = Hello(1, "t1", "a", "A", 5)
THEM = Hello(1, "t1", "b", "B", 9)
LIMITS = UnpackLimits(4096, 4096, 64, 64)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


# --- the hello ------------------------------------------------------------------------------


def test_the_hello_of_an_open_table_is_the_original_nine_fields_byte_for_byte() -> None:
    body = pack_body(hello_body(ME, resume=3, known=7, listen=("10.0.0.1", 4000), coded=False))
    assert body.hex() == "990001a27431a161a14105030792a831302e302e302e31cd0fa0"


def test_the_hello_of_a_coded_table_adds_the_scheme_byte_for_byte() -> None:
    body = pack_body(hello_body(ME, resume=0, known=None, listen=None, coded=True))
    assert body.hex() == "9a0001a27431a161a1410500ffc0a67370616b6532"


def test_the_veiled_hello_of_a_coded_listener_names_no_one_byte_for_byte() -> None:
    """Before the dialer proves the code, a coded listener says only its protocol, table and
    scheme: not its peer id, name, incarnation or port (its whole hello, above, comes tagged)."""
    body = pack_body(veiled_hello_body(ME))
    assert body.hex() == "940001a27431a67370616b6532"
    check_veiled_hello(unpack_untrusted(body, LIMITS), THEM, "x")  # the dialer accepts it
    with pytest.raises(Refused, match="this is table t2, not t1"):
        check_veiled_hello(veiled_hello_body(ME), Hello(1, "t2", "b", "B", 9), "x")
    with pytest.raises(Refused, match=CODE_NEEDED):  # a listener without a code: whole hello
        check_veiled_hello(hello_body(ME, 0, None, None, coded=False), THEM, "x")
    with pytest.raises(Broken, match="malformed hello from x"):
        check_veiled_hello([0, 1, 7, "spake2"], THEM, "x")


def test_a_hello_reads_back_as_it_was_written() -> None:
    body = hello_body(THEM, resume=4, known=5, listen=("10.0.0.2", 5000), coded=True)
    received = parse_hello(unpack_untrusted(pack_body(body), LIMITS), "x")
    assert received.hello == THEM
    assert received.listen == ("10.0.0.2", 5000) and received.scheme == "spake2"
    assert check_hello(received, ME, coded=True) == 4  # resume counts: it knows us, 5


def test_a_resume_number_for_another_incarnation_of_ours_counts_as_zero() -> None:
    body = hello_body(THEM, resume=4, known=4, listen=None, coded=False)
    assert check_hello(parse_hello(body, "x"), ME, coded=False) == 0


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ([0, 1, "t1"], "malformed hello from x"),
        ([1, 1, "t1", "b", "B", 9, 0, -1, None], "malformed hello from x"),
        ([0, True, "t1", "b", "B", 9, 0, -1, None], "hello field 'protocol' from x has the wrong"),
        ([0, 1, "t1", 7, "B", 9, 0, -1, None], "hello field 'peer' from x has the wrong type"),
        ([0, 1, "t1", "b", "", 9, 0, -1, None], "hello field 'name' from x has a bad length"),
        ([0, 1, "t1", "b", "B" * 201, 9, 0, -1, None], "'name' from x has a bad length"),
        ([0, 1, "t1", "b", "B", 9, 0, -1, ["h", 1]], "hello field 'listen' from x is malformed"),
        ([3, "not today"], "x refused the connection: not today"),
        ([3, CODE_NEEDED], f"^{CODE_NEEDED}$"),
        ([3, WRONG_CODE], "x refused the connection out of turn \\(wrong table code\\)"),
    ],
)
def test_a_malformed_hello_or_a_refusal_breaks_the_connection(body: object, reason: str) -> None:
    with pytest.raises(Broken, match=reason):
        parse_hello(body, "x")


@pytest.mark.parametrize(
    ("them", "scheme", "coded", "reason"),
    [
        (
            Hello(2, "t1", "b", "B", 9),
            None,
            False,
            "protocol version 2 does not match ours \\(1\\)",
        ),
        (Hello(1, "t2", "b", "B", 9), None, False, "this is table t1, not t2"),
        (Hello(1, "t1", "a", "A", 9), None, False, "a peer cannot connect to itself"),
        (THEM, None, True, CODE_NEEDED),
        (THEM, "spake2", False, NO_CODE_HERE),
        (THEM, "srp", True, "table code scheme 'srp' is not ours"),
    ],
)
def test_a_hello_that_may_not_link_is_refused_with_a_readable_reason(
    them: Hello, scheme: str | None, coded: bool, reason: str
) -> None:
    body = hello_body(them, 0, None, None, coded=False) + ([scheme] if scheme else [])
    with pytest.raises(Refused, match=reason):
        check_hello(parse_hello(body, "x"), ME, coded)


def test_a_handshake_frame_must_have_its_kind_and_size() -> None:
    assert parse_handshake_frame([6, b"k" * 33], "x", 6, 33) == b"k" * 33
    for body in ([6, b"k" * 32], [7, b"k" * 33], [6, "k" * 33], [6]):
        with pytest.raises(Broken, match="malformed handshake frame from x"):
            parse_handshake_frame(body, "x", 6, 33)
    with pytest.raises(Broken, match="out of turn"):
        parse_handshake_frame([3, CODE_NEEDED], "x", 6, 33)


def test_wrong_code_is_believed_only_in_answer_to_our_confirmation() -> None:
    """Nothing before authentication is authenticated: a "wrong table code" in place of the
    hello or of the key exchange comes from someone who never checked our code, so the joiner
    must not give up on it (it is a broken connection, dialed again)."""
    with pytest.raises(Broken) as before:
        parse_hello([3, WRONG_CODE], "x")
    assert str(before.value) != WRONG_CODE
    with pytest.raises(Broken) as exchange:
        parse_handshake_frame([3, WRONG_CODE], "x", 6, 33)
    assert str(exchange.value) != WRONG_CODE
    with pytest.raises(Broken) as answer:
        parse_handshake_frame([3, WRONG_CODE], "x", 7, 32, believed=(WRONG_CODE,))
    assert str(answer.value) == WRONG_CODE


# --- untrusted bytes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"\xc1",  # never used in msgpack
        b"\xd4\x01\x02",  # an extension type
        msgpack.packb(list(range(65))),  # over the array limit
        msgpack.packb(b"x" * 4097),  # over the bytes limit
        msgpack.packb({1: 2}),  # a map key that is not a string
        b"\x91",  # truncated
    ],
)
def test_untrusted_bytes_that_are_not_one_value_within_the_limits_raise_one_error(
    data: bytes,
) -> None:
    with pytest.raises(UndecodableError):
        unpack_untrusted(data, LIMITS)


def test_untrusted_bytes_decode_to_lists_text_and_bytes() -> None:
    data = msgpack.packb([1, "text", b"bytes", {"k": [2]}], use_bin_type=True)
    assert unpack_untrusted(data, LIMITS) == [1, "text", b"bytes", {"k": [2]}]


# --- keys and tags --------------------------------------------------------------------------

SHARED = bytes(range(32))


def test_the_keys_of_both_ends_match_crosswise_and_differ_by_direction() -> None:
    dialer = SessionKeys.derive(SHARED, b"dialer hello", b"listener hello", dialed=True)
    listener = SessionKeys.derive(SHARED, b"dialer hello", b"listener hello", dialed=False)
    assert dialer.my_confirmation == listener.their_confirmation
    assert dialer.their_confirmation == listener.my_confirmation
    assert dialer.outgoing == listener.incoming and dialer.incoming == listener.outgoing
    assert len({dialer.my_confirmation, dialer.their_confirmation, dialer.outgoing}) == 3
    assert len({dialer.outgoing, dialer.incoming}) == 2
    # Pinned: the derivation is part of the protocol.
    assert dialer.my_confirmation.hex().startswith("152de11411b7835160d99453bc742a18")
    assert dialer.outgoing.hex().startswith("ac474094443f6415fe7bdb14e34ea0f6")


def test_changing_either_hello_changes_every_key() -> None:
    keys = SessionKeys.derive(SHARED, b"dialer hello", b"listener hello", dialed=True)
    for hellos in ((b"dialer hellO", b"listener hello"), (b"dialer hello", b"listener hellO")):
        other = SessionKeys.derive(SHARED, *hellos, dialed=True)
        assert other.my_confirmation != keys.my_confirmation and other.outgoing != keys.outgoing


def test_tags_check_in_order_and_fail_on_a_changed_replayed_or_dropped_frame() -> None:
    key = SessionKeys.derive(SHARED, b"d", b"l", dialed=True).outgoing
    writer = FrameTags(key)
    frames = [body + writer.next_tag(body) for body in (b"one", b"two", b"three")]
    assert FrameTags(key).next_tag(b"body").hex() != FrameTags(key + b"x").next_tag(b"body").hex()
    reader = FrameTags(key)
    assert [reader.check(frame, "b") for frame in frames] == [b"one", b"two", b"three"]
    with pytest.raises(Broken, match="frame 2 from b failed authentication"):
        replaying = FrameTags(key)
        replaying.check(frames[0], "b")
        replaying.check(frames[0], "b")
    with pytest.raises(Broken, match="frame 1 from b failed authentication"):
        FrameTags(key).check(frames[1], "b")  # the first was dropped
    with pytest.raises(Broken, match="frame 1 from b failed authentication"):
        FrameTags(key).check(b"onE" + frames[0][3:], "b")
    with pytest.raises(Broken, match="frame 1 from b failed authentication"):
        FrameTags(key).check(b"short", "b")


def test_the_tag_is_pinned() -> None:
    key = SessionKeys.derive(SHARED, b"dialer hello", b"listener hello", dialed=True).outgoing
    assert FrameTags(key).next_tag(b"body").hex() == "f15637cd4175f8fbe0c61affd5440eea"


# --- the code check gates, in simulated time ------------------------------------------------


def test_guessers_at_one_address_get_one_check_per_penalty_whatever_their_number() -> None:
    """Ten guessers at one address retry every millisecond for a minute of simulated time; each
    failed check holds the address back for the penalty: about one code a second."""
    clock = FakeClock()
    gate = CodeCheckGates(penalty=1.0, clock=clock).of("10.0.0.9", known=False)
    checks = []
    while clock.now < 60.0:
        for _guesser in range(10):
            if gate.wait() == 0:
                checks.append(clock.now)  # the check runs (and fails) with no await between
                gate.hold()
        clock.now = round(clock.now + 0.001, 3)
    assert 59 <= len(checks) <= 61
    assert all(later - earlier >= 1.0 for earlier, later in itertools.pairwise(checks))


def test_a_failure_holds_the_checks_back_for_the_penalty_from_now() -> None:
    clock = FakeClock()
    gate = CodeCheckGates(penalty=1.0, clock=clock).of("10.0.0.9", known=False)
    assert gate.wait() == 0
    clock.now = 5.0
    gate.hold()
    clock.now = 5.25
    assert gate.wait() == pytest.approx(0.75)
    gate.hold()  # a second failure meanwhile extends from its own time
    assert gate.wait() == pytest.approx(1.0)
    clock.now = 6.25
    assert gate.wait() == 0


def test_a_check_waits_its_turn_and_gives_up_past_the_handshake_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.now += seconds

    gates = CodeCheckGates(penalty=1.5, clock=clock)
    gate = gates.of("10.0.0.9", known=False)
    gate.hold()
    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    asyncio.run(code_check_turn(gate))
    assert slept == [1.5] and clock.now == 1.5
    gates.penalty = HANDSHAKE_TIMEOUT + 1
    gate.hold()
    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(code_check_turn(gate))
