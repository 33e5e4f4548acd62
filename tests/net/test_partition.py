"""Partitions: only a quorum goes on; the cut-off side waits, then rejoins and catches up."""

from __future__ import annotations

import pytest

from net.core import CoreConfig
from net.simnet import HashChainApp, LinkModel, SimNetwork

from .scenarios import Scenario, app, check_agreement

CONFIG = CoreConfig(suspect_timeout=0.3, exclude_timeout=0.8)


def _network(peers: int, seed: int) -> SimNetwork:
    return SimNetwork(
        [f"p{i}" for i in range(peers)],
        seed=seed,
        core_config=CONFIG,
        link=LinkModel(delay_min=0.001, delay_max=0.004),
        app_factory=HashChainApp.factory(rate=8.0, stop_at=6.0, hash_every=8),
    )


def _scenario(peers: int, seed: int) -> Scenario:
    return Scenario(seed=seed, peers=peers, link=LinkModel(), rate=8.0, stop_at=6.0, settle=3.0)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "groups",
    [[{"p0", "p1"}, {"p2"}], [{"p0", "p1"}, {"p2", "p3"}], [{"p0"}, {"p1", "p2", "p3"}]],
    ids=["2+1", "2+2", "1+3"],
)
def test_only_a_quorum_goes_on_and_the_rest_catch_up(seed: int, groups: list[set[str]]) -> None:
    peers = sum(len(g) for g in groups)
    sim = _network(peers, seed)
    sim.run_until(1.0)
    before = {p: app(sim, p).index for p in sim.nodes}
    sim.partition(groups, duration=3 * CONFIG.exclude_timeout)
    # The side holding a quorum (a majority, or half with the lowest peer id) goes on.
    winners = next(g for g in groups if 2 * len(g) > peers or (2 * len(g) == peers and "p0" in g))
    sim.run_until(1.0 + 3 * CONFIG.exclude_timeout - 0.05)
    for peer in sim.nodes:
        grew = app(sim, peer).index > before[peer] + 2
        assert grew == (peer in winners), (peer, before[peer], app(sim, peer).index)
    # The others stabilised nothing of their own: their logs are prefixes of the winners'.
    reference = app(sim, sorted(winners)[0]).log
    for peer in sim.nodes:
        if peer not in winners:
            mine = [item for item in app(sim, peer).log if item[0] == "entry"]
            theirs = [item for item in reference if item[0] == "entry"]
            assert mine == theirs[: len(mine)]
    sim.run_until(6.0 + 3.0)
    check_agreement(sim, _scenario(peers, seed))
    assert len(sim.members()) == peers  # the cut-off side rejoined
