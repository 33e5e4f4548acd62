"""A seat at a table on the LAN, network-thread side: a thin asyncio driver of the table peer on
real sockets, plus the advert, the match log and the trace.

``TableAgent`` lives in the network thread (``net.runtime.NetworkThread``). It owns the node
(ordering core + TCP mesh) and the mDNS advert, and runs the effects of its ``TablePeer``
(``nerts_lan.peer``: the table fold, its duties, the lobby automation, the bots), the very code
the simulator runs in the seeded games. It posts what happened to the thread's event queue.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from net import Identity, interface_having
from net.core import OrderingCore, VoteRecord
from net.discovery import Advert, Discovery
from net.errors import LocalProtocolError
from net.events import EntriesStabilized, EntryReceived, Event
from net.node import Node
from net.runtime import NetworkThread
from net.transport import Hello

from .actions import Action
from .advert import CODE_REFUSALS, PROTOCOL, SERVICE_TYPE, LanOptions, TableInfo
from .comeback import save_vote, saved_vote, vote_path
from .commands import TableCommand, TableSettings
from .cursor import decode_cursor
from .effects import (
    Effect,
    Installed,
    MemberLogged,
    Post,
    ProvideSnapshot,
    Rejoin,
    ReportHash,
    Stabilized,
    StartTimer,
    Submit,
    Timer,
    Traced,
    Warned,
)
from .lan_events import LobbyView, SeatStatus
from .matchlog import MatchLogWriter
from .peer import PeerOptions, TablePeer
from .replica import RoundEnded
from .session import PeerGone, PeerHeardAgain, PeerReturned, PeerWentSilent, TablePaused
from .table import TablePhase
from .whereabouts import CHECK_INTERVAL, AtTable, Whereabouts, async_start_here, awake_clock

__all__ = ["TableAgent"]

log = logging.getLogger(__name__)


class TableAgent:
    """Everything of one peer's seat that runs in the network thread."""

    def __init__(self, network: NetworkThread, options: LanOptions) -> None:
        self.network = network
        self.options = options
        self.peer = TablePeer(options.peer_id, peer_options(options), _fresh_nonce)
        self.node: Node | None = None
        self.discovery: Discovery | None = None
        self.advert: Advert | None = None
        self.table_id = ""
        self.port = 0
        self.joined = False
        self._lobby: LobbyView | None = None
        self._timers: dict[Timer, asyncio.TimerHandle] = {}
        self._closed = False
        self._tasks: set[asyncio.Future[None]] = set()
        self._trace = _Trace.from_environment()
        self._log: MatchLogWriter | None = None
        self.log_path: Path | None = None
        self._contact: str | None = None
        self.refused: str | None = None
        """Why the table refused us (a code problem), once it did."""
        self.paused = False
        """The core waits for a quorum (posted as ``TablePaused`` when it flips)."""
        self._silent: set[str] = set()
        """Members whose link went quiet (``PeerWentSilent``) and that are not back yet."""
        self._vote_path: Path | None = None
        self._vote_kept: VoteRecord | None = None
        """The core's vote record as last kept in ``_vote_path``."""
        self.whereabouts = Whereabouts(self._post, options.core)
        self._look: asyncio.TimerHandle | None = None
        self._interface = interface_having(options.interface) if options.interface else None

    # --- start and stop (coroutines run in the network loop) ------------------------------------

    async def async_host(self, settings: TableSettings) -> None:
        """Open a new table on this machine and advertise it."""
        self.table_id = secrets.token_hex(4)
        self._open_log()
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
        self._run(self.peer.start([me], settings, self._ready()))
        self._check_joined()
        self._publish()

    def _salt(self) -> bytes:
        """What every laptop at this table agrees on: exact ties are drawn from it."""
        return self.table_id.encode()

    async def async_join(self, table: TableInfo) -> None:
        """Join the table ``table`` (found over mDNS, or given by address)."""
        self.table_id = table.table_id
        self._open_log()
        # This peer at this table before (a crash, a restart): vote in its predecessor's place.
        predecessor = saved_vote(self._vote_path) if self._vote_path is not None else None
        self._vote_kept = predecessor
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
        for timer in [*self._timers.values(), *([self._look] if self._look else [])]:
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
            if leave:
                self._log.member("left", self.options.peer_id)
            self._log.close()

    def submit(self, command: TableCommand) -> None:
        """Order a command of this peer's user (a lobby button), if it may submit now."""
        self._run(self.peer.submit(command))

    def submit_action(self, action: Action) -> None:
        """A local intent: ordered, and shown at once in the view."""
        self._run(self.peer.submit_action(action))

    def send_ephemeral(self, data: bytes) -> None:
        """Best effort, outside the log: to every member linked now (a pointer update)."""
        if self.node is not None and not self._closed:
            self.node.broadcast_ephemeral(data)

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
            delay=_injected_delay(),
            on_ephemeral=self._on_ephemeral,
            table_code=self.options.table_code,
            key=self.options.key,
            before_send=self._before_send,
            datagrams=_datagrams_wanted(),
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
        record = core.vote_record()
        if record != self._vote_kept:
            self._keep_vote(record)
        if core.paused != self.paused:
            self.paused = core.paused
            self._post(TablePaused(self.paused))
            self._publish()

    def _keep_vote(self, record: VoteRecord | None) -> None:
        self._vote_kept = record
        if record is None or self._vote_path is None:
            return
        try:
            save_vote(self._vote_path, record)
        except OSError as error:
            log.warning("cannot keep the vote in %s: %s", self._vote_path, error)

    def _ready(self) -> bool:
        return self.node is not None and self.node.core.ready and not self._closed

    def _on_link_problem(self, who: str, reason: str) -> None:
        log.warning("%s: %s", who, reason)
        if not self.joined and who == self._contact and reason in CODE_REFUSALS:
            # The table will not have us with this code: ``start_error`` says so.
            self.refused = reason
            self._post_status()

    def _on_moved(self, old: str, new: str) -> None:
        """Our address changed: the advert, and the mDNS bound to the old address, follow."""
        if self.options.interface == old:
            self.options.interface = new
            discovery, self.discovery = self.discovery, None
            if discovery is not None:
                self._spawn(discovery.async_close())
        self.advert = None  # published again, with the new address
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
            self.whereabouts.tick(awake_clock(), _at_table(self))
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
        self._run(self.peer.on_core_events(events, self._ready()))
        if self._log is not None:
            self._log.flush()  # what is stable survives a crash of this process
        self._check_joined()

    def _check_joined(self) -> None:
        if not self.joined and self._ready():
            self.joined = True
            self._post_status()
            self._publish()

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
                self._spawn(_rejoin(self))
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
        self.network.post(event)
        if isinstance(event, RoundEnded) and self._log is not None:
            self._log.sync()  # a finished round survives a crash of the machine, not only ours
        if isinstance(event, LobbyView):
            self._lobby = event
            self._publish()
        elif isinstance(event, PeerWentSilent):
            self._silent.add(event.peer)
            self._publish()
        elif isinstance(event, (PeerHeardAgain, PeerGone, PeerReturned)):
            self._silent.discard(event.peer)

    def _record(self, effect: Effect) -> None:
        """The match log, the benchmark's trace and the operator's log."""
        if isinstance(effect, Warned):
            log.warning("%s: %s", self.options.peer_id, effect.message)
        elif isinstance(effect, Traced):
            if self._trace is not None:
                self._trace.record(effect.kind, effect.key)
        elif self._log is None:
            return
        elif isinstance(effect, Stabilized):
            self._log.entry(effect.entry.ts, effect.entry.peer, effect.entry.payload)
        elif isinstance(effect, MemberLogged):
            self._log.member(effect.change, effect.peer)
        elif isinstance(effect, Installed):
            self._log.snapshot(effect.stable_index, effect.snapshot)

    def _open_log(self) -> None:
        """Append this table's stable log to the data folder (one file per table and peer; a
        restarted peer appends, after a snapshot record)."""
        if self.options.log_folder is None:
            return
        folder = Path(self.options.log_folder)
        self.log_path = folder / f"{self.table_id}-{self.options.peer_id}.nlog"
        self._vote_path = vote_path(folder, self.table_id, self.options.peer_id)
        try:
            self._log = MatchLogWriter(self.log_path, clock=time.time)  # entries with wall time
        except OSError as error:
            log.warning("cannot write the match log %s: %s", self.log_path, error)
            self._log, self.log_path = None, None

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
            self._withdraw()
            return
        settings = lobby.settings
        properties = {
            "v": str(PROTOCOL),
            "name": settings.name,
            "host": self.options.peer_id,
            "hostname": self.options.name,
            "mode": "partnership" if settings.partnership else "singles",
            "seats": f"{len(lobby.seats)}/{settings.seats}",
            "state": _advert_state(lobby.phase),
            "code": "1" if self.options.table_code else "0",
        }
        # The same properties answer a stranger who asks this port which table is here: a
        # player joins by address where the network drops mDNS (nerts_lan.by_address).
        if self.node is not None:
            self.node.mesh.description.set(properties)
        if self.discovery is None:
            self.discovery = Discovery(self.options.interface)
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
        if self.node is not None:
            self.node.mesh.description.set(None)
        advert, self.advert = self.advert, None
        if advert is not None and self.discovery is not None:
            self._spawn(self.discovery.async_withdraw(advert))


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
    )


async def _rejoin(agent: TableAgent) -> None:
    """Join the table again as a new incarnation (the others went on without us: ``Rejoin``),
    through every peer we know an address for, and catch up."""
    old = agent.node
    if old is None or agent._closed:
        return
    # Everyone we know an address for, not only our group's members: after a split our
    # group may have dissolved (all of it rejoining), and the table is the other group.
    contacts = old.mesh.addresses()
    incarnation = max(old.core.incarnation + 1, int(time.time() * 1000))
    predecessor = old.core.vote_record()
    await old.async_close()
    agent.joined = False
    agent._silent.clear()  # the new core suspects anew whom it does not hear
    core = OrderingCore.joining(
        agent.options.peer_id,
        sorted(contacts),
        time.monotonic(),
        agent.options.core,
        incarnation,
        predecessor=predecessor,
        identity=agent._identity(),
        salt=agent._salt(),
    )
    await agent._start_node(core)
    assert agent.node is not None
    for peer, (host, port) in sorted(contacts.items()):
        agent.node.contact(peer, host, port)
    agent._publish()  # withdraws the advert until we are back


def _at_table(agent: TableAgent) -> AtTable:
    """Where the seat stands, for ``Whereabouts``."""
    seated = agent._ready() and agent.joined and not agent.paused and not agent._silent
    over = agent._lobby is not None and agent._lobby.phase == TablePhase.OVER
    return AtTable(seated, over)


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


def _advert_state(phase: str) -> str:
    """What the lobby lists: a table still seating people, playing, or over."""
    if phase == TablePhase.LOBBY:
        return "lobby"
    return "over" if phase == TablePhase.OVER else "playing"


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


def _datagrams_wanted() -> bool:
    """Whether small frames go by UDP datagram too (``net._fastpath``): yes unless
    ``NERTS_LAN_DATAGRAMS=0`` (the benchmark compares with TCP alone)."""
    import os

    return os.environ.get("NERTS_LAN_DATAGRAMS", "1") != "0"


class _Trace:
    """Timing records for the benchmark: ``NERTS_LAN_TRACE=FILE`` appends one JSON line per
    submitted, remotely applied and stable action (monotonic clock, shared by the processes of
    one machine)."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", buffering=1 << 16, encoding="utf-8")  # noqa: SIM115 - closed in close()

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
