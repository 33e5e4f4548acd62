"""Signed entries: what a core signs for each entry it authors, and the check of every entry it
receives, directly or relayed, at a signed table (see "Identity and signatures" in
docs/protocol.md).

An entry's proof signs the table, the author's peer id and incarnation, the entry's timestamp and
its payload (as msgpack, the way it travels): nobody can move it to another table, another
incarnation of its author or another place in the log, nor change what it does. The proof carries
the author's public key, which must be the key of the author's peer id (``net._identity.owns``),
so a receiver needs nobody's word about whose key it is.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import msgpack

from net._identity import PeerKey, signed_message, verify_proof
from net.errors import RemoteProtocolError
from net.events import LogEntry
from net.messages import Accept, Action, Message, Promise, ViewDecision

__all__ = ["Identity", "check_entries", "entry_is_signed", "entry_message"]

ENTRY_DOMAIN: Final = b"nerts-lan entry v1"
_NUMBERS: Final = struct.Struct(">QQ")


@dataclass(frozen=True)
class Identity:
    """What a core signs its entries with, and the table they are signed for. A core given one
    checks every entry it receives, and refuses one without a right proof."""

    key: PeerKey
    table: str = ""

    def sign(self, incarnation: int, entry: LogEntry) -> LogEntry:
        """``entry`` (ours) with its proof."""
        proof = self.key.prove(entry_message(self.table, incarnation, entry))
        return LogEntry(entry.ts, entry.peer, entry.payload, proof)


def entry_message(table: str, incarnation: int, entry: LogEntry) -> bytes:
    """The bytes an entry's proof signs."""
    payload: bytes = msgpack.packb(entry.payload, use_bin_type=True)
    numbers = _NUMBERS.pack(incarnation, entry.ts)
    return signed_message(ENTRY_DOMAIN, table.encode(), entry.peer.encode(), numbers, payload)


def entry_is_signed(table: str, incarnation: int, entry: LogEntry) -> bool:
    """Whether ``entry`` carries a right proof by its author (``entry.peer``) at ``table``, as
    incarnation ``incarnation``: what anyone passing an entry on (a relay) must check first."""
    message = entry_message(table, incarnation, entry)
    return entry.proof is not None and verify_proof(entry.peer, message, entry.proof)


def check_entries(table: str, sender: str, msg: Message, view: Mapping[str, int]) -> None:
    """``RemoteProtocolError`` unless every entry ``msg`` carries (an action's own, or relayed
    in a promise, a ballot's change or a decision) has a right proof by its author. The author's
    incarnation is the sender's for its own entries, the one its removal names for a removed
    member's, and its incarnation in our `view` for a member's relayed in a promise (relayed
    entries of anyone else are refused)."""
    if isinstance(msg, Action):
        entry = LogEntry(msg.ts, sender, msg.payload, msg.proof)
        _check(table, msg.incarnation, entry, "action.proof")
    elif isinstance(msg, Promise | Accept | ViewDecision):
        kind = {Promise: "promise", Accept: "accept"}.get(type(msg), "decide")
        removals = {} if isinstance(msg, Promise) else msg.removals
        for i, entry in enumerate(msg.entries):
            field = f"{kind}.entries[{i}].proof"
            if entry.peer == sender:
                incarnation: int | None = msg.incarnation
            elif entry.peer in removals:
                incarnation = removals[entry.peer].incarnation
            elif isinstance(msg, Promise):
                incarnation = view.get(entry.peer)
            else:
                incarnation = None
            if incarnation is None:
                raise RemoteProtocolError(field, f"relayed entry of {entry.peer}, not removed")
            _check(table, incarnation, entry, field)


def _check(table: str, incarnation: int, entry: LogEntry, field: str) -> None:
    if entry.proof is None:
        raise RemoteProtocolError(field, "unsigned entry at a signed table")
    if not entry_is_signed(table, incarnation, entry):
        raise RemoteProtocolError(field, f"not signed by {entry.peer}")
