"""Signed votes, decisions that prove themselves and signed leaves (issue 24): at a signed table a
decision, an expulsion or a leave claim that nobody signed for changes nothing, whoever sends
it; the ones a quorum (or the leaver) signed are taken from anyone (in memory)."""

from __future__ import annotations

from net._order.core import OrderingCore
from net._order.messages import (
    Accept,
    Accepted,
    Action,
    Expulsion,
    LeaveNotice,
    ViewDecision,
    decode_message,
    encode_message,
)
from net._order.signatures import Identity, change_digest, leave_is_signed
from net._order.wirefields import REASON_EXCLUDED, REASON_LEFT, Removal
from net.events import LogEntry, MemberLeft
from tests.net.test_core import CONFIG, of_type
from tests.net.test_identity_core import TABLE, SignedGroup, key_of, received, violations


def vote(
    name: str, epoch: int, ballot: tuple[int, str], marker: int, removals: dict[str, Removal]
) -> bytes:
    """`name`'s signed vote for the change (marker, removals, no additions) of `ballot`."""
    digest = change_digest(marker, removals, {})
    return Identity(key_of(name), TABLE).sign_vote(epoch, ballot, digest)


def test_a_decision_with_only_its_senders_vote_changes_nothing() -> None:
    """bo decides alone that cy is out: ann keeps cy, says why, and still hears bo."""
    g = SignedGroup(["ann", "bo", "cy"])
    ann, bo, cy = g.ids["ann"], g.ids["bo"], g.ids["cy"]
    gone = {cy: Removal(0, 0, REASON_EXCLUDED)}
    certificate = {bo: vote("bo", 0, (9, bo), 3, gone)}
    decision = ViewDecision(4, 0, {}, 1, 3, {ann: 0, bo: 0}, gone, {}, (), 9, bo, certificate)
    events = g.cores[ann].receive(bo, encode_message(decision), 0.0)
    assert violations(events) == [(bo, "decide.certificate")]
    assert g.cores[ann].epoch == 0 and cy in g.cores[ann].members
    entry = Identity(key_of("bo"), TABLE).sign(0, LogEntry(5, bo, {"play": 1}))
    action = Action(5, 0, {}, entry.payload, entry.proof)
    assert received(g.cores[ann].receive(bo, encode_message(action), 0.0)) == [entry]


def test_a_decision_a_quorum_signed_is_taken_from_anyone() -> None:
    g = SignedGroup(["ann", "bo", "cy"])
    ann, bo, cy = g.ids["ann"], g.ids["bo"], g.ids["cy"]
    gone = {cy: Removal(0, 0, REASON_EXCLUDED)}
    certificate = {bo: vote("bo", 0, (9, bo), 3, gone), cy: vote("cy", 0, (9, bo), 3, gone)}
    decision = ViewDecision(4, 0, {}, 1, 3, {ann: 0, bo: 0}, gone, {}, (), 9, bo, certificate)
    events = g.cores[ann].receive(bo, encode_message(decision), 0.0)
    assert violations(events) == []
    assert g.cores[ann].epoch == 1 and g.cores[ann].members == {ann: 0, bo: 0}


def test_a_certificate_holds_only_for_exactly_the_change_it_signed() -> None:
    """The votes of a quorum for removing cy at cut 0 do not make a decision with cut 2."""
    g = SignedGroup(["ann", "bo", "cy"])
    ann, bo, cy = g.ids["ann"], g.ids["bo"], g.ids["cy"]
    signed = {cy: Removal(0, 0, REASON_EXCLUDED)}
    certificate = {bo: vote("bo", 0, (9, bo), 3, signed), cy: vote("cy", 0, (9, bo), 3, signed)}
    moved = {cy: Removal(0, 2, REASON_EXCLUDED)}
    decision = ViewDecision(4, 0, {}, 1, 3, {ann: 0, bo: 0}, moved, {}, (), 9, bo, certificate)
    events = g.cores[ann].receive(bo, encode_message(decision), 0.0)
    assert violations(events) == [(bo, "decide.certificate")]
    assert g.cores[ann].epoch == 0


def test_an_expulsion_without_a_quorums_decision_is_not_believed() -> None:
    g = SignedGroup(["ann", "bo", "cy"])
    ann, bo, cy = g.ids["ann"], g.ids["bo"], g.ids["cy"]
    gone = {ann: Removal(0, 0, REASON_EXCLUDED)}
    certificate = {bo: vote("bo", 0, (9, bo), 3, gone)}
    members = {bo: 0, cy: 0}
    expulsion = Expulsion(4, 0, {}, 1, 0, 3, members, gone, {}, 9, bo, certificate)
    events = g.cores[ann].receive(bo, encode_message(expulsion), 0.0)
    assert violations(events) == [(bo, "expel.certificate")]
    assert g.cores[ann].ready


def test_an_expulsion_a_quorum_signed_removes_its_target() -> None:
    g = SignedGroup(["ann", "bo", "cy"])
    ann, bo, cy = g.ids["ann"], g.ids["bo"], g.ids["cy"]
    gone = {ann: Removal(0, 0, REASON_EXCLUDED)}
    certificate = {bo: vote("bo", 0, (9, bo), 3, gone), cy: vote("cy", 0, (9, bo), 3, gone)}
    expulsion = Expulsion(4, 0, {}, 1, 0, 3, {bo: 0, cy: 0}, gone, {}, 9, bo, certificate)
    events = g.cores[ann].receive(bo, encode_message(expulsion), 0.0)
    assert violations(events) == []
    assert not g.cores[ann].ready


def test_nobody_can_claim_that_a_third_member_left() -> None:
    """bo's ballot says cy left; cy never signed it: ann does not accept it."""
    g = SignedGroup(["ann", "bo", "cy"])
    ann, bo, cy = g.ids["ann"], g.ids["bo"], g.ids["cy"]
    proposal = Accept(4, 0, {}, 0, 1_000_000, 4, {cy: Removal(0, 0, REASON_LEFT)}, {}, ())
    events = g.cores[ann].receive(bo, encode_message(proposal), 0.0)
    assert violations(events) == [(bo, f"accept.removals[{cy}]")]
    sent = [decode_message(data) for _, data in g.cores[ann].outgoing()]
    assert not [m for m in sent if isinstance(m, Accepted)]


def test_a_member_that_leaves_signs_its_leave_and_the_others_remove_it() -> None:
    g = SignedGroup(["ann", "bo", "cy"])
    ann, bo, cy = g.ids["ann"], g.ids["bo"], g.ids["cy"]
    g.cores[cy].leave(0.0)
    notices = [decode_message(data) for _, data in g.cores[cy].outgoing()]
    assert notices and all(isinstance(n, LeaveNotice) for n in notices)
    removal = Removal(0, 0, REASON_LEFT, notices[0].proof)  # type: ignore[attr-defined]
    assert leave_is_signed(TABLE, cy, removal)
    assert not leave_is_signed(TABLE, bo, removal)  # nobody else's leave
    g.dead.add(cy)
    for dest in (ann, bo):
        g.events[dest] += g.cores[dest].receive(cy, encode_message(notices[0]), 0.0)
    g.advance(0.5)
    for peer in (ann, bo):
        assert g.cores[peer].members == {ann: 0, bo: 0}
        assert of_type(g.events[peer], MemberLeft)
        assert violations(g.events[peer]) == []


def test_a_joiner_adopts_no_decision_that_only_its_sender_signed() -> None:
    """bo tells a joiner it was added, with only bo's vote: the joiner keeps asking."""
    g = SignedGroup(["ann", "bo", "cy"])
    ann, bo, cy = g.ids["ann"], g.ids["bo"], g.ids["cy"]
    dee_key = key_of("dee")
    dee = dee_key.peer_id("dee")
    joiner = OrderingCore.joining(dee, [ann, bo], 0.0, CONFIG, identity=Identity(dee_key, TABLE))
    joiner.outgoing()
    added = {ann: 0, bo: 0, cy: 0, dee: 0}
    digest_vote = Identity(key_of("bo"), TABLE).sign_vote(
        0, (9, bo), change_digest(3, {}, {dee: 0})
    )
    decision = ViewDecision(4, 0, {}, 1, 3, added, {}, {dee: 0}, (), 9, bo, {bo: digest_vote})
    events = joiner.receive(bo, encode_message(decision), 0.0)
    assert violations(events) == [(bo, "decide.certificate")]
    assert not joiner.ready and joiner.members == {}
