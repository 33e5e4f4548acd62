"""What an entry may carry: a plain msgpack-ready value within the limits, as every peer will
decode it. Private to `net._order`; `net._order.messages` passes these on."""

from __future__ import annotations

import msgpack

from net._codec import pack
from net._order.wirefields import DEFAULT_LIMITS, Limits, check_value
from net.errors import LocalProtocolError, RemoteProtocolError
from net.events import Payload

__all__ = ["check_payload", "normalize_payload"]


def check_payload(value: object, field: str, limits: Limits = DEFAULT_LIMITS) -> None:
    """Raise `RemoteProtocolError` unless `value` is a plain msgpack-ready payload."""
    check_value(value, field, limits.max_depth)


def normalize_payload(value: Payload, limits: Limits = DEFAULT_LIMITS) -> Payload:
    """Return `value` as every peer will decode it (tuples become lists) or raise
    `LocalProtocolError` if it is not a plain msgpack-ready value within the limits."""
    try:
        packed = pack(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise LocalProtocolError(f"payload is not msgpack-ready: {exc}") from None
    if len(packed) > limits.max_frame_bytes // 2:
        raise LocalProtocolError("payload too large")
    result = msgpack.unpackb(packed, raw=False, strict_map_key=False)
    try:
        check_payload(result, "payload", limits)
    except RemoteProtocolError as exc:
        raise LocalProtocolError(str(exc)) from None
    return result
