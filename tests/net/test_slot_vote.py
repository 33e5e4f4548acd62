"""A restarted laptop votes in its dead predecessor's place: its vote must count (churn seed 5035:
a table of three, one laptop dead, another restarted while its accepted change was undecided,
waited for good because the restarted one's vote was refused)."""

from __future__ import annotations

from net._order.messages import Accepted, Promise, decode_message
from net.events import ProtocolViolated
from net.testing.simnet import HashChainApp, SimNetwork, SimNode
from tests.net.scenarios import FAST

KILL_C = 1.6
"""When c dies: after a and c accepted the change that removes b, before anyone decided it."""


def _table_that_loses_b_then_restarts_c() -> tuple[SimNetwork, list[ProtocolViolated]]:
    violations: list[ProtocolViolated] = []

    def factory(node: SimNode) -> HashChainApp:
        app = HashChainApp.factory(rate=20, stop_at=4.0)(node)
        assert isinstance(app, HashChainApp)
        on_events = app.on_events

        def watch(node: SimNode, events: list[object]) -> None:
            violations.extend(e for e in events if isinstance(e, ProtocolViolated))
            on_events(node, events)  # type: ignore[arg-type]

        app.on_events = watch  # type: ignore[method-assign]
        return app

    sim = SimNetwork(["a", "b", "c"], seed=3, core_config=FAST, app_factory=factory)

    def no_votes_back(dest: str, data: bytes) -> list[tuple[float, bytes]]:
        # Until c dies, no acceptance reaches a proposer: the change stays undecided.
        if sim.now < KILL_C and isinstance(decode_message(data), Accepted):
            return []
        return [(0.0, data)]

    sim.frame_filters["a"] = sim.frame_filters["c"] = no_votes_back
    sim.call_at(0.5, lambda: sim.kill("b"))
    sim.call_at(KILL_C, lambda: sim.kill("c"))
    sim.call_at(KILL_C + 0.1, lambda: sim.restart("c"))
    return sim, violations


def test_the_restarted_laptops_vote_counts_and_the_table_goes_on() -> None:
    sim, violations = _table_that_loses_b_then_restarts_c()
    sim.run_until(KILL_C)
    record = sim.nodes["c"].core.vote_record()
    assert record is not None and record.value is not None, "c accepted a change before dying"
    stable_before = sim.nodes["a"].core.stable_index
    sim.run_until(6.0)
    a, c = sim.nodes["a"].core, sim.nodes["c"].core
    assert a.members == c.members == {"a": 0, "c": 1}
    assert not violations, violations[:3]
    assert c.ready and not a.paused
    assert a.stable_index == c.stable_index
    assert a.stable_index is not None and stable_before is not None
    assert a.stable_index > stable_before + 10, "the bots played on after the restart"


def _table_of_two_whose_lowest_decides_its_own_removal() -> SimNetwork:
    """a and b; from 0.5 s on b hears nothing of a but its promises (b finds a silent and
    proposes to remove it; a accepts, but its acceptance never reaches b), so a takes the
    stalled ballot over and, the lowest of two, decides its own removal alone; that decision
    never reaches b either. a restarts (as the app does when expelled) with its vote record."""
    sim = SimNetwork(
        ["a", "b"], seed=5, core_config=FAST, app_factory=HashChainApp.factory(rate=20, stop_at=6.0)
    )

    def only_promises(dest: str, data: bytes) -> list[tuple[float, bytes]]:
        if sim.now < 0.5 or sim.nodes["a"].core.incarnation > 0:
            return [(0.0, data)]
        return [(0.0, data)] if isinstance(decode_message(data), Promise) else []

    sim.frame_filters["a"] = only_promises
    return sim


def test_a_laptop_that_decided_its_own_removal_unseen_votes_on_in_that_epoch() -> None:
    """Stalls seed 30076: the record said the epoch after the decision (a voted in none), so the
    restarted a never voted in the epoch b was stuck in, and b waited for good in a view of a's
    dead predecessor and itself."""
    sim = _table_of_two_whose_lowest_decides_its_own_removal()
    sim.run_until(8.0)
    a, b = sim.nodes["a"].core, sim.nodes["b"].core
    assert a.incarnation > 0, "a was removed and came back"
    assert a.members == b.members == {"a": a.incarnation, "b": 0}
    assert not b.paused and a.ready
    assert a.stable_index == b.stable_index
