"""Everyone restarting at once does not lose the match (issue 24): when every laptop that held
the table's state restarted before the one member left got its snapshot, that member takes the
longest stable prefix the restarted laptops kept on disk and the table goes on, with every entry
any laptop saw stable in place (see "Recovery from durable prefixes" in docs/protocol.md)."""

from __future__ import annotations

from net._order.core import Phase
from net._order.messages import Snapshot, decode_message
from net.testing.simnet import HashChainApp, SimNetwork
from tests.net.scenarios import FAST, FinalityOracle

PEERS = ["a", "b", "c", "d"]


def _rolling_restart_of_every_laptop(seed: int) -> tuple[SimNetwork, FinalityOracle]:
    """a restarts; b dies before the change that brings a back is stable anywhere (so nobody
    pushes a its snapshot); c and d die before a has one; then all three come back."""
    oracle = FinalityOracle()
    sim = SimNetwork(
        PEERS,
        seed=seed,
        core_config=FAST,
        app_factory=oracle.app_factory(rate=20, stop_at=5.0, hash_every=8),
    )
    sim.call_at(1.0, lambda: sim.kill("a"))
    sim.call_at(1.05, lambda: sim.kill("b"))
    sim.call_at(1.15, lambda: sim.restart("a"))
    for at, peer in [(1.5, "c"), (1.6, "d")]:
        sim.call_at(at, lambda p=peer: sim.kill(p))
    for at, peer in [(1.7, "b"), (1.8, "c"), (1.9, "d")]:
        sim.call_at(at, lambda p=peer: sim.restart(p))
    return sim, oracle


def _app(sim: SimNetwork, peer: str) -> HashChainApp:
    app = sim.nodes[peer].app
    assert isinstance(app, HashChainApp)
    return app


def test_the_match_goes_on_after_every_laptop_restarted() -> None:
    sim, _ = _rolling_restart_of_every_laptop(seed=5)
    sim.run_until(1.5)
    a = sim.nodes["a"].core
    assert a.phase is Phase.MEMBER and not a.ready, "a waits for a snapshot nobody will send"
    stable_before = max(
        n.durable_state.position.stable_index for n in sim.nodes.values() if n.durable_state
    )
    sim.run_until(8.0)
    cores = [sim.nodes[p].core for p in PEERS]
    assert all(core.ready for core in cores), [core.phase for core in cores]
    assert {tuple(sorted(core.members)) for core in cores} == {tuple(PEERS)}
    assert {core.stable_index for core in cores} == {cores[0].stable_index}
    assert {_app(sim, p).digest for p in PEERS} == {_app(sim, "a").digest}
    assert cores[0].stable_index is not None
    assert cores[0].stable_index > stable_before + 20, "the bots played on"


def test_no_stable_entry_is_undone_by_the_recovery() -> None:
    for seed in range(6):
        sim, oracle = _rolling_restart_of_every_laptop(seed)
        sim.run_until(8.0)
        assert not oracle.violations, (seed, oracle.violations[:3])
        final = {sim.nodes[p].core.stable_index for p in PEERS}
        assert len(final) == 1 and final.pop() == oracle.highest, seed


def test_a_laptop_keeps_on_disk_only_a_prefix_that_was_stable() -> None:
    """What a restarted laptop brings back is what its last incarnation holding the state
    delivered as stable: an incarnation that died still waiting for its snapshot held none of
    its own, and the laptop keeps the older prefix."""
    sim = SimNetwork(["a", "b", "c"], seed=2, core_config=FAST, app_factory=HashChainApp.factory())
    sim.run_until(1.0)
    index = sim.nodes["c"].core.stable_index
    sim.kill("c")
    kept = sim.nodes["c"].durable_state
    assert kept is not None and kept.position.stable_index == index
    assert kept.state == [_app(sim, "c").index, _app(sim, "c").digest]
    sim.restart("c")
    assert sim.nodes["c"].core.durable_position() is None  # joining: no state of its own
    sim.run_until(1.001)
    sim.kill("c")
    assert sim.nodes["c"].durable_state == kept


def test_a_prefix_that_holds_the_marker_is_installed_as_a_providers_snapshot() -> None:
    """The change that brought a back was stable at b, c and d, but their snapshots never
    reached a (lost with them): a takes the longest prefix, which holds that change, and the
    table goes on from it."""
    oracle = FinalityOracle()
    sim = SimNetwork(
        PEERS, seed=4, core_config=FAST, app_factory=oracle.app_factory(rate=20, stop_at=5.0)
    )

    def lost_snapshots(dest: str, data: bytes) -> list[tuple[float, bytes]]:
        lost = sim.now < 1.75 and isinstance(decode_message(data), Snapshot)
        return [] if lost else [(0.0, data)]

    for peer in PEERS[1:]:
        sim.frame_filters[peer] = lost_snapshots
    sim.call_at(1.0, lambda: sim.kill("a"))
    sim.call_at(1.1, lambda: sim.restart("a"))
    for at, peer in [(1.5, "b"), (1.55, "c"), (1.6, "d")]:
        sim.call_at(at, lambda p=peer: sim.kill(p))
    for at, peer in [(1.8, "b"), (1.85, "c"), (1.9, "d")]:
        sim.call_at(at, lambda p=peer: sim.restart(p))
    sim.run_until(1.7)
    assert sim.nodes["a"].core.phase is Phase.MEMBER and not sim.nodes["a"].core.ready
    kept = sim.nodes["b"].durable_state
    assert kept is not None and kept.position.epoch == sim.nodes["a"].core.epoch
    sim.run_until(8.0)
    cores = [sim.nodes[p].core for p in PEERS]
    assert all(core.ready for core in cores), [core.phase for core in cores]
    assert {core.stable_index for core in cores} == {oracle.highest}
    assert not oracle.violations, oracle.violations[:3]
