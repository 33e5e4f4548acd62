"""A deterministic, seeded, in-memory network of `OrderingCore` peers on a simulated clock.

Links behave like TCP: one-way delay with jitter, losses that only delay a frame (retransmission)
and FIFO order on each link, while different links reorder freely. Each peer may read its own
clock (`ClockModel`: an offset and a drift per peer, as ``time.monotonic()`` differs per machine):
the core only ever sees that local time. Peers can pause (stop
processing, then resume with their backlog), be cut off (`partition` into groups, or `cut_link`
for one link, one way or both, each healing at its own time), die (state lost but for what a
laptop keeps on disk: its vote and its stable prefix, `net.testing.durable`; frames in flight
from them are cut at a random point) and come back as a new incarnation that joins again.

The application plugs in per peer through `SimApp` (``on_start`` and ``on_events``); a
`SimNode` lets it submit payloads and read its core. `HashChainApp` is a small game-agnostic
application: it folds the stable log into a SHA-256 chain, reports state hashes, serves
snapshots, submits random payloads and rejoins after an expulsion::

    sim = SimNetwork(["a", "b", "c"], seed=7, app_factory=HashChainApp.factory(rate=20))
    sim.run_until(5.0)

With ``keys`` (peer id -> `PeerKey`, e.g. ``sim_keys(["a", "b", "c"], seed=7)``, whose ids are
``a-<hash>``...) every core signs its entries and refuses any entry without its author's proof,
as at a real table; each node's `SimNode.identity` is what a malicious member may sign with.
"""

from __future__ import annotations

import hashlib
import heapq
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgpack

from net._identity import PeerKey
from net._order.core import CoreConfig, OrderingCore, Phase
from net._order.recovery import Recovered
from net._order.signatures import Identity
from net._order.viewchange import NO_BALLOT, VoteRecord
from net.events import (
    EntriesStabilized,
    EntryReceived,
    Event,
    Expelled,
    LogEntry,
    MemberExcluded,
    MemberJoined,
    MemberLeft,
    MemberReturned,
    Payload,
    SnapshotInstalled,
    SnapshotRequested,
)
from net.testing.durable import kept_durably
from net.testing.models import ClockModel, LinkModel

__all__ = [
    "ClockModel",
    "FrameFilter",
    "HashChainApp",
    "LinkModel",
    "NullApp",
    "SimApp",
    "SimNetwork",
    "SimNode",
    "sim_keys",
]

FrameFilter = Callable[[str, bytes], list[tuple[float, bytes]]]
"""Rewrites one frame a peer sends to `dest`: the frames that go instead, each with an extra
delay (none drops it). How the fault generators make a member misbehave."""


SIM_TABLE = "sim"
"""The table a signed simulation's entries are signed for."""


def sim_keys(labels: Iterable[str], seed: int) -> dict[str, PeerKey]:
    """Keys for a signed simulation, derived from ``seed``: peer id (``label-<hash>``) -> key."""
    keys = {}
    for label in labels:
        key = PeerKey.from_seed(hashlib.sha256(f"{seed}/{label}".encode()).digest())
        keys[key.peer_id(label)] = key
    return keys


class SimApp(Protocol):
    """What the simulator calls on the application of one peer incarnation."""

    def on_start(self, node: SimNode) -> None:
        """The core of `node` was just created (founder or new incarnation)."""

    def on_events(self, node: SimNode, events: list[Event]) -> None:
        """The core of `node` reported `events`, in order."""


class NullApp:
    """Ignores everything but snapshot requests (answered with None)."""

    def on_start(self, node: SimNode) -> None:
        """Nothing to set up."""

    def on_events(self, node: SimNode, events: list[Event]) -> None:
        """Answer snapshot requests."""
        for event in events:
            if isinstance(event, SnapshotRequested):
                node.core.provide_snapshot(event.peer, event.stable_index, None)


class SimNode:
    """One peer of the simulation: its current core, application and run state."""

    def __init__(self, sim: SimNetwork, peer_id: str) -> None:
        self.sim = sim
        self.peer_id = peer_id
        self.incarnation = 0
        self.state = "alive"  # alive, paused or dead
        self.generation = 0
        self.core: OrderingCore
        self.app: SimApp = NullApp()
        self.inbox: list[tuple[str, bytes]] = []
        self.timer_at: float | None = None
        self.submitted: list[tuple[float, LogEntry]] = []
        self.identity: Identity | None = sim.identity_of(peer_id)
        """What this peer signs with at a signed simulation (None: unsigned)."""
        self.vote: VoteRecord | None = None  # the last core's vote, kept across a restart
        self.durable_state: Recovered | None = None  # its stable prefix, kept on disk likewise
        self.ticks = 0
        """Timer calls so far (all incarnations): a core that spins on a past timer shows here."""
        model = sim.clock_model
        draw = random.Random(f"{sim.seed}/clock/{peer_id}")
        self.clock_offset = draw.uniform(0.0, model.max_offset)
        self.clock_drift = draw.uniform(-model.max_drift, model.max_drift)

    @property
    def now(self) -> float:
        """The simulated time."""
        return self.sim.now

    @property
    def local_now(self) -> float:
        """This peer's own clock (what its core is given): see `ClockModel`."""
        return self.clock_offset + self.sim.now * (1.0 + self.clock_drift)

    def sim_time(self, local: float) -> float:
        """The simulated time at which this peer's clock reads `local`."""
        return (local - self.clock_offset) / (1.0 + self.clock_drift)

    @property
    def changing_view(self) -> bool:
        """True while this member's core takes part in a view change (it holds a vote)."""
        record = self.core.vote_record()
        return record is not None and (
            record.promised != NO_BALLOT or record.accepted != NO_BALLOT or record.value is not None
        )

    @property
    def alive(self) -> bool:
        """True unless the peer is dead."""
        return self.state != "dead"

    def submit(self, payload: Payload) -> LogEntry | None:
        """Submit a payload now if the core accepts submissions; None otherwise."""
        if self.state != "alive" or not self.core.ready:
            return None
        entry = self.core.submit(payload, self.local_now)
        self.submitted.append((self.sim.now, entry))
        self.sim.after_core_call(self, [])
        return entry

    def report_state_hash(self, stable_index: int, digest: bytes) -> None:
        """Report a state hash; resulting events go back to the application."""
        self.sim.after_core_call(self, self.core.report_state_hash(stable_index, digest))

    def provide_snapshot(self, peer: str, stable_index: int, snapshot: Payload) -> None:
        """Answer a `SnapshotRequested`."""
        self.core.provide_snapshot(peer, stable_index, snapshot)
        self.sim.after_core_call(self, [])


class SimNetwork:
    """The simulated network; see the module docstring."""

    def __init__(
        self,
        peer_ids: Iterable[str],
        *,
        seed: int,
        core_config: CoreConfig | None = None,
        link: LinkModel | None = None,
        app_factory: Callable[[SimNode], SimApp] | None = None,
        keys: dict[str, PeerKey] | None = None,
        clock_model: ClockModel | None = None,
        salt: bytes = b"",
    ) -> None:
        self.keys = dict(keys or {})
        self.rng = random.Random(seed)
        self.seed = seed
        self.clock_model = clock_model or ClockModel()
        self.salt = salt
        self.now = 0.0
        self.config = core_config or CoreConfig()
        self.link = link or LinkModel()
        self.app_factory = app_factory or (lambda node: NullApp())
        self.frames_sent = 0
        self.bytes_sent = 0
        self._queue: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = 0
        self._last_arrival: dict[tuple[str, str], float] = {}
        self._cuts: dict[tuple[str, int, str], float] = {}
        self._partitions: list[tuple[float, float, list[frozenset[str]]]] = []
        self._link_cuts: list[tuple[float, float, str, str]] = []
        self._dispatching: set[str] = set()
        self._backlog: dict[str, list[Event]] = {}
        self.frame_filters: dict[str, FrameFilter] = {}
        """Per sending peer id: what its frames turn into on the wire (see `FrameFilter`)."""
        founders = sorted(set(peer_ids))
        self.nodes: dict[str, SimNode] = {}
        for peer in founders:
            node = SimNode(self, peer)
            node.core = OrderingCore(
                peer, founders, node.local_now, self.config, identity=node.identity, salt=salt
            )
            self.nodes[peer] = node
        for peer in founders:
            self._start_app(self.nodes[peer])

    # --- public API -------------------------------------------------------------------------

    def identity_of(self, peer: str) -> Identity | None:
        """What `peer` signs with (None when the simulation is unsigned)."""
        if not self.keys:
            return None
        if peer not in self.keys:
            raise ValueError(f"a signed simulation has no key for {peer!r}")
        return Identity(self.keys[peer], SIM_TABLE)

    def call_at(self, when: float, action: Callable[[], None]) -> None:
        """Run `action` at simulated time `when` (not before now)."""
        self._seq += 1
        heapq.heappush(self._queue, (max(when, self.now), self._seq, action))

    def call_later(self, delay: float, action: Callable[[], None]) -> None:
        """Run `action` after `delay` simulated seconds."""
        self.call_at(self.now + delay, action)

    def run_until(self, when: float) -> None:
        """Process every scheduled event up to simulated time `when`."""
        while self._queue and self._queue[0][0] <= when:
            at, _, action = heapq.heappop(self._queue)
            self.now = at
            action()
        self.now = max(self.now, when)

    def alive_nodes(self) -> list[SimNode]:
        """Nodes that are not dead, by peer id."""
        return [n for _, n in sorted(self.nodes.items()) if n.alive]

    def members(self) -> list[SimNode]:
        """Live nodes whose core is a member in good standing, by peer id."""
        return [n for n in self.alive_nodes() if n.core.phase is Phase.MEMBER]

    def pause(self, peer: str, duration: float) -> None:
        """Stop processing at `peer` for `duration`; frames queue up meanwhile."""
        node = self.nodes[peer]
        if node.state != "alive":
            return
        node.state = "paused"
        generation = node.generation
        self.call_later(duration, lambda: self._resume(node, generation))

    def partition(self, groups: Iterable[Iterable[str]], duration: float) -> None:
        """From now for ``duration`` seconds, frames between different groups wait: as TCP (and
        a transport that resends after a reconnect) holds them until the network heals. Peers
        in no group are cut off from everyone."""
        self._partitions.append((self.now, self.now + duration, [frozenset(g) for g in groups]))

    def cut_link(self, a: str, b: str, duration: float, *, directed: bool = False) -> None:
        """From now for ``duration`` seconds, frames from `a` to `b` (and from `b` to `a` unless
        `directed`) wait until the link heals, as TCP holds them; other links are untouched.
        Several cuts of one peer's links with different durations model links that come back
        one by one (TCP retransmission backoff differs per connection)."""
        end = self.now + duration
        self._link_cuts.append((self.now, end, a, b))
        if not directed:
            self._link_cuts.append((self.now, end, b, a))

    def isolate(self, peer: str, duration: float) -> None:
        """Cut every link of `peer`, both ways, for `duration` seconds."""
        for other in sorted(self.nodes):
            if other != peer:
                self.cut_link(peer, other, duration)

    def link_cut(self, src: str, dest: str) -> bool:
        """True while frames from `src` to `dest` are held back (a cut or a partition)."""
        return self._held_until(src, dest) > self.now

    def faults_in_force(self) -> bool:
        """True while a partition or a link cut has not healed, or a peer is paused."""
        now = self.now
        return (
            any(end > now for _, end, _ in self._partitions)
            or any(end > now for _, end, _, _ in self._link_cuts)
            or any(node.state == "paused" for node in self.nodes.values())
        )

    def kill(self, peer: str) -> None:
        """Kill `peer`: its state is lost, frames in flight from it are cut at random."""
        node = self.nodes[peer]
        if node.state == "dead":
            return
        for dest in self.nodes:
            if dest != peer:
                cut = self.now + self.rng.uniform(0.0, self.link.delay_max)
                self._cuts[(peer, node.generation, dest)] = cut
        node.state = "dead"
        node.vote = node.core.vote_record()  # as if kept on disk with every vote
        node.durable_state = kept_durably(node.core, node.app, node.durable_state)
        node.generation += 1
        node.inbox.clear()
        node.timer_at = None

    def restart(self, peer: str) -> None:
        """Bring `peer` back as a new incarnation that joins the group (or start a new peer)."""
        node = self.nodes.get(peer)
        if node is None:
            node = SimNode(self, peer)
            node.incarnation = -1
            node.state = "dead"
            self.nodes[peer] = node
        if node.state != "dead":
            self.kill(peer)
        node.incarnation += 1
        node.state = "alive"
        node.generation += 1
        contacts = [p for p, n in sorted(self.nodes.items()) if p != peer and n.alive]
        node.core = OrderingCore.joining(
            peer,
            contacts,
            node.local_now,
            self.config,
            node.incarnation,
            identity=node.identity,
            predecessor=node.vote,
            recovered=node.durable_state,
            salt=self.salt,
        )
        self._start_app(node)
        self.after_core_call(node, [])

    def leave(self, peer: str) -> None:
        """Make `peer` leave on purpose; its process stays up but silent."""
        node = self.nodes[peer]
        if node.state != "alive" or node.core.phase is not Phase.MEMBER:
            return
        node.core.leave(node.local_now)
        self.after_core_call(node, [])

    def after_core_call(self, node: SimNode, events: list[Event]) -> None:
        """Send what the core queued, re-arm its timer and hand `events` to the application."""
        for dest, data in node.core.outgoing():
            self._transmit(node, dest, data)
        self._arm_timer(node)
        if events:
            self._dispatch(node, events)

    # --- private helpers --------------------------------------------------------------------

    def _start_app(self, node: SimNode) -> None:
        node.app = self.app_factory(node)
        node.app.on_start(node)
        self._arm_timer(node)

    def _dispatch(self, node: SimNode, events: list[Event]) -> None:
        # Events produced while the app handles events are queued, never nested.
        self._backlog.setdefault(node.peer_id, []).extend(events)
        if node.peer_id in self._dispatching:
            return
        self._dispatching.add(node.peer_id)
        try:
            backlog = self._backlog[node.peer_id]
            while backlog:
                batch = list(backlog)
                backlog.clear()
                node.app.on_events(node, batch)
        finally:
            self._dispatching.discard(node.peer_id)

    def _transmit(self, src: SimNode, dest: str, data: bytes) -> None:
        target = self.nodes.get(dest)
        if target is None or not target.alive or not src.alive:
            return
        frame_filter = self.frame_filters.get(src.peer_id)
        frames = [(0.0, data)] if frame_filter is None else frame_filter(dest, data)
        for extra_delay, frame in frames:
            self._send(src, target, frame, extra_delay)
            if self.link.duplicate and self.rng.random() < self.link.duplicate:
                self._send(src, target, frame, extra_delay)

    def _send(self, src: SimNode, target: SimNode, data: bytes, extra_delay: float) -> None:
        self.frames_sent += 1
        self.bytes_sent += len(data)
        link = self.link
        # random.uniform(a, b) is a + (b - a) * random(): the same draw, without a Python call
        # (every frame of a simulation takes this path).
        low = link.delay_min
        delay = extra_delay + (low + (link.delay_max - low) * self.rng.random())
        if link.loss and self.rng.random() < link.loss:
            delay += link.retransmit_delay
        dest = target.peer_id
        held = self._held_until(src.peer_id, dest)
        if held > self.now:
            delay = held - self.now + delay
        key = (src.peer_id, dest)
        arrival = max(self.now + delay, self._last_arrival.get(key, 0.0))
        self._last_arrival[key] = arrival
        src_id, src_gen, dest_gen = src.peer_id, src.generation, target.generation
        self.call_at(arrival, lambda: self._arrive(src_id, src_gen, dest, dest_gen, data))

    def _held_until(self, src: str, dest: str) -> float:
        """When frames sent now from `src` to `dest` may leave (now if the link is up).

        Overlapping or back-to-back cuts chain: a frame held by one waits for the next too."""
        held = self.now
        changed = True
        while changed:
            changed = False
            for start, end, groups in self._partitions:
                if start <= held < end and not any(src in g and dest in g for g in groups):
                    held, changed = end, True
            for start, end, a, b in self._link_cuts:
                if a == src and b == dest and start <= held < end:
                    held, changed = end, True
        return held

    def _arrive(self, src: str, src_gen: int, dest: str, dest_gen: int, data: bytes) -> None:
        cut = self._cuts.get((src, src_gen, dest))
        if cut is not None and self.now > cut:
            return
        node = self.nodes[dest]
        if node.generation != dest_gen or node.state == "dead":
            return  # the connection died with the old process
        if node.state == "paused":
            node.inbox.append((src, data))
            return
        self.after_core_call(node, node.core.receive(src, data, node.local_now))

    def _resume(self, node: SimNode, generation: int) -> None:
        if node.generation != generation or node.state != "paused":
            return
        node.state = "alive"
        inbox, node.inbox = node.inbox, []
        for src, data in inbox:
            if node.state != "alive":
                break
            self.after_core_call(node, node.core.receive(src, data, node.local_now))
        self._on_timer(node, generation)

    def _arm_timer(self, node: SimNode) -> None:
        if node.state != "alive":
            return
        when = node.core.next_timer()
        if when is None:
            node.timer_at = None
            return
        when = max(node.sim_time(when), self.now + 1e-6)
        if node.timer_at is not None and node.timer_at <= when and node.timer_at >= self.now:
            return
        node.timer_at = when
        generation = node.generation
        self.call_at(when, lambda: self._on_timer(node, generation, when))

    def _on_timer(self, node: SimNode, generation: int, when: float | None = None) -> None:
        if node.generation != generation or node.state != "alive":
            return
        if when is not None and node.timer_at != when:
            return
        node.timer_at = None
        node.ticks += 1
        self.after_core_call(node, node.core.tick(node.local_now))


@dataclass
class HashChainApp:
    """A game-agnostic application: the stable state is a hash chain over the stable log.

    It submits random small payloads (Poisson, `rate` per second) until `stop_at`, reports a
    state hash every `hash_every` stable entries, serves snapshots and rejoins `rejoin_delay`
    seconds after being expelled. `log` keeps what it applied, for comparisons.
    """

    rng: random.Random
    rate: float = 10.0
    stop_at: float = float("inf")
    hash_every: int = 16
    rejoin_delay: float = 0.05
    index: int = 0
    digest: bytes = b"\x00" * 32
    log: list[tuple[Any, ...]] = field(default_factory=list)
    base: int | None = 0
    seen_max: tuple[int, str] = (0, "")
    causality_errors: int = 0
    stable_at: dict[tuple[int, str], float] = field(default_factory=dict)
    events_seen: list[Event] = field(default_factory=list)
    record_events: bool = False

    @classmethod
    def factory(cls, **kwargs: Any) -> Callable[[SimNode], SimApp]:
        """An `app_factory` for `SimNetwork`, seeded from the network's generator."""

        def make(node: SimNode) -> SimApp:
            return cls(rng=random.Random(node.sim.rng.random()), **kwargs)

        return make

    def on_start(self, node: SimNode) -> None:
        """Start submitting; a joiner waits for its snapshot."""
        if node.core.phase is Phase.JOINING:
            self.base = None
        self._schedule_submit(node)

    def on_events(self, node: SimNode, events: list[Event]) -> None:
        """Fold stable events into the chain; answer snapshot requests; rejoin if expelled."""
        for event in events:
            if self.record_events:
                self.events_seen.append(event)
            if isinstance(event, EntryReceived):
                self.seen_max = max(self.seen_max, event.entry.key)
            elif isinstance(event, EntriesStabilized):
                for offset, entry in enumerate(event.entries):
                    self._fold(("entry", entry.ts, entry.peer, entry.payload))
                    assert self.index == event.first_index + offset
                    self.seen_max = max(self.seen_max, entry.key)
                    self.stable_at[entry.key] = node.now
                    if self.index % self.hash_every == 0 and node.core.phase is Phase.MEMBER:
                        node.report_state_hash(self.index, self.digest)
            elif isinstance(event, MemberExcluded):
                self._fold(("excluded", event.peer, event.incarnation, event.cut), count=False)
            elif isinstance(event, MemberLeft):
                self._fold(("left", event.peer, event.incarnation), count=False)
            elif isinstance(event, MemberJoined | MemberReturned):
                self._fold(("joined", event.peer, event.incarnation), count=False)
            elif isinstance(event, SnapshotRequested):
                node.provide_snapshot(event.peer, event.stable_index, [self.index, self.digest])
            elif isinstance(event, SnapshotInstalled):
                index, digest = event.snapshot
                self.index, self.digest, self.base = index, digest, index
                self.log = [("snapshot", index, digest)]
                # Entries installed as tentative count as seen for causality.
                for entry in event.tentative:
                    self.seen_max = max(self.seen_max, entry.key)
            elif isinstance(event, Expelled):
                node.sim.call_later(self.rejoin_delay, lambda: node.sim.restart(node.peer_id))

    def stable_snapshot(self) -> Payload:
        """The stable state (None before its snapshot came): what a match log would hold."""
        return None if self.base is None else [self.index, self.digest]

    def corrupt(self) -> None:
        """Simulate a local bug: the state silently diverges."""
        self.digest = hashlib.sha256(b"corrupt" + self.digest).digest()

    def _fold(self, item: tuple[Any, ...], count: bool = True) -> None:
        data = msgpack.packb(list(item), use_bin_type=True)
        self.digest = hashlib.sha256(self.digest + data).digest()
        if count:
            self.index += 1
        self.log.append(item)

    def _schedule_submit(self, node: SimNode) -> None:
        if self.rate <= 0:
            return
        delay = self.rng.expovariate(self.rate)
        if node.now + delay >= self.stop_at:
            return
        generation = node.generation
        node.sim.call_later(delay, lambda: self._submit(node, generation))

    def _submit(self, node: SimNode, generation: int) -> None:
        if node.generation != generation or node.state == "dead":
            return
        if node.state == "alive" and node.core.ready:
            seen = self.seen_max
            payload = {"n": self.rng.randrange(1000), "d": self.rng.randbytes(4)}
            entry = node.submit(payload)
            if entry is not None and entry.key <= seen:
                self.causality_errors += 1
        self._schedule_submit(node)
