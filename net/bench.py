"""Benchmarks of the protocol core: plain figures in dicts, for `nerts-lan bench` to print.

* codec: msgpack encode and decode of action frames (wall clock, real CPU);
* ordering: frames per second through encode, decode and ordering with in-memory cores;
* latency: in the simulator (12 peers, 100 ms heartbeats, 1-5 ms one-way delay), the simulated
  time from submit until the entry is stable on every peer, p50/p99/max;
* transport: two meshes on 127.0.0.1 in one loop: the time from dialing to a link up on both
  sides, open and with a table code (SPAKE2), and ordered frames per second, plain and with
  authentication tags.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from net.core import CoreConfig, OrderingCore
from net.events import EntriesStabilized
from net.messages import Action, decode_message, encode_message
from net.simnet import HashChainApp, LinkModel, SimNetwork
from net.transport import Hello, Mesh

__all__ = ["bench_codec", "bench_latency", "bench_ordering", "bench_transport", "run_benchmarks"]


def bench_codec(count: int = 20_000) -> dict[str, float]:
    """Encode and decode `count` typical action frames; rates in messages per second."""
    seen = {f"peer{i}": (0, 1000 + i) for i in range(12)}
    payload = {"move": "play", "card": "10H", "from": ["tableau", 3], "to": ["foundation", 7]}
    messages = [Action(1000 + i, 0, seen, payload) for i in range(count)]
    start = time.perf_counter()
    frames = [encode_message(m) for m in messages]
    encoded = time.perf_counter()
    for frame in frames:
        decode_message(frame)
    decoded = time.perf_counter()
    return {
        "messages": count,
        "frame_bytes": len(frames[0]),
        "encode_per_s": count / (encoded - start),
        "decode_per_s": count / (decoded - encoded),
    }


def bench_ordering(peers: int = 4, entries: int = 2_000) -> dict[str, float]:
    """Cores wired back to back (no delay): submit `entries` round robin, deliver every frame,
    until all are stable everywhere; rates are real CPU time."""
    names = [f"p{i}" for i in range(peers)]
    config = CoreConfig(
        ack_delay=0.0, heartbeat_interval=3600.0, exclude_timeout=3600.0, suspect_timeout=3600.0
    )
    cores = {n: OrderingCore(n, names, 0.0, config) for n in names}
    stable = dict.fromkeys(names, 0)
    frames = 0
    start = time.perf_counter()
    now = 0.0
    for i in range(entries):
        now += 0.0001
        cores[names[i % peers]].submit({"i": i}, now)
        queue = [(names[i % peers], d, f) for d, f in cores[names[i % peers]].outgoing()]
        while queue:
            src, dest, frame = queue.pop(0)
            frames += 1
            for event in cores[dest].receive(src, frame, now):
                if isinstance(event, EntriesStabilized):
                    stable[dest] += len(event.entries)
            queue.extend((dest, d, f) for d, f in cores[dest].outgoing())
    for name in names:
        for event in cores[name].tick(now + 1.0):
            if isinstance(event, EntriesStabilized):
                stable[name] += len(event.entries)
    elapsed = time.perf_counter() - start
    return {
        "peers": peers,
        "entries": entries,
        "frames": frames,
        "frames_per_s": frames / elapsed,
        "entries_per_s": entries / elapsed,
        "stable_everywhere": min(stable.values()),
    }


def bench_latency(
    peers: int = 12, seconds: float = 10.0, rate: float = 5.0, seed: int = 1
) -> dict[str, float]:
    """Simulated submit-to-stable-on-every-peer latency, in milliseconds."""
    config = CoreConfig(heartbeat_interval=0.1)
    sim = SimNetwork(
        [f"p{i:02d}" for i in range(peers)],
        seed=seed,
        core_config=config,
        link=LinkModel(delay_min=0.001, delay_max=0.005),
        app_factory=HashChainApp.factory(rate=rate, stop_at=seconds),
    )
    start = time.perf_counter()
    sim.run_until(seconds + 1.0)
    wall = time.perf_counter() - start
    apps = [n.app for n in sim.nodes.values()]
    latencies = []
    for node in sim.nodes.values():
        for submitted_at, entry in node.submitted:
            times = [a.stable_at.get(entry.key) for a in apps if isinstance(a, HashChainApp)]
            if all(t is not None for t in times):
                latencies.append(max(t for t in times if t is not None) - submitted_at)
    latencies.sort()
    count = len(latencies)

    def pct(q: float) -> float:
        return 1000.0 * latencies[min(count - 1, int(q * count))] if count else float("nan")

    return {
        "peers": peers,
        "entries": count,
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "max_ms": 1000.0 * latencies[-1] if count else float("nan"),
        "frames": sim.frames_sent,
        "frames_per_sim_s": sim.frames_sent / (seconds + 1.0),
        "wall_s": wall,
    }


def bench_transport(handshakes: int = 5, frames: int = 20_000) -> dict[str, float]:
    """Real sockets on 127.0.0.1, both meshes in this process (so the key exchange's CPU time of
    both ends adds up): mean dial-to-link-up time in ms, and 100-byte ordered frames a second
    from one mesh to the other until all arrived (no rate limit)."""

    async def measure() -> dict[str, float]:
        return {
            "handshake_open_ms": 1000 * await _handshake_seconds(None, handshakes),
            "handshake_code_ms": 1000 * await _handshake_seconds("bench code", handshakes),
            "plain_frames_per_s": frames / await _stream_seconds(None, frames),
            "authenticated_frames_per_s": frames / await _stream_seconds("bench code", frames),
        }

    return asyncio.run(measure())


def run_benchmarks(quick: bool = False) -> dict[str, dict[str, Any]]:
    """All benchmarks; `quick` shrinks them to well under a second."""
    if quick:
        return {
            "codec": bench_codec(2_000),
            "ordering": bench_ordering(entries=200),
            "latency": bench_latency(seconds=1.0),
            "transport": bench_transport(handshakes=2, frames=2_000),
        }
    return {
        "codec": bench_codec(),
        "ordering": bench_ordering(),
        "latency": bench_latency(),
        "transport": bench_transport(),
    }


async def _mesh_pair(code: str | None, on_frame: Any = lambda peer, data: None) -> list[Mesh]:
    pair = [
        Mesh(Hello(1, "bench", peer, peer, 0), on_frame, table_code=code, rate_limits=None)
        for peer in ("a", "b")
    ]
    await pair[1].async_listen("127.0.0.1")
    return pair


async def _until(condition: Any) -> None:
    deadline = time.monotonic() + 10.0
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError("the transport benchmark timed out")
        await asyncio.sleep(0)


async def _handshake_seconds(code: str | None, count: int) -> float:
    total = 0.0
    for _ in range(count):
        a, b = await _mesh_pair(code)
        try:
            start = time.perf_counter()
            a.connect("b", "127.0.0.1", b.port)
            await _until(lambda: a.connected() == {"b"} and b.connected() == {"a"})  # noqa: B023
            total += time.perf_counter() - start
        finally:
            await a.async_close()
            await b.async_close()
    return total / count


async def _stream_seconds(code: str | None, count: int) -> float:
    received = 0

    def count_frame(peer: str, data: bytes) -> None:
        nonlocal received
        received += 1

    a, b = await _mesh_pair(code, count_frame)
    try:
        a.connect("b", "127.0.0.1", b.port)
        await _until(lambda: a.connected() == {"b"} and b.connected() == {"a"})
        payload = bytes(100)
        start = time.perf_counter()
        for _ in range(count):
            a.send("b", payload)
        await _until(lambda: received == count)
        return time.perf_counter() - start
    finally:
        await a.async_close()
        await b.async_close()


if __name__ == "__main__":  # pragma: no cover - manual use: python -m net.bench
    for name, figures in run_benchmarks().items():
        print(name, {k: round(v, 2) if isinstance(v, float) else v for k, v in figures.items()})
