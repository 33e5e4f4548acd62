"""The building blocks of the wire messages (net/_order/messages.py): the limits of a frame, a
removal, and the strict checks of each kind of field value, each raising `RemoteProtocolError`
naming the field. Private to `net`; use `net._order.messages`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

from net._identity import PROOF_SIZE
from net.errors import RemoteProtocolError
from net.events import LogEntry

__all__ = [
    "DEFAULT_LIMITS",
    "DIGEST_SIZE",
    "FIELD_ENCODERS",
    "MAX_INT",
    "REASON_EXCLUDED",
    "REASON_LEFT",
    "Limits",
    "Removal",
    "Seen",
    "check_digests",
    "decode_extras",
    "encode_extras",
    "encode_seen",
]

MAX_INT: Final = 2**63 - 1
DIGEST_SIZE: Final = 12
"""Bytes of a digest of an author's entries (`dg`, see net/_order/digests.py)."""
REASON_EXCLUDED: Final = "excluded"
REASON_LEFT: Final = "left"

Seen: TypeAlias = Mapping[str, tuple[int, int]]
"""peer id -> (incarnation, highest timestamp received from that incarnation)."""


@dataclass(frozen=True)
class Limits:
    """Bounds on what one frame may contain; anything beyond is a protocol error."""

    max_frame_bytes: int = 4 * 1024 * 1024
    max_depth: int = 32
    max_str_len: int = 64 * 1024
    max_bin_len: int = 4 * 1024 * 1024
    max_array_len: int = 100_000
    max_map_len: int = 10_000
    max_peer_id_len: int = 64


DEFAULT_LIMITS: Final = Limits()


@dataclass(frozen=True)
class Removal:
    """A member leaving the view: its incarnation, a timestamp (frontier or cut) and why. At a
    signed table a leave carries the leaver's `proof` that it left (its signed notice), so that
    nobody can claim that a third party left; it takes no part in comparisons."""

    incarnation: int
    ts: int
    reason: str
    proof: bytes | None = field(default=None, compare=False)


_REASONS: Final = frozenset({REASON_EXCLUDED, REASON_LEFT})


def check_int(value: object, field: str, low: int) -> int:
    if type(value) is not int:
        raise RemoteProtocolError(field, f"expected an integer, got {type(value).__name__}")
    if not low <= value <= MAX_INT:
        raise RemoteProtocolError(field, f"{value} out of range [{low}, 2**63-1]")
    return value


def check_bool(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise RemoteProtocolError(field, f"expected true or false, got {type(value).__name__}")
    return value


def check_peer(value: object, field: str, limits: Limits) -> str:
    if not isinstance(value, str):
        raise RemoteProtocolError(field, f"peer id must be a string, got {type(value).__name__}")
    if not 1 <= len(value) <= limits.max_peer_id_len:
        raise RemoteProtocolError(field, "peer id empty or too long")
    return value


def check_map(value: object, field: str) -> dict[Any, Any]:
    if not isinstance(value, dict):
        raise RemoteProtocolError(field, f"expected a map, got {type(value).__name__}")
    return value


def check_seen(value: object, limits: Limits, field: str = "seen") -> dict[str, tuple[int, int]]:
    result: dict[str, tuple[int, int]] = {}
    for key, pair in check_map(value, field).items():
        peer = check_peer(key, field, limits)
        if isinstance(pair, list) and len(pair) == 2:
            inc, ts = pair
            # Every frame carries one of these per member: the names of the fields are made
            # only for an error.
            if type(inc) is int and type(ts) is int and 0 <= inc <= MAX_INT and 0 <= ts <= MAX_INT:
                result[peer] = (inc, ts)
                continue
        where = f"{field}[{peer}]"
        if not isinstance(pair, list) or len(pair) != 2:
            raise RemoteProtocolError(where, "expected [incarnation, timestamp]")
        result[peer] = (check_int(pair[0], where + ".inc", 0), check_int(pair[1], where + ".ts", 0))
    return result


def check_peer_ints(value: object, field: str, limits: Limits) -> dict[str, int]:
    result: dict[str, int] = {}
    for key, item in check_map(value, field).items():
        peer = check_peer(key, field, limits)
        if type(item) is int and 0 <= item <= MAX_INT:
            result[peer] = item
        else:
            result[peer] = check_int(item, f"{field}[{peer}]", 0)
    return result


def encode_extras(
    obj: dict[str, Any],
    table_time: int | None,
    ages: Mapping[str, int],
    digests: tuple[int, tuple[bytes, ...]] | None,
    echoes: Mapping[str, tuple[int, int]],
) -> None:
    """Add a frame's optional header fields (clock synchronisation, digests) to its map."""
    if table_time is not None:
        obj["tt"] = table_time
    if ages:
        obj["age"] = dict(sorted(ages.items()))
    if digests is not None:
        obj["dg"] = [digests[0], list(digests[1])]
    if echoes:
        obj["ec"] = {peer: list(echo) for peer, echo in sorted(echoes.items())}


def decode_extras(obj: Mapping[Any, Any], seen_count: int, limits: Limits) -> dict[str, Any]:
    """A frame's optional header fields, checked, by the name of the attribute they fill."""
    extras: dict[str, Any] = {}
    if "tt" in obj:
        extras["table_time"] = check_int(obj["tt"], "tt", 0)
    if "age" in obj:
        extras["ages"] = check_peer_ints(obj["age"], "age", limits)
    if "dg" in obj:
        extras["digests"] = check_digests(obj["dg"], seen_count)
    if "ec" in obj:
        extras["echoes"] = check_echoes(obj["ec"], "ec", limits)
    return extras


def check_echoes(value: object, field: str, limits: Limits) -> dict[str, tuple[int, int]]:
    """Peer -> [stamp, age]: the latest frame received from it and how long ago (microseconds)."""
    result = {}
    for key, item in check_map(value, field).items():
        peer = check_peer(key, field, limits)
        if isinstance(item, list) and len(item) == 2:
            stamp, age = item
            if (
                type(stamp) is int
                and type(age) is int
                and 1 <= stamp <= MAX_INT
                and 0 <= age <= MAX_INT
            ):
                result[peer] = (stamp, age)
                continue
        where = f"{field}[{peer}]"
        if not isinstance(item, list) or len(item) != 2:
            raise RemoteProtocolError(where, "expected [stamp, age]")
        result[peer] = (
            check_int(item[0], where + ".stamp", 1),
            check_int(item[1], where + ".age", 0),
        )
    return result


def check_removals(value: object, field: str, limits: Limits) -> dict[str, Removal]:
    result: dict[str, Removal] = {}
    for key, item in check_map(value, field).items():
        peer = check_peer(key, field, limits)
        where = f"{field}[{peer}]"
        if not isinstance(item, list) or len(item) not in (3, 4):
            raise RemoteProtocolError(where, "expected [incarnation, timestamp, reason(, proof)]")
        if item[2] not in _REASONS:
            raise RemoteProtocolError(where + ".reason", f"unknown reason {item[2]!r}")
        proof = check_proof(item[3], where + ".proof") if len(item) == 4 else None
        result[peer] = Removal(
            check_int(item[0], where + ".inc", 0),
            check_int(item[1], where + ".ts", 0),
            item[2],
            proof,
        )
    return result


def check_entry_list(value: object, field: str, limits: Limits) -> tuple[LogEntry, ...]:
    if not isinstance(value, list):
        raise RemoteProtocolError(field, f"expected an array, got {type(value).__name__}")
    result = []
    for i, item in enumerate(value):
        where = f"{field}[{i}]"
        if not isinstance(item, list) or len(item) not in (3, 4):
            raise RemoteProtocolError(where, "expected [ts, peer, payload] or [..., proof]")
        check_value(item[2], where + ".payload", limits.max_depth)
        proof = check_proof(item[3], where + ".proof") if len(item) == 4 else None
        ts = check_int(item[0], where + ".ts", 1)
        result.append(LogEntry(ts, check_peer(item[1], where + ".peer", limits), item[2], proof))
    return tuple(result)


def check_certificate(value: object, field: str, limits: Limits) -> dict[str, bytes]:
    """Voter -> its proof (signature and public key) of the vote a decision rests on."""
    return {
        check_peer(k, field, limits): check_proof(v, f"{field}[{k}]")
        for k, v in check_map(value, field).items()
    }


def check_digests(value: object, count: int) -> tuple[int, tuple[bytes, ...]]:
    """A frame's ``dg``: [base, digest per member of its ``seen``, in peer order], each digest
    `DIGEST_SIZE` bytes, or empty where the sender cannot tell."""
    if not isinstance(value, list) or len(value) != 2 or not isinstance(value[1], list):
        raise RemoteProtocolError("dg", "expected [base, [digest...]]")
    base = check_int(value[0], "dg.base", 0)
    digests = value[1]
    if len(digests) != count:
        raise RemoteProtocolError("dg", f"{len(digests)} digests for {count} members seen")
    for digest in digests:
        if not isinstance(digest, bytes) or len(digest) not in (0, DIGEST_SIZE):
            raise RemoteProtocolError("dg", f"a digest must be 0 or {DIGEST_SIZE} bytes")
    return base, tuple(digests)


def check_proof(value: object, field: str) -> bytes:
    """An author's proof: its signature and public key (checked by the core, not here)."""
    if not isinstance(value, bytes) or len(value) != PROOF_SIZE:
        raise RemoteProtocolError(field, f"expected {PROOF_SIZE} bytes")
    return value


def check_value(value: object, field: str, depth: int) -> None:
    if value is None or isinstance(value, bool | str | bytes):
        return
    if type(value) is int:
        return
    if depth <= 0:
        raise RemoteProtocolError(field, "nested too deeply")
    if isinstance(value, list):
        for item in value:
            check_value(item, field, depth - 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str | bytes):
                raise RemoteProtocolError(field, "map keys must be strings")
            check_value(item, field, depth - 1)
        return
    raise RemoteProtocolError(field, f"{type(value).__name__} values are not allowed")


# --- how fields go on the wire (net/_order/messages.py) ------------------------------------


def _encode_removals(removals: Mapping[str, Removal]) -> dict[str, list[object]]:
    return {
        peer: [r.incarnation, r.ts, r.reason] + ([] if r.proof is None else [r.proof])
        for peer, r in sorted(removals.items())
    }


def _encode_entries(entries: tuple[LogEntry, ...]) -> list[list[object]]:
    # A signed entry carries its author's proof, so that anyone can check it whoever relays it.
    return [
        [e.ts, e.peer, e.payload] if e.proof is None else [e.ts, e.peer, e.payload, e.proof]
        for e in entries
    ]


def encode_seen(seen: Seen) -> dict[str, list[int]]:
    return {peer: [inc, ts] for peer, (inc, ts) in sorted(seen.items())}


def _encode_peer_ints(values: Mapping[str, int]) -> dict[str, int]:
    return dict(sorted(values.items()))


# How a message field goes on the wire when it is not sent as it is (maps sorted by peer id).
FIELD_ENCODERS: Final[dict[str, Callable[[Any], object]]] = {
    "removals": _encode_removals,
    "entries": _encode_entries,
    "additions": _encode_peer_ints,
    "members": _encode_peer_ints,
    "observed": _encode_peer_ints,
    "caps": _encode_peer_ints,
    "frozen": encode_seen,
    "reasons": _encode_removals,
    "value_removals": _encode_removals,
    "value_additions": _encode_peer_ints,
    "certificate": lambda certificate: dict(sorted(certificate.items())),
    "heard": lambda heard: {p: dict(sorted(o.items())) for p, o in sorted(heard.items())},
}
