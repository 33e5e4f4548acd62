"""One decoder for untrusted msgpack, shared by the transport's frames and the core's messages."""

from __future__ import annotations

import pytest

from net._codec import UndecodableError, UnpackLimits, undecodable_reason, unpack_untrusted
from net._order.messages import decode_message
from net.errors import RemoteProtocolError

LIMITS = UnpackLimits(max_str_len=64, max_bin_len=64, max_array_len=8, max_map_len=8)
EMPTY_EXT8 = b"\xc7\x00\x05"  # an extension value of length 0, type 5


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (EMPTY_EXT8, "invalid msgpack (ext types are not allowed)"),
        (b"\x91" * 2000 + b"\xc0", "nesting too deep"),
        (b"\xc0\xc0", "extra bytes after the message"),
        (b"\xc1", "invalid msgpack"),
        (b"\xdc\x00\x09" + b"\xc0" * 9, "invalid msgpack (9 exceeds max_array_len(8))"),
    ],
)
def test_hostile_bytes_are_refused_with_a_reason(data: bytes, reason: str) -> None:
    with pytest.raises(UndecodableError) as refused:
        unpack_untrusted(data, LIMITS)
    assert undecodable_reason(refused.value) == reason


def test_a_message_holding_an_empty_extension_is_a_protocol_error() -> None:
    with pytest.raises(RemoteProtocolError, match="ext types are not allowed"):
        decode_message(EMPTY_EXT8)


def test_plain_values_pass() -> None:
    assert unpack_untrusted(b"\x82\xa1k\x01\xa1v\x92\xc3\xc4\x01\x00", LIMITS) == {
        "k": 1,
        "v": [True, b"\x00"],
    }
