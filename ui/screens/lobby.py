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

from nerts_lan.lan.advert import DEFAULT_PORT, make_table_code, normalize_code
from nerts_lan.rules.state import Options
from nerts_lan.table.lobby_view import LobbyView
from nerts_lan.table.session import Session
from ui.config import MAX_HOST_TEAMS, Settings
from ui.kit.geometry import Rect
from ui.kit.network_picker import draw_network, network_warning
from ui.kit.theme import ACCENT, GOOD, TEXT_DIM, WARN
from ui.kit.widgets import Button, FormScreen, Panel, TextField
from ui.lobby.head_start import HeadStarts
from ui.lobby.provider import HostRequest, ListedTable, LobbyProvider
from ui.lobby.table_page import TablePage
from ui.screen import Screen

__all__ = ["LobbyScreen"]

OPEN_TIMEOUT = 20.0
"""Seconds (of the window's clock) a table may take to answer before opening it is given up."""

_TARGETS = (25, 50, 100, 150, 200)


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
        save_settings: Callable[[Settings], None] | None = None,
    ) -> None:
        """``save_settings``: where the host form's remembered choices go (its Teams)."""
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
        self._save_settings = save_settings
        self.teams = settings.host_teams
        self.partnership = False
        self.flip = settings.flip
        self.target = 100
        self.head_starts = HeadStarts()
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
        self.table_page = TablePage(self, lobby, self._redraw)
        """The table's lobby, once hosted or joined."""
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
        by_a_field = self.address_form or (self.code_table is not None and not self.lobby.active)
        self._shown_looking = self.lobby.looking
        if self.host_form:
            self._build_form(panel)
        elif self.address_form:
            self._build_address_form(panel)
        elif self.code_table is not None and not self.lobby.active:
            self._build_code_form(panel, self.code_table)
        else:
            self.table_page.build(panel, self._shown, self._open_problem, self._back)
        if by_a_field and self._problem():
            pass  # said under the field it is about, in the form's own size (see _field_problem)
        elif self._shown_problem:
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
        self.head_starts.build(self, x, y - 50, self.teams, self._rebuild)
        self.button(Rect(x, panel.y + 24, 200, 46), "Open table", self._open, (40, 120, 72))
        self.button(Rect(x + 220, panel.y + 24, 140, 46), "Back", self._back, (70, 70, 80))

    def _store_name(self) -> None:
        if self.name_field is not None:
            self._table_name = self.name_field.value

    def _redraw(self) -> None:
        self.resize(self.window.width, self.window.height)

    def _rebuild(self) -> None:
        self._store_name()
        self.resize(self.window.width, self.window.height)

    def _next_teams(self) -> None:
        self._choose_teams(self.teams % MAX_HOST_TEAMS + 1)

    def _previous_teams(self) -> None:
        self._choose_teams((self.teams - 2) % MAX_HOST_TEAMS + 1)

    def _choose_teams(self, teams: int) -> None:
        """Show ``teams`` and remember them: the form opens with them next time."""
        self.teams = teams
        self.settings = self.settings.with_(host_teams=teams)
        if self._save_settings is not None:
            self._save_settings(self.settings)
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
        starts = self.head_starts.handicaps(self.teams)
        request = HostRequest(
            self._table_name.strip() or f"{self.player}'s table",
            Options(flip=self.flip, target=self.target, handicaps=starts),
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
        self._field_problem(self._code_problem or self._problem(), x + 200, y - 44, panel)
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
        else:
            self._field_problem(self._problem(), x + 200, y - 72, panel)
        self.button(Rect(x, panel.y + 24, 200, 46), "Join", self._join_address, (40, 120, 72))
        self.button(Rect(x + 220, panel.y + 24, 140, 46), "Back", self._back, (70, 70, 80))

    def _field_problem(self, problem: str, x: float, y: float, panel: Rect) -> None:
        """What is wrong with what was typed, right under its field and as large as the form's
        words (it was a small line at the bottom of the window, far from the field)."""
        if problem:
            width = panel.right - x - 28
            self.text(problem, x, y, size=15, colour=WARN, anchor_y="top", width=width)

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

    # --- the table ---------------------------------------------------------------------------

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
