"""Pointers on the wire: a player's pointer update as an ephemeral frame's payload, and back.

Pointers travel outside the ordered log, best effort; ``decode_cursor`` accepts only exactly the
expected form (the frame comes from another machine).
"""

from __future__ import annotations

import msgpack

from nerts_lan.rules.actions import MAX_NAME_LENGTH
from nerts_lan.rules.cards import Card, CardError
from nerts_lan.table.session import CursorMoved
from net import UndecodableError, UnpackLimits, unpack_untrusted

__all__ = ["MAX_HOLDING", "decode_cursor", "encode_cursor"]

MAX_HOLDING = 13
"""Most cards a pointer may be shown dragging (a whole run, king to ace)."""

_CURSOR_LIMITS = UnpackLimits(
    max_str_len=4 * MAX_NAME_LENGTH, max_bin_len=0, max_array_len=MAX_HOLDING, max_map_len=5
)


def encode_cursor(player: str, x: float, y: float, holding: tuple[str, ...]) -> bytes:
    """A pointer update as an ephemeral frame's payload (msgpack)."""
    data: bytes = msgpack.packb(
        {"k": "cur", "p": player, "x": float(x), "y": float(y), "h": list(holding)},
        use_bin_type=True,
    )
    return data


def decode_cursor(data: bytes) -> CursorMoved | None:
    """The pointer update in ``data``, or None unless it is exactly of the expected form."""
    try:
        body = unpack_untrusted(data, _CURSOR_LIMITS)
    except UndecodableError:
        return None
    if not isinstance(body, dict) or set(body) != {"k", "p", "x", "y", "h"} or body["k"] != "cur":
        return None
    player, x, y, holding = body["p"], body["x"], body["y"], body["h"]
    if not (isinstance(player, str) and 0 < len(player) <= MAX_NAME_LENGTH):
        return None
    if not all(type(v) is float and 0.0 <= v <= 1.0 for v in (x, y)):
        return None
    if not (isinstance(holding, list) and len(holding) <= MAX_HOLDING):
        return None
    try:
        cards = tuple(str(Card.parse(name)) for name in holding)
    except CardError:
        return None
    return CursorMoved(player, x, y, cards)
