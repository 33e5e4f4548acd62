"""Soak test (not part of the suite): bots play on several real peers for a given time while one
peer at a time is killed (SIGKILL, as a crash) and restarted every few minutes.

    python3 scripts/soak.py --minutes 30 --peers 4 --kill-every 180

Every peer is a `nerts-lan host|join --headless` process on 127.0.0.1 with its own data folder
(so a restarted peer keeps its peer id and its match log). Any peer may be the one killed, the host
too: it comes back with `join`, as a player would, and finds its table advertised by the member
that took the host's part. The match target is set out of reach
so the table plays for the whole run. At the end (and every ``--report-every`` seconds) it prints:

- rounds played (the highest round every live peer finished) and the rounds each peer reported;
- hashes compared: for every round, the state hash each peer printed; a round where two peers
  printed different hashes is a divergence (must be 0);
- restarts done, and how long each restarted peer took to be back at the table;
- memory: the resident size of every peer over time (from /proc), to spot a leak.

Exit status 0 when no divergence was seen and every restarted peer came back, else 1.
Add ``--json FILE`` to keep the figures.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from soaklib import compare_hashes, cpu_seconds, resident_kib, without_host_options

from nerts_lan.lab.peerprocess import PeerProcess

LOOPBACK = "127.0.0.1"
BACK_WITHIN = 60.0
"""Seconds a restarted peer has to be back at the table before it counts as lost."""


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="nerts-soak-"))
    rng = random.Random(args.seed)
    soak = Soak(work, args)
    started = time.monotonic()
    try:
        soak.start()
        next_kill = started + args.kill_every
        next_report = started + args.report_every
        end = started + args.minutes * 60
        while time.monotonic() < end:
            time.sleep(1.0)
            soak.sample_memory()
            now = time.monotonic()
            if now >= next_kill and args.kill_every > 0:
                soak.crash_and_restart(rng.choice(soak.peers))
                next_kill = now + args.kill_every
            if now >= next_report:
                soak.report(final=False)
                next_report = now + args.report_every
            ended = soak.ended()
            if ended:
                print(f"soak: {ended} exited by itself; stopping early", flush=True)
                break
    except KeyboardInterrupt:
        print("soak: interrupted", flush=True)
    finally:
        soak.stop()
    figures = soak.report(final=True)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0 if figures["divergences"] == 0 and figures["restarts_not_back"] == 0 else 1


# --- the peers -----------------------------------------------------------------------------------


@dataclass
class Peer:
    """One headless peer; ``rounds`` maps a round number to the hash it printed."""

    name: str
    folder: Path
    command: list[str]
    process: PeerProcess | None = None
    rounds: dict[int, str] = field(default_factory=dict)
    memory: list[tuple[float, int]] = field(default_factory=list)
    cpu_seconds: float = 0.0
    """CPU time of this peer's earlier processes (killed ones); the live one is added on report."""
    restarts: int = 0
    errors: list[str] = field(default_factory=list)


class Soak:
    def __init__(self, work: Path, args: argparse.Namespace) -> None:
        self.work = work
        self.args = args
        self.peers: list[Peer] = []
        self.table_id: str | None = None
        self.started = time.monotonic()
        self.back_times: list[float] = []
        self._pending_back: dict[str, float] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        bot = ["--bot", self.args.bot, "--bot-delay", str(self.args.bot_delay)]
        host = Peer(
            "host",
            self.work / "host",
            [
                "host",
                "--headless",
                "--name",
                "host",
                "--interface",
                LOOPBACK,
                "--table",
                "soak",
                "--players",
                str(self.args.peers),
                "--target",
                "100000",
                *(["--private"] if self.args.private else []),
                *bot,
            ],
        )
        self.peers.append(host)
        self._launch(host)
        hosting = self._wait_for_hosting(host, 30)
        self.table_id = hosting["id"]
        code = ["--code", hosting["code"]] if hosting.get("code") else []
        host.command += code  # a host restarted as a joiner needs the code too
        for index in range(1, self.args.peers):
            joiner = Peer(
                f"peer{index}",
                self.work / f"peer{index}",
                [
                    "join",
                    "--headless",
                    "--name",
                    f"peer{index}",
                    "--interface",
                    LOOPBACK,
                    "--table",
                    self.table_id,
                    *code,
                    *bot,
                ],
            )
            self.peers.append(joiner)
            self._launch(joiner)
        print(f"soak: {self.args.peers} peers at table {self.table_id}, in {self.work}", flush=True)

    def ended(self) -> str | None:
        """The name of a peer whose process ended without being killed, if any."""
        for peer in self.peers:
            if peer.process is not None and not peer.process.running:
                return peer.name
        return None

    def crash_and_restart(self, peer: Peer) -> None:
        if peer.process is not None and peer.process.running:
            peer.cpu_seconds += cpu_seconds(peer.process.pid) or 0.0
            peer.process.kill()
        peer.restarts += 1
        with self._lock:
            self._pending_back[peer.name] = time.monotonic()
        print(f"soak: {self._clock()} killed {peer.name}; restarting it", flush=True)
        if peer.command[0] == "host":
            # The host's laptop comes back to its table, which another member now advertises.
            assert self.table_id is not None
            peer.command = ["join", *peer.command[1:]]
            table = peer.command.index("--table")
            peer.command[table + 1] = self.table_id
            peer.command = without_host_options(peer.command)
        self._launch(peer)

    def sample_memory(self) -> None:
        now = time.monotonic() - self.started
        for peer in self.peers:
            if peer.process is not None and peer.process.running:
                rss = resident_kib(peer.process.pid)
                if rss is not None and (not peer.memory or now - peer.memory[-1][0] >= 30):
                    peer.memory.append((now, rss))

    def stop(self) -> None:
        for peer in self.peers:
            if peer.process is not None and peer.process.running:
                peer.cpu_seconds += cpu_seconds(peer.process.pid) or 0.0
                peer.process.terminate()  # all at once: they leave the table together
        for peer in self.peers:
            if peer.process is not None:
                peer.process.stop()

    def report(self, final: bool) -> dict[str, Any]:
        with self._lock:
            hashes = compare_hashes({p.name: dict(p.rounds) for p in self.peers})
            still_pending = dict(self._pending_back)
        # A peer restarted just before the end has had no time to come back: not counted.
        now = time.monotonic()
        not_back = sum(1 for since in still_pending.values() if now - since > BACK_WITHIN)
        figures: dict[str, Any] = {
            "minutes": round((time.monotonic() - self.started) / 60, 1),
            "peers": len(self.peers),
            "rounds_played": hashes.rounds_played,
            "rounds_reported": {p.name: len(p.rounds) for p in self.peers},
            "hashes_compared": hashes.compared,
            "divergences": len(hashes.diverged_rounds),
            "diverged_rounds": hashes.diverged_rounds,
            "restarts": sum(p.restarts for p in self.peers),
            "restarts_not_back": not_back,
            "back_seconds": [round(s, 1) for s in self.back_times],
            "memory_kib": {
                p.name: {
                    "first": p.memory[0][1],
                    "last": p.memory[-1][1],
                    "peak": max(m for _, m in p.memory),
                }
                for p in self.peers
                if p.memory
            },
            "cpu_percent": {
                p.name: round(100 * self._cpu_of(p) / max(1.0, time.monotonic() - self.started), 1)
                for p in self.peers
            },
            "errors": {p.name: p.errors[-3:] for p in self.peers if p.errors},
        }
        title = "final" if final else "so far"
        print(f"soak ({title}): {json.dumps(figures)}", flush=True)
        return figures

    # --- helpers --------------------------------------------------------------------------------

    def _launch(self, peer: Peer) -> None:
        peer.process = PeerProcess(
            peer.command,
            peer.folder,
            stderr_file=peer.folder / "stderr.txt",
            on_record=lambda record: self._read(peer, record),
        )

    def _read(self, peer: Peer, record: dict[str, Any]) -> None:
        """One JSON line of ``peer`` (from its reader thread)."""
        event = record.get("event")
        with self._lock:
            if event == "round_over" and isinstance(record.get("round"), int):
                peer.rounds[record["round"]] = str(record.get("state_hash"))
            elif event == "joined":
                since = self._pending_back.pop(peer.name, None)
                if since is not None:
                    self.back_times.append(time.monotonic() - since)
            elif event == "error":
                peer.errors.append(str(record.get("message")))

    def _wait_for_hosting(self, host: Peer, timeout: float) -> dict[str, Any]:
        assert host.process is not None
        try:
            return host.process.wait_for("hosting", timeout)
        except AssertionError:
            raise SystemExit(
                f"soak: the host printed no 'hosting' line within {timeout} s"
            ) from None

    def _cpu_of(self, peer: Peer) -> float:
        live = 0.0
        if peer.process is not None and peer.process.running:
            live = cpu_seconds(peer.process.pid) or 0.0
        return peer.cpu_seconds + live

    def _clock(self) -> str:
        return f"{(time.monotonic() - self.started) / 60:5.1f} min"


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--peers", type=int, default=4, help="peers at the table (2-8)")
    parser.add_argument(
        "--kill-every", type=float, default=180.0, metavar="SECONDS", help="0: never"
    )
    parser.add_argument("--report-every", type=float, default=300.0, metavar="SECONDS")
    parser.add_argument("--bot", default="hard", choices=["easy", "medium", "hard", "instant"])
    parser.add_argument("--bot-delay", type=float, default=0.3, metavar="SCALE")
    parser.add_argument(
        "--private", action="store_true", help="a table with a code: every frame authenticated"
    )
    parser.add_argument("--seed", type=int, default=1, help="which peer is killed when")
    parser.add_argument("--workdir", default=None, help="keep the peers' folders here")
    parser.add_argument("--json", default=None, metavar="FILE", help="write the final figures")
    args = parser.parse_args(argv)
    if not 2 <= args.peers <= 8:
        parser.error("--peers must be from 2 to 8")
    if args.minutes <= 0:
        parser.error("--minutes must be positive")
    return args


if __name__ == "__main__":
    sys.exit(main())
