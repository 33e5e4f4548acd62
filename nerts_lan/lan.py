"""A seat at a table on the LAN: discovery, the ordering core on real sockets, the table fold, bots.

``TableAgent`` lives in the network thread (``net.runtime.NetworkThread``) and owns everything
that must move in the log's order: the node (ordering core + TCP mesh), the mDNS advert, the
``TableMachine`` with the round's replica, and the bots of the seats this peer plays. It posts
what happened to the thread's event queue. ``LanSession`` is the main thread's side of it: the
``Session`` the window or a headless loop uses.

Wiring, for one peer::

    network thread:  mesh frames -> OrderingCore -> events -> TableMachine -> replica -> events
                     TableMachine duties (commit, reveal) and bot timers -> OrderingCore.submit
    main thread:     LanSession.submit(action) -> network thread; LanSession.poll() <- events

Lobby commands (``sit``, ``ready``, ``add_bot``, ``start``...) are table payloads ordered like
everything else; the main thread sees the lobby through ``LobbyView`` snapshots. Pointers travel
outside the log, as best-effort ephemeral frames of the mesh (``send_cursor`` / ``CursorMoved``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import re
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

from net.core import CoreConfig, OrderingCore
from net.discovery import Advert, Discovery
from net.errors import LocalProtocolError
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
    MemberRecovered,
    MemberReturned,
    MemberSuspected,
    SnapshotInstalled,
    SnapshotRequested,
)
from net.node import Node
from net.runtime import NetworkThread
from net.transport import CODE_NEEDED, NO_CODE_HERE, WRONG_CODE, Hello

from .actions import MAX_NAME_LENGTH, Action, MalformedError
from .bots import Bot
from .cards import Card, CardError
from .engine import State, Table
from .matchlog import MatchLogWriter, data_folder
from .replica import ActionRejected
from .scoring import Match
from .session import CursorMoved, RoundStarted, SessionEvent
from .table import (
    CommitDue,
    EntryIgnored,
    LobbyChanged,
    RevealDue,
    Seat,
    TableMachine,
    TableSettings,
    commit_digest,
)

__all__ = [
    "PROTOCOL",
    "SERVICE_TYPE",
    "LanOptions",
    "LanSession",
    "LobbyView",
    "MemberSuspectedEvent",
    "TableAgent",
    "TableInfo",
    "decode_cursor",
    "encode_cursor",
    "make_peer_id",
    "make_table_code",
    "normalize_code",
    "persistent_peer_id",
    "table_from_advert",
]

SERVICE_TYPE = "_nerts._tcp.local."
PROTOCOL = 1
"""The game's wire protocol version, in the mDNS advert and in every connection's hello."""

MIN_BOT_INTERVAL = 0.002
"""Seconds between two actions of one bot on the LAN, whatever its level."""

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 4
MAX_CODE_LENGTH = 32

HASH_INTERVAL = 32
"""Stable entries between two state-hash exchanges."""

CURSOR_INTERVAL = 1 / 30
"""Shortest time between two pointer updates of one player (about 30 a second)."""

MAX_HOLDING = 13
"""Most cards a pointer may be shown dragging (a whole run, king to ace)."""

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TableInfo:
    """A table as the lobby lists it (from its mDNS advert)."""

    table_id: str
    name: str
    host_peer: str
    host_name: str
    mode: str
    seats_taken: int
    seats_total: int
    state: str
    version: int
    address: str
    port: int
    needs_code: bool = False
    """The host gave the table a code: joining takes it."""


CODE_REFUSALS = (WRONG_CODE, CODE_NEEDED, NO_CODE_HERE)
"""What the table answers a peer whose code does not match."""


@dataclass(frozen=True)
class MemberSuspectedEvent:
    """A member has gone quiet (about a second): the others see who is missing."""

    peer: str
    name: str
    back: bool = False


@dataclass(frozen=True)
class LobbyView:
    """The table's lobby as the main thread sees it: a snapshot taken in the network thread."""

    me: str
    settings: TableSettings | None
    host: str | None
    members: tuple[tuple[str, str], ...]
    """(peer id, display name) of the present members, host first."""
    seats: tuple[Seat, ...]
    ready: frozenset[str]
    phase: str
    round_number: int
    start_problem: str | None
    """``TableMachine.can_start()``: None when the host may start."""

    @property
    def is_host(self) -> bool:
        return self.host == self.me

    @property
    def my_seat(self) -> Seat | None:
        return next((seat for seat in self.seats if seat.owner == self.me), None)

    def team(self, team: int) -> tuple[Seat, ...]:
        """The seats of team number ``team`` (0-based, as the host's settings count them)."""
        return tuple(seat for seat in self.seats if seat.team == team)

    def name_of(self, peer: str) -> str:
        return dict(self.members).get(peer, peer)

    @classmethod
    def of(cls, machine: TableMachine) -> LobbyView:
        host = machine.host
        members = sorted(machine.members.items(), key=lambda item: (item[0] != host, item[1]))
        return cls(
            machine.local_peer,
            machine.settings,
            host,
            tuple(members),
            tuple(machine.seats),
            frozenset(machine.ready),
            machine.phase,
            machine.round_number,
            machine.can_start(),
        )


@dataclass
class LanOptions:
    """How this peer takes part."""

    name: str
    peer_id: str
    interface: str | None = None
    incarnation: int = 0
    team: int | None = None
    bot: str | None = None
    """Play the local seat with a bot of this level (headless peers)."""
    bot_delay: float = 1.0
    players: int | None = None
    """Host only: start the match once this many members are seated and ready."""
    spectate: bool = False
    intermission: float = 0.0
    """Seconds between the end of a round and this peer's commit to the next deal (time to read
    the scores in a window; the deal waits for every member's commit)."""
    core: CoreConfig = field(default_factory=CoreConfig)
    log_folder: str | None = None
    """Where the match log is appended (None: no log)."""
    table_code: str | None = None
    """The table's code (``normalize_code`` it first): only peers that know it link with us,
    and every frame between us is authenticated. None: an open table."""


def make_peer_id(name: str, suffix: str | None = None) -> str:
    """A peer id from a display name: a readable slug plus a random (or given) suffix."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:32] or "peer"
    return f"{slug}-{suffix or secrets.token_hex(4)}"


def make_table_code() -> str:
    """A fresh code for a private table: four characters that cannot be misread (no 0/O, 1/I).
    32⁴ codes, and each wrong guess costs the guesser a second (``net.transport``)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(typed: str) -> str | None:
    """What a player typed as a table code, the way both ends compare it: upper case, without
    spaces or dashes, and the easily confused 0/O and 1/I read as O and I. None when empty."""
    code = "".join(ch for ch in typed.upper() if not ch.isspace() and ch != "-")
    code = code.replace("0", "O").replace("1", "I")
    return code[:MAX_CODE_LENGTH] or None


def persistent_peer_id(name: str) -> str:
    """The same peer id for the same name on this machine (kept in the data folder), so that a
    player whose game crashed and who joins again takes their seat back."""
    folder = data_folder()
    slug = make_peer_id(name, "x")[:-2]
    path = folder / f"peer-id-{slug}"
    try:
        text = path.read_text().strip()
        if text.startswith(slug + "-") and len(text) <= 64:
            return text
    except OSError:
        pass
    peer_id = make_peer_id(name)
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(peer_id + "\n")
    return peer_id


def table_from_advert(advert: Advert) -> TableInfo | None:
    """The table an mDNS advert describes, or None when it is not a table we can read."""
    props = advert.properties
    try:
        taken, total = (int(x) for x in props.get("seats", "0/0").split("/"))
        return TableInfo(
            table_id=advert.instance_id,
            name=props.get("name", advert.display_name)[:40],
            host_peer=props["host"][:64],
            host_name=props.get("hostname", "")[:64],
            mode=props.get("mode", "singles"),
            seats_taken=taken,
            seats_total=total,
            state=props.get("state", "lobby"),
            version=int(props.get("v", "0")),
            address=advert.addresses[0],
            port=advert.port,
            needs_code=props.get("code") == "1",
        )
    except (KeyError, ValueError, IndexError):
        return None


class TableAgent:
    """Everything of one peer's seat that runs in the network thread."""

    def __init__(self, network: NetworkThread, options: LanOptions) -> None:
        self.network = network
        self.options = options
        self.machine = TableMachine(options.peer_id)
        self.node: Node | None = None
        self.discovery: Discovery | None = None
        self.advert: Advert | None = None
        self.table_id = ""
        self.port = 0
        self.joined = False
        self._nonces: dict[int, bytes] = {}
        self._bots: dict[str, Bot] = {}
        self._bot_timers: dict[str, asyncio.TimerHandle] = {}
        self._stable_count = 0
        self._posted_view: State | None = None
        self._hosting = False
        self._sat = False
        self._readied = False
        self._started = False
        self._closed = False
        self._suspected: set[str] = set()
        self._tasks: set[asyncio.Future[None]] = set()
        self._trace = _Trace.from_environment()
        self._log: MatchLogWriter | None = None
        self.log_path: Path | None = None
        self._contact: str | None = None
        self.refused: str | None = None
        """Why the table refused us (a code problem), once it did."""

    # --- start and stop (coroutines run in the network loop) ------------------------------------

    async def async_host(self, settings: TableSettings) -> None:
        """Open a new table on this machine and advertise it."""
        self._hosting = True
        self.table_id = secrets.token_hex(4)
        self._open_log()
        core = OrderingCore(
            self.options.peer_id, [self.options.peer_id], time.monotonic(), self.options.core
        )
        await self._start_node(core)
        self.node_submit({"k": "create", "settings": settings.to_wire()})
        self._after_join()
        self._publish()

    async def async_join(self, table: TableInfo) -> None:
        """Join the table ``table`` (found over mDNS, or given by address)."""
        self.table_id = table.table_id
        self._open_log()
        core = OrderingCore.joining(
            self.options.peer_id,
            [table.host_peer],
            time.monotonic(),
            self.options.core,
            self.options.incarnation,
        )
        self._contact = table.host_peer
        await self._start_node(core)
        assert self.node is not None
        self.node.contact(table.host_peer, table.address, table.port)

    async def async_close(self, leave: bool = True) -> None:
        """Leave the table (telling the others, unless ``leave`` is False) and stop."""
        self._closed = True
        for timer in self._bot_timers.values():
            timer.cancel()
        if self.node is not None:
            if leave:
                try:
                    self.node.leave()
                    await asyncio.sleep(0.05)  # let the notice go out
                except LocalProtocolError:
                    pass
            await self.node.async_close()
        if self.discovery is not None:
            await self.discovery.async_close()
        if self._trace is not None:
            self._trace.close()
        if self._log is not None:
            self._log.close()

    def node_submit(self, payload: dict[str, Any]) -> None:
        """Order a payload, if this peer may submit now."""
        if self.node is None or not self.node.core.ready or self._closed:
            return
        entry = self.node.submit(payload)
        if self._trace is not None and payload.get("k") == "act":
            self._trace.record("submit", entry.key)
        self.machine.tentative_entry(entry.key, entry.payload)
        self._pump_machine()

    def submit_action(self, action: Action) -> None:
        """A local intent: ordered, and shown at once in the view."""
        if self.machine.phase != "playing":
            self.network.post(ActionRejected((0, ""), action, "no round is in play", True))
            return
        self.node_submit({"k": "act", "r": self.machine.round_number, "a": action.to_wire()})

    def send_ephemeral(self, data: bytes) -> None:
        """Best effort, outside the log: to every member linked now (a pointer update)."""
        if self.node is not None and not self._closed:
            self.node.broadcast_ephemeral(data)

    def _on_ephemeral(self, peer: str, data: bytes) -> None:
        """A pointer update from ``peer``: shown only if it is sane and for a seat ``peer``
        plays now; anything else is dropped without a word (it is not worth a log line)."""
        cursor = decode_cursor(data)
        if cursor is None:
            return
        seat = self.machine.seat_of(cursor.player)
        if seat is None or seat.controller != peer or peer == self.options.peer_id:
            return
        self.network.post(cursor)

    # --- the node's events ----------------------------------------------------------------------

    async def _start_node(self, core: OrderingCore) -> None:
        interface = self.options.interface or "0.0.0.0"
        hello = Hello(
            PROTOCOL, self.table_id, self.options.peer_id, self.options.name, core.incarnation
        )
        self.node = Node(
            core,
            hello,
            on_events=self._on_events,
            on_problem=self._on_link_problem,
            delay=_injected_delay(),
            on_ephemeral=self._on_ephemeral,
            table_code=self.options.table_code,
        )
        self.port = await self.node.async_start(interface)

    def _on_link_problem(self, who: str, reason: str) -> None:
        log.warning("%s: %s", who, reason)
        if not self.joined and who == self._contact and reason in CODE_REFUSALS:
            # The table will not have us with this code: ``start_error`` says so.
            self.refused = reason

    def _on_events(self, events: list[Event]) -> None:
        machine = self.machine
        for event in events:
            if not isinstance(event, (EntryReceived, EntriesStabilized)):
                log.info("%s: %s", self.options.peer_id, event)
            if isinstance(event, EntryReceived):
                machine.tentative_entry(event.entry.key, event.entry.payload)
                if self._trace is not None and _is_action(event.entry.payload):
                    self._trace.record("applied", event.entry.key)
            elif isinstance(event, EntriesStabilized):
                for offset, entry in enumerate(event.entries):
                    machine.stable_entry(entry.key, entry.payload)
                    if self._log is not None:
                        self._log.entry(entry.ts, entry.peer, entry.payload)
                    if self._trace is not None and _is_action(entry.payload):
                        self._trace.record("stable", entry.key)
                    index = event.first_index + offset
                    self._stable_count = index
                    if index % HASH_INTERVAL == 0 and self.node is not None:
                        self.node.report_state_hash(index, machine.digest())
            elif isinstance(event, EntriesRetracted):
                machine.retracted([entry.key for entry in event.entries])
            elif isinstance(event, (MemberJoined, MemberReturned)):
                owns_seat = any(seat.owner == event.peer for seat in machine.seats)
                if owns_seat:
                    machine.member_returned(event.peer)
                else:
                    machine.member_joined(event.peer)
                if self._log is not None:
                    self._log.member("returned" if owns_seat else "joined", event.peer)
                self._suspected.discard(event.peer)
            elif isinstance(event, (MemberLeft, MemberExcluded)):
                machine.member_gone(event.peer)
                if self._log is not None:
                    self._log.member("gone", event.peer)
            elif isinstance(event, MemberSuspected):
                self._suspected.add(event.peer)
                self.network.post(
                    MemberSuspectedEvent(event.peer, machine.members.get(event.peer, event.peer))
                )
            elif isinstance(event, MemberRecovered):
                self._suspected.discard(event.peer)
                self.network.post(
                    MemberSuspectedEvent(
                        event.peer, machine.members.get(event.peer, event.peer), back=True
                    )
                )
            elif isinstance(event, SnapshotRequested) and self.node is not None:
                self.node.provide_snapshot(event.peer, event.stable_index, machine.snapshot())
            elif isinstance(event, SnapshotInstalled):
                self._install(event)
            elif isinstance(event, DivergenceDetected):
                log.warning("state diverged from %s at %d", event.peer, event.stable_index)
            elif isinstance(event, Expelled):
                # The others went on without us (a long pause, a partition on our side): join
                # again as a new incarnation and catch up from their stable state.
                self.network.post(
                    EntryIgnored(self.options.peer_id, "removed from the table: rejoining")
                )
                self._spawn(self._rejoin())
            self._pump_machine()
        if self._log is not None:
            self._log.flush()  # what is stable survives a crash of this process
        if not self.joined and self.node is not None and self.node.core.ready:
            self._after_join()

    async def _rejoin(self) -> None:
        old = self.node
        if old is None or self._closed:
            return
        # Everyone we know an address for, not only our group's members: after a split our
        # group may have dissolved (all of it rejoining), and the table is the other group.
        contacts = old.mesh.addresses()
        incarnation = max(old.core.incarnation + 1, int(time.time() * 1000))
        await old.async_close()
        self.joined = False
        core = OrderingCore.joining(
            self.options.peer_id,
            sorted(contacts),
            time.monotonic(),
            self.options.core,
            incarnation,
        )
        await self._start_node(core)
        assert self.node is not None
        for peer, (host, port) in sorted(contacts.items()):
            self.node.contact(peer, host, port)
        self._publish()  # withdraws the advert until we are back

    def _open_log(self) -> None:
        """Append this table's stable log to the data folder (one file per table and peer; a
        restarted peer appends, after a snapshot record)."""
        if self.options.log_folder is None:
            return
        self.log_path = (
            Path(self.options.log_folder) / f"{self.table_id}-{self.options.peer_id}.nlog"
        )
        try:
            self._log = MatchLogWriter(self.log_path)
        except OSError as error:
            log.warning("cannot write the match log %s: %s", self.log_path, error)
            self._log, self.log_path = None, None

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _install(self, event: SnapshotInstalled) -> None:
        try:
            self.machine = TableMachine.from_snapshot(self.options.peer_id, event.snapshot)
        except MalformedError as error:
            log.error("bad snapshot: %s", error)
            return
        self._stable_count = event.stable_index
        if self._log is not None:
            self._log.snapshot(event.stable_index, event.snapshot)
        for entry in event.tentative:
            self.machine.tentative_entry(entry.key, entry.payload)
        if self.machine.replica is not None:
            self.network.post(RoundStarted(self.machine.round_number, self.machine.replica.view))
        self.network.post(LobbyChanged())
        self.network.post(LobbyView.of(self.machine))

    def _after_join(self) -> None:
        self.joined = True
        self.node_submit({"k": "hello", "name": self.options.name})

    # --- the table's events and duties ----------------------------------------------------------

    def _pump_machine(self) -> None:
        machine = self.machine
        for event in machine.take_events():
            if isinstance(event, CommitDue):
                if event.round > 1 and self.options.intermission > 0:
                    loop = asyncio.get_running_loop()
                    loop.call_later(self.options.intermission, self._commit_later, event.round)
                else:
                    self._commit(event.round)
            elif isinstance(event, RevealDue):
                kept = self._nonces.get(event.round)
                if kept is not None:
                    self.node_submit({"k": "reveal", "r": event.round, "n": kept.hex()})
            elif isinstance(event, LobbyChanged):
                self._lobby_duties()
                self._publish()
                self.network.post(event)
                self.network.post(LobbyView.of(self.machine))
            elif isinstance(event, RoundStarted):
                for bot in self._bots.values():
                    bot.reset()
                self.network.post(event)
            else:
                self.network.post(event)
        self._post_view()
        self._schedule_bots()

    def _commit_later(self, round_number: int) -> None:
        machine = self.machine
        if not self._closed and machine.phase == "seeding" and machine.round_number == round_number:
            self._commit(round_number)

    def _commit(self, round_number: int) -> None:
        nonce = secrets.token_bytes(32)
        self._nonces[round_number] = nonce
        self.node_submit({"k": "commit", "r": round_number, "d": commit_digest(nonce)})

    def _lobby_duties(self) -> None:
        """What a headless or scripted peer does by itself in the lobby."""
        machine = self.machine
        me = self.options.peer_id
        if machine.settings is None or me not in machine.members or self.options.spectate:
            return
        if machine.phase in ("seeding", "revealing", "playing"):
            self._claim_bot_seat()
            return
        if machine.phase != "lobby":
            return
        seated = any(seat.owner == me for seat in machine.seats)
        if not seated and not self._sat:
            team = self._choose_team()
            if team is not None:
                self._sat = True
                self.node_submit({"k": "sit", "team": team})
        elif seated and not self._readied and (self.options.bot or self.options.players):
            self._readied = True
            self.node_submit({"k": "ready", "on": True})
        elif not seated and self._sat:
            self._sat = False  # our sit was refused (a race for the seat): choose again
        if (
            self._hosting
            and self.options.players
            and not self._started
            and len(machine.members) >= self.options.players
            and machine.can_start() is None
            and all(any(s.owner == p for s in machine.seats) for p in machine.members)
        ):
            self._started = True
            self.node_submit({"k": "start"})

    def _claim_bot_seat(self) -> None:
        """A headless bot peer that joined a running match takes a seat a bot plays (from the
        next round), if there is one."""
        machine = self.machine
        me = self.options.peer_id
        if self._sat or not self.options.bot or me in machine.claims:
            return
        if any(seat.owner == me for seat in machine.seats):
            return
        claimed = set(machine.claims.values())
        for seat in machine.seats:
            if (
                seat.bot is not None
                and seat.player not in claimed
                and (seat.owner is None or seat.owner not in machine.members)
            ):
                self._sat = True
                self.node_submit({"k": "sit", "team": seat.team})
                return

    def _choose_team(self) -> int | None:
        machine = self.machine
        settings = machine.settings
        assert settings is not None
        counts = [sum(1 for s in machine.seats if s.team == t) for t in range(settings.teams)]
        wanted = self.options.team
        if wanted is not None and 0 <= wanted < settings.teams:
            return wanted if counts[wanted] < settings.per_team else None
        # Fill partnership teams in pairs, singles one per team.
        for team, count in enumerate(counts):
            if 0 < count < settings.per_team:
                return team
        for team, count in enumerate(counts):
            if count == 0:
                return team
        return None

    def _post_view(self) -> None:
        view = self.machine.view
        if view is not None and view is not self._posted_view:
            self._posted_view = view
            self.network.post(_ViewChanged(view, self.machine.match, self.machine.round_table))

    # --- bots -----------------------------------------------------------------------------------

    def _schedule_bots(self) -> None:
        machine = self.machine
        if machine.phase != "playing" or machine.replica is None or self._closed:
            return
        me = self.options.peer_id
        for seat in machine.controlled_by(me):
            level = seat.bot or (self.options.bot if seat.owner == me else None)
            if level is None:
                continue
            bot = self._bots.get(seat.player)
            if bot is None or bot.level != level:
                bot = Bot(
                    seat.player,
                    level,
                    seed=f"{me}/{seat.player}",
                    delay_scale=self.options.bot_delay,
                )
                self._bots[seat.player] = bot
            if seat.player not in self._bot_timers:
                self._think_later(seat.player, 0.0)

    def _think_later(self, player: str, delay: float) -> None:
        loop = asyncio.get_running_loop()
        self._bot_timers[player] = loop.call_later(delay, self._think, player)

    def _think(self, player: str) -> None:
        self._bot_timers.pop(player, None)
        machine = self.machine
        bot = self._bots.get(player)
        seat = machine.seat_of(player)
        if (
            bot is None
            or seat is None
            or seat.controller != self.options.peer_id
            or machine.phase != "playing"
            or machine.replica is None
            or self._closed
        ):
            return
        view = machine.replica.view
        action = bot.decide(view, time.monotonic())
        delay = bot.reaction_delay(action)
        if action is None:
            self._think_later(player, max(delay, 0.05))
            return
        # A person reacts to what they saw: the action leaves after the reaction delay.
        round_number = machine.round_number
        loop = asyncio.get_running_loop()
        self._bot_timers[player] = loop.call_later(delay, self._act, player, action, round_number)

    def _act(self, player: str, action: Action, round_number: int) -> None:
        self._bot_timers.pop(player, None)
        if self.machine.phase == "playing" and self.machine.round_number == round_number:
            self.node_submit({"k": "act", "r": round_number, "a": action.to_wire()})
        if player not in self._bot_timers:
            # Even an instant bot leaves the loop a breath between actions on a real network.
            self._think_later(player, MIN_BOT_INTERVAL)

    # --- the advert -----------------------------------------------------------------------------

    def _publish(self) -> None:
        """Advertise the table while this peer is its host. When the host's laptop is gone the
        table's host passes to the lowest remaining member (the table machine decides, the same
        everywhere), which takes the advert over: the table stays in everyone's lobby, and a
        crashed peer restarting finds it again to take its seat back."""
        if self._closed or self.machine.settings is None:
            return
        if self.machine.host != self.options.peer_id or not self.joined:
            self._withdraw()
            return
        if self.discovery is None:
            self.discovery = Discovery(self.options.interface)
        settings = self.machine.settings
        phase = self.machine.phase
        properties = {
            "v": str(PROTOCOL),
            "name": settings.name,
            "host": self.options.peer_id,
            "hostname": self.options.name,
            "mode": "partnership" if settings.partnership else "singles",
            "seats": f"{len(self.machine.seats)}/{settings.teams * settings.per_team}",
            "state": "lobby" if phase == "lobby" else ("over" if phase == "over" else "playing"),
            "code": "1" if self.options.table_code else "0",
        }
        addresses = (self.options.interface,) if self.options.interface else _local_addresses()
        advert = Advert(
            SERVICE_TYPE, self.table_id, settings.name[:40], self.port, properties, addresses
        )
        if advert != self.advert:
            self.advert = advert
            self._spawn(self._publish_now())

    async def _publish_now(self) -> None:
        if self.discovery is not None and self.advert is not None and not self._closed:
            await self.discovery.async_publish(self.advert)

    def _withdraw(self) -> None:
        advert, self.advert = self.advert, None
        if advert is not None and self.discovery is not None:
            self._spawn(self.discovery.async_withdraw(advert))


@dataclass(frozen=True)
class _ViewChanged:
    """Internal: the view, match and table the main thread should show now."""

    view: State
    match: Match | None
    table: Table | None


class LanSession:
    """The main thread's side of a LAN seat: the ``Session`` the window or a headless loop uses.

    ``host``/``join`` wait for the network side to start unless ``wait=False`` (the window, which
    must not block: ``start_error`` says later if it failed).
    """

    def __init__(
        self,
        network: NetworkThread,
        agent: TableAgent,
        starting: Future[None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._network = network
        self._agent = agent
        self._starting = starting
        self._clock = clock
        self._view: State | None = None
        self._match: Match | None = None
        self._table: Table | None = None
        self._lobby: LobbyView | None = None
        self._waiting: list[Any] = []
        self._cursor_sent: dict[str, tuple[float, tuple[str, ...]]] = {}
        self._cursor_due: dict[str, tuple[float, float, tuple[str, ...]]] = {}
        self._closed = False
        self.lobby_changed = False
        self.close_in_background = False
        """Make ``close()`` return at once and leave the table from a helper thread."""

    @classmethod
    def host(
        cls,
        options: LanOptions,
        settings: TableSettings,
        network: NetworkThread | None = None,
        wait: bool = True,
    ) -> LanSession:
        network = network or NetworkThread()
        agent = TableAgent(network, options)
        return cls._started(network, agent, agent.async_host(settings), wait)

    @classmethod
    def join(
        cls,
        options: LanOptions,
        table: TableInfo,
        network: NetworkThread | None = None,
        wait: bool = True,
    ) -> LanSession:
        network = network or NetworkThread()
        agent = TableAgent(network, options)
        return cls._started(network, agent, agent.async_join(table), wait)

    @classmethod
    def _started(
        cls, network: NetworkThread, agent: TableAgent, coroutine: Any, wait: bool
    ) -> LanSession:
        if wait:
            network.run(coroutine)
            return cls(network, agent)
        return cls(network, agent, asyncio.run_coroutine_threadsafe(coroutine, network.loop))

    @property
    def agent(self) -> TableAgent:
        """The network-side agent (read it only through ``call``/``run`` or for tests)."""
        return self._agent

    @property
    def lobby(self) -> LobbyView | None:
        """The latest lobby snapshot (None until the table is known)."""
        return self._lobby

    def start_error(self) -> str | None:
        """Why opening or joining the table failed, once it did: it could not start
        (``wait=False``), or the table refused us (its code)."""
        if self._agent.refused is not None:
            return self._agent.refused
        starting = self._starting
        if starting is None or not starting.done() or starting.cancelled():
            return None
        error = starting.exception()
        return None if error is None else (str(error) or type(error).__name__)

    @property
    def local_players(self) -> tuple[str, ...]:
        me = self._agent.options.peer_id
        seats = self._lobby.seats if self._lobby is not None else tuple(self._agent.machine.seats)
        return tuple(s.player for s in seats if s.owner == me)

    @property
    def table(self) -> Table:
        if self._table is None:
            raise RuntimeError("no round has been dealt yet")
        return self._table

    @property
    def view(self) -> State:
        if self._view is None:
            raise RuntimeError("no round has been dealt yet")
        return self._view

    @property
    def dealt(self) -> bool:
        """A round has been dealt (``view`` and ``table`` are there)."""
        return self._view is not None and self._table is not None

    @property
    def match(self) -> Match:
        if self._match is None:
            raise RuntimeError("the match has not started")
        return self._match

    def submit(self, action: Action) -> None:
        self._network.call(self._agent.submit_action, action)

    # --- the lobby (table payloads, ordered like everything else) --------------------------------

    def sit(self, team: int) -> None:
        """Sit on team ``team`` (0-based), leaving a seat held before; readiness is reset."""
        self.call(self._agent.node_submit, {"k": "sit", "team": team})

    def stand(self) -> None:
        self.call(self._agent.node_submit, {"k": "stand"})

    def ready(self, on: bool) -> None:
        self.call(self._agent.node_submit, {"k": "ready", "on": bool(on)})

    def add_bot(self, team: int, level: str) -> None:
        """Host only: a bot of ``level`` on team ``team``."""
        self.call(self._agent.node_submit, {"k": "bot", "team": team, "level": level})

    def remove_bot(self, player: str) -> None:
        """Host only."""
        self.call(self._agent.node_submit, {"k": "unbot", "player": player})

    def start(self) -> None:
        """Host only: start the match (refused by everyone alike unless ``can_start()``)."""
        self.call(self._agent.node_submit, {"k": "start"})

    # --- pointers ------------------------------------------------------------------------------

    def send_cursor(self, player: str, x: float, y: float, holding: tuple[str, ...]) -> None:
        """Share a local player's pointer: at most about 30 updates a second per player (the
        latest one goes out when its turn comes, from ``poll``), best effort, never ordered."""
        if not (math.isfinite(x) and math.isfinite(y)):
            return
        x, y = min(max(x, 0.0), 1.0), min(max(y, 0.0), 1.0)
        holding = tuple(holding)[-MAX_HOLDING:]
        self._cursor_due[player] = (x, y, holding)
        self._flush_cursors(self._clock())

    def _flush_cursors(self, now: float) -> None:
        for player, (x, y, holding) in list(self._cursor_due.items()):
            last, last_holding = self._cursor_sent.get(player, (-math.inf, ()))
            if now - last < CURSOR_INTERVAL and holding == last_holding:
                continue  # wait for its turn (a change of what it holds goes at once)
            del self._cursor_due[player]
            self._cursor_sent[player] = (now, holding)
            self._network.call(self._agent.send_ephemeral, encode_cursor(player, x, y, holding))

    def call(self, function: Callable[..., Any], *args: Any) -> None:
        """Run ``function(*args)`` in the network thread (lobby commands)."""
        self._network.call(function, *args)

    def requeue(self, events: list[Any]) -> None:
        """Hand ``events`` (from ``poll``) back, to be returned again by the next ``poll`` (a lobby
        that passes the session on to the table screen)."""
        self._waiting = [*events, *self._waiting]

    def poll(self, now: float | None = None) -> list[SessionEvent | Any]:
        if self._cursor_due:
            self._flush_cursors(self._clock())
        events: list[SessionEvent | Any] = []
        arrived, self._waiting = [*self._waiting, *self._network.drain()], []
        for event in arrived:
            if isinstance(event, _ViewChanged):
                self._view, self._match, self._table = event.view, event.match, event.table
                continue
            if isinstance(event, LobbyView):
                self._lobby = event
                continue
            if isinstance(event, LobbyChanged):
                self.lobby_changed = True
            events.append(event)
        return events

    def wait(self, timeout: float) -> None:
        """Block until an event is waiting, or ``timeout`` seconds (headless loops)."""
        import queue

        with contextlib.suppress(queue.Empty):
            self._waiting.append(self._network.events.get(timeout=timeout))

    def close(self, leave: bool = True, wait: bool | None = None) -> None:
        """Leave the table and stop the network thread (from a helper thread, returning at once,
        when ``wait`` is False or, by default, ``close_in_background`` is set)."""
        if self._closed:
            return
        self._closed = True
        if wait is None:
            wait = not self.close_in_background
        if not wait:
            threading.Thread(
                target=self._close_now, args=(leave,), name="nerts-leave", daemon=True
            ).start()
            return
        self._close_now(leave)

    def _close_now(self, leave: bool) -> None:
        try:
            if self._starting is not None:
                with contextlib.suppress(Exception):
                    self._starting.result(10)
            self._network.run(self._agent.async_close(leave), timeout=10)
        except Exception as error:  # leaving must not fail the caller; say why it was untidy
            log.warning("leaving the table: %s", error)
        finally:
            self._network.stop()


def encode_cursor(player: str, x: float, y: float, holding: tuple[str, ...]) -> bytes:
    """A pointer update as an ephemeral frame's payload (msgpack)."""
    data: bytes = msgpack.packb(
        {"k": "cur", "p": player, "x": float(x), "y": float(y), "h": list(holding)},
        use_bin_type=True,
    )
    return data


def decode_cursor(data: bytes) -> CursorMoved | None:
    """The pointer update in ``data``, or None unless it is exactly of the expected form."""
    try:
        body = msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=True,
            max_str_len=4 * MAX_NAME_LENGTH,
            max_bin_len=0,
            max_array_len=MAX_HOLDING,
            max_map_len=5,
            max_ext_len=0,
        )
    except Exception:  # msgpack raises several types for hostile input
        return None
    if not isinstance(body, dict) or set(body) != {"k", "p", "x", "y", "h"} or body["k"] != "cur":
        return None
    player, x, y, holding = body["p"], body["x"], body["y"], body["h"]
    if not (isinstance(player, str) and 0 < len(player) <= MAX_NAME_LENGTH):
        return None
    if not all(type(v) is float and 0.0 <= v <= 1.0 for v in (x, y)):
        return None
    if not (isinstance(holding, list) and len(holding) <= MAX_HOLDING):
        return None
    try:
        cards = tuple(str(Card.parse(name)) for name in holding)
    except CardError:
        return None
    return CursorMoved(player, x, y, cards)


def _injected_delay() -> Callable[[], float] | None:
    """Fault injection for tests and benchmarks, on the frames this peer sends (order kept):

    - ``NERTS_LAN_LINK_DELAY_MS="LOW,HIGH"``: each frame waits a random time in that range, as
      on a slow Wi-Fi link;
    - ``NERTS_LAN_LINK_LOSS=P``: with probability P a frame waits 200 ms more, which is what a
      lost TCP segment costs (the minimum retransmission timeout), the frames behind it waiting
      too.
    """
    import os
    import random

    low = high = loss = 0.0
    try:
        if os.environ.get("NERTS_LAN_LINK_DELAY_MS"):
            low, high = (float(x) / 1000 for x in os.environ["NERTS_LAN_LINK_DELAY_MS"].split(","))
        if os.environ.get("NERTS_LAN_LINK_LOSS"):
            loss = float(os.environ["NERTS_LAN_LINK_LOSS"])
    except ValueError:
        log.warning("ignoring a malformed NERTS_LAN_LINK_DELAY_MS or NERTS_LAN_LINK_LOSS")
        return None
    if high <= 0 and loss <= 0:
        return None
    chance = random.Random()
    return lambda: chance.uniform(low, high) + (0.2 if chance.random() < loss else 0.0)


def _is_action(payload: Any) -> bool:
    return isinstance(payload, dict) and payload.get("k") == "act"


class _Trace:
    """Timing records for the benchmark: ``NERTS_LAN_TRACE=FILE`` appends one JSON line per
    submitted, remotely applied and stable action (monotonic clock, shared by the processes of
    one machine)."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", buffering=1 << 16)  # noqa: SIM115 - closed in close()

    @classmethod
    def from_environment(cls) -> _Trace | None:
        import os

        path = os.environ.get("NERTS_LAN_TRACE")
        return cls(path) if path else None

    def record(self, kind: str, key: tuple[int, str]) -> None:
        self._file.write(f'["{kind}", {key[0]}, "{key[1]}", {time.monotonic():.6f}]\n')

    def close(self) -> None:
        self._file.close()


def _local_addresses() -> tuple[str, ...]:
    from zeroconf import get_all_addresses  # type: ignore[attr-defined]

    addresses = tuple(a for a in get_all_addresses() if not a.startswith("127."))
    return addresses or ("127.0.0.1",)
