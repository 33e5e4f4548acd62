"""Signed entries in the ordering core: a forged action, and a relayed entry its author did not
sign, are refused with a violation of the member that sent them (in memory)."""

from __future__ import annotations

import hashlib

import pytest

from net import Identity, PeerKey
from net._order.core import OrderingCore
from net._order.messages import Accept, Action, ViewDecision, decode_message, encode_message
from net._order.signatures import entry_is_signed, entry_message
from net._order.wirefields import REASON_EXCLUDED, Removal
from net.errors import LocalProtocolError, RemoteProtocolError
from net.events import EntryReceived, Event, LogEntry, ProtocolViolated
from tests.net.test_core import CONFIG, Group, of_type

TABLE = "t1"


def key_of(name: str) -> PeerKey:
    return PeerKey.from_seed(hashlib.sha256(name.encode()).digest())


class SignedGroup(Group):
    """A group whose cores sign their entries and check everyone's; `ids` maps each readable
    name to its peer id (the name, then its key's hash)."""

    def __init__(self, names: list[str]) -> None:
        self.keys = {key_of(n).peer_id(n): key_of(n) for n in names}
        self.ids = {n: key_of(n).peer_id(n) for n in names}
        super().__init__(self.keys, CONFIG)
        self.cores = {
            p: OrderingCore(p, self.names, 0.0, CONFIG, identity=Identity(k, TABLE))
            for p, k in self.keys.items()
        }


def violations(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.peer, e.field) for e in of_type(events, ProtocolViolated)]  # type: ignore[attr-defined]


def received(events: list[Event]) -> list[LogEntry]:
    return [e.entry for e in of_type(events, EntryReceived)]  # type: ignore[attr-defined]


def test_signed_entries_are_ordered_and_stable_as_ever() -> None:
    g = SignedGroup(["ann", "bo", "cy"])
    ann, bo = g.ids["ann"], g.ids["bo"]
    first = g.cores[ann].submit({"play": 1}, 0.0)
    second = g.cores[bo].submit({"play": 2}, 0.0)
    g.deliver()
    assert first.proof is not None and second.proof is not None
    for peer in g.names:
        assert g.stable(peer) == sorted([first, second])
        assert violations(g.events[peer]) == []
        assert all(e.proof is not None for e in g.stable(peer))


def test_an_action_with_a_forged_signature_is_a_violation_of_its_sender() -> None:
    g = SignedGroup(["ann", "bo"])
    ann, bo = g.ids["ann"], g.ids["bo"]
    entry = g.cores[bo].submit({"play": 1}, 0.0)
    g.cores[bo].outgoing()  # the honest frame never goes out
    assert entry.proof is not None
    forged = bytes([entry.proof[0] ^ 1]) + entry.proof[1:]
    frame = Action(entry.ts, 0, {}, {"play": 1}, forged)
    events = g.cores[ann].receive(bo, encode_message(frame), 0.0)
    assert violations(events) == [(bo, "action.proof")]
    assert received(events) == []


def test_an_action_signed_with_another_members_key_or_unsigned_is_refused() -> None:
    g = SignedGroup(["ann", "bo", "cy"])
    ann, bo, cy = g.ids["ann"], g.ids["bo"], g.ids["cy"]
    # cy's own, rightly signed entry, sent by bo as if bo had played it.
    entry = g.cores[cy].submit({"play": 1}, 0.0)
    g.cores[cy].outgoing()
    stolen = Action(entry.ts, 0, {}, {"play": 1}, entry.proof)
    assert violations(g.cores[ann].receive(bo, encode_message(stolen), 0.0)) == [
        (bo, "action.proof")
    ]
    g = SignedGroup(["ann", "bo"])
    ann, bo = g.ids["ann"], g.ids["bo"]
    unsigned = Action(1, 0, {}, {"play": 1})
    assert violations(g.cores[ann].receive(bo, encode_message(unsigned), 0.0)) == [
        (bo, "action.proof")
    ]


def test_a_proof_is_bound_to_its_table_incarnation_place_and_payload() -> None:
    key = key_of("bo")
    entry = LogEntry(5, key.peer_id("bo"), {"play": 1})
    signed = Identity(key, TABLE).sign(0, entry)
    assert signed.proof is not None
    message = entry_message(TABLE, 0, entry)
    assert key.prove(message) == signed.proof
    for other in (
        entry_message("t2", 0, entry),
        entry_message(TABLE, 1, entry),
        entry_message(TABLE, 0, LogEntry(6, entry.peer, entry.payload)),
        entry_message(TABLE, 0, LogEntry(5, entry.peer, {"play": 2})),
    ):
        assert other != message


def relayed_proposal(sender_ts: int, removed: str, entry: LogEntry) -> Accept:
    """A ballot's change removing `removed` that relays `entry` as one of its entries."""
    removal = Removal(0, entry.ts, REASON_EXCLUDED)
    return Accept(sender_ts, 0, {}, 0, 1, sender_ts, {removed: removal}, {}, (entry,))


def test_a_relayed_entry_its_author_did_not_sign_is_refused() -> None:
    """bo's ballot removes cy and relays an action "by" cy that cy never played."""
    g = SignedGroup(["ann", "bo", "cy"])
    ann, bo, cy = g.ids["ann"], g.ids["bo"], g.ids["cy"]
    made_up = LogEntry(3, cy, {"play": "4♣ to foundation 1"})
    signed_by_bo = key_of("bo").prove(entry_message(TABLE, 0, made_up))
    for proof in (signed_by_bo, b"\0" * 96, None):
        g = SignedGroup(["ann", "bo", "cy"])
        forged = LogEntry(3, cy, made_up.payload, proof)
        events = g.cores[ann].receive(bo, encode_message(relayed_proposal(4, cy, forged)), 0.0)
        assert violations(events) == [(bo, "accept.entries[0].proof")]
        assert received(events) == []
        assert g.cores[ann].tentative() == []


def test_a_relayed_entry_its_author_signed_is_taken_from_anyone() -> None:
    g = SignedGroup(["ann", "bo", "cy"])
    ann, bo, cy = g.ids["ann"], g.ids["bo"], g.ids["cy"]
    last_words = g.cores[cy].submit({"play": "last"}, 0.0)
    g.cores[cy].outgoing()  # cy dies before its frame goes out
    events = g.cores[ann].receive(bo, encode_message(relayed_proposal(4, cy, last_words)), 0.0)
    assert violations(events) == []
    assert g.cores[ann].tentative() == [last_words]


def test_a_decision_relaying_a_forged_entry_is_refused() -> None:
    g = SignedGroup(["ann", "bo", "cy"])
    ann, bo, cy = g.ids["ann"], g.ids["bo"], g.ids["cy"]
    # The entry cy really played, with its payload changed by bo.
    entry = g.cores[cy].submit({"play": 1}, 0.0)
    g.cores[cy].outgoing()
    altered = LogEntry(entry.ts, cy, {"play": 2}, entry.proof)
    removal = Removal(0, entry.ts, REASON_EXCLUDED)
    decision = ViewDecision(4, 0, {}, 1, 3, {ann: 0, bo: 0}, {cy: removal}, {}, (altered,))
    events = g.cores[ann].receive(bo, encode_message(decision), 0.0)
    assert violations(events) == [(bo, "decide.entries[0].proof")]
    assert g.cores[ann].epoch == 0 and g.cores[ann].tentative() == []


def test_an_entry_relayed_of_a_member_not_removed_is_refused() -> None:
    g = SignedGroup(["ann", "bo", "cy"])
    ann, bo, cy = g.ids["ann"], g.ids["bo"], g.ids["cy"]
    entry = g.cores[cy].submit({"play": 1}, 0.0)
    g.cores[cy].outgoing()
    proposal = Accept(4, 0, {}, 0, 1, 4, {}, {"dee": 1}, (entry,))
    events = g.cores[ann].receive(bo, encode_message(proposal), 0.0)
    assert violations(events) == [(bo, "accept.entries[0].proof")]


def test_a_core_refuses_an_identity_whose_key_is_not_its_peer_ids() -> None:
    with pytest.raises(LocalProtocolError):
        OrderingCore("ann", ["ann"], 0.0, identity=Identity(key_of("ann")))
    with pytest.raises(LocalProtocolError):
        OrderingCore.joining(
            key_of("bo").peer_id("ann"), ["x"], 0.0, identity=Identity(key_of("ann"))
        )


def test_a_joiner_welcomed_at_a_signed_table_gets_checked_catch_up_entries() -> None:
    g = SignedGroup(["ann", "bo"])
    ann, bo = g.ids["ann"], g.ids["bo"]
    dee_key = key_of("dee")
    dee = dee_key.peer_id("dee")
    joiner = OrderingCore.joining(dee, [ann, bo], 0.0, CONFIG, 1, identity=Identity(dee_key, TABLE))
    g.cores[dee], g.names, g.events[dee] = joiner, sorted([*g.names, dee]), []
    g.deliver()
    g.cores[ann].provide_snapshot(dee, 0, "state")
    g.advance(0.3)
    assert joiner.ready
    played = g.cores[bo].submit({"play": 1}, g.now)
    mine = joiner.submit({"play": 2}, g.now)
    g.deliver()
    for peer in g.names:
        assert violations(g.events[peer]) == []
        assert g.stable(peer)[-2:] == sorted([played, mine])


def test_anyone_passing_an_entry_on_can_check_it_alone() -> None:
    key = key_of("bo")
    entry = Identity(key, TABLE).sign(7, LogEntry(5, key.peer_id("bo"), {"play": 1}))
    assert entry_is_signed(TABLE, 7, entry)
    assert not entry_is_signed(TABLE, 8, entry)  # another incarnation's
    assert not entry_is_signed("t2", 7, entry)
    assert not entry_is_signed(TABLE, 7, LogEntry(5, entry.peer, {"play": 1}))  # unsigned


def test_proofs_travel_in_actions_and_relayed_entries_and_must_be_96_bytes() -> None:
    proof = bytes(range(96))
    action = Action(3, 0, {"bo": (0, 2)}, {"play": 1}, proof)
    assert decode_message(encode_message(action)) == action
    unsigned = Action(3, 0, {}, {"play": 1})
    assert b"proof" not in encode_message(unsigned)  # the frame of an unsigned table as before
    entry = LogEntry(3, "cy", {"play": 1}, proof)
    back = decode_message(encode_message(relayed_proposal(4, "cy", entry)))
    assert isinstance(back, Accept) and back.entries[0].proof == proof
    for bad in (
        Action(3, 0, {}, 1, proof[:-1]),
        relayed_proposal(4, "cy", LogEntry(3, "cy", 1, b"x")),
    ):
        with pytest.raises(RemoteProtocolError, match="expected 96 bytes"):
            decode_message(encode_message(bad))
