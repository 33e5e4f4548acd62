"""A member that stalls the table while it still speaks is removed like a silent one: frozen
``seen``, sparse frames (issue 14). Honest slow members are not."""

from __future__ import annotations

import dataclasses
import functools

import pytest

from net._order.core import CoreConfig
from net._order.messages import decode_message, encode_message
from net.events import MemberExcluded
from net.testing.simnet import HashChainApp, LinkModel, SimNetwork, SimNode

CONFIG = CoreConfig()  # the real timers: suspect after 1 s, exclude after 3 s
LAN = LinkModel(delay_min=0.004, delay_max=0.006)


def excluded(sim: SimNetwork, peer: str) -> list[str]:
    app = sim.nodes[peer].app
    assert isinstance(app, HashChainApp)
    return [e.peer for e in app.events_seen if isinstance(e, MemberExcluded)]


def table(seed: int, link: LinkModel = LAN) -> SimNetwork:
    return SimNetwork(
        ["a", "b", "c", "d"],
        seed=seed,
        core_config=CONFIG,
        link=link,
        app_factory=HashChainApp.factory(rate=5, record_events=True),
    )


def freeze_seen(node: SimNode) -> None:
    """From now on `node` reports the same ``seen`` in every frame (its stamps go on)."""
    core = node.core
    outgoing = core.outgoing
    frozen: dict[str, tuple[int, int]] = {}

    def forged() -> list[tuple[str, bytes]]:
        frames = []
        for dest, data in outgoing():
            message = decode_message(data)
            frozen.update({p: v for p, v in message.seen.items() if p not in frozen})
            seen = {p: frozen[p] for p in message.seen}
            frames.append((dest, encode_message(dataclasses.replace(message, seen=seen))))
        return frames

    core.outgoing = forged  # type: ignore[method-assign]


def thin_out(node: SimNode, every: float) -> None:
    """From now on `node` sends each member at most one frame every `every` seconds."""
    core = node.core
    outgoing = core.outgoing
    last: dict[str, float] = {}

    def sparse() -> list[tuple[str, bytes]]:
        frames = []
        for dest, data in outgoing():
            if node.now - last.get(dest, -every) >= every:
                last[dest] = node.now
                frames.append((dest, data))
        return frames

    core.outgoing = sparse  # type: ignore[method-assign]


def test_a_member_whose_seen_stays_frozen_is_excluded() -> None:
    sim = table(seed=5)
    sim.run_until(1.0)
    freeze_seen(sim.nodes["c"])
    sim.run_until(9.0)
    for peer in "abd":
        assert excluded(sim, peer) == ["c"]
    assert {n.peer_id for n in sim.members()} >= {"a", "b", "d"}


def test_a_member_sending_a_frame_only_every_2_9_s_is_excluded() -> None:
    """Silence is 3 s: a frame every 2.9 s kept it in, and every entry waited for it."""
    sim = table(seed=6)
    sim.run_until(1.0)
    thin_out(sim.nodes["c"], 2.9)
    sim.run_until(12.0)
    for peer in "abd":
        assert excluded(sim, peer) == ["c"]


@pytest.mark.sim
@pytest.mark.parametrize("seed", [11, 16])
def test_honest_slow_members_are_not_excluded(seed: int) -> None:
    """Jitter up to 30 ms, 5 % of frames held 0.75 s in retransmission, members paused for up
    to 2 s (below the 3 s of silence): frames come late and in bursts, nobody is removed."""
    lossy = LinkModel(delay_min=0.001, delay_max=0.030, loss=0.05, retransmit_delay=0.75)
    sim = SimNetwork(
        ["a", "b", "c", "d", "e"],
        seed=seed,
        core_config=CONFIG,
        link=lossy,
        app_factory=HashChainApp.factory(rate=10, record_events=True),
    )
    for i in range(8):
        sim.call_at(2.0 + 2.0 * i, functools.partial(sim.pause, "abcde"[i % 5], 0.2 + 0.25 * i))
    sim.run_until(20.0)
    for peer in "abcde":
        assert excluded(sim, peer) == []


def test_a_member_thinned_to_three_heartbeats_stays() -> None:
    """Near the worst that stays: a frame every 0.2 s (heartbeats every 0.1 s; the bound is a
    third of them)."""
    sim = table(seed=7)
    sim.run_until(1.0)
    thin_out(sim.nodes["c"], 0.2)
    sim.run_until(10.0)
    for peer in "abd":
        assert excluded(sim, peer) == []
