"""One seeded fault run: simulated laptops running the real table peer (``simgame.GameApp``: the
table fold, its duties, the lobby and hard bots) on ``net.simnet``, watched by the
`StableOracle`, with faults scheduled by a generator; then a perfect network for a healing
period, and the verdict (`FaultResult`)."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from net.core import CoreConfig, Phase
from net.events import (
    DivergenceDetected,
    EntriesStabilized,
    Event,
    Expelled,
    MemberExcluded,
    SnapshotInstalled,
)
from net.simnet import FrameFilter, LinkModel, SimNetwork, SimNode

from ..commands import TableSettings
from ..engine import Options
from ..peer import Effect, PeerOptions, ReportHash
from ..simgame import GameApp
from .oracle import StableOracle

__all__ = ["FAST_TIMERS", "FaultResult", "FaultTable"]

FAST_TIMERS = CoreConfig(suspect_timeout=0.3, exclude_timeout=0.8, snapshot_timeout=0.5)
"""The suite's fast timers; ``CoreConfig()`` holds the real game's."""

WINDOW = 7.5
"""How long faults strike, in exclusion timeouts (6 s with the fast timers, 22.5 s real)."""

SAMPLE_EVERY = 0.05
"""Seconds between two looks at every member's stability (for the worst stall)."""

QUIET_AFTER = 1.0
"""Seconds the table gets to fall quiet after the bots stop, before it is judged."""

SPIN_TICKS = 2000
"""More timer calls than this between two samples (40,000 a second) is a core that spins on a
past timer (the simulator nudges such a timer by a microsecond each time)."""

PERFECT = LinkModel(delay_min=0.001, delay_max=0.004)
"""The network of the healing period."""


@dataclass
class FaultResult:
    """What one seeded run found; `failed` when stable was not final or the table did not end
    as one."""

    generator: str
    seed: int
    timers: str
    peers: int
    events: int
    forks: int
    divergences: int
    detected_divergences: int
    final_agreement: bool
    disagreement: str | None
    worst_stall_s: float
    honest_excluded: int
    malicious_excluded: int
    """How many times an honest member delivered the exclusion of a malicious one."""
    stable_entries: int
    malicious: list[str]
    findings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """A fork, a divergence, or no single table at the end."""
        return bool(self.forks or self.divergences or not self.final_agreement)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict, the seed and generator first."""
        return {
            "seed": self.seed,
            "generator": self.generator,
            "timers": self.timers,
            "peers": self.peers,
            "events": self.events,
            "forks": self.forks,
            "divergences": self.divergences,
            "detected_divergences": self.detected_divergences,
            "final_agreement": self.final_agreement,
            "disagreement": self.disagreement,
            "worst_stall_s": self.worst_stall_s,
            "honest_excluded": self.honest_excluded,
            "malicious_excluded": self.malicious_excluded,
            "stable_entries": self.stable_entries,
            "malicious": self.malicious,
            "findings": self.findings,
        }


class FaultTable:
    """A table of simulated laptops for one run; generators schedule faults with `at` inside
    ``[0, window)``, then `run` heals the network and judges."""

    def __init__(
        self,
        generator: str,
        seed: int,
        config: CoreConfig,
        peers: int,
        *,
        partnership: bool = False,
        link: LinkModel | None = None,
        malicious: frozenset[str] = frozenset(),
    ) -> None:
        self.generator = generator
        self.seed = seed
        self.config = config
        self.unit = config.exclude_timeout
        """Fault times are multiples of the exclusion timeout, so that both timers see alike."""
        self.window = WINDOW * self.unit
        self.heal = 8.0 + 4 * self.unit
        self.rng = random.Random(f"faults/{generator}/{seed}")
        self.names = [f"p{i:02d}" for i in range(peers)]
        self.malicious = malicious
        self.departed: set[str] = set()
        """Peers that left on purpose (not expected at the table in the end)."""
        self.events = 0
        self.oracle = StableOracle(ignored=malicious)
        self.detected = 0
        self.excluded: set[tuple[str, int]] = set()
        self.caught = 0
        self.worst_stall = 0.0
        self.spinning: str | None = None
        """Set when a core spun on a past timer (the run stops there and fails)."""
        self.apps: dict[str, _ObservedGame] = {}
        self._ticks: dict[str, int] = {}
        self._since: dict[tuple[str, int], tuple[float, int | None]] = {}
        self._settings = TableSettings(
            "faults",
            Options(pile=5, target=1000),
            teams=min(8, peers // 2 if partnership else peers + 2),
            per_team=2 if partnership else 1,
            takeover_level="hard",
        )
        self._players = peers
        self.sim = SimNetwork(
            self.names,
            seed=self.rng.randrange(2**32),
            core_config=config,
            link=link or LinkModel(delay_min=0.001, delay_max=0.005),
            app_factory=self._make,
        )

    def at(self, when: float, action: Callable[[], None]) -> None:
        """Schedule one fault (counted in the result's ``events``)."""
        self.events += 1
        self.sim.call_at(when, action)

    def leave(self, peer: str) -> None:
        """`peer` leaves the table on purpose (if it is a member): it is not expected back."""
        node = self.sim.nodes[peer]
        if node.state == "alive" and node.core.phase is Phase.MEMBER:
            self.departed.add(peer)
        self.sim.leave(peer)

    def restart(self, peer: str) -> None:
        """`peer`'s laptop starts again (a new peer, or a new incarnation that joins)."""
        self.departed.discard(peer)
        self.sim.restart(peer)

    def filter_frames(self, peer: str, frame_filter: FrameFilter) -> None:
        """Rewrite `peer`'s frames until the healing period starts."""
        self.sim.frame_filters[peer] = frame_filter

    def run(self) -> FaultResult:
        """Run the faults, heal, and judge."""
        self._sample()
        self.sim.call_at(self.window, self._start_healing)
        end = self.window + self.heal
        try:
            self.sim.run_until(end)
            # The bots stop, and the table gets a moment to fall quiet: a play made just before
            # the end is in flight, not stuck.
            for app in self.apps.values():
                app.options = replace(app.options, bot_rounds=0)
                app.table.options = app.options
            end += QUIET_AFTER
            self.sim.run_until(end)
        except _Spinning:
            end = self.sim.now
        return self._judge(end)

    # --- private helpers ---------------------------------------------------------------------

    def _make(self, node: SimNode) -> _ObservedGame:
        app = self.apps.get(node.peer_id)
        if app is None:
            nonce = hashlib.sha256(f"{self.seed}/{node.peer_id}".encode()).digest()
            options = PeerOptions(
                node.peer_id, bot="hard", bot_delay=1.0, players=self._players, hash_interval=16
            )
            app = _ObservedGame(
                node.peer_id, tuple(self.names), self._settings, random.Random(nonce), options
            )
            app.watcher = self
            self.apps[node.peer_id] = app
        return app

    def _start_healing(self) -> None:
        """A perfect network from now on, every member honest, and the bots finish the round
        being played so that the table falls quiet."""
        self.sim.link = PERFECT
        self.sim.frame_filters.clear()
        last = max((app.table.machine.round_number for app in self.apps.values()), default=1)
        for app in self.apps.values():
            app.options = replace(app.options, bot_rounds=max(1, last))
            app.table.options = app.options

    def _sample(self) -> None:
        now = self.sim.now
        for node in self.sim.alive_nodes():
            ticks, self._ticks[node.peer_id] = self._ticks.get(node.peer_id, 0), node.ticks
            if node.ticks - ticks > SPIN_TICKS:
                self.spinning = f"at {now:.3f} {node.peer_id} spins on a past timer"
                raise _Spinning
            if node.peer_id in self.malicious:
                continue
            key = (node.peer_id, node.generation)
            core = node.core
            index = core.stable_index
            busy = node.state == "alive" and core.phase is Phase.MEMBER and core.tentative()
            since = self._since.get(key)
            if not busy or since is None or since[1] != index:
                self._since[key] = (now, index)
            else:
                self.worst_stall = max(self.worst_stall, now - since[0])
        self.sim.call_later(SAMPLE_EVERY, self._sample)

    def _judge(self, end: float) -> FaultResult:
        disagreement, final_index = self._disagreement()
        if final_index is not None:
            self.oracle.check_final(final_index, end)
        divergences = self.oracle.divergences()
        return FaultResult(
            generator=self.generator,
            seed=self.seed,
            timers="real" if self.config == CoreConfig() else "fast",
            peers=len(self.names),
            events=self.events,
            forks=self.oracle.forks,
            divergences=len(divergences),
            detected_divergences=self.detected,
            final_agreement=disagreement is None,
            disagreement=disagreement,
            worst_stall_s=round(self.worst_stall, 3),
            honest_excluded=len(self.excluded),
            malicious_excluded=self.caught,
            stable_entries=self.oracle.highest,
            malicious=sorted(self.malicious),
            findings=[*self.oracle.violations, *divergences[:3]],
        )

    def _disagreement(self) -> tuple[str | None, int | None]:
        """Why the live honest peers are not one table with one state (None if they are), and
        the table's final stable index."""
        if self.spinning is not None:
            return self.spinning, None
        live = [n for n in self.sim.alive_nodes() if n.peer_id not in self.departed]
        honest = {n.peer_id for n in live if n.peer_id not in self.malicious}
        members = [n for n in live if n.core.phase is Phase.MEMBER]
        outside = sorted(p for p in honest if p not in {n.peer_id for n in members})
        if not honest:
            return "nobody is left at the table", None
        if outside:
            return f"not members at the end: {', '.join(outside)}", None
        views = {tuple(sorted(n.core.members)) for n in members if n.peer_id in honest}
        if len(views) != 1:
            return f"{len(views)} views at the end: {sorted(views)}", None
        (view,) = views
        if not honest <= set(view) <= {n.peer_id for n in live}:
            return f"the view {list(view)} is not the live peers {sorted(honest)}", None
        chosen = [n for n in members if n.peer_id in view]
        held = {
            n.peer_id: (n.core.stable_index, self.apps[n.peer_id].table.machine.digest())
            for n in chosen
        }
        states = set(held.values())
        if len(states) != 1:
            each = ", ".join(f"{p} {i} {d.hex()[:8]}" for p, (i, d) in sorted(held.items()))
            return f"{len(states)} states (stable index, hash) at the end: {each}", None
        busy = sorted(n.peer_id for n in chosen if n.core.tentative())
        ((index, _),) = states
        if busy:
            return f"tentative entries left at {', '.join(busy)}", index
        return None, index


class _Spinning(Exception):
    """A core spins on a past timer: the run cannot go on."""


@dataclass
class _ObservedGame(GameApp):
    """The table peer of one laptop, reporting what it delivers to its `FaultTable`."""

    watcher: FaultTable | None = None

    def on_events(self, node: SimNode, events: list[Event]) -> None:
        watcher = self.watcher
        if watcher is not None:
            self._watch(watcher, node, events)
        super().on_events(node, events)

    def _watch(self, watcher: FaultTable, node: SimNode, events: list[Event]) -> None:
        label = f"{node.peer_id}#{node.core.incarnation}"
        if any(isinstance(e, EntriesStabilized | SnapshotInstalled) for e in events):
            watcher.oracle.observe(label, node.now, events)
        if self.peer in watcher.malicious:
            return
        for event in events:
            if isinstance(event, MemberExcluded) and event.peer in watcher.malicious:
                watcher.caught += 1
            elif isinstance(event, MemberExcluded):
                watcher.excluded.add((event.peer, event.incarnation))
            elif isinstance(event, Expelled):
                watcher.excluded.add((self.peer, node.core.incarnation))
            elif isinstance(event, DivergenceDetected):
                watcher.detected += 1

    def _run(self, node: SimNode, effects: list[Effect]) -> None:
        watcher = self.watcher
        # A state counts among the members of a view: a core being removed stops short of it.
        if watcher is not None and node.core.phase is Phase.MEMBER:
            label = f"{node.peer_id}#{node.core.incarnation}"
            view = (node.core.epoch, tuple(sorted(node.core.members.items())))
            for effect in effects:
                if isinstance(effect, ReportHash):
                    oracle = watcher.oracle
                    oracle.observe_state(label, node.now, effect.index, effect.digest, view)
        super()._run(node, effects)
