"""The transport's frames on the wire: the length prefix, the frame kinds, untrusted unpacking, and
the two ways a connection ends (we refuse it, or the other side broke the protocol).

A frame is a 4-byte big-endian length, then a msgpack body: a list whose first item is its kind.
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass
from typing import Any

import msgpack

__all__ = [
    "HEADER",
    "KIND_ACK",
    "KIND_CONFIRM",
    "KIND_DATA",
    "KIND_DESCRIBE",
    "KIND_EPHEMERAL",
    "KIND_HELLO",
    "KIND_KEY_EXCHANGE",
    "KIND_PEERS",
    "KIND_PROOF",
    "KIND_REFUSE",
    "MAX_TEXT",
    "Broken",
    "Refused",
    "UndecodableError",
    "UnpackLimits",
    "is_refusal",
    "pack",
    "pack_body",
    "unpack_untrusted",
]

HEADER = struct.Struct(">I")
"""The length prefix of every frame."""
KIND_HELLO, KIND_DATA, KIND_ACK, KIND_REFUSE, KIND_PEERS = 0, 1, 2, 3, 4
KIND_EPHEMERAL, KIND_KEY_EXCHANGE, KIND_CONFIRM, KIND_PROOF = 5, 6, 7, 8
KIND_DESCRIBE = 9
"""A stranger's request to be told which table listens here, and its answer
(``net._mesh.describe``)."""
MAX_TEXT = 200
"""Longest text field of a hello, and longest refusal reason repeated from the other side."""


@dataclass(frozen=True)
class UnpackLimits:
    """The largest strings, byte strings, arrays and maps an untrusted msgpack value may hold
    (extension types are always refused)."""

    max_str_len: int
    max_bin_len: int
    max_array_len: int
    max_map_len: int


class UndecodableError(ValueError):
    """Bytes that are not one msgpack value within the limits; ``cause`` is msgpack's error."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(type(cause).__name__)
        self.cause = cause


class Refused(Exception):
    """We refuse the connection, telling the other side why."""


class Broken(Exception):
    """The other side broke the protocol: close the connection."""


def unpack_untrusted(data: bytes, limits: UnpackLimits) -> Any:
    """The msgpack value of ``data`` from a stranger: lists for arrays, text for strings, maps
    with string keys only. Raises ``UndecodableError`` (never anything else) when it is not one."""
    try:
        return msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=True,
            use_list=True,
            max_bin_len=limits.max_bin_len,
            max_str_len=limits.max_str_len,
            max_array_len=limits.max_array_len,
            max_map_len=limits.max_map_len,
            max_ext_len=0,
            ext_hook=_reject_ext,  # an empty ext8 slips under max_ext_len=0
        )
    except Exception as error:  # msgpack raises several types for hostile input
        raise UndecodableError(error) from None


def undecodable_reason(error: UndecodableError) -> str:
    """Why bytes were not one msgpack value, in words for a log or a protocol error."""
    cause = error.cause
    if isinstance(cause, msgpack.StackError):
        return "nesting too deep"
    if isinstance(cause, msgpack.ExtraData):
        return "extra bytes after the message"
    if isinstance(cause, msgpack.FormatError):
        return "invalid msgpack"
    if isinstance(cause, ValueError | TypeError | OverflowError):
        return f"invalid msgpack ({cause})"
    return f"undecodable ({type(cause).__name__})"


def pack_body(body: list[Any]) -> bytes:
    """The msgpack bytes of a frame body."""
    return pack(body)


def pack(value: Any) -> bytes:
    """The msgpack bytes of `value`: what ``msgpack.packb(value, use_bin_type=True)`` gives."""
    # msgpack.packb makes a Packer, with a 256 KiB buffer, for every call: one per thread,
    # kept, costs a frame a fraction of that (a Packer is not safe to share between threads).
    packer: msgpack.Packer | None = getattr(_PACKERS, "packer", None)
    if packer is None:
        packer = _PACKERS.packer = msgpack.Packer(use_bin_type=True)
    data: bytes = packer.pack(value)
    return data


_PACKERS = threading.local()


def is_refusal(body: Any) -> bool:
    """Whether a decoded body is a refusal: ``[KIND_REFUSE, reason]``."""
    return (
        isinstance(body, list)
        and len(body) == 2
        and body[0] == KIND_REFUSE
        and isinstance(body[1], str)
    )


def _reject_ext(code: int, data: bytes) -> object:
    raise ValueError("ext types are not allowed")
