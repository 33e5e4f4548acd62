"""LAN figures for ``nerts-lan bench``: real processes, real mDNS and TCP on 127.0.0.1.

- ``discovery_ms``: from starting to browse until the first table is seen (a host is running);
- with 4 peers (bots, one round): action-to-applied-on-remote latency (a remote peer's view
  shows the action) and action-to-stable latency (stable on every peer), p50 and p99;
- the same with loss and delay injected on one peer's link (the kernel here has no netem: the
  transport holds that peer's frames back 1-5 ms, and 200 ms for 2 % of them, as a lost TCP
  segment would).

Each peer writes a trace (``NERTS_LAN_TRACE``) of when it submitted, applied and stabilised
each action; the monotonic clock is shared by the processes of one machine.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from .peerprocess import PeerProcess

__all__ = ["bench_lan"]

_LOOPBACK = ["--interface", "127.0.0.1"]


def bench_lan(quick: bool = False) -> dict[str, Any]:
    """Run the LAN benchmarks; figures in milliseconds."""
    figures: dict[str, Any] = {"discovery_ms": _discovery_ms(1 if quick else 3)}
    rounds = "1"
    figures["loopback_4_peers"] = _latencies(rounds, {})
    figures["loopback_4_peers_one_lossy_slow_link"] = _latencies(
        rounds, {"NERTS_LAN_LINK_DELAY_MS": "1,5", "NERTS_LAN_LINK_LOSS": "0.02"}
    )
    figures["goals"] = {"remote_apply_p99_ms": "<= 20", "stable_p99_ms": "<= 150"}
    return figures


def _discovery_ms(repeats: int) -> dict[str, float]:
    from .headless import find_tables

    with tempfile.TemporaryDirectory() as folder:
        host = PeerProcess(
            ["host", "--headless", "--name", "Bench", "--table", "Bench discovery", *_LOOPBACK],
            Path(folder),
        )
        try:
            host.wait_for("hosting", timeout=120)
            times = []
            for _ in range(repeats):
                start = time.monotonic()
                found = find_tables("127.0.0.1", 10.0, wanted="Bench discovery")
                if found:
                    times.append((time.monotonic() - start) * 1000)
        finally:
            host.stop()
    return {"min": round(min(times), 1), "max": round(max(times), 1)} if times else {}


def _latencies(rounds: str, lossy_env: dict[str, str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        traces = [base / f"trace{i}.jsonl" for i in range(4)]
        bot = ["--bot", "hard", "--bot-delay", "0.2", "--rounds", rounds]
        peers = [
            PeerProcess(
                [
                    "host",
                    "--headless",
                    "--name",
                    "P0",
                    "--table",
                    "Bench",
                    *_LOOPBACK,
                    *bot,
                    "--players",
                    "4",
                ],
                base / "p0",
                env={"NERTS_LAN_TRACE": str(traces[0])},
            )
        ]
        peers[0].wait_for("hosting", timeout=120)
        for index in range(1, 4):
            env = {"NERTS_LAN_TRACE": str(traces[index])}
            if index == 3:
                env.update(lossy_env)
            peers.append(
                PeerProcess(
                    [
                        "join",
                        "--headless",
                        "--name",
                        f"P{index}",
                        "--table",
                        "Bench",
                        *_LOOPBACK,
                        *bot,
                    ],
                    base / f"p{index}",
                    env=env,
                )
            )
        for peer in peers:
            with contextlib.suppress(AssertionError):  # killed after 180 s: figures so far
                peer.finish(180)
        return _figures([_read_trace(path) for path in traces])


def _figures(traces: list[list[list[Any]]]) -> dict[str, Any]:
    submitted: dict[tuple[int, str], float] = {}
    applied: list[float] = []
    stable_at: dict[tuple[int, str], list[float]] = {}
    for trace in traces:
        for kind, ts, peer, when in trace:
            if kind == "submit":
                submitted[(ts, peer)] = when
    for trace in traces:
        for kind, ts, peer, when in trace:
            key = (ts, peer)
            if key not in submitted:
                continue
            if kind == "applied":
                applied.append(when - submitted[key])
            elif kind == "stable":
                stable_at.setdefault(key, []).append(when)
    everywhere = [
        max(times) - submitted[key] for key, times in stable_at.items() if len(times) == len(traces)
    ]
    return {
        "actions": len(submitted),
        "remote_apply_ms": _percentiles(applied),
        "stable_everywhere_ms": _percentiles(everywhere),
    }


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def at(fraction: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000, 2)

    return {"p50": at(0.5), "p99": at(0.99), "max": round(ordered[-1] * 1000, 2)}


def _read_trace(path: Path) -> list[list[Any]]:
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except OSError:
        return []
