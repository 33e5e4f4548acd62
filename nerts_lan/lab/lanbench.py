"""LAN figures for ``nerts-lan bench``: real processes, real mDNS, TCP and UDP.

- ``discovery_ms``: from starting to browse until the table is listed, as the lobby lists it (a
  host is running), 5 times;
- ``loopback_4_peers``: 4 peers (bots, one round) on 127.0.0.1: action-to-applied-on-remote
  latency (a remote peer's view shows the action) and action-to-stable latency (stable on every
  peer), p50 and p99;
- ``one_lossy_link`` (root and iptables only: 4 hosts in network namespaces,
``nerts_lan.lab.netlab``):
  the same while one peer's packets, both ways, are dropped at random (2 %, iptables) and its
  frames wait 1-5 ms more (in the transport, on TCP and datagrams alike), with the datagram path
  off (TCP alone, as before it existed) and on, in one run;
- ``bursts`` (the same hosts): every ~3 s the lossy peer drops everything for 300 ms (a Wi-Fi
  scan): the remote apply latency among the other peers, and how long after a burst's end the
  lossy peer's moves made during it are applied elsewhere; datagrams off and on.

Each peer writes a trace (``NERTS_LAN_TRACE``) of when it submitted, applied and stabilised
each action; the monotonic clock is shared by the processes of one machine, namespaces or not.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from nerts_lan.lab.peerprocess import PeerProcess

__all__ = ["bench_lan"]

_LOOPBACK = ["--interface", "127.0.0.1"]
LOSSY = 3
"""The index of the peer whose link is bad."""
BURST_EVERY, BURST_LENGTH = 3.0, 0.3
GOALS = {
    "remote_apply_p99_ms": "<= 50",
    "stable_p99_ms": "<= 100",
    "lossy_moves_after_burst_end_p99_ms": "<= 30",
    "discovery_p50_ms": "<= 300",
}
BURST_ROUNDS = 6
"""Rounds played under bursts per mode: about two bursts a round, so the p99 is not the max of a
few dozen moves."""
_SLOW_LINK = {"NERTS_LAN_LINK_DELAY_MS": "1,5"}
_MODES = {"datagrams_off": {"NERTS_LAN_DATAGRAMS": "0"}, "datagrams_on": {}}


def bench_lan(quick: bool = False) -> dict[str, Any]:
    """Run the LAN benchmarks; figures in milliseconds."""
    figures: dict[str, Any] = {"discovery_ms": _discovery_ms(1 if quick else 5)}
    figures["loopback_4_peers"] = _latencies(_Loopback(), {})
    if quick:
        figures["one_lossy_link"] = "skipped with --quick (4 games in network namespaces)"
    else:
        figures.update(_lossy_figures())
    figures["goals"] = GOALS
    return figures


def _lossy_figures() -> dict[str, Any]:
    from nerts_lan.lab.netlab import NetLab, NetLabUnavailable, require_iptables

    try:
        require_iptables()
        lab = NetLab(4)
    except (NetLabUnavailable, RuntimeError) as why:
        missing = f"not measured: {why} (run the bench as root with iptables)"
        return {"one_lossy_link": missing, "bursts": missing}
    try:
        lab.lose(LOSSY, 0.02)
        hosts = _Namespaces(lab)
        steady = {m: _latencies(hosts, _SLOW_LINK, env, rounds=3) for m, env in _MODES.items()}
        bursts = {}
        for mode, env in _MODES.items():
            with _bursts(lab) as ends:
                traces = _latencies(hosts, _SLOW_LINK, env, raw=True, rounds=BURST_ROUNDS)
            bursts[mode] = _burst_figures(traces, ends)
        return {"one_lossy_link": steady, "bursts": bursts}
    finally:
        lab.close()


class _Loopback:
    """Where the peers of a game run: all on 127.0.0.1."""

    def options(self, index: int) -> list[str]:
        return _LOOPBACK

    def prefix(self, index: int) -> list[str]:
        return []


class _Namespaces:
    """Each peer on a host of its own."""

    def __init__(self, lab: Any) -> None:
        self.lab = lab

    def options(self, index: int) -> list[str]:
        return ["--interface", self.lab.address(index)]

    def prefix(self, index: int) -> list[str]:
        return list(self.lab.prefix(index))


def _discovery_ms(repeats: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        host = PeerProcess(
            ["host", "--headless", "--name", "Bench", "--table", "Bench discovery", *_LOOPBACK],
            Path(folder),
        )
        try:
            host.wait_for("hosting", timeout=120)
            times = []
            for _ in range(repeats):
                seen = _first_seen("Bench discovery", timeout=10.0)
                if seen is not None:
                    times.append(seen * 1000)
        finally:
            host.stop()
    if not times:
        return {}
    return {
        "min": round(min(times), 1),
        "p50": round(statistics.median(times), 1),
        "max": round(max(times), 1),
    }


def _first_seen(name: str, timeout: float) -> float | None:
    """Seconds from starting to browse until the table ``name`` is listed, as the lobby lists it
    (None: not within ``timeout``). Not ``find_tables``: once it has found a table, the headless
    join listens 1.5 s more for others of that name, which is no wait a player sees."""
    from nerts_lan.lan.browse import TableBrowser

    start = time.monotonic()
    browser = TableBrowser("127.0.0.1")
    try:
        browser.started()
        deadline = start + timeout
        while time.monotonic() < deadline:
            if any(table.name == name for table in browser.tables()):
                return time.monotonic() - start
            browser.wait(deadline - time.monotonic())
    finally:
        browser.close()
    return None


def _latencies(
    where: _Loopback | _Namespaces,
    lossy_env: dict[str, str],
    every_env: dict[str, str] | None = None,
    raw: bool = False,
    rounds: int = 1,
) -> Any:
    """``rounds`` of 4 bots (``lossy_env`` for the lossy peer, ``every_env`` for all): the
    figures, or with ``raw`` the traces."""
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        traces = [base / f"trace{i}.jsonl" for i in range(4)]
        bot = ["--bot", "hard", "--bot-delay", "0.2", "--rounds", str(rounds)]
        peers: list[PeerProcess] = []
        try:
            for index in range(4):
                env = {"NERTS_LAN_TRACE": str(traces[index]), **(every_env or {})}
                if index == LOSSY:
                    env.update(lossy_env)
                command = ["host", "--players", "4"] if index == 0 else ["join"]
                name = ["--headless", "--name", f"P{index}", "--table", "Bench"]
                args = [*command, *name, *where.options(index), *bot]
                peers.append(PeerProcess(args, base / f"p{index}", where.prefix(index), env))
                if index == 0:
                    peers[0].wait_for("hosting", timeout=120)
            for peer in peers:
                with contextlib.suppress(AssertionError):  # killed after 180 s: figures so far
                    peer.finish(180)
        finally:
            for peer in peers:
                peer.stop()
        read = [_read_trace(path) for path in traces]
        return read if raw else _figures(read)


def _figures(traces: list[list[list[Any]]]) -> dict[str, Any]:
    submitted = _submitted(traces)
    applied: list[float] = []
    stable_at: dict[tuple[int, str], list[float]] = {}
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


def _burst_figures(traces: list[list[list[Any]]], bursts: list[_Burst]) -> dict[str, Any]:
    """Remote apply among the peers other than the lossy one, and the lossy peer's moves made
    during a burst, applied elsewhere: how long after the burst's end."""
    submitted = _submitted(traces)
    lossy = {peer for kind, _, peer, _ in traces[LOSSY] if kind == "submit"}
    among_others: list[float] = []
    after_burst: list[float] = []
    for index, trace in enumerate(traces):
        if index == LOSSY:
            continue
        for kind, ts, peer, when in trace:
            sent = submitted.get((ts, peer))
            if kind != "applied" or sent is None:
                continue
            if peer not in lossy:
                among_others.append(when - sent)
                continue
            burst = next((b for b in bursts if b.blocked <= sent <= b.unblocking), None)
            if burst is not None:
                after_burst.append(max(0.0, when - burst.ended))
    return {
        "bursts": len(bursts),
        "others_remote_apply_ms": _percentiles(among_others),
        "lossy_moves_after_burst_end_ms": _percentiles(after_burst),
        "all": _figures(traces),
    }


class _Burst(NamedTuple):
    """When the lossy peer's packets were all dropped (monotonic): from ``blocked`` (the rules
    are in) until ``unblocking`` (their removal begins) for sure; all flow from ``ended``."""

    blocked: float
    unblocking: float
    ended: float


@contextlib.contextmanager
def _bursts(lab: Any) -> Iterator[list[_Burst]]:
    """Every ``BURST_EVERY`` seconds, drop everything to and from the lossy peer for
    ``BURST_LENGTH``; yields the list of the bursts, filled as they come."""
    bursts: list[_Burst] = []
    stop = threading.Event()

    def run(block: Callable[[int], None], unblock: Callable[[int], None]) -> None:
        while not stop.wait(BURST_EVERY):
            block(LOSSY)
            blocked = time.monotonic()
            try:
                stop.wait(BURST_LENGTH)
            finally:
                unblocking = time.monotonic()
                unblock(LOSSY)
            bursts.append(_Burst(blocked, unblocking, time.monotonic()))

    thread = threading.Thread(target=run, args=(lab.block, lab.unblock), daemon=True)
    thread.start()
    try:
        yield bursts
    finally:
        stop.set()
        thread.join(5)


def _submitted(traces: list[list[list[Any]]]) -> dict[tuple[int, str], float]:
    return {
        (ts, peer): when for trace in traces for kind, ts, peer, when in trace if kind == "submit"
    }


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def at(fraction: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000, 2)

    return {"n": len(ordered), "p50": at(0.5), "p99": at(0.99), "max": round(ordered[-1] * 1000, 2)}


def _read_trace(path: Path) -> list[list[Any]]:
    try:
        return [
            json.loads(line)
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
    except OSError:
        return []
