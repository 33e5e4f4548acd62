"""Signed groups in the deterministic simulator: faults as ever, and a member that relays an entry
"by" another is refused, its forgery stable nowhere."""

from __future__ import annotations

import pytest

from net._order.messages import Accept, encode_message
from net._order.signatures import entry_message
from net._order.wirefields import REASON_EXCLUDED, Removal
from net.events import LogEntry, ProtocolViolated
from net.testing.simnet import HashChainApp, SimNetwork, sim_keys
from tests.net.scenarios import FAST

pytestmark = pytest.mark.sim  # seeded simulated games: outside the inner loop


def signed_sim(labels: list[str], seed: int) -> tuple[SimNetwork, dict[str, str]]:
    keys = sim_keys(labels, seed)
    ids = {peer.rsplit("-", 1)[0]: peer for peer in keys}
    app = HashChainApp.factory(rate=20, stop_at=4.0, record_events=True)
    return SimNetwork(keys, seed=seed, core_config=FAST, app_factory=app, keys=keys), ids


def stable_keys(sim: SimNetwork, peer: str) -> list[tuple[int, str]]:
    app = sim.nodes[peer].app
    assert isinstance(app, HashChainApp)
    return [(item[1], item[2]) for item in app.log if item[0] == "entry"]


def test_a_signed_group_survives_a_death_a_return_and_a_cut_with_one_log() -> None:
    sim, ids = signed_sim(["ann", "bo", "cy", "dee"], seed=3)
    sim.run_until(1.0)
    sim.kill(ids["cy"])
    sim.run_until(2.5)
    sim.restart(ids["cy"])
    sim.partition([[ids["ann"], ids["bo"], ids["cy"]], [ids["dee"]]], 1.0)
    sim.run_until(7.0)
    members = sim.members()
    assert {n.peer_id for n in members} == set(ids.values())
    states = {(n.app.index, n.app.digest) for n in members}  # type: ignore[attr-defined]
    assert len(states) == 1
    for node in members:
        events = node.app.events_seen  # type: ignore[attr-defined]
        assert not [e for e in events if isinstance(e, ProtocolViolated)]
        assert node.core.tentative() == []


def test_a_member_relaying_a_forged_entry_is_refused_and_the_forgery_never_lands() -> None:
    """Who is then removed is the membership's business: today the member that saw the forgery
    cannot prove to the others who sent it (ballots are not signed yet), issue 14."""
    sim, ids = signed_sim(["ann", "bo", "cy"], seed=5)
    ann, bo, cy = ids["ann"], ids["bo"], ids["cy"]
    sim.run_until(0.5)
    # bo, a member, sends a ballot's change removing cy, relaying an action "by" cy it signed.
    forger = sim.nodes[bo]
    assert forger.identity is not None
    ts = forger.core.clock + 1
    made_up = LogEntry(ts - 1, cy, ["forged", 1])
    proof = forger.identity.key.prove(entry_message("sim", 0, made_up))
    forged = LogEntry(made_up.ts, cy, made_up.payload, proof)
    removal = Removal(0, forged.ts, REASON_EXCLUDED)
    proposal = Accept(ts, 0, {}, 0, 1, ts, {cy: removal}, {}, (forged,))
    victim = sim.nodes[ann]
    events = victim.core.receive(bo, encode_message(proposal), sim.now)
    assert [(e.peer, e.field) for e in events if isinstance(e, ProtocolViolated)] == [
        (bo, "accept.entries[0].proof")
    ]
    assert forged not in victim.core.tentative()
    sim.after_core_call(victim, events)
    sim.run_until(7.0)
    members = sim.members()
    assert members
    assert len({(n.app.index, n.app.digest) for n in members}) == 1  # type: ignore[attr-defined]
    for node in sim.nodes.values():
        assert forged.key not in stable_keys(sim, node.peer_id)
