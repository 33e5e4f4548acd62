"""Equivocation at a signed table (issue 24): an author that signs two different entries under
one key and sends each to a different half of the table. The digests in every frame (`dg`) keep
both halves from stabilising either entry; the evidence they exchange is a two-entry proof that
any member checks alone, and the equivocator (not the witness) is removed below it."""

from __future__ import annotations

from dataclasses import replace

from net import Identity
from net._order.messages import Action, Evidence, decode_message, encode_message
from net.events import LogEntry, MemberExcluded, ProtocolViolated
from tests.net.test_identity_core import TABLE, SignedGroup, key_of, violations

NAMES = ["ann", "bo", "cy", "di", "ed"]


def equivocate(g: SignedGroup, liar: str, fooled: set[str]) -> tuple[LogEntry, LogEntry]:
    """`liar` plays one action; `fooled` get another payload, rightly signed, at the same key."""
    core = g.cores[liar]
    told = core.submit({"play": "told"}, g.now)
    lie = Identity(key_of(_name(g, liar)), TABLE).sign(0, LogEntry(told.ts, liar, {"play": "lie"}))
    for dest, data in core.outgoing():
        message = decode_message(data)
        if dest in fooled and isinstance(message, Action):
            data = encode_message(replace(message, payload=lie.payload, proof=lie.proof))
        g.wire.append((liar, dest, data))
    return told, lie


def _name(g: SignedGroup, peer: str) -> str:
    return next(n for n, p in g.ids.items() if p == peer)


def stable_keys(g: SignedGroup, peer: str) -> list[tuple[int, str]]:
    return [e.key for e in g.stable(peer)]


def proof_frame(g: SignedGroup, sender: str, author: str, entries: tuple[LogEntry, ...]) -> bytes:
    ts = g.cores[sender].clock + 1_000
    return encode_message(Evidence(ts, 0, {}, author, 0, entries))


def test_two_halves_given_different_entries_of_one_key_stabilise_neither() -> None:
    g = SignedGroup(NAMES)
    ann, bo, cy, di, ed = (g.ids[n] for n in NAMES)
    told, lie = equivocate(g, ann, {di, ed})
    for peer in (bo, cy, di, ed):
        g.cores[peer].submit({"after": peer}, g.now)  # later entries of honest members
    g.deliver()
    for peer in (bo, cy, di, ed):
        assert told.key not in stable_keys(g, peer)
        assert all(e.payload != lie.payload for e in g.stable(peer))
    assert [e.payload for e in g.cores[di].tentative() if e.key == told.key] == [lie.payload]
    assert [e.payload for e in g.cores[bo].tentative() if e.key == told.key] == [told.payload]


def test_the_equivocator_is_proven_and_removed_and_the_witnesses_stay() -> None:
    g = SignedGroup(NAMES)
    ann, bo, cy, di, ed = (g.ids[n] for n in NAMES)
    told, _ = equivocate(g, ann, {di, ed})
    g.deliver()
    g.advance(2.0)
    for peer in (bo, cy, di, ed):
        assert set(g.cores[peer].members) == {bo, cy, di, ed}
        assert (ann, "evidence") in violations(g.events[peer])
        excluded = [e for e in g.events[peer] if isinstance(e, MemberExcluded)]
        assert [(e.peer, e.cut < told.ts) for e in excluded] == [(ann, True)]  # type: ignore[attr-defined]
        assert told.key not in stable_keys(g, peer)
    # One log: the same stable entries everywhere after the change.
    logs = {peer: g.stable(peer) for peer in (bo, cy, di, ed)}
    assert len({tuple(log) for log in logs.values()}) == 1
    g.cores[bo].submit({"play": "on"}, g.now)
    g.advance(0.2)
    assert all(g.stable(peer)[-1].payload == {"play": "on"} for peer in (bo, cy, di, ed))


def test_a_third_member_checks_a_proof_alone_and_ignores_the_author() -> None:
    g = SignedGroup(NAMES[:4])
    ann, bo, cy, _ = (g.ids[n] for n in NAMES[:4])
    key = Identity(key_of("ann"), TABLE)
    first = key.sign(0, LogEntry(50, ann, {"play": 1}))
    second = key.sign(0, LogEntry(50, ann, {"play": 2}))
    events = g.cores[cy].receive(bo, proof_frame(g, bo, ann, (first, second)), 0.0)
    assert violations(events) == [(ann, "evidence")]
    # cy passes the proof on to the others (not to ann), and ignores ann's frames from now on.
    sent = [(dest, decode_message(data)) for dest, data in g.cores[cy].outgoing()]
    proofs = {dest for dest, m in sent if isinstance(m, Evidence) and len(m.entries) == 2}
    assert proofs == {bo, g.ids["di"]}
    later = g.cores[ann].submit({"play": 3}, 0.0)
    for dest, data in g.cores[ann].outgoing():
        if dest == cy:
            assert g.cores[cy].receive(ann, data, 0.0) == []
    assert later.key not in [e.key for e in g.cores[cy].tentative()]


def test_a_forged_proof_is_refused() -> None:
    g = SignedGroup(NAMES[:4])
    ann, bo, cy, _ = (g.ids[n] for n in NAMES[:4])
    key = Identity(key_of("ann"), TABLE)
    good = key.sign(0, LogEntry(50, ann, {"play": 1}))
    other = key.sign(0, LogEntry(50, ann, {"play": 2}))
    assert other.proof is not None
    unsigned = replace(other, proof=bytes([other.proof[0] ^ 1]) + other.proof[1:])
    events = g.cores[cy].receive(bo, proof_frame(g, bo, ann, (good, unsigned)), 0.0)
    assert violations(events) == [(bo, "evidence.entries[1].proof")]  # the relay, not ann
    g2 = SignedGroup(NAMES[:4])
    cy2 = g2.cores[cy]
    same = key.sign(0, LogEntry(50, ann, {"play": 1}))
    elsewhere = key.sign(0, LogEntry(51, ann, {"play": 2}))
    for pair in [(good, same), (good, elsewhere)]:
        assert violations(cy2.receive(bo, proof_frame(g2, bo, ann, pair), 0.0)) == []
    assert all(not isinstance(m, Evidence) for _, m in map(_decoded, cy2.outgoing()))
    g2.advance(1.0)
    assert ann in g2.cores[cy].members


def test_a_former_members_proof_changes_nothing() -> None:
    g = SignedGroup(NAMES[:4])
    ann, bo, cy, di = (g.ids[n] for n in NAMES[:4])
    g.dead.add(di)
    g.advance(2.0)
    assert di not in g.cores[cy].members
    key = Identity(key_of("ann"), TABLE)
    pair = tuple(key.sign(0, LogEntry(50, ann, {"play": n})) for n in (1, 2))
    events = g.cores[cy].receive(di, proof_frame(g, cy, ann, pair), g.now)
    assert not [e for e in events if isinstance(e, ProtocolViolated) and e.peer == ann]
    g.advance(1.0)
    assert ann in g.cores[cy].members and ann in g.cores[bo].members


def _decoded(frame: tuple[str, bytes]) -> tuple[str, object]:
    return frame[0], decode_message(frame[1])


class _NoEvidence(SignedGroup):
    """A table where no proof of equivocation gets through (the view change comes first)."""

    def collect(self) -> None:
        super().collect()
        self.wire = [f for f in self.wire if not isinstance(decode_message(f[2]), Evidence)]


def test_an_equivocator_removed_before_any_proof_leaves_one_version_stable_everywhere() -> None:
    """Equivocate 30037 (real timers) forked: the equivocator was removed with a cut above its
    two-faced entry before any proof went round, and each half stabilised its own version. The
    view change now carries the version every survivor stabilises (`OrderedLog.adopt`)."""
    g = _NoEvidence(NAMES)
    ann, bo, cy, di, ed = (g.ids[n] for n in NAMES)
    told, lie = equivocate(g, ann, {di, ed})
    g.deliver()
    g.dead.add(ann)
    g.advance(2.0)
    survivors = (bo, cy, di, ed)
    for peer in survivors:
        assert set(g.cores[peer].members) == set(survivors)
    versions = {
        peer: [e.payload for e in g.stable(peer) if e.key == told.key] for peer in survivors
    }
    assert versions[bo] in ([told.payload], [lie.payload]), versions
    assert all(v == versions[bo] for v in versions.values()), versions
    assert len({tuple(g.stable(peer)) for peer in survivors}) == 1
