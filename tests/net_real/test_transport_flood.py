"""A flooding peer on 127.0.0.1: the mesh reads it no faster than its rate limit allows, and the
honest links of the same mesh are still served meanwhile.

The flooder (``net.testing.bench.Flooder``) is a plain socket in a thread of its own: it says hello
like any peer, then writes well-formed data and ephemeral frames as fast as the kernel takes them.
These tests assert only what holds however slow the machine is; how fast the honest pings come back
under the flood, and how long frames over a tight limit take, are figures of ``nerts-lan bench``
(group net, transport), and the limits themselves are tested in simulated time in
tests/net/test_ratelimit.py.
"""

from __future__ import annotations

import asyncio
import time

from net._mesh.handshake import Hello
from net._mesh.mesh import Mesh
from net._mesh.parts import MeshListener
from net._mesh.ratelimit import DEFAULT_RATE_LIMITS, RateLimits
from net.testing.bench import Flooder
from tests.net_real.meshkit import Meshes, run_meshes, until

FLOOD_SECONDS = 2.0
PINGS = 60
WORK_PER_FRAME = 0.0002
"""What the application spends on a frame (decoding it, ordering it): a flood costs that many."""


class Victim(MeshListener):
    """Echoes the honest peer's pings, after the work a frame costs; counts the flooder's."""

    def __init__(self) -> None:
        self.from_flooder = 0
        self.echo = lambda peer, data: None

    def frame_received(self, peer: str, data: bytes) -> None:
        _work()
        if peer == "flood":
            self.from_flooder += 1
        else:
            self.echo(peer, data)

    def ephemeral_received(self, peer: str, data: bytes) -> None:
        _work()
        self.from_flooder += 1


class Honest(MeshListener):
    def __init__(self) -> None:
        self.answers: list[bytes] = []

    def frame_received(self, peer: str, data: bytes) -> None:
        self.answers.append(data)


def test_a_flood_is_throttled_and_the_honest_link_is_still_served() -> None:
    async def scenario(meshes: Meshes) -> None:
        victim, honest = Victim(), Honest()
        victim_mesh = meshes.keep(_mesh("a", victim))
        honest_mesh = meshes.keep(_mesh("b", honest))
        victim.echo = victim_mesh.send
        port = await victim_mesh.async_listen("127.0.0.1")
        honest_mesh.connect("a", "127.0.0.1", port)
        flooder = Flooder(port)
        meshes.at_end(lambda: _stop(flooder))
        await until(lambda: victim_mesh.connected() == {"b"})
        flood_start = time.monotonic()  # before the flooder's connection: its bucket is younger
        flooder.start()
        await until(flooder.greeted.is_set)
        pings = [b"ping %d" % i for i in range(PINGS)]
        for ping in pings:
            honest_mesh.send("a", ping)
            await asyncio.sleep(FLOOD_SECONDS / PINGS)
        await until(lambda: len(honest.answers) == PINGS)
        handed_on = victim.from_flooder
        flood_seconds = time.monotonic() - flood_start
        assert honest.answers == pings  # every ping answered, in order, during the flood
        limits = DEFAULT_RATE_LIMITS
        allowed = limits.frame_burst + limits.frames_per_second * flood_seconds
        assert handed_on <= allowed * 1.1
        assert handed_on < flooder.sent / 3
        assert "flood" in victim_mesh.connected()  # throttled, not thrown out

    run_meshes(scenario)


def test_ordered_frames_over_the_limit_all_arrive_and_ephemeral_ones_are_dropped() -> None:
    """With tight limits: 60 ordered frames at 100 a second after a burst of 10 are slowed (how
    much: the bench) and all arrive, in order; of 50 ephemeral frames at once, the burst of 5
    gets in, and hardly more."""

    async def scenario(meshes: Meshes) -> None:
        tight = RateLimits(
            frames_per_second=100, frame_burst=10, ephemeral_per_second=1, ephemeral_burst=5
        )
        a, b = meshes.make("a", rate_limits=tight), meshes.make("b")
        port_a = await a.mesh.async_listen("127.0.0.1")
        b.mesh.connect("a", "127.0.0.1", port_a)
        await until(lambda: a.mesh.connected() == {"b"})
        for i in range(50):
            b.mesh.send_ephemeral("a", b"pointer %d" % i)
        for i in range(60):
            b.mesh.send("a", b"m%d" % i)
        await until(lambda: len(a.frames) == 60)
        assert [d for _, d in a.frames] == [b"m%d" % i for i in range(60)]
        assert 5 <= len(a.ephemeral) <= 7
        assert a.connected == [("b", False)] and not a.problems  # slowed, never cut

    run_meshes(scenario)


def _mesh(peer: str, listener: MeshListener) -> Mesh:
    return Mesh(Hello(1, "t1", peer, peer.upper(), 0), listener)


async def _stop(flooder: Flooder) -> None:
    flooder.stop.set()
    if flooder.is_alive():
        await asyncio.to_thread(flooder.join, 2.0)


def _work() -> None:
    end = time.perf_counter() + WORK_PER_FRAME
    while time.perf_counter() < end:
        pass
