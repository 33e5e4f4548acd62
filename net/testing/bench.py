"""Benchmarks of the protocol core: plain figures in dicts, for `nerts-lan bench` to print.

* codec: msgpack encode and decode of action frames (wall clock, real CPU);
* ordering: frames per second through encode, decode and ordering with in-memory cores;
* latency: in the simulator (12 peers, 100 ms heartbeats, 1-5 ms one-way delay), the simulated
  time from submit until the entry is stable on every peer, p50/p99/max;
* transport: two meshes on 127.0.0.1 in one loop: the time from dialing to a link up on both
  sides, open and with a table code (SPAKE2), and ordered frames per second, plain and with
  authentication tags; under a flood (a raw peer writing as fast as the kernel takes it), the
  round trips of an honest peer's pings and what the flooder got handed on against what the
  rate limits allow; ordered frames over a tight rate limit, and how long they took; and
  guessers of a table code, the failed checks a second against one per penalty allowed;
* races: in the simulator (5 ms links, each peer's clock offset by up to 2 s and drifting up to
  50 ppm), the share of races won by the player with a 2 ms head start, and the share of exact
  ties (equal timestamps) each peer id wins.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
import threading
import time
from typing import Any

import msgpack

from net._mesh.handshake import WRONG_CODE, Hello
from net._mesh.mesh import Mesh
from net._mesh.parts import MeshConfig, MeshListener
from net._mesh.ratelimit import DEFAULT_RATE_LIMITS, RateLimits
from net._order.core import CoreConfig, OrderingCore
from net._order.messages import Action, decode_message, encode_message
from net.events import EntriesStabilized, Event, LogEntry
from net.testing.simnet import ClockModel, HashChainApp, LinkModel, SimNetwork, SimNode

__all__ = [
    "Flooder",
    "bench_codec",
    "bench_latency",
    "bench_ordering",
    "bench_races",
    "bench_transport",
    "race_wins",
    "run_benchmarks",
    "tie_wins",
]


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


RACE_LINK = LinkModel(delay_min=0.004, delay_max=0.006)
RACE_CLOCKS = ClockModel(max_offset=2.0, max_drift=50e-6)


def bench_races(
    peers: int = 4, races: int = 200, head_start: float = 0.002, ties: int = 2000
) -> dict[str, Any]:
    """Who wins a race for one spot: the share won by the player with a `head_start`, over
    `races` races between every ordered pair of peers (five seeds), and the share of `ties`
    exact ties won by each peer id (the goals: >= 95 %, and no id above its share)."""
    early = 0
    total = 0
    per_seed = max(1, races // 5)
    for seed in range(5):
        won, run = race_wins(peers, per_seed, head_start, seed)
        early += won
        total += run
    shares = tie_wins(peers, ties)
    return {
        "peers": peers,
        "head_start_ms": 1000 * head_start,
        "races": total,
        "head_start_won_share": early / total if total else float("nan"),
        "exact_ties": ties,
        "tie_won_share_by_id": shares,
        "tie_fair_share": 1 / peers,
        "goals": {"head_start_won_share": ">= 0.95", "tie_won_share_by_id": "<= share + noise"},
    }


class _RaceLog:
    """Records the stable order of the race entries on one peer."""

    def __init__(self) -> None:
        self.order: list[tuple[int, str]] = []

    def on_start(self, node: SimNode) -> None:
        """Nothing to set up."""

    def on_events(self, node: SimNode, events: list[Event]) -> None:
        """Keep (race, author) of every stable race entry, in order."""
        for event in events:
            if isinstance(event, EntriesStabilized):
                self.order += [(e.payload["race"], e.peer) for e in event.entries]


def race_wins(peers: int, races: int, head_start: float, seed: int) -> tuple[int, int]:
    """(races won by the earlier player, races run) in one seeded simulation: idle table, 5 ms
    links, skewed and drifting clocks; each race pits an ordered pair of peers (both orders of
    every pair in turn), the earlier one playing `head_start` before the other."""
    names = [f"p{i}" for i in range(peers)]
    sim = SimNetwork(
        names,
        seed=seed,
        link=RACE_LINK,
        clock_model=RACE_CLOCKS,
        app_factory=lambda node: _RaceLog(),
        salt=b"race table %d" % seed,
    )
    pairs = [(a, b) for a in names for b in names if a != b]
    start = 1.0  # the clocks agree within a few hundred microseconds after one round trip
    for race in range(races):
        first, second = pairs[race % len(pairs)]
        at = start + 0.3 * race + sim.rng.uniform(0.0, 0.1)
        _play_at(sim, first, at, race)
        _play_at(sim, second, at + head_start, race)
    sim.run_until(start + 0.3 * races + 1.0)
    log = sim.nodes[names[0]].app
    assert isinstance(log, _RaceLog)
    winners: dict[int, str] = {}
    for race, author in log.order:
        winners.setdefault(race, author)
    won = sum(1 for race, author in winners.items() if author == pairs[race % len(pairs)][0])
    return won, len(winners)


def _play_at(sim: SimNetwork, peer: str, when: float, race: int) -> None:
    def play() -> None:
        sim.nodes[peer].submit({"race": race})

    sim.call_at(when, play)


def tie_wins(peers: int, ties: int, salt: bytes = b"bench table") -> dict[str, float]:
    """The share of `ties` exact ties each peer id wins: in-memory cores on one clock, every
    peer submitting at once (so with equal timestamps); the entry ordered first wins."""
    names = [f"p{i}" for i in range(peers)]
    config = CoreConfig(
        ack_delay=0.0, heartbeat_interval=3600.0, exclude_timeout=3600.0, suspect_timeout=3600.0
    )
    cores = {n: OrderingCore(n, names, 0.0, config, salt=salt) for n in names}
    first: dict[int, str] = {}
    for _ in range(ties):
        entries = [core.submit(None, 0.0) for core in cores.values()]
        if len({e.ts for e in entries}) != 1:
            raise AssertionError("the cores' clocks differ: not a tie")
        for entry in _deliver_all(cores, names[0]):
            first.setdefault(entry.ts, entry.peer)
    return {n: sum(1 for p in first.values() if p == n) / len(first) for n in names}


def _deliver_all(cores: dict[str, OrderingCore], watch: str) -> list[LogEntry]:
    """Move every frame until none is left; the entries that became stable at `watch`."""
    stable: list[LogEntry] = []
    queue = [(src, d, f) for src, core in cores.items() for d, f in core.outgoing()]
    while queue:
        src, dest, frame = queue.pop(0)
        for event in cores[dest].receive(src, frame, 0.0):
            if dest == watch and isinstance(event, EntriesStabilized):
                stable += event.entries
        queue.extend((dest, d, f) for d, f in cores[dest].outgoing())
    return stable


def bench_transport(
    handshakes: int = 5, frames: int = 20_000, flood_seconds: float = 2.0, penalty: float = 0.25
) -> dict[str, float]:
    """Real sockets on 127.0.0.1, every mesh in this process (so the key exchange's CPU time of
    both ends adds up): mean dial-to-link-up time in ms, 100-byte ordered frames a second from
    one mesh to the other until all arrived (no rate limit), a flood of ``flood_seconds``, 60
    frames over a limit of 100 a second, and three code guessers for six ``penalty``."""

    async def measure() -> dict[str, float]:
        figures = {
            "handshake_open_ms": 1000 * await _handshake_seconds(None, handshakes),
            "handshake_code_ms": 1000 * await _handshake_seconds("bench code", handshakes),
            "plain_frames_per_s": frames / await _stream_seconds(None, frames),
            "authenticated_frames_per_s": frames / await _stream_seconds("bench code", frames),
        }
        figures.update(await _flood(flood_seconds))
        figures["tight_limit_60_frames_s"] = await _tight_limit_seconds()
        figures.update(await _guessing(penalty))
        return figures

    return asyncio.run(measure())


def run_benchmarks(quick: bool = False) -> dict[str, dict[str, Any]]:
    """All benchmarks; `quick` shrinks them to well under a second."""
    if quick:
        return {
            "codec": bench_codec(2_000),
            "ordering": bench_ordering(entries=200),
            "latency": bench_latency(seconds=1.0),
            "races": bench_races(races=40, ties=200),
            "transport": bench_transport(
                handshakes=2, frames=2_000, flood_seconds=0.3, penalty=0.05
            ),
        }
    return {
        "codec": bench_codec(),
        "ordering": bench_ordering(),
        "latency": bench_latency(),
        "races": bench_races(),
        "transport": bench_transport(),
    }


async def _mesh_pair(code: str | None, listener: MeshListener | None = None) -> list[Mesh]:
    config = MeshConfig(table_code=code, rate_limits=None)
    pair = [
        Mesh(Hello(1, "bench", peer, peer, 0), listener or MeshListener(), config)
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
    counter = _FrameCounter()
    a, b = await _mesh_pair(code, counter)
    try:
        a.connect("b", "127.0.0.1", b.port)
        await _until(lambda: a.connected() == {"b"} and b.connected() == {"a"})
        payload = bytes(100)
        start = time.perf_counter()
        for _ in range(count):
            a.send("b", payload)
        await _until(lambda: counter.received == count)
        return time.perf_counter() - start
    finally:
        await a.async_close()
        await b.async_close()


class _FrameCounter(MeshListener):
    def __init__(self) -> None:
        self.received = 0

    def frame_received(self, peer: str, data: bytes) -> None:
        self.received += 1


# --- the transport under attack -------------------------------------------------------------


class Flooder(threading.Thread):
    """A raw peer in a thread of its own (not a mesh, not in the event loop): says hello to
    ``port`` at table ``t1`` as peer ``flood``, then writes well-formed data and ephemeral frames
    as fast as the kernel takes them until ``stop`` is set; ``sent`` counts them."""

    def __init__(self, port: int, table: str = "t1") -> None:
        super().__init__(daemon=True)
        self.port = port
        self.table = table
        self.stop = threading.Event()
        self.sent = 0
        self.greeted = threading.Event()

    def run(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port)) as sock:
            sock.sendall(_frame([0, 1, self.table, "flood", "FLOOD", 0, 0, -1, None]))
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


class _Victim(MeshListener):
    """Echoes honest pings; counts what the flooder gets handed on."""

    def __init__(self) -> None:
        self.mesh: Mesh | None = None
        self.from_flooder = 0

    def frame_received(self, peer: str, data: bytes) -> None:
        if peer == "flood":
            self.from_flooder += 1
        elif self.mesh is not None:
            self.mesh.send(peer, data)

    def ephemeral_received(self, peer: str, data: bytes) -> None:
        self.from_flooder += 1


class _Pinger(MeshListener):
    def __init__(self) -> None:
        self.sent_at: dict[bytes, float] = {}
        self.round_trips: list[float] = []

    def frame_received(self, peer: str, data: bytes) -> None:
        self.round_trips.append(time.monotonic() - self.sent_at[data])


async def _flood(seconds: float, pings: int = 60) -> dict[str, float]:
    """An honest peer pings the victim while a flooder writes at it for ``seconds``."""
    victim, pinger = _Victim(), _Pinger()
    victim.mesh = Mesh(Hello(1, "t1", "a", "A", 0), victim)
    honest = Mesh(Hello(1, "t1", "b", "B", 0), pinger)
    port = await victim.mesh.async_listen("127.0.0.1")
    honest.connect("a", "127.0.0.1", port)
    flooder = Flooder(port)
    try:
        await _until(lambda: victim.mesh is not None and victim.mesh.connected() == {"b"})
        start = time.monotonic()
        flooder.start()
        await asyncio.to_thread(flooder.greeted.wait, 5.0)
        for i in range(pings):
            ping = b"ping %d" % i
            pinger.sent_at[ping] = time.monotonic()
            honest.send("a", ping)
            await asyncio.sleep(seconds / pings)
        await _until(lambda: len(pinger.round_trips) == pings)
        elapsed = time.monotonic() - start
        flooder.stop.set()
    finally:
        flooder.stop.set()
        await honest.async_close()
        await victim.mesh.async_close()
        await asyncio.to_thread(flooder.join, 2.0)
    trips = sorted(pinger.round_trips)
    limits = DEFAULT_RATE_LIMITS
    return {
        "flood_s": elapsed,
        "flood_frames_written": flooder.sent,
        "flood_frames_handed_on": victim.from_flooder,
        "flood_frames_allowed": limits.frame_burst + limits.frames_per_second * elapsed,
        "flood_honest_p50_ms": 1000 * trips[len(trips) // 2],
        "flood_honest_p95_ms": 1000 * trips[int(0.95 * len(trips)) - 1],
        "flood_honest_max_ms": 1000 * trips[-1],
    }


async def _tight_limit_seconds() -> float:
    """Seconds for 60 ordered frames to reach a mesh that takes 100 a second after a burst of
    10 (at least 0.5 s by its limits)."""
    counter = _FrameCounter()
    tight = MeshConfig(rate_limits=RateLimits(frames_per_second=100, frame_burst=10))
    a = Mesh(Hello(1, "bench", "a", "a", 0), counter, tight)
    b = Mesh(Hello(1, "bench", "b", "b", 0), MeshListener())
    try:
        b.connect("a", "127.0.0.1", await a.async_listen("127.0.0.1"))
        await _until(lambda: a.connected() == {"b"} and b.connected() == {"a"})
        await asyncio.sleep(0.2)  # the bucket fills up again after the handshake's frames
        start = time.monotonic()
        for i in range(60):
            b.send("a", b"m%d" % i)
        await _until(lambda: counter.received == 60)
        return time.monotonic() - start
    finally:
        await a.async_close()
        await b.async_close()


class _Problems(MeshListener):
    def __init__(self) -> None:
        self.wrong_codes = 0

    def problem(self, who: str, reason: str) -> None:
        self.wrong_codes += reason == WRONG_CODE


async def _guessing(penalty: float, guessers: int = 3) -> dict[str, float]:
    """Guessers dial a coded table over and over for six penalties: the failed checks a second,
    which the penalty holds to about one per ``penalty`` (they all dial from one address)."""
    problems = _Problems()
    host = Mesh(
        Hello(1, "bench", "a", "a", 0),
        problems,
        MeshConfig(table_code="right code", wrong_code_delay=penalty),
    )
    meshes = [
        Mesh(
            Hello(1, "bench", f"g{i}", f"g{i}", 0),
            MeshListener(),
            MeshConfig(table_code=f"guess {i}", wrong_code_delay=penalty, retry_interval=0.01),
        )
        for i in range(guessers)
    ]
    port = await host.async_listen("127.0.0.1")
    transport_log = logging.getLogger("net._mesh.mesh")
    level = transport_log.level
    transport_log.setLevel(logging.ERROR)  # the refusals are what we count, not news
    try:
        start = time.monotonic()
        for mesh in meshes:
            mesh.connect("a", "127.0.0.1", port)
        await asyncio.sleep(6 * penalty)
        elapsed = time.monotonic() - start
        failed = problems.wrong_codes
    finally:
        for mesh in [host, *meshes]:
            await mesh.async_close()
        transport_log.setLevel(level)
    return {
        "guess_penalty_s": penalty,
        "guess_failed_checks": failed,
        "guess_checks_per_s": failed / elapsed,
        "guess_allowed_per_s": 1 / penalty,
    }


def _frame(body: object) -> bytes:
    data: bytes = msgpack.packb(body, use_bin_type=True)
    return struct.pack(">I", len(data)) + data


if __name__ == "__main__":  # pragma: no cover - manual use: python -m net.testing.bench
    for name, figures in run_benchmarks().items():
        print(name, {k: round(v, 2) if isinstance(v, float) else v for k, v in figures.items()})
