"""Every laptop of a view restarts before a change admits any of them: the restarted laptops,
each with its predecessor's vote and its stable prefix, decide that view's change among
themselves and the table goes on from the longest prefix (rolling seed 80196; see
`net._order.orphan`). Before, each waited as a joiner for a member that no longer existed."""

from __future__ import annotations

from net.testing.simnet import HashChainApp, SimNetwork
from tests.net.scenarios import FAST

KILLED_AT = 1.0


def _table_of_three_all_restarted(stagger: float) -> SimNetwork:
    sim = SimNetwork(
        ["a", "b", "c"],
        seed=11,
        core_config=FAST,
        app_factory=HashChainApp.factory(rate=20, stop_at=5.0),
    )
    # Each laptop is down 0.2 s; with a stagger the next one dies while the last is down.
    for i, peer in enumerate(["c", "a", "b"]):
        sim.call_at(KILLED_AT + i * stagger, lambda peer=peer: sim.kill(peer))
        sim.call_at(KILLED_AT + i * stagger + 0.2, lambda peer=peer: sim.restart(peer))
    return sim


def test_a_table_whose_every_laptop_restarted_at_once_goes_on_from_what_was_stable() -> None:
    sim = _table_of_three_all_restarted(stagger=0.0)
    sim.run_until(KILLED_AT - 0.01)
    before = {p: node.core.stable_index for p, node in sim.nodes.items()}
    assert all(index is not None and index > 5 for index in before.values()), before
    sim.run_until(8.0)
    cores = {p: node.core for p, node in sim.nodes.items()}
    assert all(core.incarnation == 1 for core in cores.values())
    views = {p: core.members for p, core in cores.items()}
    assert views["a"] == views["b"] == views["c"] == {"a": 1, "b": 1, "c": 1}, views
    indexes = {p: core.stable_index for p, core in cores.items()}
    assert len(set(indexes.values())) == 1, indexes
    longest = max(index for index in before.values() if index is not None)
    assert indexes["a"] is not None and indexes["a"] > longest + 10, "play went on after it"


def test_a_table_whose_laptops_restarted_one_after_another_goes_on() -> None:
    """The first laptop back finds nobody to ask (it sends no join request), the second asks
    only the first: only the last place knows that all three restarted, and it proposes."""
    sim = _table_of_three_all_restarted(stagger=0.05)
    sim.run_until(8.0)
    cores = [node.core for node in sim.nodes.values()]
    assert all(core.ready for core in cores)
    assert {tuple(core.members.items()) for core in cores} == {(("a", 1), ("b", 1), ("c", 1))}
    assert len({core.stable_index for core in cores}) == 1
