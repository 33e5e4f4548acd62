"""Seeded random scenarios for the simulator, and the checks every run must pass."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nerts_lan.lab.faults.oracle import StableOracle
from net._order.core import CoreConfig
from net._order.log import tie_draw
from net._order.viewchange import is_quorum
from net.events import Event
from net.testing.simnet import HashChainApp, LinkModel, SimApp, SimNetwork, SimNode

FAST = CoreConfig(suspect_timeout=0.3, exclude_timeout=0.6, snapshot_timeout=0.5)


@dataclass
class Scenario:
    """What one seeded run does; `describe()` helps when a seed fails."""

    seed: int
    peers: int
    link: LinkModel
    rate: float
    stop_at: float
    settle: float
    kills: list[tuple[float, str]] = field(default_factory=list)
    restarts: list[tuple[float, str]] = field(default_factory=list)
    pauses: list[tuple[float, str, float]] = field(default_factory=list)
    corruptions: list[tuple[float, str]] = field(default_factory=list)
    leaves: list[tuple[float, str]] = field(default_factory=list)
    joins: list[tuple[float, str]] = field(default_factory=list)

    def describe(self) -> str:
        return repr(self)


def make_scenario(seed: int, config: CoreConfig = FAST, chaos: bool = False) -> Scenario:
    """A random scenario: 2 to 12 peers, random links, one fault at most (up to three with
    `chaos`, possibly overlapping)."""
    rng = random.Random(seed)
    peers = rng.choice([2, 2, 3, 3, 4, 4, 5, 6, 7, 8, 10, 12])
    delay_min = rng.choice([0.0005, 0.001, 0.002])
    link = LinkModel(
        delay_min=delay_min,
        delay_max=delay_min + rng.choice([0.002, 0.004, 0.02]),
        loss=rng.choice([0.0, 0.0, 0.01, 0.05]),
        retransmit_delay=rng.choice([0.05, 0.2]),
    )
    stop_at = rng.uniform(1.5, 2.5)
    sc = Scenario(seed, peers, link, rate=rng.uniform(2, 20), stop_at=stop_at, settle=1.5)
    names = [f"p{i}" for i in range(peers)]
    for _ in range(rng.choice([1, 1, 1, 2, 3]) if chaos else 1):
        _add_fault(sc, rng, names, config)
    return sc


def _add_fault(sc: Scenario, rng: random.Random, names: list[str], config: CoreConfig) -> None:
    peers, stop_at = sc.peers, sc.stop_at
    fault = rng.random()
    victim = rng.choice(names)
    if fault < 0.25 and len({v for _, v in sc.kills} | {victim}) < peers:
        t = rng.uniform(0.2, stop_at * 0.6)
        sc.kills.append((t, victim))
        gone = {v for _, v in sc.kills} - {v for _, v in sc.restarts} - {victim}
        # A table that lost its quorum for good waits for it (by design): a kill that would
        # leave no quorum is followed by a restart.
        if rng.random() < 0.7 or not is_quorum(names, set(names) - gone - {victim}, ()):
            sc.restarts.append((t + rng.uniform(0.1, 1.2), victim))
    elif fault < 0.4:
        duration = rng.uniform(0.05, 0.5 * config.exclude_timeout)
        sc.pauses.append((rng.uniform(0.2, 1.0), victim, duration))
    elif fault < 0.5:
        duration = rng.uniform(1.5, 2.5) * config.exclude_timeout
        sc.pauses.append((rng.uniform(0.2, 1.0), victim, duration))
    elif fault < 0.62:
        sc.corruptions.append((rng.uniform(0.3, stop_at * 0.7), victim))
    elif fault < 0.7 and peers >= 3:
        sc.leaves.append((rng.uniform(0.3, stop_at * 0.7), victim))
    elif fault < 0.8:
        sc.joins.append((rng.uniform(0.2, stop_at * 0.7), f"q{len(sc.joins)}"))


def run_scenario(sc: Scenario, config: CoreConfig = FAST) -> SimNetwork:
    """Run a scenario to quiescence and return the network; fail if any peer ever delivered a
    stable entry that another had delivered differently (see `FinalityOracle`)."""
    oracle = FinalityOracle()
    sim = SimNetwork(
        [f"p{i}" for i in range(sc.peers)],
        seed=sc.seed,
        core_config=config,
        link=sc.link,
        app_factory=oracle.app_factory(rate=sc.rate, stop_at=sc.stop_at, hash_every=8),
    )
    for t, peer in sc.kills:
        sim.call_at(t, lambda p=peer: sim.kill(p))
    for t, peer in sc.restarts:
        sim.call_at(t, lambda p=peer: sim.restart(p))
    for t, peer, duration in sc.pauses:
        sim.call_at(t, lambda p=peer, d=duration: sim.pause(p, d))
    for t, peer in sc.corruptions:
        sim.call_at(t, lambda p=peer: app(sim, p).corrupt())
    for t, peer in sc.leaves:
        sim.call_at(t, lambda p=peer: sim.leave(p))
    for t, peer in sc.joins:
        sim.call_at(t, lambda p=peer: sim.restart(p))
    if sc.corruptions:
        # Enough stable entries after the corruption for a state hash exchange to catch it.
        sim.call_at(sc.stop_at, lambda: flood(sim, 8))
    sim.run_until(sc.stop_at + sc.settle)
    assert not oracle.violations, f"stable entries undone: {oracle.violations[:3]}; {sc.describe()}"
    return sim


def flood(sim: SimNetwork, count: int) -> None:
    for node in sim.members():
        for i in range(count):
            node.submit({"flood": i})


def app(sim: SimNetwork, peer: str) -> HashChainApp:
    application = sim.nodes[peer].app
    assert isinstance(application, HashChainApp)
    return application


def check_agreement(sim: SimNetwork, sc: Scenario) -> None:
    """Every member ends with the same stable state and an empty tentative tail; every entry
    of a peer that stayed up is in the log; no entry was ordered before one its author had seen."""
    members = sim.members()
    assert members, f"nobody left\n{sc.describe()}"
    views = {tuple(sorted(n.core.members.items())) for n in members}
    assert len(views) == 1, f"views differ: {views}\n{sc.describe()}"
    assert set(dict(views.pop())) == {n.peer_id for n in members}, sc.describe()
    states = {(app(sim, n.peer_id).index, app(sim, n.peer_id).digest) for n in members}
    assert len(states) == 1, f"states differ: {states}\n{sc.describe()}"
    for node in members:
        assert node.core.tentative() == [], f"{node.peer_id} has tentative entries\n{sc.describe()}"
        assert app(sim, node.peer_id).causality_errors == 0, sc.describe()
    # Full logs of the peers that never lost their state are identical, entry by entry.
    full = [
        n
        for n in members
        if app(sim, n.peer_id).log[:1] != [] and app(sim, n.peer_id).log[0][0] != "snapshot"
    ]
    for node in full[1:]:
        assert app(sim, node.peer_id).log == app(sim, full[0].peer_id).log, sc.describe()
    if full:
        log = app(sim, full[0].peer_id).log
        keys = [(item[1], item[2]) for item in log if item[0] == "entry"]
        # In key order: timestamps, then the table's draw for exact ties (net._order.log.tie_draw).
        assert keys == sorted(keys, key=lambda k: (k[0], tie_draw(sim.salt, *k))), sc.describe()
        assert len(set(keys)) == len(keys), sc.describe()
        stable = set(keys)
        for node in members:
            if node.incarnation == 0 and node.core.incarnation == 0:
                for _, entry in node.submitted:
                    assert entry.key in stable, (
                        f"{entry.key} of {node.peer_id} lost\n{sc.describe()}"
                    )


class FinalityOracle(StableOracle):
    """Stable means final, checked at every moment (``nerts_lan.lab.faults.StableOracle``): once any
    peer has delivered an entry at a stable index, no peer ever delivers another entry at that
    index, nor that entry at another index (a restarted or rejoining peer included).
    ``app_factory`` gives HashChainApps that report every stable batch to the oracle.
    Membership changes are not checked here (the faults' runs do)."""

    def __init__(self) -> None:
        super().__init__(membership=False)

    def app_factory(self, **kwargs: Any) -> Callable[[SimNode], SimApp]:
        oracle = self

        @dataclass
        class _ObservedApp(HashChainApp):
            def on_events(self, node: SimNode, events: list[Event]) -> None:
                oracle.observe(f"{node.peer_id}#{node.core.incarnation}", node.sim.now, events)
                super().on_events(node, events)

        return _ObservedApp.factory(**kwargs)
