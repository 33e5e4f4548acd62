"""Wire messages of the ordering protocol and their strict msgpack codec.

Every frame is one msgpack map ``{"v": PROTOCOL_VERSION, "k": kind, "ts": ..., "inc": ...,
"seen": {...}, <fields of the kind>}``, plus the optional clock fields ``"tt"`` and ``"age"``.
``ts`` is the sender's hybrid logical timestamp (microseconds of table time, strictly increasing
on each link), ``inc`` the sender's incarnation and ``seen`` maps each member the sender knows to
``[incarnation, highest timestamp received from it]``. ``tt`` is the sender's table time when it
sent the frame (absent until it is synchronised) and ``age`` maps members in ``seen`` to how many
microseconds ago the sender received the frame reported there (see net/_order/clock.py), and
``dg`` (at a signed table) digests of what it holds of each author in ``seen``.

`decode_message` trusts nothing: sizes, nesting, types, ranges and the exact set of fields are
checked, and any failure raises `RemoteProtocolError` naming the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final, NamedTuple, TypeAlias

from net._codec import UndecodableError, UnpackLimits, pack, undecodable_reason, unpack_untrusted
from net._order.payloads import check_payload, normalize_payload
from net._order.wirefields import (
    DEFAULT_LIMITS,
    FIELD_ENCODERS,
    Limits,
    Removal,
    Seen,
    check_bool,
    check_certificate,
    check_entry_list,
    check_int,
    check_map,
    check_peer,
    check_peer_ints,
    check_proof,
    check_removals,
    check_seen,
    check_value,
    decode_extras,
    encode_extras,
    encode_seen,
)
from net.errors import LocalProtocolError, RemoteProtocolError
from net.events import LogEntry, Payload

__all__ = [
    "PROTOCOL_VERSION",
    "Accept",
    "Accepted",
    "Action",
    "Evidence",
    "Expulsion",
    "Heartbeat",
    "JoinRequest",
    "LeaveNotice",
    "Message",
    "Prepare",
    "Promise",
    "Snapshot",
    "SnapshotRequest",
    "StateHash",
    "ViewDecision",
    "check_payload",
    "decode_message",
    "encode_message",
    "normalize_payload",
]

PROTOCOL_VERSION: Final = 2


@dataclass(frozen=True)
class Message:
    """Fields every frame carries. `table_time`, `ages` and `echoes` serve clock synchronisation
    only (the outbox fills them in when it sends) and take no part in comparisons."""

    ts: int
    incarnation: int
    seen: Seen
    table_time: int | None = field(default=None, kw_only=True, compare=False)
    ages: Mapping[str, int] = field(default_factory=dict, kw_only=True, compare=False)
    digests: tuple[int, tuple[bytes, ...]] | None = field(default=None, kw_only=True, compare=False)
    echoes: Mapping[str, tuple[int, int]] = field(default_factory=dict, kw_only=True, compare=False)


@dataclass(frozen=True)
class Action(Message):
    """A new log entry (ts, sender) authored by the sender; `proof` is the author's signature
    and public key (``net._order.signatures``), None at an unsigned table (then not on the wire)."""

    payload: Payload
    proof: bytes | None = None


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
    """The sender leaves on purpose; it authors no entry after this frame. `proof`, at a signed
    table, is its signature that this incarnation left (``net._order.signatures``): the others
    pass it on with its removal, so nobody can claim that a member left."""

    proof: bytes | None = None


@dataclass(frozen=True)
class Prepare(Message):
    """Phase 1 of ballot (`ballot`, sender) for the view after `epoch`: asks each member of the
    view to promise it (see "Membership (views)" in docs/protocol.md)."""

    epoch: int
    ballot: int


@dataclass(frozen=True)
class Promise(Message):
    """The sender promised ballot (`ballot`, `proposer`) of the view after `epoch`.

    `clock` and `frozen` are the sender's clock and ``seen`` when it first joined this view
    change: fixed for the epoch, they bound what it can have let anyone stabilise. `observed`
    holds the members it heard nothing from for the exclusion timeout, `reasons` the removals
    that need no confirmation (leaves; ts unused), `additions` the join requests it got. The
    value it accepted, if any, is (`accepted`, `accepted_by`) with `value_*`; `accepted` 0
    means none. `entries` (to the proposer only) holds entries it may lack. `holds_state` is
    false for a joiner still waiting for its snapshot (and a returning incarnation's vote).
    `heard` passes on what the other members it got promises from observe (their `observed`):
    a proposer cut off from one of them still learns that it observes the proposer silent.
    `caps` bounds the cut of each author it holds a proof of equivocation of (below it).
    """

    epoch: int
    ballot: int
    proposer: str
    clock: int
    frozen: Seen
    observed: Mapping[str, int]
    reasons: Mapping[str, Removal]
    additions: Mapping[str, int]
    accepted: int
    accepted_by: str
    value_marker: int
    value_removals: Mapping[str, Removal]
    value_additions: Mapping[str, int]
    entries: tuple[LogEntry, ...]
    holds_state: bool = True
    heard: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    caps: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Evidence(Message):
    """Entries of `author` (incarnation `author_incarnation`), each with its proof: the
    sender's own copies, after a mismatch of digests, or two entries at one key with different
    payloads, a proof of equivocation (net/_order/evidence.py)."""

    author: str
    author_incarnation: int
    entries: tuple[LogEntry, ...]


@dataclass(frozen=True)
class Accept(Message):
    """Phase 2 of ballot (`ballot`, sender): the change it proposes for the view after `epoch`,
    with the entries of removed members up to their cut that the receiver may lack."""

    epoch: int
    ballot: int
    marker: int
    removals: Mapping[str, Removal]
    additions: Mapping[str, int]
    entries: tuple[LogEntry, ...]


@dataclass(frozen=True)
class Accepted(Message):
    """The sender accepted the change of ballot (`ballot`, `proposer`) for the view after
    `epoch`. `proof`, at a signed table, is its signature of that vote for exactly that change
    (``net._order.signatures.vote_message``): a quorum of them is a decision's certificate."""

    epoch: int
    ballot: int
    proposer: str
    proof: bytes | None = None


@dataclass(frozen=True)
class ViewDecision(Message):
    """The agreed view `epoch`: its members, who was removed with which cut, who was added.

    The change sits in the log at key (marker, "") . `entries` carries entries of removed
    members up to their cut that the receiver may lack and, for a joining receiver, the
    sender's own entries after the marker. At a signed table `certificate` holds the votes
    (`Accepted.proof`) of a quorum of view `epoch` - 1 for ballot (`ballot`, `proposer`) and
    exactly this change: whoever relays it, a decision proves itself."""

    epoch: int
    marker: int
    members: Mapping[str, int]
    removals: Mapping[str, Removal]
    additions: Mapping[str, int]
    entries: tuple[LogEntry, ...]
    ballot: int = 0
    proposer: str = ""
    certificate: Mapping[str, bytes] = field(default_factory=dict)


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
    """Tells incarnation `target` of the receiver that decision `epoch` removed it, with that
    decision (`ViewDecision` less its entries), which a signed receiver checks first."""

    epoch: int
    target: int
    marker: int = 0
    members: Mapping[str, int] = field(default_factory=dict)
    removals: Mapping[str, Removal] = field(default_factory=dict)
    additions: Mapping[str, int] = field(default_factory=dict)
    ballot: int = 0
    proposer: str = ""
    certificate: Mapping[str, bytes] = field(default_factory=dict)


def encode_message(
    message: Message,
    table_time: int | None = None,
    ages: Mapping[str, int] | None = None,
    digests: tuple[int, tuple[bytes, ...]] | None = None,
    echoes: Mapping[str, tuple[int, int]] | None = None,
) -> bytes:
    """Encode one message as a frame (raises `LocalProtocolError` on an unknown type);
    `table_time`, `ages`, `digests` and `echoes`, when given, replace the message's own."""
    kind = _KIND_OF.get(type(message))
    if kind is None:
        raise LocalProtocolError(f"cannot encode {type(message).__name__}")
    obj: dict[str, Any] = {
        "v": PROTOCOL_VERSION,
        "k": kind,
        "ts": message.ts,
        "inc": message.incarnation,
        "seen": encode_seen(message.seen),
    }
    encode_extras(
        obj,
        message.table_time if table_time is None else table_time,
        message.ages if ages is None else ages,
        message.digests if digests is None else digests,
        message.echoes if echoes is None else echoes,
    )
    for name in _BODY_OF[kind]:
        value = getattr(message, name)
        if value is None and name in _OPTIONAL.get(kind, ()):
            continue
        encode = FIELD_ENCODERS.get(name)
        obj[name] = value if encode is None else encode(value)
    data: bytes = pack(obj)
    return data


def decode_message(data: bytes, limits: Limits = DEFAULT_LIMITS) -> Message:
    """Decode and schema-check one frame; raise `RemoteProtocolError` naming the bad field."""
    if type(data) is not bytes:
        return _decode(data, limits)
    # A frame broadcast to several cores of one process (the simulator, the suite) is parsed
    # once: decoding is a pure function of the bytes and the limits and messages are frozen,
    # so the same frame gets an equal message. A frame that does not decode is never kept.
    # Keyed by the bytes alone (their hash is kept in the object), the limits checked beside:
    # hashing a `Limits` hashes each of its fields.
    cached = _RECENTLY_DECODED.get(data)
    if cached is not None and (cached[0] is limits or cached[0] == limits):
        return cached[1]
    message = _decode(data, limits)
    if len(_RECENTLY_DECODED) >= _RECENTLY_DECODED_CAP:
        _RECENTLY_DECODED.clear()
    _RECENTLY_DECODED[data] = (limits, message)
    return message


def _decode(data: bytes, limits: Limits) -> Message:
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


# --- private helpers -----------------------------------------------------------------------------

_KIND_OF: Final[dict[type[Message], str]] = {
    Action: "action",
    Heartbeat: "beat",
    StateHash: "hash",
    JoinRequest: "join",
    LeaveNotice: "leave",
    Prepare: "prepare",
    Promise: "promise",
    Accept: "accept",
    Accepted: "accepted",
    ViewDecision: "decide",
    SnapshotRequest: "snapreq",
    Snapshot: "snapshot",
    Expulsion: "expel",
    Evidence: "evidence",
}

_RECENTLY_DECODED_CAP: Final = 64  # frames kept by `decode_message`, emptied at the cap
_RECENTLY_DECODED: dict[bytes, tuple[Limits, Message]] = {}
_HEADER: Final = frozenset({"v", "k", "ts", "inc", "seen"})
_OPTIONAL_HEADER: Final = frozenset({"tt", "age", "dg", "ec"})
_OPTIONAL: Final[dict[str, frozenset[str]]] = {
    "action": frozenset({"proof"}),
    "leave": frozenset({"proof"}),
    "accepted": frozenset({"proof"}),
}
"""Fields a frame of that kind may leave out (a None value is not sent)."""
_HEADER_FIELDS: Final = ("ts", "incarnation", "seen", "table_time", "ages", "digests", "echoes")
# Each kind's fields on the wire are its dataclass's, by name, after the header, in the order
# the dataclass declares them (asked once: `dataclasses.fields` is slow for every frame).
_BODY_OF: Final[dict[str, tuple[str, ...]]] = {
    kind: tuple(spec.name for spec in fields(cls)[len(_HEADER_FIELDS) :])
    for cls, kind in _KIND_OF.items()
}
_FIELDS: Final[dict[str, frozenset[str]]] = {
    kind: frozenset(names) - _OPTIONAL.get(kind, frozenset()) for kind, names in _BODY_OF.items()
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
    extra = sorted(
        str(k)
        for k in obj
        if k not in expected | _OPTIONAL.get(kind, frozenset()) and k not in _OPTIONAL_HEADER
    )
    if extra:
        raise RemoteProtocolError(_name(kind, extra[0]), "unexpected field")
    header = _Header(
        check_int(obj["ts"], "ts", 1),
        check_int(obj["inc"], "inc", 0),
        check_seen(obj["seen"], limits),
    )
    message = _DECODERS[kind](obj, header, limits)
    # The clock fields take no part in a message's identity: set them on the new instance
    # (as its __init__ would have) rather than copy it.
    for name, value in decode_extras(obj, len(header.seen), limits).items():
        object.__setattr__(message, name, value)
    return message


class _Header(NamedTuple):
    """The fields every frame carries, checked: the first arguments of every message."""

    ts: int
    incarnation: int
    seen: dict[str, tuple[int, int]]


_Fields: TypeAlias = dict[str, Any]
"""A frame's map, its set of fields already checked: only their values remain to check."""


def _decode_action(f: _Fields, h: _Header, limits: Limits) -> Message:
    check_value(f["payload"], "action.payload", limits.max_depth)
    proof = f.get("proof")
    return Action(*h, f["payload"], None if proof is None else check_proof(proof, "action.proof"))


def _decode_beat(f: _Fields, h: _Header, limits: Limits) -> Message:
    return Heartbeat(*h)


def _decode_hash(f: _Fields, h: _Header, limits: Limits) -> Message:
    digest = f["digest"]
    if not isinstance(digest, bytes) or not 1 <= len(digest) <= 64:
        raise RemoteProtocolError("hash.digest", "expected 1 to 64 bytes")
    return StateHash(*h, check_int(f["index"], "hash.index", 0), digest)


def _decode_join(f: _Fields, h: _Header, limits: Limits) -> Message:
    return JoinRequest(*h)


def _decode_leave(f: _Fields, h: _Header, limits: Limits) -> Message:
    proof = f.get("proof")
    return LeaveNotice(*h, None if proof is None else check_proof(proof, "leave.proof"))


def _decode_prepare(f: _Fields, h: _Header, limits: Limits) -> Message:
    return Prepare(
        *h, check_int(f["epoch"], "prepare.epoch", 0), check_int(f["ballot"], "prepare.ballot", 1)
    )


def _decode_promise(f: _Fields, h: _Header, limits: Limits) -> Message:
    accepted_by = f["accepted_by"]
    return Promise(
        *h,
        check_int(f["epoch"], "promise.epoch", 0),
        check_int(f["ballot"], "promise.ballot", 1),
        check_peer(f["proposer"], "promise.proposer", limits),
        check_int(f["clock"], "promise.clock", 0),
        check_seen(f["frozen"], limits, "promise.frozen"),
        check_peer_ints(f["observed"], "promise.observed", limits),
        check_removals(f["reasons"], "promise.reasons", limits),
        check_peer_ints(f["additions"], "promise.additions", limits),
        check_int(f["accepted"], "promise.accepted", 0),
        "" if accepted_by == "" else check_peer(accepted_by, "promise.accepted_by", limits),
        check_int(f["value_marker"], "promise.value_marker", 0),
        check_removals(f["value_removals"], "promise.value_removals", limits),
        check_peer_ints(f["value_additions"], "promise.value_additions", limits),
        check_entry_list(f["entries"], "promise.entries", limits),
        check_bool(f["holds_state"], "promise.holds_state"),
        {
            check_peer(peer, "promise.heard", limits): check_peer_ints(
                observed, f"promise.heard[{peer}]", limits
            )
            for peer, observed in check_map(f["heard"], "promise.heard").items()
        },
        check_peer_ints(f["caps"], "promise.caps", limits),
    )


def _decode_accept(f: _Fields, h: _Header, limits: Limits) -> Message:
    return Accept(
        *h,
        check_int(f["epoch"], "accept.epoch", 0),
        check_int(f["ballot"], "accept.ballot", 1),
        check_int(f["marker"], "accept.marker", 1),
        check_removals(f["removals"], "accept.removals", limits),
        check_peer_ints(f["additions"], "accept.additions", limits),
        check_entry_list(f["entries"], "accept.entries", limits),
    )


def _decode_accepted(f: _Fields, h: _Header, limits: Limits) -> Message:
    return Accepted(
        *h,
        check_int(f["epoch"], "accepted.epoch", 0),
        check_int(f["ballot"], "accepted.ballot", 1),
        check_peer(f["proposer"], "accepted.proposer", limits),
        None if f.get("proof") is None else check_proof(f["proof"], "accepted.proof"),
    )


def _decode_decide(f: _Fields, h: _Header, limits: Limits) -> Message:
    members = check_peer_ints(f["members"], "decide.members", limits)
    if not members:
        raise RemoteProtocolError("decide.members", "empty view")
    return ViewDecision(
        *h,
        check_int(f["epoch"], "decide.epoch", 1),
        check_int(f["marker"], "decide.marker", 1),
        members,
        check_removals(f["removals"], "decide.removals", limits),
        check_peer_ints(f["additions"], "decide.additions", limits),
        check_entry_list(f["entries"], "decide.entries", limits),
        check_int(f["ballot"], "decide.ballot", 0),
        _optional_peer(f["proposer"], "decide.proposer", limits),
        check_certificate(f["certificate"], "decide.certificate", limits),
    )


def _decode_snapreq(f: _Fields, h: _Header, limits: Limits) -> Message:
    anchor_epoch = f["anchor_epoch"]
    return SnapshotRequest(
        *h,
        check_int(f["min_index"], "snapreq.min_index", 0),
        None if anchor_epoch is None else check_int(anchor_epoch, "snapreq.anchor_epoch", 0),
    )


def _decode_snapshot(f: _Fields, h: _Header, limits: Limits) -> Message:
    anchor = f["anchor"]
    check_value(f["state"], "snapshot.state", limits.max_depth)
    return Snapshot(
        *h,
        check_int(f["index"], "snapshot.index", 0),
        check_int(f["epoch"], "snapshot.epoch", 0),
        None if anchor is None else check_int(anchor, "snapshot.anchor", 0),
        f["state"],
    )


def _decode_expel(f: _Fields, h: _Header, limits: Limits) -> Message:
    return Expulsion(
        *h,
        check_int(f["epoch"], "expel.epoch", 0),
        check_int(f["target"], "expel.target", 0),
        check_int(f["marker"], "expel.marker", 0),
        check_peer_ints(f["members"], "expel.members", limits),
        check_removals(f["removals"], "expel.removals", limits),
        check_peer_ints(f["additions"], "expel.additions", limits),
        check_int(f["ballot"], "expel.ballot", 0),
        _optional_peer(f["proposer"], "expel.proposer", limits),
        check_certificate(f["certificate"], "expel.certificate", limits),
    )


def _decode_evidence(f: _Fields, h: _Header, limits: Limits) -> Message:
    return Evidence(
        *h,
        check_peer(f["author"], "evidence.author", limits),
        check_int(f["author_incarnation"], "evidence.author_incarnation", 0),
        check_entry_list(f["entries"], "evidence.entries", limits),
    )


def _optional_peer(value: object, field: str, limits: Limits) -> str:
    return "" if value == "" else check_peer(value, field, limits)


_DECODERS: Final[dict[str, Callable[[_Fields, _Header, Limits], Message]]] = {
    "action": _decode_action,
    "beat": _decode_beat,
    "hash": _decode_hash,
    "join": _decode_join,
    "leave": _decode_leave,
    "prepare": _decode_prepare,
    "promise": _decode_promise,
    "accept": _decode_accept,
    "accepted": _decode_accepted,
    "decide": _decode_decide,
    "snapreq": _decode_snapreq,
    "snapshot": _decode_snapshot,
    "expel": _decode_expel,
    "evidence": _decode_evidence,
}


def _name(kind: str, field: str) -> str:
    return field if field in _HEADER else f"{kind}.{field}"
