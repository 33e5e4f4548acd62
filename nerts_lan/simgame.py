"""The real game on the simulated network: every simulated peer runs the table fold, its replica
and bots, over ``net.simnet`` (seeded delays, jitter, loss, pauses, deaths and returns).

It is how the suite proves that every peer computes the same game under any interleaving, and
how ``nerts-lan bench`` measures time-to-stable and rollbacks with many peers. ``play_game``
runs one seeded game and returns what each peer ended with.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any

from net.core import CoreConfig, Phase
from net.events import (
    DivergenceDetected,
    EntriesRetracted,
    EntriesStabilized,
    EntryReceived,
    Event,
    Expelled,
    MemberExcluded,
    MemberJoined,
    MemberLeft,
    MemberReturned,
    SnapshotInstalled,
    SnapshotRequested,
)
from net.simnet import LinkModel, SimNetwork, SimNode

from .bots import Bot
from .engine import Options
from .replica import ActionRejected, RoundEnded
from .session import RoundStarted
from .table import CommitDue, LobbyChanged, RevealDue, TableMachine, TableSettings, commit_digest

__all__ = ["GameApp", "GameResult", "bench_simgame", "play_game"]


@dataclass
class GameApp:
    """One simulated peer's seat: the table fold, duties, and an instant bot for each seat it
    plays (a simulated reaction time between two actions of a bot)."""

    peer: str
    founders: tuple[str, ...]
    settings: TableSettings
    rng: random.Random
    think: tuple[float, float] = (0.005, 0.03)
    stop_after_round: int = 2
    hash_every: int = 16
    machine: TableMachine = field(init=False)
    stable_log: list[tuple[tuple[int, str], Any]] = field(default_factory=list)
    verdicts: dict[tuple[int, str], bool] = field(default_factory=dict)
    """Per stable action: accepted (True) or rejected (False)."""
    round_digests: dict[int, bytes] = field(default_factory=dict)
    local_actions: int = 0
    rolled_back: int = 0
    """Local actions shown at once and then taken back because a remote one came first."""
    snapped_back_views_ok: bool = True
    causality_errors: int = 0
    seen_max: tuple[int, str] = (0, "")
    caught_up: bool = False
    divergences: int = 0
    """State-hash disagreements this peer saw: a fold that is not deterministic shows here."""
    submitted_at: dict[tuple[int, str], float] = field(default_factory=dict)
    stable_at: dict[tuple[int, str], float] = field(default_factory=dict)
    _bots: dict[str, Bot] = field(default_factory=dict)
    _thinking: set[str] = field(default_factory=set)
    _nonces: dict[int, bytes] = field(default_factory=dict)
    _sat: bool = False
    _readied: bool = False
    _started: bool = False
    _greeted: bool = False
    _round_now: int = 0

    def on_start(self, node: SimNode) -> None:
        self.machine = TableMachine(self.peer)
        self._bots, self._thinking, self._nonces = {}, set(), {}
        self._sat = self._readied = self._started = self._greeted = False
        if node.core.phase is Phase.JOINING:
            return  # a joining or returning peer waits for its snapshot
        for founder in node.core.members:
            self.machine.member_joined(founder)
        if self.peer == self.founders[0]:
            self._submit(node, {"k": "create", "settings": self.settings.to_wire()})
        self._submit(node, {"k": "hello", "name": self.peer})
        self._greeted = True
        self._pump(node)

    def on_events(self, node: SimNode, events: list[Event]) -> None:
        machine = self.machine
        for event in events:
            if isinstance(event, EntryReceived):
                self.seen_max = max(self.seen_max, event.entry.key)
                machine.tentative_entry(event.entry.key, event.entry.payload)
            elif isinstance(event, EntriesStabilized):
                for offset, entry in enumerate(event.entries):
                    self.seen_max = max(self.seen_max, entry.key)
                    self._stable(entry.key, entry.payload)
                    self.stable_at[entry.key] = node.now
                    index = event.first_index + offset
                    if index % self.hash_every == 0 and node.core.phase is Phase.MEMBER:
                        node.report_state_hash(index, machine.digest())
            elif isinstance(event, EntriesRetracted):
                machine.retracted([e.key for e in event.entries])
            elif isinstance(event, MemberJoined | MemberReturned):
                if any(seat.owner == event.peer for seat in machine.seats):
                    machine.member_returned(event.peer)
                else:
                    machine.member_joined(event.peer)
            elif isinstance(event, MemberLeft | MemberExcluded):
                machine.member_gone(event.peer)
            elif isinstance(event, SnapshotRequested):
                node.provide_snapshot(event.peer, event.stable_index, machine.snapshot())
            elif isinstance(event, SnapshotInstalled):
                self.machine = machine = TableMachine.from_snapshot(self.peer, event.snapshot)
                self.caught_up = True
                self.stable_log = [((0, "snapshot"), event.stable_index)]
                for entry in event.tentative:
                    self.seen_max = max(self.seen_max, entry.key)
                    machine.tentative_entry(entry.key, entry.payload)
            elif isinstance(event, Expelled):
                node.sim.call_later(0.05, lambda: node.sim.restart(self.peer))
            elif isinstance(event, DivergenceDetected):
                self.divergences += 1
            self._pump(node)
        if not self._greeted and node.core.ready:
            # A joiner says hello once it is in: its name, and a nudge to take a seat.
            self._greeted = True
            self._submit(node, {"k": "hello", "name": self.peer})
            self._lobby(node)

    # --- helpers -------------------------------------------------------------------------------

    def _stable(self, key: tuple[int, str], payload: Any) -> None:
        machine = self.machine
        replica = machine.replica
        before = replica.stable if replica is not None else None
        is_action = isinstance(payload, dict) and payload.get("k") == "act"
        machine.stable_entry(key, payload)
        self.stable_log.append((key, payload))
        if is_action and replica is not None and machine.replica is replica:
            self.verdicts[key] = replica.stable is not before

    def _submit(self, node: SimNode, payload: dict[str, Any]) -> None:
        seen = self.seen_max
        entry = node.submit(payload)
        if entry is None:
            return
        if entry.key <= seen:
            self.causality_errors += 1
        if payload.get("k") == "act":
            self.local_actions += 1
            self.submitted_at[entry.key] = node.now
        self.machine.tentative_entry(entry.key, entry.payload)

    def _pump(self, node: SimNode) -> None:
        machine = self.machine
        for event in machine.take_events():
            if isinstance(event, CommitDue):
                nonce = self.rng.randbytes(32)
                self._nonces[event.round] = nonce
                self._submit(node, {"k": "commit", "r": event.round, "d": commit_digest(nonce)})
            elif isinstance(event, RevealDue) and event.round in self._nonces:
                nonce = self._nonces[event.round]
                self._submit(node, {"k": "reveal", "r": event.round, "n": nonce.hex()})
            elif isinstance(event, LobbyChanged):
                self._lobby(node)
            elif isinstance(event, RoundStarted):
                self._round_now = event.number
            elif isinstance(event, RoundEnded):
                self.round_digests[self._round_now] = event.digest
            elif isinstance(event, ActionRejected) and event.local and event.lost_race_to:
                self.rolled_back += 1
            if machine is not self.machine:
                return
        self._schedule_bots(node)

    def _lobby(self, node: SimNode) -> None:
        machine = self.machine
        if machine.phase != "lobby" or machine.settings is None:
            return
        if self.peer not in machine.members:
            return
        seated = any(seat.owner == self.peer for seat in machine.seats)
        if not seated and not self._sat:
            self._sat = True
            team = self.founders.index(self.peer) // self.settings.per_team
            self._submit(node, {"k": "sit", "team": team % self.settings.teams})
        elif seated and not self._readied:
            self._readied = True
            self._submit(node, {"k": "ready", "on": True})
        every_seat_taken = len(machine.seats) >= self.settings.teams * self.settings.per_team
        everyone_seated = len(machine.members) >= len(self.founders) and all(
            any(s.owner == p for s in machine.seats) for p in machine.members
        )
        if (
            self.peer == machine.host
            and not self._started
            and (every_seat_taken or everyone_seated)
            and machine.can_start() is None
        ):
            self._started = True
            self._submit(node, {"k": "start"})

    def _schedule_bots(self, node: SimNode) -> None:
        machine = self.machine
        if machine.phase != "playing" or machine.round_number > self.stop_after_round:
            return
        for seat in machine.controlled_by(self.peer):
            if seat.player in self._thinking:
                continue
            self._thinking.add(seat.player)
            self._think_later(node, seat.player, self.rng.uniform(*self.think))

    def _act(self, node: SimNode, player: str, generation: int) -> None:
        self._thinking.discard(player)
        if node.generation != generation or node.state == "dead":
            return
        if node.state == "paused" or not node.core.ready:
            # A paused laptop's timers fire once it runs again.
            self._thinking.add(player)
            self._think_later(node, player, 0.05)
            return
        machine = self.machine
        seat = machine.seat_of(player)
        replica = machine.replica
        if (
            seat is None
            or seat.controller != self.peer
            or replica is None
            or machine.phase != "playing"
            or machine.round_number > self.stop_after_round
        ):
            return
        bot = self._bots.get(player)
        if bot is None:
            bot = Bot(player, seat.bot or "hard", seed=f"{self.peer}/{player}", delay_scale=0)
            self._bots[player] = bot
        action = bot.decide(replica.view, node.now)
        if action is not None:
            self._submit(node, {"k": "act", "r": machine.round_number, "a": action.to_wire()})
        self._pump(node)
        if player not in self._thinking:
            self._thinking.add(player)
            self._think_later(node, player, 0.05)  # nothing to do now: look again a little later

    def _think_later(self, node: SimNode, player: str, delay: float) -> None:
        generation = node.generation
        node.sim.call_later(delay, lambda: self._act(node, player, generation))


@dataclass(frozen=True)
class GameResult:
    """What one seeded game ended with, per peer still at the table."""

    network: SimNetwork
    apps: dict[str, GameApp]

    def members(self) -> list[GameApp]:
        return [self.apps[node.peer_id] for node in self.network.members()]


def play_game(
    seed: int,
    peers: int,
    partnership: bool = False,
    link: LinkModel | None = None,
    config: CoreConfig | None = None,
    rounds: int = 1,
    until: float = 30.0,
    faults: list[tuple[float, str, str, float]] | None = None,
    options: Options | None = None,
    join_at: float | None = None,
) -> GameResult:
    """Play ``rounds`` rounds of a seeded game among ``peers`` simulated laptops.

    ``faults`` are (time, kind, peer, duration) with kind ``kill`` (and ``restart`` after
    ``duration`` seconds, if positive) or ``pause``. With ``join_at``, only the first peer founds
    the table and the others join it through the join protocol, close together from that time,
    as laptops joining a table from the lobby do.
    """
    founders = tuple(f"p{i:02d}" for i in range(peers))
    per_team = 2 if partnership else 1
    teams = min(8, (peers + per_team - 1) // per_team)
    settings = TableSettings(
        "sim",
        options or Options(pile=5, target=1000),
        teams=teams,
        per_team=per_team,
        takeover_level="hard",
    )
    rng = random.Random(seed)
    apps: dict[str, GameApp] = {}

    def make(node: SimNode) -> GameApp:
        app = apps.get(node.peer_id)
        if app is None:
            app = GameApp(
                node.peer_id,
                founders,
                settings,
                random.Random(hashlib.sha256(f"{seed}/{node.peer_id}".encode()).digest()),
                stop_after_round=rounds,
            )
            apps[node.peer_id] = app
        return app

    network = SimNetwork(
        founders if join_at is None else founders[:1],
        seed=rng.randrange(2**32),
        core_config=config,
        link=link or LinkModel(delay_min=0.001, delay_max=0.005),
        app_factory=make,
    )
    if join_at is not None:
        when = join_at
        for peer in founders[1:]:
            _schedule_join(network, when, peer)
            when += rng.uniform(0.0, 0.01)
    for when, kind, peer, duration in faults or []:
        _schedule_fault(network, when, kind, peer, duration)
    network.run_until(until)
    return GameResult(network, apps)


def _schedule_fault(
    network: SimNetwork, when: float, kind: str, peer: str, duration: float
) -> None:
    if kind == "kill":
        network.call_at(when, lambda: network.kill(peer))
        if duration > 0:
            network.call_at(when + duration, lambda: network.restart(peer))
    elif kind == "pause":
        network.call_at(when, lambda: network.pause(peer, duration))
    else:
        raise ValueError(f"unknown fault {kind!r}")


def bench_simgame(quick: bool = False) -> dict[str, Any]:
    """12 simulated laptops in pairs (6 teams), 100 ms heartbeats, 1-5 ms one-way delay: the time
    from a bot's action to its being stable on every peer, and how many local actions were shown
    at once and then rolled back because a remote one sorted before them."""
    import time

    games = 1 if quick else 3
    waits: list[float] = []
    local = rolled = 0
    started = time.perf_counter()
    for seed in range(games):
        result = play_game(
            seed,
            12,
            partnership=True,
            config=CoreConfig(),
            rounds=1,
            until=20.0,
            link=LinkModel(delay_min=0.001, delay_max=0.005),
        )
        members = result.members()
        for app in members:
            local += app.local_actions
            rolled += app.rolled_back
            for key, when in app.submitted_at.items():
                times = [other.stable_at.get(key) for other in members]
                if all(t is not None for t in times):
                    waits.append(max(t for t in times if t is not None) - when)
    waits.sort()

    def at(fraction: float) -> float:
        return round(waits[min(len(waits) - 1, int(fraction * len(waits)))] * 1000, 2)

    return {
        "game_12_peers_actions": len(waits),
        "game_12_peers_stable_everywhere_ms": {"p50": at(0.5), "p99": at(0.99)} if waits else {},
        "game_12_peers_rolled_back_share": round(rolled / local, 4) if local else 0.0,
        "game_12_peers_wall_s": round(time.perf_counter() - started, 2),
        "goal": "stable p99 <= 150 ms",
    }


def _schedule_join(network: SimNetwork, when: float, peer: str) -> None:
    network.call_at(when, lambda: network.restart(peer))
