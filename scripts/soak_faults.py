"""Fault soak (not part of the suite; root only): bots play a private table on 4 hosts in network
namespaces for N minutes while, every minute or two (a seeded schedule), one fault strikes:

- ``one_way_cut``: host B drops every packet from host A (iptables in B's namespace), 3-30 s;
- ``blip``: a host's link goes down for 1-3 s; ``long_cut``: for 5-20 s;
- ``stop``: SIGSTOP of a peer (the host included), SIGCONT 1-10 s later;
- ``kill``: kill -9 of a peer and a restart with its own original command (the host first: it is
  restarted with its ``host`` command, as a player would).

All the while a stranger on a fifth host (``stranger.py``) guesses the table's code and holds
hundreds of idle connections (a valid hello then nothing, or nothing at all).

    sudo PYTHONPATH=$PWD python3 scripts/soak_faults.py --minutes 30 --seed 1 --json soak.json

After each heal (or SIGCONT, or restart) it measures how long the struck peers take to be back at
the table: running, joined, no other peer's last word about them being ``peer_gone`` (a
``peer_returned`` ends an exclusion), their rounds level with the others' (a round's start or
end printed within 3 s of the others'), all held for 5 s (``--steady``); at least one round event
after the heal shows that they follow the play. A peer not back within 60 s (``--watch``) is
restarted (the host as a joiner of the table: its own command may open a second one) so the soak
goes on.
It reads the peers' headless lines: ``hosting``, ``table_found`` and ``back_to_table`` (the
table's id; a process that prints none counts as at the soak's table), ``joined`` (the peer id),
``round_started`` and ``round_over`` (rounds and hashes), ``peer_gone``, ``peer_left`` and
``peer_returned``.

Printed every ``--report-every`` seconds and at the end (``--json FILE`` keeps the end's):
divergences (rounds whose state hashes differ between peers: must be 0), the return time of
every struck peer and those not back within 10 s (with what their standard error said), rounds
played, open descriptors of every peer over time (the host's as a series), resident memory, CPU
and the machine's load. Exit status 1 on a divergence, a peer not back within 10 s or a peer
that ended by itself; else 0. Namespaces, iptables rules and processes are removed on every way
out (the end, Ctrl-C, SIGTERM, an error).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from soaklib import (
    compare_hashes,
    cpu_seconds,
    open_descriptors,
    resident_kib,
    without_host_options,
)

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # NetLab lives with the tests

from nerts_lan.lab.peerprocess import PeerProcess  # noqa: E402

HOSTS = 4
BACK_WITHIN = 10.0
"""Seconds after a heal within which a struck peer must be back at the table."""
WATCH = 60.0
"""Seconds after a heal the soak waits for a struck peer before it restarts it (``--watch``)."""
STEADY = 5.0
"""Seconds a peer must stay at the table to count as back (``--steady``)."""
LAG = 3.0
"""Seconds a peer may take to print a round's start or end after another peer did, before it
counts as behind the table."""
KINDS = ("one_way_cut", "blip", "long_cut", "stop", "kill")
DURATIONS = {
    "one_way_cut": (3.0, 30.0),
    "blip": (1.0, 3.0),
    "long_cut": (5.0, 20.0),
    "stop": (1.0, 10.0),
    "kill": (0.0, 0.0),
}
TICK = 0.25


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    if getattr(os, "geteuid", None) is None or os.geteuid() != 0:
        print("soak_faults: network namespaces need root on Linux", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _exit_on_signal)
    signal.signal(signal.SIGHUP, _exit_on_signal)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="nerts-soak-faults-"))
    soak = FaultSoak(work, args)
    interrupted = False
    try:
        soak.run()
    except KeyboardInterrupt:
        interrupted = True
        print("soak_faults: interrupted", flush=True)
    finally:
        soak.close()
    figures = soak.report(final=True)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    failed = figures["divergences"] or figures["not_back_within_10s"] or figures["crashes"]
    return 1 if failed else 130 if interrupted else 0


# --- the peers -----------------------------------------------------------------------------------


@dataclass
class Member:
    """One laptop at the table: its namespace, its data folder, its own command, and what its
    present process printed."""

    name: str
    host: int
    folder: Path
    command: list[str]
    """Its own original command: a restart runs it again."""
    process: PeerProcess | None = None
    peer_id: str | None = None
    table_id: str | None = None
    """The table the present process is at (from its hosting or table_found line)."""
    joined_at: float | None = None
    """When the present process printed ``joined``."""
    views: dict[str, tuple[float, str]] = field(default_factory=dict)
    """The present process's last word about each other peer: (when, gone or returned)."""
    rounds: dict[int, str] = field(default_factory=dict)
    """Round number -> state hash, for the soak's table, across restarts."""
    progress: list[tuple[float, int]] = field(default_factory=list)
    """(when, round number) of every round_started and round_over of the present process."""
    stopped: bool = False
    expected_exit: bool = False
    restarts: int = 0
    cpu_seconds: float = 0.0
    memory: list[tuple[float, int]] = field(default_factory=list)
    descriptors: list[tuple[float, int]] = field(default_factory=list)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.running

    @property
    def stderr_file(self) -> Path:
        return self.folder / "stderr.txt"


@dataclass
class Fault:
    kind: str
    victims: list[str]
    detail: str
    started: float
    seconds: float
    healed: float | None = None
    back: dict[str, float | None] = field(default_factory=dict)
    """Seconds from the heal until each victim was back (None: not within ``WATCH``)."""
    excluded: set[str] = field(default_factory=set)
    recovered: list[str] = field(default_factory=list)
    stderr_from: dict[str, int] = field(default_factory=dict)


@dataclass
class Return:
    """How a struck peer comes back after the heal."""

    healed: float
    back: float | None = None
    """Seconds from the heal until it was back (None: not yet)."""
    behind: bool = False
    caught_up: float = 0.0
    """When it last caught up with the table's rounds (0: it was never behind)."""
    followed: bool = False
    """It has printed a round event level with the others since the heal."""


class FaultSoak:
    def __init__(self, work: Path, args: argparse.Namespace) -> None:
        self.work = work
        self.args = args
        self.rng = random.Random(args.seed)
        self.code = "".join(self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(4))
        self.lab: Any = None
        self.members: list[Member] = []
        self.stranger: Stranger | None = None
        self.table_id: str | None = None
        self.playing = False
        """A round started (the table had all its players)."""
        self.started = time.monotonic()
        self.faults: list[Fault] = []
        self.current: Fault | None = None
        self.failures: list[dict[str, Any]] = []
        self.crashes: list[dict[str, Any]] = []
        self.unexpected_gone: list[dict[str, Any]] = []
        self._unexpected_since: list[float] = []
        """When each of ``unexpected_gone`` was printed."""
        self.loads: list[tuple[float, float]] = []
        self._lock = threading.Lock()
        self._decks: dict[str, list[Any]] = {}
        self._next_report = self.started + args.report_every
        self._next_sample = self.started

    # --- the run --------------------------------------------------------------------------------

    def run(self) -> None:
        self._build()
        self._wait_for_table()
        end = self.started + self.args.minutes * 60
        next_fault = time.monotonic() + self._interval()
        while time.monotonic() < end and len(self.faults) < self.args.faults:
            self.tick()
            if time.monotonic() >= next_fault:
                fault = self._strike()
                pause = min(10.0, self.args.every[0])  # the table settles before the next
                next_fault = max(fault.started + self._interval(), time.monotonic() + pause)

    def tick(self) -> None:
        """A quarter second of the soak: samples, reports, and peers that ended by themselves."""
        time.sleep(TICK)
        now = time.monotonic()
        if now >= self._next_sample:
            self._sample(now)
            self._next_sample = now + 5.0
        if now >= self._next_report:
            self.report(final=False)
            self._next_report = now + self.args.report_every
        for member in self.members:
            if member.process is not None and not member.running and not member.expected_exit:
                self._crashed(member)

    def close(self) -> None:
        """Heal, stop every process, remove the namespaces: on every way out."""
        for member in self.members:
            if member.stopped and member.running:
                assert member.process is not None
                os.kill(member.process.pid, signal.SIGCONT)
            member.expected_exit = True
            if member.running:
                assert member.process is not None
                member.cpu_seconds += cpu_seconds(member.process.pid) or 0.0
                member.process.terminate()  # all at once: they leave the table together
        if self.stranger is not None:
            self.stranger.stop()
        for member in self.members:
            if member.process is not None:
                member.process.stop()
        if self.lab is not None:
            self.lab.close()

    # --- faults ---------------------------------------------------------------------------------

    def _strike(self) -> Fault:
        kind = self._draw("kinds", list(self.args.kinds))
        low, high = DURATIONS[kind]
        if self.args.shortest:
            high = low
        seconds = round(self.rng.uniform(low, high), 1)
        victims = self._victims(kind)
        detail = f"{victims[0]} -> {victims[1]}" if kind == "one_way_cut" else victims[0]
        fault = Fault(kind, victims, detail, time.monotonic(), seconds)
        for name in victims:
            fault.stderr_from[name] = _size(self._member(name).stderr_file)
        with self._lock:
            self.current = fault
            self.faults.append(fault)
        print(f"soak_faults: {self._clock()} {kind} {detail} for {seconds} s", flush=True)
        try:
            with self._applied(fault):
                self._wait(seconds)
        finally:
            fault.healed = time.monotonic()
        self._watch(fault)
        with self._lock:
            self.current = None
        return fault

    @contextlib.contextmanager
    def _applied(self, fault: Fault) -> Iterator[None]:
        """The fault in place for the body of the ``with``; healed however it ends."""
        struck = [self._member(name) for name in fault.victims]
        if fault.kind == "one_way_cut":
            source, target = struck
            self.lab.drop_from(target.host, source.host)
            try:
                yield
            finally:
                self.lab.undrop(target.host, source.host)
        elif fault.kind in ("blip", "long_cut"):
            self.lab.cut(struck[0].host)
            try:
                yield
            finally:
                self.lab.heal(struck[0].host)
        elif fault.kind == "stop":
            with self._stopped(struck[0]):
                yield
        else:
            self._kill(struck[0])
            yield
            self._launch(struck[0], struck[0].command)

    @contextlib.contextmanager
    def _stopped(self, member: Member) -> Iterator[None]:
        assert member.process is not None
        pid = member.process.pid
        member.stopped = True
        os.kill(pid, signal.SIGSTOP)
        try:
            yield
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
            member.stopped = False

    def _watch(self, fault: Fault) -> None:
        """Wait until every struck peer is back at the table (or ``WATCH`` passes)."""
        assert fault.healed is not None
        returns = {name: Return(fault.healed) for name in fault.victims}
        while time.monotonic() < fault.healed + self.args.watch:
            self.tick()
            with self._lock:
                for name, watched in returns.items():
                    if watched.back is None:
                        self._follow(self._member(name), watched, set(fault.victims))
            if all(watched.back is not None for watched in returns.values()):
                break
        for name, watched in returns.items():
            fault.back[name] = watched.back
            if watched.back is None or watched.back > BACK_WITHIN:
                self._not_back(fault, self._member(name), watched.back)
            if watched.back is None:
                self._recover(fault, self._member(name))
        shown = {name: ("never" if s is None else s) for name, s in fault.back.items()}
        print(f"soak_faults: {self._clock()} back after heal (s): {shown}", flush=True)

    def _follow(self, member: Member, watched: Return, struck: set[str]) -> None:
        """One look at a struck peer (under the lock): back once it is at the table, has played
        a round event level with the others since the heal, and is not behind them, for
        ``STEADY`` seconds. It came back when the last of these became true."""
        now = time.monotonic()
        behind = self._table_round(now - LAG, struck) > _round_of(member, now)
        if behind:
            watched.behind = True
        elif watched.behind:
            watched.caught_up = member.progress[-1][0]
            watched.behind = False
        watched.followed = watched.followed or any(
            moment > watched.healed and number >= self._table_round(moment, struck)
            for moment, number in member.progress
        )
        since = self._at_table_since(member)
        if since is None or behind or not watched.followed:
            return
        start = max(since, watched.caught_up, watched.healed)
        if now - start >= self.args.steady:
            watched.back = round(start - watched.healed, 2)

    def _table_round(self, moment: float, struck: set[str]) -> int:
        """The highest round any peer not struck had started or ended by ``moment``."""
        return max((_round_of(m, moment) for m in self.members if m.name not in struck), default=-1)

    def _not_back(self, fault: Fault, member: Member, back: float | None) -> None:
        self.failures.append(
            {
                "fault": fault.kind,
                "detail": fault.detail,
                "fault_at_min": self._minutes(fault.started),
                "fault_seconds": fault.seconds,
                "peer": member.name,
                "back_s": "never" if back is None else back,
                "excluded": member.name in fault.excluded,
                "state": (
                    self._state_of(member, set(fault.victims))
                    if back is None
                    else f"back {back} s after the heal: over the {BACK_WITHIN:g} s limit"
                ),
                "printed": [r for r in self._printed(member) if "round" not in r.get("event", "")],
                "stderr": self._stderr_since(member, fault.stderr_from.get(member.name, 0)),
            }
        )

    def _state_of(self, member: Member, struck: set[str]) -> str:
        """Where a peer that is not back stands, in a line."""
        with self._lock:
            if not member.running:
                return "not running"
            if not self._at_soak_table(member):
                return f"at another table ({member.table_id}), not the soak's ({self.table_id})"
            if member.joined_at is None:
                return "its present process never printed joined"
            saying_gone = [
                o.name
                for o in self.members
                if member.peer_id and o.views.get(member.peer_id, (0, ""))[1] == "gone"
            ]
            now = time.monotonic()
            mine, table = _round_of(member, now), self._table_round(now, struck)
            last = member.progress[-1][0] if member.progress else None
        quiet = f"{now - last:.0f} s ago" if last is not None else "never"
        gone = (
            f"{', '.join(saying_gone)} printed peer_gone for it and no peer_returned since"
            if saying_gone
            else "no peer says it is gone right now"
        )
        return (
            f"{gone}; it never stayed at the table and level with the rounds for "
            f"{self.args.steady:g} s in a row; at round {mine}, the others at round {table}; "
            f"its last round event {quiet}"
        )

    def _printed(self, member: Member) -> list[dict[str, Any]]:
        """The last lines the peer's present process printed (not rounds)."""
        if member.process is None:
            return []
        return member.process.lines[-8:]

    def _recover(self, fault: Fault, member: Member) -> None:
        """A peer that did not come back: kill it and start it again, so the soak goes on (the
        host as a joiner of the table: its own command may open a second table)."""
        command = member.command
        if command[0] == "host":
            assert self.table_id is not None
            command = without_host_options(["join", *command[1:]])
            command[command.index("--table") + 1] = self.table_id
        how = "as a joiner" if command is not member.command else "with its own command"
        print(f"soak_faults: {self._clock()} {member.name} not back: restarting it {how}")
        fault.recovered.append(f"{member.name} restarted {how}")
        self._kill(member)
        self._launch(member, command)

    def _victims(self, kind: str) -> list[str]:
        names = [m.name for m in self.members]
        if kind == "one_way_cut":
            return self.rng.sample(names, 2)
        if kind == "kill":  # the host first: its restart is the hardest
            return [self._draw("kill", [names[0], *self.rng.sample(names[1:], len(names) - 1)])]
        return [self._draw(kind, self.rng.sample(names, len(names)))]

    def _draw(self, deck: str, fresh: list[Any]) -> Any:
        """The next card of a seeded deck, dealt anew (in ``fresh``'s order) when empty."""
        cards = self._decks.get(deck)
        if not cards:
            cards = self._decks[deck] = list(fresh)
            if deck == "kinds":
                self.rng.shuffle(cards)
        return cards.pop(0)

    def _interval(self) -> float:
        low, high = self.args.every
        return self.rng.uniform(low, high)

    def _wait(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.tick()

    # --- the table ------------------------------------------------------------------------------

    def _build(self) -> None:
        from nerts_lan.lab.netlab import NetLab  # the lab itself: a script never imports tests

        self.lab = NetLab(HOSTS + 1)
        print(f"soak_faults: lab {self.lab.tag}, peers' folders in {self.work}", flush=True)
        for index in range(HOSTS):
            name = "host" if index == 0 else f"peer{index}"
            member = Member(name, index, self.work / name, self._command(index, name))
            self.members.append(member)
            if index == 0:
                self._launch(member, member.command)
                self._until(lambda: self.table_id is not None, 30, "the host's hosting line")
            else:
                self._launch(member, member.command)
        self.stranger = Stranger(self.lab, HOSTS, self.work / "stranger", self.args)

    def _command(self, index: int, name: str) -> list[str]:
        common = [
            "--headless",
            "--verbose",
            "--name",
            name,
            "--interface",
            self.lab.address(index),
            "--code",
            self.code,
            "--bot",
            self.args.bot,
            "--bot-delay",
            str(self.args.bot_delay),
        ]
        if index == 0:
            table = ["--table", "soak", "--players", str(HOSTS), "--target", "100000"]
            return ["host", *common, *table]
        assert self.table_id is not None
        return ["join", *common, "--table", self.table_id]

    def _wait_for_table(self) -> None:
        self._until(
            lambda: all(m.joined_at is not None for m in self.members) and self.playing,
            90,
            "round under way with every peer joined",
        )
        print(f"soak_faults: {HOSTS} peers at table {self.table_id} (code {self.code})", flush=True)

    def _until(self, condition: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise SystemExit(f"soak_faults: no {what} within {timeout} s")
            self.tick()

    def _launch(self, member: Member, command: list[str]) -> None:
        with self._lock:
            member.table_id = None
            member.joined_at = None
            member.views = {}
            member.progress = []
            member.expected_exit = False
        if member.process is not None:
            member.restarts += 1
        member.process = PeerProcess(
            command,
            member.folder,
            prefix=self.lab.prefix(member.host),
            env={"PYTHONPATH": str(ROOT)},
            stderr_file=member.stderr_file,
            on_record=lambda record: self._read(member, record),
        )

    def _kill(self, member: Member) -> None:
        member.expected_exit = True
        if member.process is not None and member.running:
            member.cpu_seconds += cpu_seconds(member.process.pid) or 0.0
            member.process.kill()

    def _crashed(self, member: Member) -> None:
        assert member.process is not None
        self.crashes.append(
            {
                "peer": member.name,
                "at_min": self._minutes(time.monotonic()),
                "exit_status": member.process.process.returncode,
                "last_lines": member.process.lines[-3:],
                "stderr": self._stderr_since(member, max(0, _size(member.stderr_file) - 4000)),
            }
        )
        print(f"soak_faults: {self._clock()} {member.name} ended by itself; restarting it")
        self._launch(member, member.command)

    def _read(self, member: Member, record: dict[str, Any]) -> None:
        """One JSON line of ``member``'s present process (from its reader thread)."""
        event = record.get("event")
        now = time.monotonic()
        with self._lock:
            if event == "hosting":
                member.table_id = str(record.get("id"))
                member.peer_id = str(record.get("peer"))
                if self.table_id is None:
                    self.table_id = member.table_id
            elif event in ("table_found", "back_to_table"):
                member.table_id = str(record.get("id"))
            elif event == "joined":
                member.joined_at = now
                member.peer_id = str(record.get("peer"))
            elif event in ("round_started", "round_over") and self._at_soak_table(member):
                self._round_event(member, record, now)
            elif event in ("peer_gone", "peer_left", "peer_returned"):
                self._membership(member, str(record.get("peer")), event, now)

    def _round_event(self, member: Member, record: dict[str, Any], now: float) -> None:
        number = int(record["round"])
        member.progress.append((now, number))
        if record["event"] == "round_over":
            member.rounds[number] = str(record.get("state_hash"))
        else:
            self.playing = True

    def _membership(self, observer: Member, peer: str, event: str, now: float) -> None:
        word = "returned" if event == "peer_returned" else "gone"  # a leave is an absence too
        observer.views[peer] = (now, word)
        struck = self._by_peer_id(peer)
        if struck is None:
            return
        if word == "returned":
            self._unexpected_return(observer, struck, now)
            return
        fault = self.current
        if fault is not None and struck.name in fault.victims:
            fault.excluded.add(struck.name)
        else:  # no fault struck it: the stranger, or a fault's late effect
            self._unexpected_since.append(now)
            self.unexpected_gone.append(
                {
                    "at_min": self._minutes(now),
                    "observer": observer.name,
                    "peer": struck.name,
                    "back_s": None,
                }
            )

    def _unexpected_return(self, observer: Member, struck: Member, now: float) -> None:
        """Say how long an exclusion no fault explains lasted, in the observer's eyes."""
        for gone, since in zip(reversed(self.unexpected_gone), reversed(self._unexpected_since)):
            if gone["observer"] == observer.name and gone["peer"] == struck.name:
                if gone["back_s"] is None:
                    gone["back_s"] = round(now - since, 1)
                return

    def _at_soak_table(self, member: Member) -> bool:
        """Not at another table: a process that printed no table id (a host that rejoins its
        table may print none) is taken to be at the soak's."""
        return member.table_id in (None, self.table_id)

    def _at_table_since(self, member: Member) -> float | None:
        """Since when ``member`` is back at the table (None: it is not): running, joined, at
        the soak's table, and no healthy peer's last word about it is ``peer_gone`` (under the
        lock)."""
        if not member.running or member.stopped or member.joined_at is None:
            return None
        if not self._at_soak_table(member) or member.peer_id is None:
            return None
        since = member.joined_at
        struck = self.current.victims if self.current is not None else []
        for other in self.members:
            if other is member or not other.running or other.stopped or other.name in struck:
                continue
            word = other.views.get(member.peer_id)
            if word is not None:
                if word[1] == "gone":
                    return None
                since = max(since, word[0])
        return since

    # --- figures --------------------------------------------------------------------------------

    def _sample(self, now: float) -> None:
        self.loads.append((now, os.getloadavg()[0]))
        for member in self.members:
            if member.running and member.process is not None:
                pid = member.process.pid
                descriptors = open_descriptors(pid)
                if descriptors is not None:
                    member.descriptors.append((now, descriptors))
                rss = resident_kib(pid)
                if rss is not None:
                    member.memory.append((now, rss))

    def report(self, final: bool) -> dict[str, Any]:
        with self._lock:
            hashes = compare_hashes({m.name: dict(m.rounds) for m in self.members})
            faults = [self._fault_figures(f) for f in self.faults]
        host = self.members[0] if self.members else None
        figures: dict[str, Any] = {
            "minutes": self._minutes(time.monotonic()),
            "seed": self.args.seed,
            "table": self.table_id,
            "load_1min": _spread([load for _, load in self.loads]),
            "cores": os.cpu_count(),
            "rounds_played": hashes.rounds_played,
            "rounds_reported": {m.name: len(m.rounds) for m in self.members},
            "hashes_compared": hashes.compared,
            "divergences": len(hashes.diverged_rounds),
            "diverged_rounds": hashes.diverged_rounds,
            "faults": len(self.faults),
            "back_seconds_by_kind": _back_by_kind(faults),
            "not_back_within_10s": self.failures,
            "crashes": self.crashes,
            "unexpected_peer_gone": self.unexpected_gone,
            "host_descriptors": _series(host.descriptors, self.started) if host else [],
            "descriptors": {m.name: _spread([n for _, n in m.descriptors]) for m in self.members},
            "memory_kib": {m.name: _spread([k for _, k in m.memory]) for m in self.members},
            "cpu_percent": {m.name: self._cpu_percent(m) for m in self.members},
            "restarts": {m.name: m.restarts for m in self.members},
            "stderr_lines": {m.name: _stderr_counts(m.stderr_file) for m in self.members},
            "stranger": self.stranger.last if self.stranger is not None else None,
            "stranger_cpu_percent": self._stranger_cpu(),
            "fault_log": faults,
        }
        if final:
            print("soak_faults (final):\n" + json.dumps(figures, indent=2), flush=True)
            print(_summary(figures), flush=True)
        else:
            brief = {k: v for k, v in figures.items() if k not in ("fault_log", "host_descriptors")}
            brief["not_back_within_10s"] = len(self.failures)
            print(f"soak_faults (so far): {json.dumps(brief)}", flush=True)
        return figures

    def _fault_figures(self, fault: Fault) -> dict[str, Any]:
        return {
            "kind": fault.kind,
            "detail": fault.detail,
            "at_min": self._minutes(fault.started),
            "seconds": fault.seconds,
            "back_s": {n: ("never" if s is None else s) for n, s in fault.back.items()},
            "excluded": sorted(fault.excluded),
            "recovered": fault.recovered,
        }

    def _cpu_percent(self, member: Member) -> float:
        spent = member.cpu_seconds
        if member.running and member.process is not None:
            spent += cpu_seconds(member.process.pid) or 0.0
        return round(100 * spent / max(1.0, time.monotonic() - self.started), 1)

    def _stranger_cpu(self) -> float | None:
        if self.stranger is None:
            return None
        spent = cpu_seconds(self.stranger.process.pid)
        if spent is not None:
            self.stranger.cpu_seconds = spent
        return round(100 * self.stranger.cpu_seconds / max(1.0, time.monotonic() - self.started), 1)

    # --- helpers --------------------------------------------------------------------------------

    def _member(self, name: str) -> Member:
        return next(m for m in self.members if m.name == name)

    def _by_peer_id(self, peer: str) -> Member | None:
        return next((m for m in self.members if m.peer_id == peer), None)

    def _stderr_since(self, member: Member, offset: int) -> list[str]:
        """What the peer wrote on standard error since ``offset``, without the stranger's noise:
        its first 10 and last 20 lines."""
        try:
            with member.stderr_file.open("rb") as file:
                file.seek(offset)
                text = file.read().decode(errors="replace")
        except OSError:
            return []
        stranger = self.lab.address(HOSTS) if self.lab is not None else "-"
        lines = [line[:300] for line in text.splitlines() if stranger not in line]
        noise = len(text.splitlines()) - len(lines)
        if len(lines) > 30:
            lines = [*lines[:10], f"({len(lines) - 30} lines left out)", *lines[-20:]]
        return [*lines, f"(and {noise} lines about the stranger's connections)"]

    def _minutes(self, moment: float) -> float:
        return round((moment - self.started) / 60, 2)

    def _clock(self) -> str:
        return f"{(time.monotonic() - self.started) / 60:5.1f} min"


class Stranger:
    """``stranger.py`` on its own host, its last JSON line kept in ``last``."""

    def __init__(self, lab: Any, host: int, folder: Path, args: argparse.Namespace) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        command = [
            *lab.prefix(host),
            sys.executable,
            str(Path(__file__).with_name("stranger.py")),
            "--interface",
            lab.address(host),
            "--table",
            "soak",
            "--guessers",
            str(args.guessers),
            "--idle",
            str(args.idle),
            "--silent",
            str(args.silent),
        ]
        self.last: dict[str, Any] | None = None
        self.cpu_seconds = 0.0
        with (folder / "stderr.txt").open("a", encoding="utf-8") as stderr:
            self.process = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env={**os.environ, "PYTHONPATH": str(ROOT), "NERTS_LAN_DATA": str(folder)},
            )
        threading.Thread(target=self._read, daemon=True).start()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with contextlib.suppress(json.JSONDecodeError):
                self.last = json.loads(line)


def _summary(figures: dict[str, Any]) -> str:
    descriptors = figures["descriptors"].get("host") or {}
    return (
        f"soak_faults: {figures['minutes']} min, {figures['faults']} faults, "
        f"{len(figures['not_back_within_10s'])} peers not back within {BACK_WITHIN:g} s, "
        f"{len(figures['crashes'])} crashes, {figures['divergences']} divergences in "
        f"{figures['rounds_played']} rounds ({figures['hashes_compared']} hashes compared), "
        f"host descriptors peak {descriptors.get('peak')}, load {figures['load_1min']}"
    )


def _round_of(member: Member, moment: float) -> int:
    """The highest round ``member``'s present process had started or ended by ``moment``."""
    return max((number for when, number in member.progress if when <= moment), default=-1)


def _stderr_counts(path: Path) -> dict[str, int]:
    """Lines of a peer's standard error worth a look: all, tracebacks, and asyncio's warning
    for writes into a connection already lost."""
    try:
        lines = path.read_text(errors="replace", encoding="utf-8").splitlines()
    except OSError:
        return {}
    return {
        "lines": len(lines),
        "tracebacks": sum(line.startswith("Traceback") for line in lines),
        "writes_after_connection_lost": sum("socket.send() raised" in line for line in lines),
    }


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _spread(values: list[float] | list[int]) -> dict[str, float] | None:
    if not values:
        return None
    return {"first": values[0], "last": values[-1], "peak": max(values)}


def _series(samples: list[tuple[float, int]], started: float) -> list[list[float]]:
    """One sample every 30 s or so: [minute, value]."""
    kept: list[list[float]] = []
    for moment, value in samples:
        minute = round((moment - started) / 60, 1)
        if not kept or minute - kept[-1][0] >= 0.5:
            kept.append([minute, value])
    return kept


def _back_by_kind(faults: list[dict[str, Any]]) -> dict[str, list[Any]]:
    by_kind: dict[str, list[Any]] = {}
    for fault in faults:
        by_kind.setdefault(fault["kind"], []).extend(fault["back_s"].values())
    return by_kind


def _exit_on_signal(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # the same clean way out as Ctrl-C


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument(
        "--every",
        type=float,
        nargs=2,
        default=[60.0, 120.0],
        metavar=("MIN", "MAX"),
        help="seconds between two faults' starts (60 120)",
    )
    parser.add_argument(
        "--kinds", nargs="+", choices=KINDS, default=list(KINDS), help="the faults to draw from"
    )
    parser.add_argument(
        "--shortest", action="store_true", help="every fault at its shortest (a quick check)"
    )
    parser.add_argument(
        "--faults", type=int, default=1_000_000, metavar="N", help="stop after N faults"
    )
    parser.add_argument(
        "--watch",
        type=float,
        default=WATCH,
        metavar="SECONDS",
        help=f"how long a struck peer has to come back before it is restarted ({WATCH:g})",
    )
    parser.add_argument(
        "--steady",
        type=float,
        default=STEADY,
        metavar="SECONDS",
        help=f"how long a peer must stay at the table to count as back ({STEADY:g})",
    )
    parser.add_argument("--report-every", type=float, default=300.0, metavar="SECONDS")
    parser.add_argument("--bot", default="hard", choices=["easy", "medium", "hard", "instant"])
    parser.add_argument("--bot-delay", type=float, default=0.3, metavar="SCALE")
    parser.add_argument("--guessers", type=int, default=20, help="the stranger's code guessers")
    parser.add_argument("--idle", type=int, default=300, help="the stranger's idle hellos")
    parser.add_argument("--silent", type=int, default=100, help="the stranger's silent links")
    parser.add_argument("--seed", type=int, default=1, help="which fault strikes whom, and when")
    parser.add_argument("--workdir", default=None, help="keep the peers' folders here")
    parser.add_argument("--json", default=None, metavar="FILE", help="write the final figures")
    args = parser.parse_args(argv)
    if args.minutes <= 0:
        parser.error("--minutes must be positive")
    if not 0 < args.every[0] <= args.every[1]:
        parser.error("--every needs 0 < MIN <= MAX")
    return args


if __name__ == "__main__":
    sys.exit(main())
