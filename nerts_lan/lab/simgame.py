"""The real game on the simulated network: every simulated peer runs the table peer (the same
``TablePeer`` laptops run: the table fold, its duties, the lobby automation and the bots) over
``net.testing.simnet`` (seeded delays, jitter, loss, pauses, deaths and returns).

It is how the suite proves that every peer computes the same game under any interleaving, and
how ``nerts-lan bench`` measures time-to-stable and rollbacks with many peers. ``play_game``
runs one seeded game and returns what each peer ended with.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from nerts_lan.rules.state import Options
from nerts_lan.table.commands import TableSettings
from nerts_lan.table.effects import (
    Effect,
    Installed,
    Post,
    ProvideSnapshot,
    Rejoin,
    ReportHash,
    Stabilized,
    StartTimer,
    Submit,
    Timer,
    Traced,
)
from nerts_lan.table.peer import PeerOptions, TablePeer
from nerts_lan.table.replica import ActionRejected, RoundEnded
from nerts_lan.table.session import RoundStarted
from net import CoreConfig, Phase
from net.events import (
    DivergenceDetected,
    EntriesStabilized,
    EntryReceived,
    Event,
    SnapshotInstalled,
)
from net.testing import LinkModel, SimNetwork, SimNode

__all__ = ["GameApp", "GameResult", "bench_simgame", "play_game"]

PAUSED_RECHECK = 0.05
"""A paused laptop's timers fire once it runs again: they are looked at this often."""

REJOIN_DELAY = 0.05
"""Seconds between an expulsion and the new incarnation that joins again."""


@dataclass
class GameApp:
    """One simulated laptop: a thin driver that runs its ``TablePeer``'s effects on the simulated
    node and clock, and records what the tests compare between peers."""

    peer: str
    founders: tuple[str, ...]
    settings: TableSettings
    rng: random.Random
    options: PeerOptions
    table: TablePeer = field(init=False)
    stable_log: list[tuple[tuple[int, str], Any]] = field(default_factory=list)
    verdicts: dict[tuple[int, str], bool] = field(default_factory=dict)
    """Per stable action: accepted (True) or rejected (False)."""
    round_digests: dict[int, bytes] = field(default_factory=dict)
    local_actions: int = 0
    rolled_back: int = 0
    """Local actions shown at once and then taken back because a remote one came first."""
    causality_errors: int = 0
    seen_max: tuple[int, str] = (0, "")
    caught_up: bool = False
    divergences: int = 0
    """State-hash disagreements this peer saw: a fold that is not deterministic shows here."""
    submitted_at: dict[tuple[int, str], float] = field(default_factory=dict)
    stable_at: dict[tuple[int, str], float] = field(default_factory=dict)
    _rejoining: bool = False
    _round_now: int = 0

    def on_start(self, node: SimNode) -> None:
        # An expelled peer rejoins with what it knew; a restarted process starts afresh.
        if not self._rejoining:
            self.table = TablePeer(
                self.peer, self.options, lambda: self.rng.randbytes(32), lambda k: node.core.rank(k)
            )
        self._rejoining = False
        if node.core.phase is Phase.JOINING:
            return  # a joining or returning peer waits for its snapshot
        create = self.settings if self.peer == self.founders[0] else None
        self._run(node, self.table.start(sorted(node.core.members), create, node.core.ready))

    def on_events(self, node: SimNode, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, EntryReceived):
                self.seen_max = max(self.seen_max, event.entry.key)
            elif isinstance(event, EntriesStabilized | SnapshotInstalled):
                keys = [e.key for e in getattr(event, "entries", getattr(event, "tentative", ()))]
                self.seen_max = max([self.seen_max, *keys])
            elif isinstance(event, DivergenceDetected):
                self.divergences += 1
        self._run(node, self.table.on_core_events(events, node.core.ready))

    def stable_snapshot(self) -> Any:
        """The stable table now, as this laptop's match log would rebuild it after a crash
        (the simulator keeps it across restarts: ``net.testing.durable``)."""
        return self.table.machine.snapshot()

    def play_now(self, node: SimNode) -> None:
        """This laptop's first seat makes a legal move now, as its player would at the window (a
        flip when it has one): a test's play at a chosen instant, a tie with another, say."""
        move = self.table.a_move()
        if move is not None and node.state == "alive":
            self._run(node, self.table.submit_action(move))

    # --- running the effects -------------------------------------------------------------------

    def _run(self, node: SimNode, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, Submit):
                self._submit(node, effect)
            elif isinstance(effect, ReportHash):
                node.report_state_hash(effect.index, effect.digest)
            elif isinstance(effect, ProvideSnapshot):
                node.provide_snapshot(effect.peer, effect.stable_index, effect.snapshot)
            elif isinstance(effect, StartTimer):
                self._later(node, self.table, effect.timer, effect.delay)
            elif isinstance(effect, Rejoin):
                self._rejoin_later(node)
            else:
                self._record(node, effect)

    def _submit(self, node: SimNode, effect: Submit) -> None:
        seen = self.seen_max
        entry = node.submit(effect.command.to_wire())
        if entry is not None and entry.key <= seen:
            self.causality_errors += 1
        self._run(node, self.table.on_submitted(effect.command, entry))

    def _later(self, node: SimNode, table: TablePeer, timer: Timer, delay: float) -> None:
        node.sim.call_later(delay, lambda: self._fire(node, table, timer))

    def _fire(self, node: SimNode, table: TablePeer, timer: Timer) -> None:
        if table is not self.table or node.state == "dead":
            return  # the process that started it died
        if node.state == "paused":
            self._later(node, table, timer, PAUSED_RECHECK)
            return
        self._run(node, table.on_timer(timer, node.now, node.core.ready))

    def _rejoin_later(self, node: SimNode) -> None:
        generation = node.generation
        node.sim.call_later(REJOIN_DELAY, lambda: self._rejoin(node, generation))

    def _rejoin(self, node: SimNode, generation: int) -> None:
        if node.generation == generation and node.alive:
            self._rejoining = True
            node.sim.restart(self.peer)

    def _record(self, node: SimNode, effect: Effect) -> None:
        """What the tests compare: the stable log and verdicts, the rounds' ends, races lost."""
        if isinstance(effect, Stabilized):
            self.stable_log.append((effect.entry.key, effect.entry.payload))
            self.stable_at[effect.entry.key] = node.now
            if effect.accepted is not None:
                self.verdicts[effect.entry.key] = effect.accepted
        elif isinstance(effect, Installed):
            self.caught_up = True
            self.stable_log = [((0, "snapshot"), effect.stable_index)]
        elif isinstance(effect, Traced) and effect.kind == "submit":
            self.local_actions += 1
            self.submitted_at[effect.key] = node.now
        elif isinstance(effect, Post):
            event = effect.event
            if isinstance(event, RoundStarted):
                self._round_now = event.number
            elif isinstance(event, RoundEnded):
                self.round_digests[self._round_now] = event.digest
            elif isinstance(event, ActionRejected) and event.local and event.lost_race_to:
                self.rolled_back += 1


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
    plays: Sequence[tuple[float, str]] = (),
    rematches: int = 0,
    countdown: int = 0,
) -> GameResult:
    """Play ``rounds`` rounds of a seeded game among ``peers`` simulated laptops.

    ``faults`` are (time, kind, peer, duration) with kind ``kill`` (and ``restart`` after
    ``duration`` seconds, if positive) or ``pause``. With ``join_at``, only the first peer founds
    the table and the others join it through the join protocol, close together from that time,
    as laptops joining a table from the lobby do. At each of ``plays`` (time, peer), that peer
    moves (``GameApp.play_now``). Every peer asks for ``rematches`` rematches (the first ask
    starts one); ``countdown``: the table's, after each deal, in seconds."""
    founders = tuple(f"p{i:02d}" for i in range(peers))
    settings = replace(_sim_settings(peers, partnership, options), countdown=countdown)
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
                replace(_sim_options(node.peer_id, peers, rounds), rematches=rematches),
            )
            apps[node.peer_id] = app
        return app

    network = SimNetwork(
        founders if join_at is None else founders[:1],
        seed=rng.randrange(2**32),
        core_config=config,
        link=link or LinkModel(delay_min=0.001, delay_max=0.005),
        app_factory=make,
        salt=b"sim table %d" % seed,
    )
    if join_at is not None:
        when = join_at
        for peer in founders[1:]:
            _schedule_join(network, when, peer)
            when += rng.uniform(0.0, 0.01)
    for when, kind, peer, duration in faults or []:
        _schedule_fault(network, when, kind, peer, duration)
    for when, peer in plays:
        _schedule_play(network, apps, when, peer)
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


def _schedule_play(network: SimNetwork, apps: dict[str, GameApp], when: float, peer: str) -> None:
    network.call_at(when, lambda: apps[peer].play_now(network.nodes[peer]))


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


def _sim_settings(peers: int, partnership: bool, options: Options | None) -> TableSettings:
    """A seat for every laptop: one per team, or pairs (at most 8 teams)."""
    per_team = 2 if partnership else 1
    return TableSettings(
        "sim",
        options or Options(pile=5, target=1000),
        teams=min(8, (peers + per_team - 1) // per_team),
        per_team=per_team,
        takeover_level="hard",
    )


def _sim_options(peer: str, peers: int, rounds: int) -> PeerOptions:
    """Every simulated laptop is a headless bot peer (quick ones: a simulated reaction time of
    tens of milliseconds); the host starts once all are seated; the bots stop after ``rounds``
    rounds so that the game falls quiet; a state hash every 16 stable entries."""
    return PeerOptions(
        peer, bot="hard", bot_delay=0.05, players=peers, bot_rounds=rounds, hash_interval=16
    )


def _schedule_join(network: SimNetwork, when: float, peer: str) -> None:
    network.call_at(when, lambda: network.restart(peer))
