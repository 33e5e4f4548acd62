"""One seeded fault run: simulated laptops running the real table peer (``simgame.GameApp``: the
table fold, its duties, the lobby and hard bots) on ``net.testing.simnet``, watched by the
`StableOracle`, with faults scheduled by a generator; then a perfect network for a healing
period, and the verdict (`FaultResult`)."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from nerts_lan.lab.faults.oracle import StableOracle
from nerts_lan.lab.simgame import GameApp
from nerts_lan.rules.actions import MalformedError
from nerts_lan.rules.state import Options
from nerts_lan.table.commands import TableSettings
from nerts_lan.table.effects import Effect, ProvideSnapshot, ReportHash
from nerts_lan.table.machine import TableMachine
from nerts_lan.table.peer import PeerOptions
from net import CoreConfig, Phase
from net.events import (
    ClockSuspected,
    DivergenceDetected,
    EntriesStabilized,
    Event,
    Expelled,
    MemberExcluded,
    ProtocolViolated,
    SnapshotInstalled,
    SnapshotRequested,
)
from net.testing import FrameFilter, LinkModel, SimNetwork, SimNode, sim_keys

__all__ = ["FAST_TIMERS", "FaultResult", "FaultTable", "label"]

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

SETTLED_FOR = 2.0
"""The healing period ends early once the table has been whole (see `FaultTable._whole`) for
this many exclusion timeouts in a row: long enough for any suspicion or exclusion left over
from the faults to have struck. A healed table that stays whole only plays on, and the judge
compares every member's state at the end anyway; most seeds settle within a few seconds of
the faults, so this halves the simulated time of a seed."""


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
    quorum_lost: bool = False
    """The faults killed for good more laptops of the last view than a quorum can spare: no
    safe protocol goes on (the survivors cannot tell them from a partition), so the table is
    judged only on waiting without a fork (a player is offered the match from the log)."""
    violations: dict[str, int] = field(default_factory=dict)
    """Protocol violations honest members reported, by the field that broke the rules."""
    honest_flagged: int = 0
    """How many times an honest member flagged another honest one's clock (``ClockSuspected``:
    its stamps lagged the table time; a flag, never a ground for removal by itself)."""
    malicious_flagged: int = 0
    """How many times an honest member flagged a malicious one's clock."""
    honest_accused: int = 0
    """Pairs (accuser, accused) of honest laptops where the accuser held clock grounds for the
    accused's removal (``OrderingCore.clock_suspects``) at some look (every `SAMPLE_EVERY`)."""

    @property
    def failed(self) -> bool:
        """A fork, a divergence, or no single table at the end (unless its quorum died)."""
        return bool(
            self.forks or self.divergences or not (self.final_agreement or self.quorum_lost)
        )

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
            "quorum_lost": self.quorum_lost,
            "worst_stall_s": self.worst_stall_s,
            "honest_excluded": self.honest_excluded,
            "honest_flagged": self.honest_flagged,
            "malicious_flagged": self.malicious_flagged,
            "honest_accused": self.honest_accused,
            "malicious_excluded": self.malicious_excluded,
            "stable_entries": self.stable_entries,
            "malicious": self.malicious,
            "findings": self.findings,
            "violations": self.violations,
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
        malicious: frozenset[int] = frozenset(),
        signed: bool = False,
    ) -> None:
        """`malicious` holds the indexes (in `names`) of the malicious laptops. `signed` gives
        every laptop a key, as the real game does: each signs its entries, ballots and
        decisions, and its peer id is its key's (``p00-<hash>``, `label` gives ``p00``)."""
        self.generator = generator
        self.seed = seed
        self.config = config
        self.unit = config.exclude_timeout
        """Fault times are multiples of the exclusion timeout, so that both timers see alike."""
        self.window = WINDOW * self.unit
        self.heal = 8.0 + 4 * self.unit
        self.rng = random.Random(f"faults/{generator}/{seed}")
        labels = [f"p{i:02d}" for i in range(peers)]
        keys = sim_keys(labels, seed) if signed else None
        self.names = sorted(keys) if keys else labels
        """The laptops' peer ids, in the order of their labels."""
        self.malicious = frozenset(self.names[i] for i in malicious)
        self.departed: set[str] = set()
        """Peers that left on purpose (not expected at the table in the end)."""
        self.left: set[tuple[str, int]] = set()  # (peer, incarnation) that left on purpose
        self.events, self.last_fault = 0, 0.0
        """When the last scheduled fault strikes (a table is never judged settled before)."""
        self.oracle = StableOracle(ignored=self.malicious)
        self.detected = 0
        self.excluded: set[tuple[str, int]] = set()
        self.flagged = 0
        """Clock flags raised by honest members against honest members."""
        self.flagged_malicious = 0
        self.accused: set[tuple[str, str]] = set()  # honest (accuser, accused) clock grounds
        self.caught = 0
        self.violations: dict[str, int] = {}
        self.worst_stall = 0.0
        self.spinning: str | None = None
        """Set when a core spun on a past timer (the run stops there and fails)."""
        self.whole_since: float | None = None
        """Since when the healing table has been whole (None: it is not, or not yet healing)."""
        self.apps: dict[str, _ObservedGame] = {}
        self._ticks: dict[str, int] = {}
        self._since: dict[tuple[str, int], tuple[float, int | None]] = {}
        self._settings = _settings(peers, partnership)
        self._players = peers
        self.sim = SimNetwork(
            self.names,
            seed=self.rng.randrange(2**32),
            core_config=config,
            link=link or LinkModel(delay_min=0.001, delay_max=0.005),
            app_factory=self._make,
            keys=keys,
        )

    def at(self, when: float, action: Callable[[], None]) -> None:
        """Schedule one fault (counted in the result's ``events``)."""
        self.events += 1
        self.last_fault = max(self.last_fault, when)
        self.sim.call_at(when, action)

    def leave(self, peer: str) -> None:
        """`peer` leaves the table on purpose (if it is a member): it is not expected back."""
        node = self.sim.nodes[peer]
        if node.state == "alive" and node.core.phase is Phase.MEMBER:
            self.departed.add(peer)
            self.left.add((peer, node.core.incarnation))
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
        with few_collections():
            return self._run()

    def _run(self) -> FaultResult:
        self._sample()
        self.sim.call_at(self.window, self._start_healing)
        end = self.window + self.heal
        try:
            end = self._heal_until(end)
            # The bots stop, and the table gets a moment to fall quiet: a play made just before
            # the end is in flight, not stuck.
            for app in self.apps.values():
                app.options = replace(app.options, bot_rounds=0)
                app.table.options = app.options
            end += QUIET_AFTER
            self.sim.run_until(end)
            end = self._until_quiet(end + QUIET_AFTER)
        except _Spinning:
            end = self.sim.now
        return self._judge(end)

    # --- private helpers ---------------------------------------------------------------------

    def _heal_until(self, end: float) -> float:
        """Run until `end`, or until the healed table has been whole for `SETTLED_FOR`
        exclusion timeouts; when it stopped. Running in steps of `SAMPLE_EVERY` changes
        nothing of the run (the simulator's queue is the same)."""
        settled_for = SETTLED_FOR * self.unit
        while self.sim.now < end:
            self.sim.run_until(min(end, self.sim.now + SAMPLE_EVERY))
            since = self.whole_since
            if since is not None and self.sim.now - since >= settled_for:
                return self.sim.now
        return end

    def _until_quiet(self, latest: float) -> float:
        """Run on (up to `latest`) while some live member still holds tentative entries: the
        table's own duties (a round's commits, say) go on after the bots stop, and one made just
        before the end is in flight, not stuck. A stuck one is still there at `latest`."""
        while self.sim.now < latest and any(
            n.core.phase is Phase.MEMBER and n.core.tentative() for n in self.sim.alive_nodes()
        ):
            self.sim.run_until(min(latest, self.sim.now + SAMPLE_EVERY))
        return self.sim.now

    def _whole(self) -> bool:
        """The network is healed (no fault left to strike, no cut or pause in force) and every
        live honest laptop that did not leave is a ready member of one and the same view, made
        of live laptops, with no view change under way."""
        sim = self.sim
        if sim.now < max(self.window, self.last_fault) or sim.faults_in_force():
            return False
        live = [n for n in sim.alive_nodes() if n.peer_id not in self.departed]
        if any(n.state != "alive" for n in live):
            return False
        honest = [n for n in live if n.peer_id not in self.malicious]
        if not honest or any(not n.core.ready or n.changing_view for n in honest):
            return False
        views = {(n.core.epoch, tuple(sorted(n.core.members.items()))) for n in honest}
        if len(views) != 1:
            return False
        ((_, view),) = views
        names = {peer for peer, _ in view}
        return {n.peer_id for n in honest} <= names <= {n.peer_id for n in live}

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
            if core.phase is Phase.MEMBER:
                for accused in core.clock_suspects - self.malicious:
                    self.accused.add((node.peer_id, accused))
            index = core.stable_index
            busy = node.state == "alive" and core.phase is Phase.MEMBER and core.tentative()
            since = self._since.get(key)
            if not busy or since is None or since[1] != index:
                self._since[key] = (now, index)
            else:
                self.worst_stall = max(self.worst_stall, now - since[0])
        if not self._whole():
            self.whole_since = None
        elif self.whole_since is None:
            self.whole_since = now
        self.sim.call_later(SAMPLE_EVERY, self._sample)

    def _judge(self, end: float) -> FaultResult:
        disagreement, final_index = self._disagreement()
        quorum_lost = disagreement is not None and self._quorum_died()
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
            malicious=sorted(label(p) for p in self.malicious),
            findings=[*self.oracle.violations, *divergences[:3]],
            quorum_lost=quorum_lost,
            violations=dict(sorted(self.violations.items())),
            honest_flagged=self.flagged,
            malicious_flagged=self.flagged_malicious,
            honest_accused=len(self.accused),
        )

    def _quorum_died(self) -> bool:
        """Whether the laptops of the last view still running (any incarnation: a restarted one
        votes in its predecessor's place, unless that one left on purpose) are no quorum of it
        (of its members that did not leave), and every member of it left running waits for
        the table (paused) rather than going on alone."""
        members = [
            n for n in self.sim.alive_nodes()
            if n.core.phase is Phase.MEMBER and n.peer_id not in self.malicious
        ]  # fmt: skip
        if not members:
            return False
        last = max(members, key=lambda n: n.core.epoch)
        view = sorted(p for p, inc in last.core.members.items() if (p, inc) not in self.left)
        running = [p for p in view if self.sim.nodes[p].state != "dead"]
        if view and _is_quorum(view, running):
            return False
        return all(n.core.paused for n in members if n.core.epoch == last.core.epoch)

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


@contextlib.contextmanager
def few_collections() -> Iterator[None]:
    """The cyclic collector at a high threshold while a seed runs: a seed allocates millions of
    short-lived objects and hardly a cycle, and at the default threshold (700 allocations) the
    collector ran about a thousand times a seed for next to nothing (about 5 % of its CPU)."""
    before = gc.get_threshold()
    gc.set_threshold(_COLLECT_AFTER, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


_COLLECT_AFTER = 100_000


def _settings(peers: int, partnership: bool) -> TableSettings:
    """The table of a fault run: hard bots, a target no match reaches, a seat per laptop."""
    return TableSettings(
        "faults",
        Options(pile=5, target=1000),
        teams=min(8, peers // 2 if partnership else peers + 2),
        per_team=2 if partnership else 1,
        takeover_level="hard",
    )


def _is_quorum(view: list[str], voters: list[str]) -> bool:
    """The protocol's quorum (docs/protocol.md, "Quorum"): more than half of the view, or
    exactly half holding its lowest id."""
    twice = 2 * len(set(voters) & set(view))
    return twice > len(view) or (twice == len(view) and min(view) in voters)


def _snapshot_digest(peer: str, snapshot: Any) -> bytes:
    """The state hash of the table a snapshot holds (b"" if it holds none)."""
    try:
        return TableMachine.from_snapshot(peer, snapshot).digest()
    except MalformedError:
        return b""


def label(peer: str) -> str:
    """The readable label of a laptop's peer id (``p01`` for ``p01-<hash>`` and for ``p01``)."""
    return peer.split("-", 1)[0]


class _Spinning(Exception):
    """A core spins on a past timer: the run cannot go on."""


@dataclass
class _ObservedGame(GameApp):
    """The table peer of one laptop, reporting what it delivers to its `FaultTable`."""

    watcher: FaultTable | None = None
    asked: dict[tuple[str, int], int] = field(default_factory=dict)
    """Each snapshot the core asked of us (joiner, stable index) -> the epoch it asked it at:
    with the index, the position the state we answer with holds."""

    def on_events(self, node: SimNode, events: list[Event]) -> None:
        watcher = self.watcher
        if watcher is not None:
            self._watch(watcher, node, events)
            self._follow(events)
        super().on_events(node, events)
        if watcher is not None:
            label = f"{node.peer_id}#{node.core.incarnation}"
            for event in events:
                if isinstance(event, SnapshotInstalled):
                    digest = _snapshot_digest(self.peer, event.snapshot)
                    watcher.oracle.observe_snapshot(
                        label, node.now, event.stable_index, event.epoch, digest
                    )

    def _follow(self, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, SnapshotRequested):
                self.asked[(event.peer, event.stable_index)] = event.epoch

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
            elif isinstance(event, ClockSuspected) and event.peer in watcher.malicious:
                watcher.flagged_malicious += 1
            elif isinstance(event, ClockSuspected):
                watcher.flagged += 1
            elif isinstance(event, DivergenceDetected):
                watcher.detected += 1
            elif isinstance(event, ProtocolViolated):
                name = event.field.split("[", 1)[0]  # one count per field, whoever it names
                watcher.violations[name] = watcher.violations.get(name, 0) + 1

    def _run(self, node: SimNode, effects: list[Effect]) -> None:
        watcher = self.watcher
        if watcher is not None and self.peer not in watcher.malicious:
            for effect in effects:
                if isinstance(effect, ProvideSnapshot):
                    epoch = self.asked.pop((effect.peer, effect.stable_index), None)
                    if epoch is not None:
                        digest = _snapshot_digest(self.peer, effect.snapshot)
                        watcher.oracle.observe_provided(digest, effect.stable_index, epoch)
        # A state counts among the members of a view: a core being removed stops short of it.
        if watcher is not None and node.core.phase is Phase.MEMBER:
            hashes = [effect for effect in effects if isinstance(effect, ReportHash)]
            if hashes:
                label = f"{node.peer_id}#{node.core.incarnation}"
                view = (node.core.epoch, tuple(sorted(node.core.members.items())))
                for effect in hashes:
                    oracle = watcher.oracle
                    oracle.observe_state(label, node.now, effect.index, effect.digest, view)
        super()._run(node, effects)
