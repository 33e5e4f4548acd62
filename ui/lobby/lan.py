"""The lobby over the LAN: tables found by mDNS, live, and a ``LanSession`` to host or join one.

``LanLobby`` is the window's ``LobbyProvider``. Its ``TableBrowser`` watches the LAN's adverts
for as long as the window is open, so tables appear and vanish in the menu as they are opened and
closed; hosting or joining starts a ``LanSession`` (its own network thread)
without blocking the window. What a player's peer takes part with, and whether hosting goes back
to the table the player's crashed game was at (while the LAN still lists it: ``notice`` says
so), or brings its match back from the match log when nobody kept the table (``notice``:
"Continuing the match of NAME from round N", with the scores), is the LAN service's to decide
(``nerts_lan.lan.service``); the lobby only shows it.
While the player sits in the lobby of that table, ``lobby()`` is the latest ``LobbyView`` and
the lobby commands (sit, ready, bot, start) go to the table; once a round is
dealt, ``poll`` hands the session over (to the table screen, which then owns and closes it).
A player whose network hides the adverts (multicast dropped) types the host's address instead:
``join_address`` asks it which table is there on the browser's thread (``looking`` meanwhile),
then joins it, or first wants its code (``code_wanted``) when it is private; the host's lobby
shows where to type (``join_addresses``). Nothing here imports pyglet.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass

from nerts_lan.lan.advert import CODE_REFUSALS, LanOptions, TableInfo, refusal_text
from nerts_lan.lan.browse import CHECK_EVERY, TableBrowser
from nerts_lan.lan.by_address import AddressError, parse_address
from nerts_lan.lan.resume import Resumable
from nerts_lan.lan.seat import LanSession
from nerts_lan.lan.service import (
    as_new_incarnation,
    host_or_return,
    match_back,
    options_for,
    typed_addresses,
)
from nerts_lan.rules.state import Options
from nerts_lan.table.commands import TableSettings
from nerts_lan.table.lobby_view import LobbyView
from nerts_lan.table.session import (
    RoundStarted,
    Session,
    SessionEvent,
    TableGone,
    TablePaused,
)
from ui.kit.wording import TABLE_PAUSED
from ui.lobby.provider import HostRequest, ListedTable

__all__ = ["LanLobby", "resumed_notice"]

INTERMISSION = 6.0
"""Seconds a watcher's laptop waits after a round before its commit to the next deal."""
PACE = 45.0
"""The longest a player's scoreboard waits for Next round: the next deal comes once every
player at the table pressed it, or the slowest one's 45 s ran out (time to read the scores and
the coach, and to press Show)."""


class LanLobby:
    """Tables on the LAN and the player's seat at one of them (see the module's docstring)."""

    def __init__(
        self,
        interface: str | None = None,
        *,
        intermission: float = INTERMISSION,
        pace: float = PACE,
        bot: str | None = None,
        bot_delay: float = 1.0,
        check_every: float = CHECK_EVERY,
    ) -> None:
        """``interface``: one IPv4 address for mDNS and TCP (None: every interface). ``bot``
        lets a bot play the player's own seat (demonstrations and tests). ``check_every``:
        seconds between two checks that a listed table still answers. ``intermission`` and
        ``pace``: how long the next deal waits for this laptop (``LanOptions``)."""
        self.interface = interface
        self.intermission = intermission
        self.pace = pace
        self.bot = bot
        self.bot_delay = bot_delay
        self.check_every = check_every
        self.session: LanSession | None = None
        self._browser: TableBrowser | None = None
        """Started on first use, for as long as the window is open."""
        self._problem = ""
        self._notice = ""
        self.paused = False
        """The table waits for enough of its members (the last ``TablePaused`` said so)."""
        self._closed = False
        self._looking: _LookUp | None = None
        self._by_address: dict[str, TableInfo] = {}
        """Tables found by the address the player typed, by id."""
        self.code_wanted: ListedTable | None = None
        """A table found by address that is private: the lobby asks for its code, then joins."""
        self._held: list[SessionEvent] = []
        """What came from a round's start on, before its view did (see ``poll``)."""
        self._shared: tuple[tuple[str | None, int], list[str]] | None = None
        """This laptop's addresses others may type, and the interface and port they are for."""

    # --- the list of tables ---------------------------------------------------------------------

    def tables(self) -> list[ListedTable]:
        browser = self._browse()
        return [_listed(t) for t in browser.tables()] if browser is not None else []

    def advertised(self, table_id: str) -> TableInfo | None:
        """What the advert of ``table_id`` says (address and port included), or what the
        table said when asked at the address the player typed."""
        if table_id in self._by_address:
            return self._by_address[table_id]
        browser = self._browse()
        return browser.table(table_id) if browser is not None else None

    # --- host and join ------------------------------------------------------------------------

    def host(self, player: str, request: HostRequest) -> None:
        """Open a table, or go back to the one this player's crashed game was at, when the LAN
        still has it (``notice`` says so)."""
        self.leave()
        self._notice = ""
        try:
            settings = TableSettings(
                request.name.strip()[:40] or f"{player}'s table",
                request.options,
                teams=request.seats,
                per_team=2 if request.partnership else 1,
                countdown=request.countdown,
            )
        except ValueError as error:
            self._problem = str(error)
            return
        self._problem = ""
        options = self._options(player, code=request.code)
        comeback = host_or_return(options, settings.name, self.advertised)
        if comeback is not None and comeback.table is not None:
            # The player's game crashed while this table played on (see nerts_lan.lan.comeback).
            self.join(player, comeback.table.table_id, code=request.code)
            self._notice = f"Back to your table {comeback.previous.name}"
            return
        resumed = None
        if comeback is not None:
            # Everyone's game stopped: nobody kept the table, but its match log holds the match.
            decision = match_back(comeback, options)
            if isinstance(decision, Resumable):
                settings, resumed = decision.settings, decision.match
                self._notice = resumed_notice(settings.name, decision)
            elif decision.told:
                self._notice = f"Could not continue the match: {decision.reason}"
        self._start(LanSession.host(options, settings, wait=False, resumed=resumed))

    def join(
        self, player: str, table_id: str, team: int | None = None, code: str | None = None
    ) -> None:
        self.leave()
        self._notice = ""
        self.code_wanted = None
        table = self.advertised(table_id)
        if table is None:
            self._problem = "that table is gone"
            return
        self._problem = ""
        options = as_new_incarnation(self._options(player, team, code))
        self._start(LanSession.join(options, table, wait=False))

    def join_address(self, player: str, typed: str) -> None:
        """Ask the address the player typed (``192.168.1.20:7777``, a host name) which table is
        there, then join it; ``problem`` says why not, in words (see the module)."""
        self.leave()
        self._notice = ""
        self.code_wanted = None
        try:
            host, port = parse_address(typed)
        except AddressError as error:
            self._problem = str(error)
            return
        browser = self._browse()
        if browser is None:
            return
        self._problem = ""
        self._looking = _LookUp(player, f"{host}:{port}", browser.look_up(host, port))

    @property
    def looking(self) -> str | None:
        """The address being asked which table is there (None: none)."""
        return self._looking.where if self._looking is not None else None

    def join_addresses(self) -> list[str]:
        """What others may type to join the player's table: this laptop's addresses (the one of
        the default route, most likely the Wi-Fi, first) with the table's port."""
        port = self.session.status.port if self.session is not None else 0
        if not port:
            return []
        key = (self.interface, port)
        if self._shared is None or self._shared[0] != key:
            self._shared = (key, typed_addresses(self.interface, port))
        return list(self._shared[1])

    def _looked_up(self) -> None:
        """Once the typed address answered: join its table, or want its code first."""
        look = self._looking
        if look is None or not look.answer.done():
            return
        self._looking = None
        try:
            table = look.answer.result()
        except AddressError as error:
            self._problem = str(error)
            return
        except Exception as error:  # the browser closed meanwhile, say
            self._problem = f"could not ask {look.where}: {error or type(error).__name__}"
            return
        self._by_address[table.table_id] = table
        if table.needs_code:
            self.code_wanted = _listed(table)
        else:
            self.join(look.player, table.table_id)

    def _options(self, player: str, team: int | None = None, code: str | None = None) -> LanOptions:
        return options_for(
            player,
            interface=self.interface,
            team=team,
            bot=self.bot,
            bot_delay=self.bot_delay,
            intermission=self.intermission,
            pace=self.pace,
            code=code,
        )

    def _start(self, session: LanSession) -> None:
        session.close_in_background = True  # leaving must never hold up the window
        self.session = session

    def use_interface(self, interface: str | None) -> None:
        """Browse, host and join on ``interface`` from now on (the lobby's network picker)."""
        self.interface = interface
        browser, self._browser = self._browser, None
        if browser is not None:
            browser.close()

    # --- at the table ---------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        return self.session is not None

    @property
    def problem(self) -> str:
        return self._problem

    @property
    def notice(self) -> str:
        """What the lobby has to say: the table waits for its members, or we are back at it."""
        return TABLE_PAUSED if self.paused else self._notice

    @property
    def table_code(self) -> str | None:
        return self.session.status.table_code if self.session is not None else None

    def lobby(self) -> LobbyView | None:
        return self.session.lobby if self.session is not None else None

    def sit(self, team: int) -> None:
        if self.session is not None:
            self.session.sit(team)

    def set_ready(self, ready: bool) -> None:
        if self.session is not None:
            self.session.ready(ready)

    def add_bot(self, team: int, level: str) -> None:
        if self.session is not None:
            self.session.add_bot(team, level)

    def start(self) -> None:
        if self.session is not None:
            self.session.start()

    def leave(self) -> None:
        self.paused = False
        self._looking = None
        session, self.session, self._held = self.session, None, []
        if session is not None:
            session.close()

    def poll(self, now: float) -> Session | None:
        """Refresh the list; the session once a round is dealt at the player's table (once)."""
        self._browse()
        self._looked_up()
        session = self.session
        if session is None:
            return None
        # The news of a deal and the dealt view leave the network thread one after the other: a
        # frame may see the round start before the view. What came from that start on is kept
        # for the table screen, not dropped with the lobby's own news.
        events, self._held = [*self._held, *session.poll(now)], []
        for event in events:
            if isinstance(event, TablePaused):
                self.paused = event.paused
            elif isinstance(event, TableGone):  # it ended while this laptop slept
                self._problem = event.reason
                self.leave()
                return None
        error = session.start_error()
        if error is not None:
            if error in CODE_REFUSALS:
                self._problem = refusal_text(error)
            else:
                self._problem = f"could not reach the table: {error}"
            self.leave()
            return None
        if session.dealt:
            # The table screen takes the session over, with what happened since the last frame
            # (and the wait, if the table waits now).
            session.requeue([*([TablePaused(True)] if self.paused else []), *events])
            self.session, self.paused = None, False
            return session
        starts = [i for i, event in enumerate(events) if isinstance(event, RoundStarted)]
        self._held = events[starts[0] :] if starts else []
        return None

    def close(self) -> None:
        """Leave the table and stop browsing (the window is closing)."""
        self._closed = True
        self.leave()
        browser, self._browser = self._browser, None
        if browser is not None:
            browser.close()

    # --- helpers --------------------------------------------------------------------------------

    def _browse(self) -> TableBrowser | None:
        if self._browser is None and not self._closed:
            self._browser = TableBrowser(self.interface, check_every=self.check_every)
        return self._browser


@dataclass(frozen=True)
class _LookUp:
    """The address the player typed, being asked which table is there."""

    player: str
    where: str
    answer: Future[TableInfo]


def resumed_notice(name: str, resumed: Resumable) -> str:
    """What the lobby says when hosting brought a match back from its log: the round it goes
    on with, and the scores so far."""
    scores = ", ".join(f"{team} {points}" for team, points in resumed.totals.items())
    return f"Continuing the match of {name} from round {resumed.next_round} ({scores})"


def _listed(table: TableInfo) -> ListedTable:
    per_team = 2 if table.mode == "partnership" else 1
    return ListedTable(
        table_id=table.table_id,
        name=table.name,
        host=table.host_name,
        options=Options(),
        partnership=per_team == 2,
        seats=max(table.seats_total // per_team, 1),
        started=table.state != "lobby",
        taken=table.seats_taken,
        total=table.seats_total,
        needs_code=table.needs_code,
    )
