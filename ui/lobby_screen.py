"""The table's lobby: host a table (its options), then who is here, the teams, ready and Start.

Two steps on one screen. ``host_form=True`` starts with the host's choices (the table's name, teams,
partnership, flip, target, private with a fresh code or open) and "Open table"; ``code_table``
starts with the code a private table asks for (and comes back to it when the code was wrong);
``address_form`` starts with the address of a table to join (a network that hides the tables: the
lobby asks that address which table is there, then joins it, or asks for its code first); after
hosting or joining it shows the table (with its code, for a private one) as the ``LobbyProvider``
reports it: members, each team's seats (with a "Sit here" button for another team, and "+ Bot" for
the host), who is ready, the player's Ready toggle and, for the host, Start, enabled only when the
table machine says the match can start (its reason shows otherwise), and the addresses others may
type to join by address. Once a round is dealt the provider hands over the session and
``on_session`` opens the table; a player who joins mid-match watches it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyglet.graphics import Group
from pyglet.window import key as keys

from nerts_lan.advert import DEFAULT_PORT, make_table_code, normalize_code
from nerts_lan.engine import BACK_COLOURS, Options
from nerts_lan.lan_events import LobbyView
from nerts_lan.session import Session
from nerts_lan.table import TableSettings

from .config import Settings
from .layout import Rect
from .lobby import HostRequest, ListedTable, LobbyProvider
from .network_picker import draw_network, network_warning
from .screen import Screen
from .theme import ACCENT, GOOD, TEXT_DIM, WARN, team_rgb
from .widgets import Button, FormScreen, Panel, TextField, fit

__all__ = ["LobbyScreen"]

OPEN_TIMEOUT = 20.0
"""Seconds (of the window's clock) a table may take to answer before opening it is given up."""

_TARGETS = (25, 50, 100, 150, 200)
_BOT_LEVELS = ("easy", "medium", "hard")


class LobbyScreen(FormScreen, Screen):
    """The lobby of one LAN table (see the module's docstring)."""

    def __init__(
        self,
        window: Any,
        batch: Any,
        settings: Settings,
        lobby: LobbyProvider,
        player: str,
        on_session: Callable[[Session], None],
        on_back: Callable[[], None],
        host_form: bool = False,
        code_table: ListedTable | None = None,
        address_form: bool = False,
    ) -> None:
        self.window = window
        self.batch = batch
        self.settings = settings
        self.lobby = lobby
        self.player = player
        self.on_session = on_session
        self.on_back = on_back
        self.host_form = host_form
        self.code_table = code_table
        """The private table the player is joining: the code form shows until it lets us in."""
        self.code: str | None = None
        """The host's code for the table it opens (None: an open table)."""
        self._typed_code = ""
        self.address_form = address_form
        """The player types the address of the table to join (see the module)."""
        self._typed_address = ""
        self._shown_looking: str | None = None
        self._code_problem = ""
        self.teams = 4
        self.partnership = False
        self.flip = settings.flip
        self.target = 100
        self.bot_level = "medium"
        self.group = Group(order=0)
        self.text_group = Group(order=1)
        self.items: list[Any] = []
        self.buttons: list[Button] = []
        self.name_field: TextField | None = None
        self._table_name = f"{player}'s table"[:40]
        self._shown: LobbyView | None = None
        self._shown_problem = ""
        self._ready_sent: bool | None = None
        self._opening_since: float | None = None
        """When the window started waiting for the table to answer (None: not waiting)."""
        self._open_problem = ""
        self.dirty = True
        self.resize(window.width, window.height)

    # --- frame ---------------------------------------------------------------------------------

    def update(self, now: float) -> bool:
        session = self.lobby.poll(now)
        if session is not None:
            self.on_session(session)
            return True
        view = self.lobby.lobby()
        self._give_up_opening(now, view)
        self._follow_address()
        if (
            view is not self._shown
            or self._bottom_line() != self._shown_problem
            or self.lobby.looking != self._shown_looking
        ):
            self.resize(self.window.width, self.window.height)
        dirty, self.dirty = self.dirty, False
        return dirty

    def resize(self, width: int, height: int) -> None:
        self._clear()
        margin = 24.0
        panel = Rect(margin, margin, width - 2 * margin, height - 2 * margin)
        self.items.append(Panel(self.batch, self.group, panel, alpha=215))
        self._shown = self.lobby.lobby()
        self._shown_problem = self._bottom_line()
        self._shown_looking = self.lobby.looking
        if self.host_form:
            self._build_form(panel)
        elif self.address_form:
            self._build_address_form(panel)
        elif self.code_table is not None and not self.lobby.active:
            self._build_code_form(panel, self.code_table)
        else:
            self._build_table(panel, self._shown)
        if self._shown_problem:
            self.text(
                self._shown_problem,
                width / 2,
                margin + 8,
                size=13,
                colour=WARN if self._problem() or network_warning(self) else GOOD,
                anchor_x="center",
                anchor_y="bottom",
            )
        self.dirty = True

    def close(self) -> None:
        self._clear()

    def _give_up_opening(self, now: float, view: LobbyView | None) -> None:
        """Leave a table that has not answered for ``OPEN_TIMEOUT`` seconds (gone, most likely:
        its advert outlived it), and say so, with Back to the menu."""
        if not self.lobby.active or (view is not None and view.settings is not None):
            self._opening_since = None
            return
        if self._opening_since is None:
            self._opening_since = now
        elif now - self._opening_since >= OPEN_TIMEOUT:
            self._opening_since = None
            self.lobby.leave()
            self._open_problem = (
                f"The table did not answer in {OPEN_TIMEOUT:.0f} seconds: it has probably "
                "closed. Back to the menu to pick another."
            )

    def _problem(self) -> str:
        return self.lobby.problem or self._open_problem

    def _bottom_line(self) -> str:
        """What went wrong, else what blocks the network, else what the lobby has to say
        ("Back to your table NAME")."""
        return self._problem() or network_warning(self) or self.lobby.notice

    # --- the host's choices --------------------------------------------------------------------

    def _build_form(self, panel: Rect) -> None:
        x, y = panel.x + 28, panel.top - 44
        self.text("Host a table", x, y, size=24, bold=True, colour=ACCENT)
        draw_network(self, x + 240, y, panel.right - 28)
        y -= 50
        self.text("Table name", x, y, size=15)
        self.name_field = TextField(
            self.batch,
            self.group,
            self.text_group,
            Rect(x + 200, y - 17, min(360.0, panel.right - x - 228), 34),
            self._table_name,
            max_length=40,
        )
        # (caption, value, on, back): the rows of more than two values cycle both ways.
        rows: list[tuple[str, str, Callable[[], None], Callable[[], None] | None]] = [
            ("Teams", str(self.teams), self._next_teams, self._previous_teams),
            (
                "Partnership",
                "on (two per team)" if self.partnership else "off",
                self._partners,
                None,
            ),
            ("Flip", f"{self.flip} at a time", self._toggle_flip, None),
            ("Match target", str(self.target), self._next_target, self._previous_target),
            (
                "Private",
                f"code {self.code}" if self.code else "off (anyone joins)",
                self._private,
                None,
            ),
        ]
        for caption, value, action, back in rows:
            y -= 50
            self.text(caption, x, y, size=15)
            self.button(Rect(x + 200, y - 17, 220, 34), value, action, on_back=back)
        self.button(Rect(x, panel.y + 24, 200, 46), "Open table", self._open, (40, 120, 72))
        self.button(Rect(x + 220, panel.y + 24, 140, 46), "Back", self._back, (70, 70, 80))

    def _store_name(self) -> None:
        if self.name_field is not None:
            self._table_name = self.name_field.value

    def _rebuild(self) -> None:
        self._store_name()
        self.resize(self.window.width, self.window.height)

    def _next_teams(self) -> None:
        self.teams = self.teams % 8 + 1
        self._rebuild()

    def _previous_teams(self) -> None:
        self.teams = (self.teams - 2) % 8 + 1
        self._rebuild()

    def _partners(self) -> None:
        self.partnership = not self.partnership
        self._rebuild()

    def _toggle_flip(self) -> None:
        self.flip = 1 if self.flip == 3 else 3
        self._rebuild()

    def _next_target(self, step: int = 1) -> None:
        index = _TARGETS.index(self.target) if self.target in _TARGETS else 0
        self.target = _TARGETS[(index + step) % len(_TARGETS)]
        self._rebuild()

    def _previous_target(self) -> None:
        self._next_target(-1)

    def _private(self) -> None:
        """Off → a fresh code → off: a code of our making is short and cannot be misread."""
        self.code = None if self.code else make_table_code()
        self._rebuild()

    def _open(self) -> None:
        self._store_name()
        request = HostRequest(
            self._table_name.strip() or f"{self.player}'s table",
            Options(flip=self.flip, target=self.target),
            partnership=self.partnership,
            seats=self.teams,
            code=self.code,
        )
        self._open_problem = ""
        self.lobby.host(self.player, request)
        self.host_form = False
        self.name_field = None
        self.resize(self.window.width, self.window.height)

    # --- a private table's code ------------------------------------------------------------------

    def _build_code_form(self, panel: Rect, table: ListedTable) -> None:
        x, y = panel.x + 28, panel.top - 44
        self.text(f"Join {table.name}", x, y, size=24, bold=True, colour=ACCENT)
        y -= 44
        self.text(
            f"This table is private: type the code {table.host} shows on their screen",
            x,
            y,
            size=14,
            colour=TEXT_DIM,
        )
        y -= 56
        self.text("Code", x, y, size=15)
        self.name_field = TextField(
            self.batch,
            self.group,
            self.text_group,
            Rect(x + 200, y - 17, 220, 34),
            self._typed_code,
            max_length=32,
        )
        self.name_field.focus(True)
        if self._code_problem:
            self.text(self._code_problem, x + 200, y - 44, size=13, colour=WARN)
        self.button(Rect(x, panel.y + 24, 200, 46), "Join", self._join_with_code, (40, 120, 72))
        self.button(Rect(x + 220, panel.y + 24, 140, 46), "Back", self._back, (70, 70, 80))

    def _join_with_code(self) -> None:
        table = self.code_table
        if table is None or self.name_field is None:
            return
        self._typed_code = self.name_field.value
        code = normalize_code(self._typed_code)
        if code is None:
            self._code_problem = "type the code first"
        else:
            self._code_problem = self._open_problem = ""
            self.lobby.join(self.player, table.table_id, code=code)
        self.resize(self.window.width, self.window.height)

    # --- join by address ------------------------------------------------------------------------

    def _build_address_form(self, panel: Rect) -> None:
        x, y = panel.x + 28, panel.top - 44
        self.text("Join by address", x, y, size=24, bold=True, colour=ACCENT)
        y -= 44
        self.text(
            "When a table does not show up by itself (some networks hide it), type the "
            "address its host's lobby shows",
            x,
            y,
            size=14,
            colour=TEXT_DIM,
        )
        y -= 56
        self.text("Address", x, y, size=15)
        self.name_field = TextField(
            self.batch,
            self.group,
            self.text_group,
            Rect(x + 200, y - 17, min(360.0, panel.right - x - 228), 34),
            self._typed_address,
            max_length=64,
        )
        self.name_field.focus(True)
        self.text(
            f"like 192.168.1.20:{DEFAULT_PORT}, or a host name (the port may be left out)",
            x + 200,
            y - 44,
            size=12,
            colour=TEXT_DIM,
        )
        looking = self.lobby.looking
        if looking is not None:
            self.text(f"Asking {looking} which table is there…", x + 200, y - 72, colour=GOOD)
        self.button(Rect(x, panel.y + 24, 200, 46), "Join", self._join_address, (40, 120, 72))
        self.button(Rect(x + 220, panel.y + 24, 140, 46), "Back", self._back, (70, 70, 80))

    def _join_address(self) -> None:
        if self.name_field is not None:
            self._typed_address = self.name_field.value
        self._open_problem = ""
        self.lobby.join_address(self.player, self._typed_address)
        self.resize(self.window.width, self.window.height)

    def _follow_address(self) -> None:
        """The typed address led to a table: on to it, or to its code when it is private."""
        if not self.address_form:
            return
        wanted = self.lobby.code_wanted
        if wanted is not None:
            self.code_table = wanted
        elif not self.lobby.active:
            return
        self._clear()  # keeps what was typed, while this is still the address form
        self.address_form = False
        self.resize(self.window.width, self.window.height)

    def _build_join_addresses(self, panel: Rect) -> None:
        """The host's: where the others may type to join (when the table does not show up on
        their screens by itself), above the bottom of the members' column."""
        addresses = self.lobby.join_addresses()
        if not addresses:
            return
        mx, y = panel.x + 56 + _column(panel), panel.y + 172
        self.text("Not on their screens? They join by address:", mx, y, size=12, colour=TEXT_DIM)
        for address in addresses[:3]:
            y -= 22
            fit(self.text(address, mx, y, size=15, bold=True), panel.right - 16 - mx)

    # --- the table -----------------------------------------------------------------------------

    def _build_table(self, panel: Rect, view: LobbyView | None) -> None:
        x, y = panel.x + 28, panel.top - 44
        self.button(Rect(panel.right - 148, panel.top - 62, 120, 40), "Leave", self._back)
        settings = view.settings if view is not None else None
        if view is None or settings is None:
            if self.lobby.active:
                waiting = self.lobby.notice or "Opening the table…"
            else:
                waiting = "Could not open the table" if self._open_problem else "Not at a table"
            self.text(waiting, x, y, size=22, bold=True, colour=ACCENT)
            if not self.lobby.active:
                self.button(Rect(x, panel.y + 24, 160, 46), "Back", self._back, (70, 70, 80))
            return
        self._build_heading(panel, view, settings, x, y)
        self._build_teams(panel, view, settings, y - 80)
        self._build_members(panel, view)
        self._build_actions(panel, view, x)
        if view.is_host:
            self._build_join_addresses(panel)

    def _build_heading(
        self, panel: Rect, view: LobbyView, settings: TableSettings, x: float, y: float
    ) -> None:
        code = self.lobby.table_code
        # Clear of the Leave button, and of the table's code when there is one.
        room = (panel.x + 56 + _column(panel) if code is not None else panel.right - 148) - x - 16
        fit(self.text(settings.name, x, y, size=24, bold=True, colour=ACCENT), room)
        mode = "partnership" if settings.partnership else "singles"
        options = settings.options
        host = _host_name(view)
        self.text(
            f"hosted by {host} · {mode} · flip {options.flip} · to {options.target}",
            x,
            y - 30,
            size=13,
            colour=TEXT_DIM,
        )
        if code is not None:
            # Above the members' list, clear of the Leave button: the host reads it out.
            cx = panel.x + 56 + _column(panel)
            self.text(f"Table code: {code}", cx, panel.top - 66, size=18, bold=True, colour=GOOD)
            self.text("the players who join type it", cx, panel.top - 88, size=12, colour=TEXT_DIM)
        if view.phase != "lobby":
            self.text(
                "The match is under way: you will watch it (the table opens with the next deal)",
                x,
                y - 56,
                size=14,
                colour=WARN,
            )

    def _build_teams(self, panel: Rect, view: LobbyView, settings: TableSettings, y: float) -> None:
        """The teams, on the left: who sits where, and the buttons to sit or add a bot."""
        x = panel.x + 28
        row_h = min(46.0, (y - panel.y - 150) / max(settings.teams, 1))
        mine = view.my_seat
        in_lobby = view.phase == "lobby"
        for team in range(settings.teams):
            seats = view.team(team)
            colour = team_rgb(BACK_COLOURS[team])
            names = ", ".join(s.player + (" ✓" if _is_ready(view, s.owner) else "") for s in seats)
            self.items.append(_Swatch(self.batch, self.group, x, y - row_h / 2 + 4, colour))
            self.text(
                BACK_COLOURS[team].capitalize(), x + 26, y - row_h / 2 + 4, size=15, bold=True
            )
            free = len(seats) < settings.per_team
            bx = x + _column(panel) - 200
            seated = self.text(
                f"{len(seats)}/{settings.per_team}  {names or '(free)'}",
                x + 120,
                y - row_h / 2 + 4,
                size=14,
            )
            fit(seated, (bx if in_lobby and free else x + _column(panel)) - 8 - (x + 120))
            if in_lobby and free and (mine is None or mine.team != team):
                self.button(
                    Rect(bx, y - row_h + 8, 100, row_h - 10), "Sit here", self._sitter(team)
                )
            if in_lobby and free and view.is_host:
                self.button(
                    Rect(bx + 108, y - row_h + 8, 92, row_h - 10),
                    "+ Bot",
                    self._botter(team),
                    (52, 90, 130),
                )
            y -= row_h

    def _build_members(self, panel: Rect, view: LobbyView) -> None:
        """The members, on the right, and what each is doing."""
        mx, my = panel.x + 56 + _column(panel), panel.top - 124
        self.text("At the table", mx, my, size=16, bold=True, colour=ACCENT)
        for peer, name in view.members:
            my -= 26
            state = _member_state(view, peer)
            role = " (host)" if peer == view.host else ""
            you = " — you" if peer == view.me else ""
            fit(
                self.text(
                    f"{name}{role}{you}: {state}",
                    mx,
                    my,
                    size=14,
                    colour=GOOD if state == "ready" else TEXT_DIM,
                ),
                panel.right - 16 - mx,
            )

    def _build_actions(self, panel: Rect, view: LobbyView, x: float) -> None:
        """The player's buttons (ready, and the host's start and bot level) and a hint."""
        by = panel.y + 24
        in_lobby = view.phase == "lobby"
        mine = view.my_seat
        if in_lobby and mine is not None:
            ready = view.me in view.ready
            self.button(
                Rect(x, by, 180, 46),
                "Ready ✓" if ready else "I'm ready",
                self._toggle_ready,
                (40, 120, 72) if ready else (52, 70, 84),
            )
        if in_lobby and view.is_host:
            problem = view.start_problem
            start = self.button(
                Rect(x + 200, by, 180, 46), "Start", self.lobby.start, (160, 90, 30)
            )
            start.set_enabled(problem is None)
            if view.is_host:
                self.button(
                    Rect(x + 400, by, 190, 46),
                    f"Bots: {self.bot_level}",
                    self._next_bot_level,
                    on_back=self._previous_bot_level,
                )
                # The level goes with "+ Bot": say so, or the host expects seated bots to change.
                self.text(
                    "for bots added from now on; seated bots keep theirs",
                    x + 400,
                    by - 10,
                    size=11,
                    colour=TEXT_DIM,
                    anchor_y="top",
                )
            self.text(
                problem or "Everyone is ready: start when you like",
                x,
                by + 64,
                size=13,
                colour=WARN if problem else GOOD,
            )
        elif in_lobby:
            self.text(
                f"{_host_name(view)} starts the match once everyone is ready"
                if mine is not None
                else "Pick a team to play",
                x,
                by + 64,
                size=13,
                colour=TEXT_DIM,
            )

    def _sitter(self, team: int) -> Callable[[], None]:
        return lambda: self.lobby.sit(team)

    def _botter(self, team: int) -> Callable[[], None]:
        return lambda: self.lobby.add_bot(team, self.bot_level)

    def _next_bot_level(self, step: int = 1) -> None:
        index = _BOT_LEVELS.index(self.bot_level)
        self.bot_level = _BOT_LEVELS[(index + step) % len(_BOT_LEVELS)]
        self.resize(self.window.width, self.window.height)

    def _previous_bot_level(self) -> None:
        self._next_bot_level(-1)

    def _toggle_ready(self) -> None:
        view = self.lobby.lobby()
        if view is not None:
            self.lobby.set_ready(view.me not in view.ready)

    def _back(self) -> None:
        self.lobby.leave()
        self.on_back()

    # --- input ---------------------------------------------------------------------------------

    def on_key_press(self, symbol: int, modifiers: int) -> None:
        field = self.name_field
        self.dirty = True
        if field is not None and field.focused:
            if symbol == keys.BACKSPACE:
                field.backspace()
            elif symbol in (keys.ENTER, keys.RETURN):
                field.focus(False)
                if self.host_form:
                    self._open()
                elif self.address_form:
                    self._join_address()
                else:
                    self._join_with_code()
            elif symbol == keys.ESCAPE:
                field.focus(False)
        elif symbol == keys.ESCAPE:
            self._back()
        elif symbol in (keys.ENTER, keys.RETURN) and self.host_form:
            self._open()
        elif symbol in (keys.ENTER, keys.RETURN) and self.address_form:
            self._join_address()
        elif symbol in (keys.ENTER, keys.RETURN) and self.name_field is not None:
            self._join_with_code()  # the code form

    # --- drawing helpers -----------------------------------------------------------------------

    def _clear(self) -> None:
        self._clear_widgets()
        if self.name_field is not None:
            if self.host_form:
                self._table_name = self.name_field.value
            elif self.address_form:
                self._typed_address = self.name_field.value
            else:
                self._typed_code = self.name_field.value
            self.name_field.delete()
            self.name_field = None


class _Swatch:
    """A team's colour, as a small disc."""

    def __init__(self, batch: Any, group: Any, x: float, y: float, colour: Any) -> None:
        from pyglet import shapes

        self.shape = shapes.Circle(x + 9, y, 9, color=(*colour, 255), batch=batch, group=group)

    def delete(self) -> None:
        self.shape.delete()


def _host_name(view: LobbyView) -> str:
    return view.name_of(view.host) if view.host else "?"


def _column(panel: Rect) -> float:
    """Where the members' column starts, from the teams' left edge: teams left, members right."""
    return (panel.w - 84) * 0.62


def _is_ready(view: LobbyView, owner: str | None) -> bool:
    return owner is None or owner in view.ready  # a bot is always ready


def _member_state(view: LobbyView, peer: str) -> str:
    if not any(s.owner == peer for s in view.seats):
        return "watching"
    return "ready" if peer in view.ready else "not ready"
