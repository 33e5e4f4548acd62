"""A restarted laptop votes in its dead predecessor's place: its vote must count (churn seed 5035:
a table of three, one laptop dead, another restarted while its accepted change was undecided,
waited for good because the restarted one's vote was refused)."""

from __future__ import annotations

from net._order.messages import Accepted, decode_message
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
