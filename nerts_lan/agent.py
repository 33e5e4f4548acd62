"""A seat at a table on the LAN, network-thread side: the ordering core on real sockets, the
table fold, the advert, bots.

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
import logging
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from net.core import OrderingCore
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
from net.transport import Hello

from .actions import Action, MalformedError
from .advert import CODE_REFUSALS, PROTOCOL, SERVICE_TYPE, LanOptions, TableInfo
from .bots import Bot
from .cursor import decode_cursor
from .engine import State
from .lan_events import LobbyView, SeatStatus, ViewChanged
from .matchlog import MatchLogWriter
from .replica import ActionRejected
from .session import PeerHeardAgain, PeerWentSilent, RoundStarted
from .table import (
    CommitDue,
    EntryIgnored,
    LobbyChanged,
    RevealDue,
    TableMachine,
    TableSettings,
    commit_digest,
)

__all__ = ["TableAgent"]

MIN_BOT_INTERVAL = 0.002
"""Seconds between two actions of one bot on the LAN, whatever its level."""

HASH_INTERVAL = 32
"""Stable entries between two state-hash exchanges."""

log = logging.getLogger(__name__)


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
        self._post_status()

    def _on_link_problem(self, who: str, reason: str) -> None:
        log.warning("%s: %s", who, reason)
        if not self.joined and who == self._contact and reason in CODE_REFUSALS:
            # The table will not have us with this code: ``start_error`` says so.
            self.refused = reason
            self._post_status()

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
                    PeerWentSilent(event.peer, machine.members.get(event.peer, event.peer))
                )
            elif isinstance(event, MemberRecovered):
                self._suspected.discard(event.peer)
                self.network.post(
                    PeerHeardAgain(event.peer, machine.members.get(event.peer, event.peer))
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

    def status(self) -> SeatStatus:
        """This peer's place at the table, for the main thread (see ``LanSession.status``)."""
        return SeatStatus(
            peer_id=self.options.peer_id,
            name=self.options.name,
            table_code=self.options.table_code,
            table_id=self.table_id,
            port=self.port,
            joined=self.joined,
            log_path=self.log_path,
            refused=self.refused,
        )

    def _post_status(self) -> None:
        self.network.post(self.status())

    def _after_join(self) -> None:
        self.joined = True
        self._post_status()
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
            self.network.post(ViewChanged(view, self.machine.match, self.machine.round_table))

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
