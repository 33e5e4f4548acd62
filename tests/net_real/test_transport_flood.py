"""A flooding peer on 127.0.0.1: the mesh reads it no faster than its rate limit allows, and the
honest links of the same mesh keep their pace meanwhile.

The flooder is a plain socket in a thread of its own (not a mesh, not in the event loop): it says
hello like any peer, then writes well-formed data and ephemeral frames as fast as the kernel
takes them. A user would notice the game freezing for seconds; the test asserts against that,
with bounds far from what a loaded machine needs.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time

import msgpack

from net.transport import DEFAULT_RATE_LIMITS, Hello, Mesh, RateLimits

from .meshkit import RecordingMesh, until

FLOOD_SECONDS = 2.0
PINGS = 60
WORK_PER_FRAME = 0.0002
"""What the application spends on a frame (decoding it, ordering it): a flood costs that many."""


class Flooder(threading.Thread):
    """Says hello to ``port`` as peer ``flood``, then floods until ``stop`` is set."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.stop = threading.Event()
        self.sent = 0
        self.greeted = threading.Event()

    def run(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port)) as sock:
            sock.sendall(_frame([0, 1, "t1", "flood", "FLOOD", 0, 0, -1, None]))
            sock.recv(4096)  # the mesh's hello: we are in
            self.greeted.set()
            sock.settimeout(0.1)
            seq = 0
            while not self.stop.is_set():
                frames = []
                for _ in range(250):
                    seq += 1
                    frames.append(_frame([1, seq, b"d" * 100]))
                    frames.append(_frame([5, b"e" * 100]))
                try:
                    sock.sendall(b"".join(frames))
                except OSError:  # TimeoutError included
                    continue  # the mesh stopped reading; a partial write ends the flood anyway
                self.sent += len(frames)


def test_a_flood_is_throttled_and_the_honest_link_keeps_its_pace() -> None:
    async def scenario() -> None:
        from_flooder = 0
        round_trips: list[float] = []
        sent_at: dict[bytes, float] = {}

        def victim_frame(peer: str, data: bytes) -> None:
            nonlocal from_flooder
            _work()
            if peer == "flood":
                from_flooder += 1
            else:
                victim.send(peer, data)  # the echo of an honest ping

        def victim_ephemeral(peer: str, data: bytes) -> None:
            nonlocal from_flooder
            _work()
            from_flooder += 1

        def honest_frame(peer: str, data: bytes) -> None:
            round_trips.append(time.monotonic() - sent_at[data])

        victim = Mesh(
            Hello(1, "t1", "a", "A", 0), on_frame=victim_frame, on_ephemeral=victim_ephemeral
        )
        honest = Mesh(Hello(1, "t1", "b", "B", 0), on_frame=honest_frame)
        port = await victim.async_listen("127.0.0.1")
        honest.connect("a", "127.0.0.1", port)
        flooder = Flooder(port)
        try:
            await until(lambda: victim.connected() == {"b"})
            flooder.start()
            await until(flooder.greeted.is_set)
            flood_start = time.monotonic()
            for i in range(PINGS):
                ping = b"ping %d" % i
                sent_at[ping] = time.monotonic()
                honest.send("a", ping)
                await asyncio.sleep(FLOOD_SECONDS / PINGS)
            await until(lambda: len(round_trips) == PINGS, timeout=FLOOD_SECONDS)
            flood_seconds = time.monotonic() - flood_start
            flooder.stop.set()
            round_trips.sort()
            p95 = round_trips[int(0.95 * PINGS) - 1]
            limits = DEFAULT_RATE_LIMITS
            allowed = limits.frame_burst + limits.frames_per_second * flood_seconds
            print(
                f"flooder wrote {flooder.sent} frames, {from_flooder} handed on in"
                f" {flood_seconds:.2f} s; honest p95 round trip {1000 * p95:.1f} ms,"
                f" max {1000 * round_trips[-1]:.1f} ms"
            )
            assert p95 < 0.5  # a frozen game would take seconds
            assert from_flooder <= allowed * 1.1
            assert from_flooder < flooder.sent / 3
            assert "flood" in victim.connected()  # throttled, not thrown out
        finally:
            flooder.stop.set()
            await honest.async_close()
            await victim.async_close()
            await asyncio.to_thread(flooder.join, 2.0)

    asyncio.run(scenario())


def test_ordered_frames_over_the_limit_are_slowed_and_ephemeral_ones_dropped() -> None:
    """With tight limits: 60 ordered frames at 100 a second after a burst of 10 take half a
    second and all arrive, in order; of 50 ephemeral frames at once, the burst of 5 gets in."""

    async def scenario() -> None:
        tight = RateLimits(
            frames_per_second=100, frame_burst=10, ephemeral_per_second=1, ephemeral_burst=5
        )
        a, b = RecordingMesh("a", rate_limits=tight), RecordingMesh("b")
        port_a = await a.mesh.async_listen("127.0.0.1")
        b.mesh.connect("a", "127.0.0.1", port_a)
        try:
            await until(lambda: a.mesh.connected() == {"b"})
            await asyncio.sleep(0.2)  # the buckets fill up again after the handshake's frames
            for i in range(50):
                b.mesh.send_ephemeral("a", b"pointer %d" % i)
            start = time.monotonic()
            for i in range(60):
                b.mesh.send("a", b"m%d" % i)
            await until(lambda: len(a.frames) == 60)
            assert time.monotonic() - start >= 0.45
            assert [d for _, d in a.frames] == [b"m%d" % i for i in range(60)]
            assert 5 <= len(a.ephemeral) <= 7
            assert a.connected == [("b", False)] and not a.problems  # slowed, never cut
        finally:
            await a.mesh.async_close()
            await b.mesh.async_close()

    asyncio.run(scenario())


def _work() -> None:
    end = time.perf_counter() + WORK_PER_FRAME
    while time.perf_counter() < end:
        pass


def _frame(body: object) -> bytes:
    data = msgpack.packb(body, use_bin_type=True)
    return struct.pack(">I", len(data)) + data
