"""The main thread's side of a LAN seat: ``LanSession``, the ``Session`` the window or a headless
loop uses. It talks to its ``TableAgent`` (in the network thread) only through the thread's queue:
calls go in, posted events come out of ``poll``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import queue
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from nerts_lan.lan.advert import LanOptions, TableInfo
from nerts_lan.lan.agent import TableAgent
from nerts_lan.lan.cursor import MAX_HOLDING, encode_cursor
from nerts_lan.matchlog.rounds import LoggedRound, last_logged_round
from nerts_lan.rules.actions import Action
from nerts_lan.rules.scoring import Match
from nerts_lan.rules.state import State, Table
from nerts_lan.table.commands import (
    AddBot,
    Ready,
    RemoveBot,
    ResumedMatch,
    Sit,
    Stand,
    Start,
    TableSettings,
)
from nerts_lan.table.lobby_view import LobbyView, SeatStatus, ViewChanged
from nerts_lan.table.machine import LobbyChanged
from nerts_lan.table.session import SessionEvent
from net import NetworkThread

__all__ = ["LanSession", "wait_for_goodbyes"]

CURSOR_INTERVAL = 1 / 30
"""Shortest time between two pointer updates of one player (about 30 a second)."""

log = logging.getLogger(__name__)

_leaving: set[threading.Thread] = set()
"""Leaves running in the background (``close_in_background``): the process must not end before
they said goodbye (their threads are daemons, which an ending interpreter stops mid-way)."""

_Posted: TypeAlias = SessionEvent | LobbyChanged | LobbyView | SeatStatus | ViewChanged
"""What the network thread posts: the session events, and snapshots ``poll`` keeps."""


@dataclass(frozen=True)
class _Pointer:
    """A pointer update of one local player: where it is and what it holds."""

    x: float
    y: float
    holding: tuple[str, ...]


class LanSession:
    """The main thread's side of a LAN seat: the ``Session`` the window or a headless loop uses.

    ``host``/``join`` wait for the network side to start unless ``wait=False`` (the window, which
    must not block: ``start_error`` says later if it failed). Everything this side knows of the
    seat arrives as posted events and snapshots (``status``, ``lobby``, the view); everything it
    asks goes as a named call into the network thread.
    """

    def __init__(
        self,
        network: NetworkThread,
        agent: TableAgent,
        status: SeatStatus,
        starting: Future[None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._network = network
        self._agent = agent
        self._status = status
        self._starting = starting
        self._clock = clock
        self._view: State | None = None
        self._match: Match | None = None
        self._table: Table | None = None
        self._lobby: LobbyView | None = None
        self._waiting: list[_Posted] = []
        self._cursor_sent: dict[str, tuple[float, tuple[str, ...]]] = {}
        """Per player: when its last pointer update went out, and what it held."""
        self._cursor_due: dict[str, _Pointer] = {}
        """Per player: the latest pointer update, waiting for its turn."""
        self._closed = False
        self.close_in_background = False
        """Make ``close()`` return at once and leave the table from a helper thread."""

    @classmethod
    def host(
        cls,
        options: LanOptions,
        settings: TableSettings,
        network: NetworkThread | None = None,
        wait: bool = True,
        resumed: ResumedMatch | None = None,
    ) -> LanSession:
        """Open a table (going on with the match ``resumed``, if given)."""
        network = network or NetworkThread()
        agent = TableAgent(network, options)
        return cls._started(network, agent, options, agent.async_host(settings, resumed), wait)

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
        return cls._started(network, agent, options, agent.async_join(table), wait)

    # --- what the main thread knows -------------------------------------------------------------

    @property
    def status(self) -> SeatStatus:
        """This peer's place at the table (peer id, port, joined, refused...), as of the last
        ``poll`` (or as ``host``/``join`` returned, when they waited)."""
        return self._status

    def logged_round(self) -> LoggedRound | None:
        """The last finished round as this peer's match log holds it, for the coach (None
        without a log)."""
        path = self._status.log_path
        return last_logged_round(Path(path)) if path is not None else None

    @property
    def lobby(self) -> LobbyView | None:
        """The latest lobby snapshot (None until the table is known)."""
        return self._lobby

    def start_error(self) -> str | None:
        """Why opening or joining the table failed, once it did: it could not start
        (``wait=False``), or the table refused us (its code: see ``advert.CODE_REFUSALS``; known
        from the ``poll`` after the refusal arrived)."""
        if self._status.refused is not None:
            return self._status.refused
        starting = self._starting
        if starting is None or not starting.done() or starting.cancelled():
            return None
        error = starting.exception()
        return None if error is None else (str(error) or type(error).__name__)

    @property
    def local_players(self) -> tuple[str, ...]:
        me = self._status.peer_id
        seats = self._lobby.seats if self._lobby is not None else ()
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

    def poll(self, now: float | None = None) -> list[SessionEvent]:
        """What happened since the last call, in order; the snapshots (``status``, ``lobby``,
        the view) are kept, not returned."""
        if self._cursor_due:
            self._flush_cursors(self._clock())
        events: list[SessionEvent] = []
        arrived, self._waiting = [*self._waiting, *self._network.drain()], []
        for event in arrived:
            if isinstance(event, ViewChanged):
                self._view, self._match, self._table = event.view, event.match, event.table
            elif isinstance(event, LobbyView):
                self._lobby = event
            elif isinstance(event, SeatStatus):
                self._status = event
            elif not isinstance(event, LobbyChanged):  # the LobbyView after it says it all
                events.append(event)
        return events

    def requeue(self, events: list[SessionEvent]) -> None:
        """Hand ``events`` (from ``poll``) back, to be returned again by the next ``poll`` (a lobby
        that passes the session on to the table screen)."""
        self._waiting = [*events, *self._waiting]

    def wait(self, timeout: float) -> None:
        """Block until an event is waiting, or ``timeout`` seconds (headless loops)."""
        with contextlib.suppress(queue.Empty):
            self._waiting.append(self._network.events.get(timeout=timeout))

    # --- what the main thread asks (each a call into the network thread) -------------------------

    def submit(self, action: Action) -> None:
        self._call(self._agent.submit_action, action)

    def sit(self, team: int) -> None:
        """Sit on team ``team`` (0-based), leaving a seat held before; readiness is reset."""
        self._call(self._agent.submit, Sit(team))

    def stand(self) -> None:
        self._call(self._agent.submit, Stand())

    def ready(self, on: bool) -> None:
        self._call(self._agent.submit, Ready(bool(on)))

    def deal_on(self) -> None:
        """This laptop's player is ready for the next round (the scoreboard's button): the deal
        comes once every seated window at the table is, or the slowest one's wait ran out."""
        self._call(self._agent.deal_on)

    @property
    def deal_waits_for(self) -> tuple[str, ...]:
        """Between two rounds: the names of the members whose commit to the next deal has not
        come yet (``LobbyView.deal_waits_for``), as of the last ``poll``."""
        lobby = self._lobby
        if lobby is None:
            return ()
        return tuple(lobby.name_of(peer) for peer in lobby.deal_waits_for)

    @property
    def countdown(self) -> float:
        """The table's prep countdown after each deal, in seconds (0: none)."""
        lobby = self._lobby
        return float(lobby.settings.countdown) if lobby and lobby.settings else 0.0

    def add_bot(self, team: int, level: str) -> None:
        """Host only: a bot of ``level`` on team ``team``."""
        self._call(self._agent.submit, AddBot(team, level))

    def remove_bot(self, player: str) -> None:
        """Host only."""
        self._call(self._agent.submit, RemoveBot(player))

    def start(self) -> None:
        """Host only: start the match (refused by everyone alike unless ``can_start()``)."""
        self._call(self._agent.submit, Start())

    def send_cursor(self, player: str, x: float, y: float, holding: tuple[str, ...]) -> None:
        """Share a local player's pointer: at most about 30 updates a second per player (the
        latest one goes out when its turn comes, from ``poll``), best effort, never ordered."""
        if not (math.isfinite(x) and math.isfinite(y)):
            return
        x, y = min(max(x, 0.0), 1.0), min(max(y, 0.0), 1.0)
        self._cursor_due[player] = _Pointer(x, y, tuple(holding)[-MAX_HOLDING:])
        self._flush_cursors(self._clock())

    def forge_ephemeral(self, data: bytes) -> None:
        """Test hook, the one way past the cursor codec: put ``data`` on the wire as an ephemeral
        frame to every linked member, as a hostile or broken peer would."""
        self._call(self._agent.send_ephemeral, data)

    def close(self, leave: bool = True, wait: bool | None = None) -> None:
        """Leave the table and stop the network thread (from a helper thread, returning at once,
        when ``wait`` is False or, by default, ``close_in_background`` is set)."""
        if self._closed:
            return
        self._closed = True
        if wait is None:
            wait = not self.close_in_background
        if not wait:
            leaving = threading.Thread(
                target=self._close_now, args=(leave,), name="nerts-leave", daemon=True
            )
            _leaving.add(leaving)
            leaving.start()
            return
        self._close_now(leave)

    # --- helpers --------------------------------------------------------------------------------

    @classmethod
    def _started(
        cls,
        network: NetworkThread,
        agent: TableAgent,
        options: LanOptions,
        coroutine: Coroutine[Any, Any, None],
        wait: bool,
    ) -> LanSession:
        if wait:
            return cls(network, agent, network.run(_status_once_started(agent, coroutine)))
        status = SeatStatus(options.peer_id, options.name, options.table_code)
        starting = asyncio.run_coroutine_threadsafe(coroutine, network.loop)
        return cls(network, agent, status, starting)

    def _call(self, function: Callable[..., Any], *args: Any) -> None:
        """Run ``function(*args)`` in the network thread."""
        self._network.call(function, *args)

    def _flush_cursors(self, now: float) -> None:
        for player, pointer in list(self._cursor_due.items()):
            last, last_holding = self._cursor_sent.get(player, (-math.inf, ()))
            if now - last < CURSOR_INTERVAL and pointer.holding == last_holding:
                continue  # wait for its turn (a change of what it holds goes at once)
            del self._cursor_due[player]
            self._cursor_sent[player] = (now, pointer.holding)
            data = encode_cursor(player, pointer.x, pointer.y, pointer.holding)
            self._call(self._agent.send_ephemeral, data)

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
            _leaving.discard(threading.current_thread())


async def _status_once_started(agent: TableAgent, starting: Awaitable[None]) -> SeatStatus:
    """Start the seat (in the network thread) and say where it stands then."""
    await starting
    return agent.status()


def wait_for_goodbyes(timeout: float) -> bool:
    """Wait, ``timeout`` seconds at most in all, for the sessions closing in the background to
    have left their tables (the window calls it before the process ends); True when all did."""
    deadline = time.monotonic() + timeout
    for leaving in list(_leaving):
        leaving.join(max(deadline - time.monotonic(), 0.0))
        if not leaving.is_alive():
            _leaving.discard(leaving)
    return not _leaving
