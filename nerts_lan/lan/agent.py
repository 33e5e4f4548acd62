"""A seat at a table on the LAN, network-thread side: a thin asyncio driver of the table peer on
real sockets, plus the advert (``nerts_lan.lan.publisher``), the match log and kept vote
(``nerts_lan.lan.seat_log``) and the trace.

``TableAgent`` lives in the network thread (``net.runtime.NetworkThread``). It owns the node
(ordering core + TCP mesh) and the mDNS advert, and runs the effects of its ``TablePeer``
(``nerts_lan.table.peer``: the table fold, its duties, the lobby automation, the bots), the very
code the simulator runs in the seeded games. It posts what happened to the thread's event queue.
``LanSession`` is the main thread's side of it: the ``Session`` the window or a headless loop uses.

Wiring, for one peer::

    network thread:  mesh frames -> OrderingCore -> events -> TablePeer -> effects
                     effects -> Node (submit, hash, snapshot), asyncio timers, the event queue
    main thread:     LanSession.submit(action) -> network thread; LanSession.poll() <- events

Lobby commands (``Sit``, ``Ready``, ``AddBot``, ``Start``...) are table commands ordered like
everything else; the main thread sees the lobby through ``LobbyView`` snapshots. Pointers travel
outside the log, as best-effort ephemeral frames of the mesh (``send_cursor`` / ``CursorMoved``).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from pathlib import Path
from typing import Any

from nerts_lan.lan.advert import CODE_REFUSALS, PROTOCOL, LanOptions, TableInfo
from nerts_lan.lan.cursor import decode_cursor
from nerts_lan.lan.environment import Trace, datagrams_wanted, mesh_factory
from nerts_lan.lan.publisher import AdvertPublisher
from nerts_lan.lan.rejoining import RejoinPacer
from nerts_lan.lan.seat_log import SeatLog
from nerts_lan.lan.whereabouts import (
    CHECK_INTERVAL,
    AtTable,
    Whereabouts,
    async_start_here,
    awake_clock,
)
from nerts_lan.rules.actions import Action
from nerts_lan.table.commands import ResumedMatch, TableCommand, TableSettings
from nerts_lan.table.effects import (
    Effect,
    Post,
    ProvideSnapshot,
    Rejoin,
    ReportHash,
    StartTimer,
    Submit,
    Timer,
    Traced,
    Warned,
)
from nerts_lan.table.lobby_view import LobbyView, SeatStatus
from nerts_lan.table.machine import TablePhase
from nerts_lan.table.peer import PeerOptions, TablePeer
from nerts_lan.table.replica import RoundEnded
from nerts_lan.table.session import (
    ClockLags,
    PeerGone,
    PeerHeardAgain,
    PeerReturned,
    PeerWentSilent,
    TablePaused,
)
from net import (
    Hello,
    Identity,
    NetworkThread,
    Node,
    OrderingCore,
    interface_having,
)
from net.errors import LocalProtocolError
from net.events import ClockSuspected, EntriesStabilized, EntryReceived, Event

__all__ = ["LEAVE_GRACE", "TableAgent"]

LEAVE_GRACE = 1.0
"""Seconds a leaving seat waits at most for the others to acknowledge its goodbye."""

log = logging.getLogger(__name__)


class TableAgent:
    """Everything of one peer's seat that runs in the network thread."""

    def __init__(self, network: NetworkThread, options: LanOptions) -> None:
        self.network = network
        self.options = options
        self.peer = TablePeer(options.peer_id, peer_options(options), _fresh_nonce, self._rank)
        self.node: Node | None = None
        self.table_id = ""
        self.port = 0
        self.joined = False
        self._lobby: LobbyView | None = None
        self._timers: dict[Timer, asyncio.TimerHandle] = {}
        self._closed = False
        self._tasks: set[asyncio.Future[None]] = set()
        self._advert = AdvertPublisher(options, self._spawn)
        self._trace = Trace.from_environment()
        self._log = SeatLog()
        """The match log and the kept vote."""
        self._contact: str | None = None
        self.refused: str | None = None
        """Why the table refused us (a code problem), once it did."""
        self.paused = False
        """The core waits for a quorum (posted as ``TablePaused`` when it flips)."""
        self._silent: set[str] = set()
        """Members whose link went quiet (``PeerWentSilent``) and that are not back yet."""
        self.whereabouts = Whereabouts(self._post, options.core)
        self._look: asyncio.TimerHandle | None = None
        self._interface = interface_having(options.interface) if options.interface else None
        # A stay of a few exclusion timeouts is a real one (the seat played), not a visit.
        self._pacer = RejoinPacer(steady=4 * options.core.exclude_timeout)
        self._retry: asyncio.TimerHandle | None = None
        """The rejoin the pacer put off (``Unreachable``), until it is due."""

    # --- start and stop (coroutines run in the network loop) ------------------------------------

    async def async_host(
        self, settings: TableSettings, resumed: ResumedMatch | None = None
    ) -> None:
        """Open a new table on this machine and advertise it (going on with the match
        ``resumed``, brought back from a match log: ``nerts_lan.lan.resume``)."""
        self.table_id = secrets.token_hex(4)
        self._log.open(self.options.log_folder, self.table_id, self.options.peer_id)
        me = self.options.peer_id
        core = OrderingCore(
            me,
            [me],
            time.monotonic(),
            self.options.core,
            identity=self._identity(),
            salt=self._salt(),
        )
        await self._start_node(core)
        self._run(self.peer.start([me], settings, self._ready(), resumed))
        self._check_joined()
        self._publish()

    def _salt(self) -> bytes:
        """What every laptop at this table agrees on: exact ties are drawn from it."""
        return self.table_id.encode()

    async def async_join(self, table: TableInfo) -> None:
        """Join the table ``table`` (found over mDNS, or given by address)."""
        self.table_id = table.table_id
        self._log.open(self.options.log_folder, self.table_id, self.options.peer_id)
        # This peer at this table before (a crash, a restart): vote in its predecessor's place.
        predecessor = self._log.predecessor()
        core = OrderingCore.joining(
            self.options.peer_id,
            [table.host_peer],
            time.monotonic(),
            self.options.core,
            self.options.incarnation,
            predecessor=predecessor,
            identity=self._identity(),
            salt=self._salt(),
        )
        self._contact = table.host_peer
        await self._start_node(core)
        assert self.node is not None
        self.node.contact(table.host_peer, table.address, table.port)

    async def async_close(self, leave: bool = True) -> None:
        """Leave the table (telling the others, unless ``leave`` is False) and stop."""
        self._closed = True
        self._advert.stop()
        later = [handle for handle in (self._look, self._retry) if handle is not None]
        for timer in [*self._timers.values(), *later]:
            timer.cancel()
        if self.node is not None:
            if leave:
                try:
                    self.node.leave()
                    # A lossy link may lose the notice: resend until the others have it.
                    await self.node.async_drain(LEAVE_GRACE)
                except LocalProtocolError:
                    pass
            await self.node.async_close()
        await self._advert.async_close()
        if self._trace is not None:
            self._trace.close()
        self._log.close(left=self.options.peer_id if leave else None)

    def submit(self, command: TableCommand) -> None:
        """Order a command of this peer's user (a lobby button), if it may submit now."""
        self._run(self.peer.submit(command))

    def deal_on(self) -> None:
        """This peer's player is ready for the next deal (``TablePeer.deal_on``)."""
        self._run(self.peer.deal_on())

    def submit_action(self, action: Action) -> None:
        """A local intent: ordered, and shown at once in the view."""
        self._run(self.peer.submit_action(action))

    def send_ephemeral(self, data: bytes) -> None:
        """Best effort, outside the log: to every member linked now (a pointer update)."""
        if self.node is not None and not self._closed:
            self.node.broadcast_ephemeral(data)

    @property
    def log_path(self) -> Path | None:
        """The match log this seat appends to (None: none)."""
        return self._log.path

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

    # --- the node -------------------------------------------------------------------------------

    async def _start_node(self, core: OrderingCore) -> None:
        hello = Hello(
            PROTOCOL, self.table_id, self.options.peer_id, self.options.name, core.incarnation
        )
        self.node = Node(
            core,
            hello,
            on_events=self._on_events,
            on_problem=self._on_link_problem,
            mesh_factory=mesh_factory(),
            on_ephemeral=self._on_ephemeral,
            table_code=self.options.table_code,
            key=self.options.key,
            before_send=self._before_send,
            datagrams=datagrams_wanted(),
            on_link=self._on_link,
            on_moved=self._on_moved,
        )
        address = self.options.interface
        self.port, now = await async_start_here(self.node, address, self._interface)
        if address is not None and now != address:
            self._on_moved(address, now or address)  # it moved while we rejoined
        self._post_status()
        if self._look is None:
            self._look_around()  # the first look: the clock's jumps count from now

    def _identity(self) -> Identity:
        """What the core signs our actions with, for this table: every action at a LAN table is
        signed, and every action from others checked (docs/protocol.md)."""
        return Identity(self.options.key, self.table_id)

    def _before_send(self, core: OrderingCore) -> None:
        """After each call into the core, before its frames go out: keep its vote where a crash
        does not lose it (a vote must not be heard and then forgotten), and say when the table
        pauses or is back."""
        if self.node is not None and core is not self.node.core:
            return  # a node being replaced
        self._log.keep_vote(core.vote_record())
        if core.paused != self.paused:
            self.paused = core.paused
            self._post(TablePaused(self.paused))
            self._publish()

    def _ready(self) -> bool:
        return self.node is not None and self.node.core.ready and not self._closed

    def _rank(self, key: tuple[int, str]) -> tuple[int, int, str]:
        """The place of an entry in the table's log, as the running core orders it (the table
        peer asks only while a core runs: for its entries and events)."""
        assert self.node is not None
        return self.node.core.rank(key)

    def _on_link_problem(self, who: str, reason: str) -> None:
        if not self.joined and who == self._contact and reason in CODE_REFUSALS:
            # The table will not have us with this code: ``start_error`` says so, in the one
            # line the user reads (a warning too would say it twice, as noise).
            log.info("%s: %s", who, reason)
            self.refused = reason
            self._post_status()
            return
        log.warning("%s: %s", who, reason)

    def _on_moved(self, old: str, new: str) -> None:
        """Our address changed: the advert, and the mDNS bound to the old address, follow."""
        rebind = self.options.interface == old
        if rebind:
            self.options.interface = new
        self._advert.moved(rebind)  # published again below, with the new address
        if self.node is not None:
            self.port = self.node.mesh.port
            others = _others(self.node, self.options.peer_id)
            self.whereabouts.moved(old, new, others, self.node.mesh.connected())
        self._post_status()
        self._publish()

    def _on_link(self, peer: str, up: bool) -> None:
        if up and self.node is not None:
            others = _others(self.node, self.options.peer_id)
            self.whereabouts.linked(self.node.mesh.connected(), others)

    def _look_around(self) -> None:
        """Every ``CHECK_INTERVAL``: was this laptop away, and is it back at the table?"""
        if not self._closed:
            self.whereabouts.tick(awake_clock(), self._at_table())
            self._look = asyncio.get_running_loop().call_later(CHECK_INTERVAL, self._look_around)

    def _on_ephemeral(self, peer: str, data: bytes) -> None:
        """A pointer update from ``peer``: shown only if it is sane and for a seat ``peer``
        plays now; anything else is dropped without a word (it is not worth a log line)."""
        cursor = decode_cursor(data)
        if cursor is None or peer == self.options.peer_id:
            return
        if self.peer.plays(peer, cursor.player):
            self.network.post(cursor)

    def _on_events(self, events: list[Event]) -> None:
        for event in events:
            if not isinstance(event, (EntryReceived, EntriesStabilized)):
                log.info("%s: %s", self.options.peer_id, event)
            if isinstance(event, ClockSuspected):  # the core's flag, for the players to see
                name = self.peer.machine.members.get(event.peer, event.peer)
                self._post(ClockLags(event.peer, name, event.lag))
        self._run(self.peer.on_core_events(events, self._ready()))
        self._log.flush()  # what is stable survives a crash of this process
        self._check_joined()

    def _check_joined(self) -> None:
        if not self.joined and self._ready():
            self.joined = True
            self._pacer.admitted(time.monotonic())
            self._post_status()
            self._publish()

    async def _rejoin(self) -> None:
        """Join the table again as a new incarnation (the others went on without us: ``Rejoin``),
        through every peer we know an address for, and catch up."""
        old = self.node
        if old is None or self._closed:
            return
        # Everyone we know an address for, not only our group's members: after a split our
        # group may have dissolved (all of it rejoining), and the table is the other group.
        contacts = old.mesh.addresses()
        incarnation = max(old.core.incarnation + 1, int(time.time() * 1000))
        predecessor = old.core.vote_record()
        await old.async_close()
        self.joined = False
        self._silent.clear()  # the new core suspects anew whom it does not hear
        core = OrderingCore.joining(
            self.options.peer_id,
            sorted(contacts),
            time.monotonic(),
            self.options.core,
            incarnation,
            predecessor=predecessor,
            identity=self._identity(),
            salt=self._salt(),
        )
        await self._start_node(core)
        assert self.node is not None
        for peer, (host, port) in sorted(contacts.items()):
            self.node.contact(peer, host, port)
        self._publish()  # withdraws the advert until we are back

    def _rejoin_paced(self) -> None:
        """Rejoin at once, unless the table let us go too often in a row: then say why and
        rejoin later (``nerts_lan.lan.rejoining``), leaving the others to play on meanwhile."""
        if self._retry is not None:
            return  # already waiting to rejoin
        wait = self._pacer.expelled(time.monotonic())
        if wait is None:
            self._spawn(self._rejoin())
            return
        self._post(wait)
        log.warning("%s: %s", self.options.peer_id, wait.message)

        def retry() -> None:
            self._retry = None
            self._spawn(self._rejoin())

        self._retry = asyncio.get_running_loop().call_later(wait.seconds, retry)

    def _at_table(self) -> AtTable:
        """Where the seat stands, for ``Whereabouts``."""
        seated = self._ready() and self.joined and not self.paused and not self._silent
        over = self._lobby is not None and self._lobby.phase == TablePhase.OVER
        return AtTable(seated, over)

    # --- the peer's effects ---------------------------------------------------------------------

    def _run(self, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, Submit):
                self._submit(effect.command)
            elif isinstance(effect, ReportHash):
                if self.node is not None:
                    self.node.report_state_hash(effect.index, effect.digest)
            elif isinstance(effect, ProvideSnapshot):
                if self.node is not None:
                    self.node.provide_snapshot(effect.peer, effect.stable_index, effect.snapshot)
            elif isinstance(effect, StartTimer):
                loop = asyncio.get_running_loop()
                self._timers[effect.timer] = loop.call_later(effect.delay, self._fire, effect.timer)
            elif isinstance(effect, Post):
                self._post(effect.event)
            elif isinstance(effect, Rejoin):
                self._rejoin_paced()
            else:
                self._record(effect)

    def _submit(self, command: TableCommand) -> None:
        entry = None
        if self.node is not None and self._ready():
            entry = self.node.submit(command.to_wire())
        self._run(self.peer.on_submitted(command, entry))

    def _fire(self, timer: Timer) -> None:
        self._timers.pop(timer, None)
        if not self._closed:
            self._run(self.peer.on_timer(timer, time.monotonic(), self._ready()))

    def _post(self, event: Any) -> None:
        if isinstance(event, RoundEnded):
            # On disk before anyone is told: a round shown as over survives a crash of the
            # machine (and a kill the moment it is shown), not only of this process.
            self._log.sync()
        self.network.post(event)
        if isinstance(event, LobbyView):
            self._lobby = event
            self._publish()
        elif isinstance(event, PeerWentSilent):
            self._silent.add(event.peer)
            self._pacer.went_silent(event.peer, event.name)
            self._publish()
        elif isinstance(event, (PeerHeardAgain, PeerGone, PeerReturned)):
            self._silent.discard(event.peer)
            self._pacer.heard_again(event.peer)

    def _record(self, effect: Effect) -> None:
        """The match log, the benchmark's trace and the operator's log."""
        if isinstance(effect, Warned):
            log.warning("%s: %s", self.options.peer_id, effect.message)
        elif isinstance(effect, Traced):
            if self._trace is not None:
                self._trace.record(effect.kind, effect.key)
        else:
            self._log.record(effect)

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _post_status(self) -> None:
        self.network.post(self.status())

    # --- the advert -----------------------------------------------------------------------------

    def _publish(self) -> None:
        """Advertise the table while this peer is its host. When the host's laptop is gone the
        table's host passes to the lowest remaining member (the table machine decides, the same
        everywhere), which takes the advert over: the table stays in everyone's lobby, and a
        crashed peer restarting finds it again to take its seat back."""
        lobby = self._lobby
        if self._closed or lobby is None or lobby.settings is None:
            return
        stands_in = _stands_in_for_host(lobby, self.paused, self._silent, self.options.peer_id)
        if not (lobby.is_host or stands_in) or not self.joined:
            self._advert.withdraw(self.node)
            return
        self._advert.publish(lobby, lobby.settings, self.node, self.table_id, self.port)


def peer_options(options: LanOptions) -> PeerOptions:
    """The table's side of how this peer takes part."""
    return PeerOptions(
        options.name,
        team=options.team,
        bot=options.bot,
        bot_delay=options.bot_delay,
        players=options.players,
        spectate=options.spectate,
        intermission=options.intermission,
        pace=options.pace,
    )


def _stands_in_for_host(lobby: LobbyView, paused: bool, silent: set[str], me: str) -> bool:
    """While the table is paused with its host silent, the table passes to nobody (that takes
    a decision): the lowest member still heard advertises it meanwhile, so that the host,
    restarted, finds its table again and brings it back (a table of two whose host holds the
    lowest id waits for exactly that)."""
    if not paused or lobby.host not in silent:
        return False
    heard = [peer for peer, _ in lobby.members if peer not in silent]
    return bool(heard) and min(heard) == me


def _others(node: Node, me: str) -> set[str]:
    """The other members of the table."""
    return set(node.core.members) - {me}


def _fresh_nonce() -> bytes:
    return secrets.token_bytes(32)
