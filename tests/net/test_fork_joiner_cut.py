"""Issue 24's first fork (its repro script fork_joiner_cut, seed 60127), kept in the suite: a
removed member's cut must count only what the deciding quorum can hand on.

Four peers with their own delay per directed link (0.5-50 ms, up to 3x spread), the partial cuts
of ``test_partition``, one peer paused. p3 -> p0 is cut one way; p2 is paused, removed and rejoins
as p2#1. For the next epoch p0 proposes with the quorum {p0, p2#1}; p2#1 still waits for its
snapshot but froze a frontier of p3 past its own join marker. Taking that frontier as p3's cut
(as the highest any voter froze) lets p0 stabilise past p3's entries from before p2#1's marker
that neither of them holds, while p1, which holds them, stabilises them in place: a fork."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from net._order.core import CoreConfig
from net._order.messages import Promise
from net._order.viewchange import choose_change
from net._order.wirefields import REASON_LEFT, Removal
from net.testing.simnet import LinkModel, SimNetwork, SimNode
from tests.net.scenarios import FinalityOracle
from tests.net.test_partition import _random_cuts

FAST = CoreConfig(suspect_timeout=0.3, exclude_timeout=0.8)

FORKED_BEFORE = [60127]


@pytest.mark.parametrize("seed", [*FORKED_BEFORE, *range(8)])
def test_a_joiner_without_its_snapshot_does_not_raise_a_removed_members_cut(seed: int) -> None:
    oracle = FinalityOracle()
    sim = _mixed_faults(seed, oracle)
    assert not oracle.violations, oracle.violations[:3]
    finals = {node.app.digest for node in sim.members()}  # type: ignore[attr-defined]
    assert len(finals) == 1, "the table ends in more than one state"


def test_the_cut_stops_where_the_quorum_can_no_longer_hand_entries_on() -> None:
    view = {"a": 0, "b": 0, "j": 1, "x": 0}
    leave = {"x": Removal(0, 0, REASON_LEFT)}
    a = _vote(frozen_x=400, reasons=leave)
    waiting = _vote(frozen_x=900, holds_state=False)  # joined at 600: holds x's 600..900 only
    cut = choose_change(view, {"a": a, "j": waiting}, joined={"j": 600}).removals["x"].ts
    assert cut == 400  # nobody there holds x's entries in (400, 600)
    b = _vote(frozen_x=650)
    cut = choose_change(view, {"a": a, "b": b, "j": waiting}, joined={"j": 600})
    assert cut.removals["x"].ts == 900  # b reaches j's marker: j's entries after it count
    late = _vote(frozen_x=0, reasons=leave)  # joined at 700 with its snapshot, never heard x
    cut = choose_change(view, {"a": late}, joined={"a": 700}).removals["x"].ts
    assert cut == 699  # x's entries before a's marker were stable everywhere: they stay


def _vote(frozen_x: int, holds_state: bool = True, reasons: Any = None) -> Promise:
    return Promise(
        1000, 0, {}, 3, 1, "a", 1000, {"x": (0, frozen_x)}, {}, reasons or {}, {}, 0, "", 0,
        {}, {}, (), holds_state,
    )  # fmt: skip


class _PerLinkDelays(SimNetwork):
    """A SimNetwork whose every directed link has its own delays, drawn once per link."""

    def __init__(self, *args: Any, link_seed: int, **kwargs: Any) -> None:
        self.link_rng = random.Random(link_seed)
        self.links: dict[tuple[str, str], LinkModel] = {}
        super().__init__(*args, **kwargs)

    def _send(self, src: SimNode, target: SimNode, data: bytes, extra_delay: float) -> None:
        key = (src.peer_id, target.peer_id)
        if key not in self.links:
            base = math.exp(self.link_rng.uniform(math.log(0.0005), math.log(0.05)))
            self.links[key] = LinkModel(base, base * self.link_rng.uniform(1.0, 3.0))
        link = self.links[key]
        self.frames_sent += 1
        self.bytes_sent += len(data)
        delay = extra_delay + self.rng.uniform(link.delay_min, link.delay_max)
        held = self._held_until(src.peer_id, target.peer_id)
        if held > self.now:
            delay = held - self.now + delay
        arrival = max(self.now + delay, self._last_arrival.get(key, 0.0))
        self._last_arrival[key] = arrival
        src_id, src_gen, dest, dest_gen = src.peer_id, src.generation, *key[1:], target.generation
        self.call_at(arrival, lambda: self._arrive(src_id, src_gen, dest, dest_gen, data))


def _mixed_faults(seed: int, oracle: FinalityOracle) -> SimNetwork:
    """The repro's scenario: per-link delays, partial cuts, one peer paused; then healed."""
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(rng.choice([3, 4, 5, 6, 8]))]
    stop = 6.0
    sim = _PerLinkDelays(
        names,
        seed=seed,
        core_config=FAST,
        link=LinkModel(delay_min=0.001, delay_max=0.004),
        link_seed=seed * 7919 + 17,
        app_factory=oracle.app_factory(
            rate=rng.uniform(3, 15), stop_at=stop, hash_every=8, record_events=True
        ),
    )
    _random_cuts(sim, rng, names, stop)
    victim = rng.choice(names)
    at, length = rng.uniform(0.5, 4), FAST.exclude_timeout * rng.choice([0.5, 1.0, 2.0])
    sim.call_at(at, lambda: sim.pause(victim, length))
    sim.run_until(stop + 6.0)
    return sim
