"""Wire messages of the ordering protocol and their strict msgpack codec.

Every frame is one msgpack map ``{"v": PROTOCOL_VERSION, "k": kind, "ts": ..., "inc": ...,
"seen": {...}, <fields of the kind>}``, plus the optional clock fields ``"tt"`` and ``"age"``.
``ts`` is the sender's hybrid logical timestamp (microseconds of table time, strictly increasing
on each link), ``inc`` the sender's incarnation and ``seen`` maps each member the sender knows to
``[incarnation, highest timestamp received from it]``. ``tt`` is the sender's table time when it
sent the frame (absent until it is synchronised) and ``age`` maps members in ``seen`` to how many
microseconds ago the sender received the frame reported there (see net/_clock.py).

`decode_message` trusts nothing: sizes, nesting, types, ranges and the exact set of fields are
checked, and any failure raises `RemoteProtocolError` naming the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final, NamedTuple, TypeAlias

import msgpack

from net._codec import UndecodableError, UnpackLimits, undecodable_reason, unpack_untrusted
from net.errors import LocalProtocolError, RemoteProtocolError
from net.events import LogEntry, Payload

__all__ = [
    "MAX_INT",
    "PROTOCOL_VERSION",
    "REASON_EXCLUDED",
    "REASON_LEFT",
    "Action",
    "Expulsion",
    "Heartbeat",
    "JoinRequest",
    "LeaveNotice",
    "Limits",
    "Message",
    "Removal",
    "Seen",
    "Snapshot",
    "SnapshotRequest",
    "StateHash",
    "ViewDecision",
    "ViewProposal",
    "check_payload",
    "decode_message",
    "encode_message",
    "normalize_payload",
]

PROTOCOL_VERSION: Final = 1
MAX_INT: Final = 2**63 - 1
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
    """A member leaving the view: its incarnation, a timestamp (frontier or cut) and why."""

    incarnation: int
    ts: int
    reason: str


@dataclass(frozen=True)
class Message:
    """Fields every frame carries. `table_time` and `ages` serve clock synchronisation only
    (the outbox fills them in when it sends) and take no part in comparisons."""

    ts: int
    incarnation: int
    seen: Seen
    table_time: int | None = field(default=None, kw_only=True, compare=False)
    ages: Mapping[str, int] = field(default_factory=dict, kw_only=True, compare=False)


@dataclass(frozen=True)
class Action(Message):
    """A new log entry (ts, sender) authored by the sender."""

    payload: Payload


@dataclass(frozen=True)
class Heartbeat(Message):
    """Nothing new: advances the sender's timestamp and acknowledges via `seen`."""


@dataclass(frozen=True)
class StateHash(Message):
    """Digest of the sender's application state right after stable entry `index`."""

    index: int
    digest: bytes


@dataclass(frozen=True)
class JoinRequest(Message):
    """The sender (a new member or a new incarnation) asks to be added to the group."""


@dataclass(frozen=True)
class LeaveNotice(Message):
    """The sender leaves on purpose; it authors no entry after this frame."""


@dataclass(frozen=True)
class ViewProposal(Message):
    """The sender's proposal for the view that follows `epoch`.

    `removals` holds the sender's own frozen frontier of each member to remove, `clock` its
    clock when it entered this view change, `entries` entries of removed members that the
    receiver may lack. `observed` holds the members (peer id -> incarnation) the sender itself
    has heard nothing from for the exclusion timeout: its own observations, as opposed to the
    removals it adopted. A proposal with no removals and no additions withdraws the sender's
    earlier proposal of this epoch.
    """

    epoch: int
    clock: int
    removals: Mapping[str, Removal]
    additions: Mapping[str, int]
    entries: tuple[LogEntry, ...]
    observed: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ViewDecision(Message):
    """The agreed view `epoch`: its members, who was removed with which cut, who was added.

    The change sits in the log at key (marker, "") . `entries` carries entries of removed
    members up to their cut that the receiver may lack and, for a joining receiver, the
    sender's own entries after the marker.
    """

    epoch: int
    marker: int
    members: Mapping[str, int]
    removals: Mapping[str, Removal]
    additions: Mapping[str, int]
    entries: tuple[LogEntry, ...]


@dataclass(frozen=True)
class SnapshotRequest(Message):
    """Asks for a snapshot of the stable state at index >= `min_index`.

    A joiner sets `anchor_epoch` to the epoch that added it, so that the answer can say at which
    stable index that view change sits.
    """

    min_index: int
    anchor_epoch: int | None


@dataclass(frozen=True)
class Snapshot(Message):
    """The application's stable state after `index` entries and view changes up to `epoch`."""

    index: int
    epoch: int
    anchor: int | None
    state: Payload


@dataclass(frozen=True)
class Expulsion(Message):
    """Tells incarnation `target` of the receiver that it is no longer a member."""

    epoch: int
    target: int


def encode_message(
    message: Message, table_time: int | None = None, ages: Mapping[str, int] | None = None
) -> bytes:
    """Encode one message as a frame (raises `LocalProtocolError` on an unknown type);
    `table_time` and `ages`, when given, replace the message's own clock fields."""
    kind = _KIND_OF.get(type(message))
    if kind is None:
        raise LocalProtocolError(f"cannot encode {type(message).__name__}")
    obj: dict[str, Any] = {
        "v": PROTOCOL_VERSION,
        "k": kind,
        "ts": message.ts,
        "inc": message.incarnation,
        "seen": {peer: [inc, ts] for peer, (inc, ts) in sorted(message.seen.items())},
    }
    table_time = message.table_time if table_time is None else table_time
    ages = message.ages if ages is None else ages
    if table_time is not None:
        obj["tt"] = table_time
    if ages:
        obj["age"] = dict(sorted(ages.items()))
    # The fields of each kind follow the header in the order the dataclass declares them.
    for spec in fields(message)[len(_HEADER_FIELDS) :]:
        value = getattr(message, spec.name)
        encode = _FIELD_ENCODERS.get(spec.name)
        obj[spec.name] = value if encode is None else encode(value)
    data: bytes = msgpack.packb(obj, use_bin_type=True)
    return data


def decode_message(data: bytes, limits: Limits = DEFAULT_LIMITS) -> Message:
    """Decode and schema-check one frame; raise `RemoteProtocolError` naming the bad field."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise RemoteProtocolError("frame", "not bytes")
    if len(data) > limits.max_frame_bytes:
        raise RemoteProtocolError(
            "frame", f"{len(data)} bytes exceeds the limit of {limits.max_frame_bytes}"
        )
    unpack_limits = UnpackLimits(
        max_str_len=limits.max_str_len,
        max_bin_len=limits.max_bin_len,
        max_array_len=limits.max_array_len,
        max_map_len=limits.max_map_len,
    )
    try:
        obj = unpack_untrusted(data if isinstance(data, bytes) else bytes(data), unpack_limits)
    except UndecodableError as error:
        raise RemoteProtocolError("frame", undecodable_reason(error)) from None
    return _parse(obj, limits)


def check_payload(value: object, field: str, limits: Limits = DEFAULT_LIMITS) -> None:
    """Raise `RemoteProtocolError` unless `value` is a plain msgpack-ready payload."""
    _check_value(value, field, limits.max_depth)


def normalize_payload(value: Payload, limits: Limits = DEFAULT_LIMITS) -> Payload:
    """Return `value` as every peer will decode it (tuples become lists) or raise
    `LocalProtocolError` if it is not a plain msgpack-ready value within the limits."""
    try:
        packed = msgpack.packb(value, use_bin_type=True)
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


# --- private helpers -----------------------------------------------------------------------------

_KIND_OF: Final[dict[type[Message], str]] = {
    Action: "action",
    Heartbeat: "beat",
    StateHash: "hash",
    JoinRequest: "join",
    LeaveNotice: "leave",
    ViewProposal: "propose",
    ViewDecision: "decide",
    SnapshotRequest: "snapreq",
    Snapshot: "snapshot",
    Expulsion: "expel",
}

_HEADER: Final = frozenset({"v", "k", "ts", "inc", "seen"})
_OPTIONAL_HEADER: Final = frozenset({"tt", "age"})
_FIELDS: Final[dict[str, frozenset[str]]] = {
    "action": frozenset({"payload"}),
    "beat": frozenset(),
    "hash": frozenset({"index", "digest"}),
    "join": frozenset(),
    "leave": frozenset(),
    "propose": frozenset({"epoch", "clock", "removals", "additions", "entries", "observed"}),
    "decide": frozenset({"epoch", "marker", "members", "removals", "additions", "entries"}),
    "snapreq": frozenset({"min_index", "anchor_epoch"}),
    "snapshot": frozenset({"index", "epoch", "anchor", "state"}),
    "expel": frozenset({"epoch", "target"}),
}
_REASONS: Final = frozenset({REASON_EXCLUDED, REASON_LEFT})


def _encode_removals(removals: Mapping[str, Removal]) -> dict[str, list[object]]:
    return {peer: [r.incarnation, r.ts, r.reason] for peer, r in sorted(removals.items())}


def _encode_entries(entries: tuple[LogEntry, ...]) -> list[list[object]]:
    return [[e.ts, e.peer, e.payload] for e in entries]


def _encode_peer_ints(values: Mapping[str, int]) -> dict[str, int]:
    return dict(sorted(values.items()))


_HEADER_FIELDS: Final = ("ts", "incarnation", "seen", "table_time", "ages")
# How a message field goes on the wire when it is not sent as it is (maps sorted by peer id).
_FIELD_ENCODERS: Final[dict[str, Callable[[Any], object]]] = {
    "removals": _encode_removals,
    "entries": _encode_entries,
    "additions": _encode_peer_ints,
    "members": _encode_peer_ints,
    "observed": _encode_peer_ints,
}


def _parse(obj: object, limits: Limits) -> Message:
    if not isinstance(obj, dict):
        raise RemoteProtocolError("frame", f"expected a map, got {type(obj).__name__}")
    if "v" not in obj:
        raise RemoteProtocolError("v", "missing")
    version = obj["v"]
    if type(version) is not int or version != PROTOCOL_VERSION:
        raise RemoteProtocolError("v", f"unsupported protocol version {version!r}")
    kind = obj.get("k")
    if not isinstance(kind, str) or kind not in _FIELDS:
        raise RemoteProtocolError("k", f"unknown message kind {kind!r}")
    expected = _HEADER | _FIELDS[kind]
    for name in sorted(expected):
        if name not in obj:
            raise RemoteProtocolError(_name(kind, name), "missing")
    extra = sorted(str(k) for k in obj if k not in expected and k not in _OPTIONAL_HEADER)
    if extra:
        raise RemoteProtocolError(_name(kind, extra[0]), "unexpected field")
    header = _Header(
        _int(obj["ts"], "ts", 1), _int(obj["inc"], "inc", 0), _seen(obj["seen"], limits)
    )
    message = _DECODERS[kind](obj, header, limits)
    # The clock fields take no part in a message's identity: set them on the new instance
    # (as its __init__ would have) rather than copy it.
    if "tt" in obj:
        object.__setattr__(message, "table_time", _int(obj["tt"], "tt", 0))
    if "age" in obj:
        object.__setattr__(message, "ages", _peer_ints(obj["age"], "age", limits))
    return message


class _Header(NamedTuple):
    """The fields every frame carries, checked: the first arguments of every message."""

    ts: int
    incarnation: int
    seen: dict[str, tuple[int, int]]


_Fields: TypeAlias = dict[str, Any]
"""A frame's map, its set of fields already checked: only their values remain to check."""


def _decode_action(f: _Fields, h: _Header, limits: Limits) -> Message:
    _check_value(f["payload"], "action.payload", limits.max_depth)
    return Action(*h, f["payload"])


def _decode_beat(f: _Fields, h: _Header, limits: Limits) -> Message:
    return Heartbeat(*h)


def _decode_hash(f: _Fields, h: _Header, limits: Limits) -> Message:
    digest = f["digest"]
    if not isinstance(digest, bytes) or not 1 <= len(digest) <= 64:
        raise RemoteProtocolError("hash.digest", "expected 1 to 64 bytes")
    return StateHash(*h, _int(f["index"], "hash.index", 0), digest)


def _decode_join(f: _Fields, h: _Header, limits: Limits) -> Message:
    return JoinRequest(*h)


def _decode_leave(f: _Fields, h: _Header, limits: Limits) -> Message:
    return LeaveNotice(*h)


def _decode_propose(f: _Fields, h: _Header, limits: Limits) -> Message:
    return ViewProposal(
        *h,
        _int(f["epoch"], "propose.epoch", 0),
        _int(f["clock"], "propose.clock", 0),
        _removals(f["removals"], "propose.removals", limits),
        _peer_ints(f["additions"], "propose.additions", limits),
        _entries(f["entries"], "propose.entries", limits),
        _peer_ints(f["observed"], "propose.observed", limits),
    )


def _decode_decide(f: _Fields, h: _Header, limits: Limits) -> Message:
    members = _peer_ints(f["members"], "decide.members", limits)
    if not members:
        raise RemoteProtocolError("decide.members", "empty view")
    return ViewDecision(
        *h,
        _int(f["epoch"], "decide.epoch", 1),
        _int(f["marker"], "decide.marker", 1),
        members,
        _removals(f["removals"], "decide.removals", limits),
        _peer_ints(f["additions"], "decide.additions", limits),
        _entries(f["entries"], "decide.entries", limits),
    )


def _decode_snapreq(f: _Fields, h: _Header, limits: Limits) -> Message:
    anchor_epoch = f["anchor_epoch"]
    return SnapshotRequest(
        *h,
        _int(f["min_index"], "snapreq.min_index", 0),
        None if anchor_epoch is None else _int(anchor_epoch, "snapreq.anchor_epoch", 0),
    )


def _decode_snapshot(f: _Fields, h: _Header, limits: Limits) -> Message:
    anchor = f["anchor"]
    _check_value(f["state"], "snapshot.state", limits.max_depth)
    return Snapshot(
        *h,
        _int(f["index"], "snapshot.index", 0),
        _int(f["epoch"], "snapshot.epoch", 0),
        None if anchor is None else _int(anchor, "snapshot.anchor", 0),
        f["state"],
    )


def _decode_expel(f: _Fields, h: _Header, limits: Limits) -> Message:
    return Expulsion(*h, _int(f["epoch"], "expel.epoch", 0), _int(f["target"], "expel.target", 0))


_DECODERS: Final[dict[str, Callable[[_Fields, _Header, Limits], Message]]] = {
    "action": _decode_action,
    "beat": _decode_beat,
    "hash": _decode_hash,
    "join": _decode_join,
    "leave": _decode_leave,
    "propose": _decode_propose,
    "decide": _decode_decide,
    "snapreq": _decode_snapreq,
    "snapshot": _decode_snapshot,
    "expel": _decode_expel,
}


def _name(kind: str, field: str) -> str:
    return field if field in _HEADER else f"{kind}.{field}"


def _int(value: object, field: str, low: int) -> int:
    if type(value) is not int:
        raise RemoteProtocolError(field, f"expected an integer, got {type(value).__name__}")
    if not low <= value <= MAX_INT:
        raise RemoteProtocolError(field, f"{value} out of range [{low}, 2**63-1]")
    return value


def _peer(value: object, field: str, limits: Limits) -> str:
    if not isinstance(value, str):
        raise RemoteProtocolError(field, f"peer id must be a string, got {type(value).__name__}")
    if not 1 <= len(value) <= limits.max_peer_id_len:
        raise RemoteProtocolError(field, "peer id empty or too long")
    return value


def _map(value: object, field: str) -> dict[Any, Any]:
    if not isinstance(value, dict):
        raise RemoteProtocolError(field, f"expected a map, got {type(value).__name__}")
    return value


def _seen(value: object, limits: Limits) -> dict[str, tuple[int, int]]:
    result: dict[str, tuple[int, int]] = {}
    for key, pair in _map(value, "seen").items():
        peer = _peer(key, "seen", limits)
        where = f"seen[{peer}]"
        if not isinstance(pair, list) or len(pair) != 2:
            raise RemoteProtocolError(where, "expected [incarnation, timestamp]")
        result[peer] = (_int(pair[0], where + ".inc", 0), _int(pair[1], where + ".ts", 0))
    return result


def _peer_ints(value: object, field: str, limits: Limits) -> dict[str, int]:
    return {
        _peer(k, field, limits): _int(v, f"{field}[{k}]", 0) for k, v in _map(value, field).items()
    }


def _removals(value: object, field: str, limits: Limits) -> dict[str, Removal]:
    result: dict[str, Removal] = {}
    for key, item in _map(value, field).items():
        peer = _peer(key, field, limits)
        where = f"{field}[{peer}]"
        if not isinstance(item, list) or len(item) != 3:
            raise RemoteProtocolError(where, "expected [incarnation, timestamp, reason]")
        if item[2] not in _REASONS:
            raise RemoteProtocolError(where + ".reason", f"unknown reason {item[2]!r}")
        result[peer] = Removal(
            _int(item[0], where + ".inc", 0), _int(item[1], where + ".ts", 0), item[2]
        )
    return result


def _entries(value: object, field: str, limits: Limits) -> tuple[LogEntry, ...]:
    if not isinstance(value, list):
        raise RemoteProtocolError(field, f"expected an array, got {type(value).__name__}")
    result = []
    for i, item in enumerate(value):
        where = f"{field}[{i}]"
        if not isinstance(item, list) or len(item) != 3:
            raise RemoteProtocolError(where, "expected [ts, peer, payload]")
        _check_value(item[2], where + ".payload", limits.max_depth)
        result.append(
            LogEntry(
                _int(item[0], where + ".ts", 1), _peer(item[1], where + ".peer", limits), item[2]
            )
        )
    return tuple(result)


def _check_value(value: object, field: str, depth: int) -> None:
    if value is None or isinstance(value, bool | str | bytes):
        return
    if type(value) is int:
        return
    if depth <= 0:
        raise RemoteProtocolError(field, "nested too deeply")
    if isinstance(value, list):
        for item in value:
            _check_value(item, field, depth - 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str | bytes):
                raise RemoteProtocolError(field, "map keys must be strings")
            _check_value(item, field, depth - 1)
        return
    raise RemoteProtocolError(field, f"{type(value).__name__} values are not allowed")
