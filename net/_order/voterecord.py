"""A voter's `VoteRecord` as plain data (JSON-ready), and back. Private to `net._order.core`, which
exports both functions: the application keeps the latest record where a crash does not lose it
(see "Returning incarnations" in docs/protocol.md) and hands it to its next incarnation.

What is read back may have been damaged or written by anyone: `vote_record_from_data` checks
every field and raises `ValueError` for anything that is not a record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from net._identity import PROOF_SIZE
from net._order.viewchange import Ballot, Change, VoteRecord
from net._order.wirefields import DEFAULT_LIMITS, Removal

__all__ = ["vote_record_from_data", "vote_record_to_data"]

_MAX_PEERS = 256
"""More members than a record of a real table names (a bound on what a damaged file costs)."""


def vote_record_to_data(record: VoteRecord) -> dict[str, Any]:
    """`record` as a dict of ints, strings, lists and dicts (``json.dumps`` takes it)."""
    value = record.value
    view = {} if record.view is None else {"view": dict(sorted(record.view.items()))}
    return {
        **view,
        "epoch": record.epoch,
        "promised": list(record.promised),
        "accepted": list(record.accepted),
        "value": None
        if value is None
        else {
            "marker": value.marker,
            "removals": {
                # A leave's proof goes along (as hex): a vote passes it on with the removal.
                peer: [removal.incarnation, removal.ts, removal.reason]
                + ([] if removal.proof is None else [removal.proof.hex()])
                for peer, removal in sorted(value.removals.items())
            },
            "additions": dict(sorted(value.additions.items())),
        },
    }


def vote_record_from_data(data: object) -> VoteRecord:
    """The record `vote_record_to_data` made; `ValueError` for anything else."""
    keys = {"epoch", "promised", "accepted", "value"}
    if isinstance(data, dict) and "view" in data:  # (a record of an older build has none)
        keys.add("view")
    fields = _mapping(data, "record", keys)
    value = fields["value"]
    view = None
    if "view" in fields:
        view = {
            peer: _count(incarnation, "view")
            for peer, incarnation in _peers(fields["view"], "view").items()
        }
    return VoteRecord(
        _count(fields["epoch"], "epoch"),
        _ballot(fields["promised"], "promised"),
        _ballot(fields["accepted"], "accepted"),
        None if value is None else _change(value),
        view,
    )


def _change(data: object) -> Change:
    fields = _mapping(data, "value", {"marker", "removals", "additions"})
    removals = {}
    for peer, removal in _peers(fields["removals"], "removals").items():
        if not isinstance(removal, list) or len(removal) not in (3, 4):
            raise ValueError("a removal is not [incarnation, ts, reason(, proof)]")
        incarnation, ts, reason = removal[:3]
        if not isinstance(reason, str) or len(reason) > 32:
            raise ValueError("a removal's reason is not a short string")
        proof = _proof(removal[3]) if len(removal) == 4 else None
        removals[peer] = Removal(
            _count(incarnation, "incarnation"), _count(ts, "ts"), reason, proof
        )
    additions = {
        peer: _count(incarnation, "incarnation")
        for peer, incarnation in _peers(fields["additions"], "additions").items()
    }
    return Change(_count(fields["marker"], "marker"), removals, additions)


def _mapping(data: object, what: str, keys: set[str]) -> Mapping[str, object]:
    if not isinstance(data, dict) or set(data) != keys:
        raise ValueError(f"{what} must be an object with {', '.join(sorted(keys))}")
    return data


def _peers(data: object, what: str) -> dict[str, object]:
    if not isinstance(data, dict) or len(data) > _MAX_PEERS:
        raise ValueError(f"{what} must be an object of at most {_MAX_PEERS} peers")
    for peer in data:
        _peer(peer, what)
    return data


def _ballot(data: object, what: str) -> Ballot:
    if not isinstance(data, list) or len(data) != 2:
        raise ValueError(f"{what} is not a ballot [number, proposer]")
    number, proposer = data
    if number == 0 and proposer == "":
        return Ballot(0, "")  # no ballot yet
    return Ballot(_count(number, what), _peer(proposer, what))


def _peer(data: object, what: str) -> str:
    if not isinstance(data, str) or not 1 <= len(data) <= DEFAULT_LIMITS.max_peer_id_len:
        raise ValueError(f"{what}: a peer id is not a string of 1 to 64 characters")
    return data


def _proof(data: object) -> bytes:
    if not isinstance(data, str) or len(data) != 2 * PROOF_SIZE:
        raise ValueError("a removal's proof is not the hex of a proof")
    try:
        return bytes.fromhex(data)
    except ValueError:
        raise ValueError("a removal's proof is not the hex of a proof") from None


def _count(data: object, what: str) -> int:
    if isinstance(data, bool) or not isinstance(data, int) or not 0 <= data < 1 << 63:
        raise ValueError(f"{what} is not a whole number from 0")
    return data
