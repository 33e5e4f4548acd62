"""The first screen: the player's name, practice against bots, and the tables on the LAN.

The LAN part reads a ``LobbyProvider`` (see ``lobby.py``): its table list, refreshed live, with a
"no tables found yet" state, and host / join / ready calls. Practice needs no network.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyglet.graphics import Group
from pyglet.window import key as keys

from nerts_lan.bots.bot import LEVELS
from nerts_lan.practice import MAX_OPPONENTS, PracticeConfig
from nerts_lan.rules.state import Options
from ui.config import Settings
from ui.kit.geometry import Rect
from ui.kit.network_picker import draw_network, network_warning
from ui.kit.theme import ACCENT, TEXT_DIM, WARN
from ui.kit.widgets import Button, FormScreen, Panel, TextField, fit
from ui.lobby.provider import HostRequest, ListedTable, LobbyProvider
from ui.screen import Screen

__all__ = ["MenuScreen"]

_TARGETS = (50, 100, 150, 200)


class MenuScreen(FormScreen, Screen):
    """Name, practice options and the LAN lobby; ``on_practice(config)`` starts a game."""

    def __init__(
        self,
        window: Any,
        batch: Any,
        settings: Settings,
        save_settings: Callable[[Settings], None],
        lobby: LobbyProvider,
        on_practice: Callable[[PracticeConfig], None],
        on_options: Callable[[], None] | None = None,
        on_host: Callable[[], None] | None = None,
        on_join: Callable[[ListedTable], None] | None = None,
        on_stats: Callable[[], None] | None = None,
        on_join_address: Callable[[], None] | None = None,
        on_quit: Callable[[], None] | None = None,
    ) -> None:
        """``on_host()`` opens the host's form, ``on_join(table)`` joins ``table`` and
        ``on_join_address()`` opens the form to join a table by its address (with a network);
        without them the buttons only say that the LAN is not available. ``on_stats()`` opens
        the Stats screen; ``on_quit()`` (Esc, unless typing the name) closes the window."""
        self.window = window
        self.batch = batch
        self.settings = settings
        self._save = save_settings
        self.lobby = lobby
        self.on_practice = on_practice
        self.on_options = on_options
        self.on_host = on_host
        self.on_join = on_join
        self.on_stats = on_stats
        self.on_join_address = on_join_address
        self.on_quit = on_quit
        self.target = 100
        self.group = Group(order=0)
        self.text_group = Group(order=1)
        self.items: list[Any] = []
        self.buttons: list[Button] = []
        self.name_field: TextField | None = None
        self._tables: list[ListedTable] = []
        self._message = ""
        self._warning = ""
        self.dirty = True
        self.resize(window.width, window.height)

    def update(self, now: float) -> bool:
        self.lobby.poll(now)
        tables = self.lobby.tables()
        if tables != self._tables or network_warning(self) != self._warning:
            self._tables = tables
            self.resize(self.window.width, self.window.height)
        dirty, self.dirty = self.dirty, False
        return dirty

    def resize(self, width: int, height: int) -> None:
        field = self.name_field
        value = field.value if field is not None else self.settings.player_name
        focused = field.focused if field is not None else False
        self._clear()
        margin = 24.0
        self.text(
            "Nerts", width / 2, height - 60, size=46, bold=True, colour=ACCENT, anchor_x="center"
        )
        self.text(
            "Pounce · Racing Demon — for friends on one LAN",
            width / 2,
            height - 104,
            size=15,
            colour=TEXT_DIM,
            anchor_x="center",
        )
        col_w = min((width - 3 * margin) / 2, 460.0)
        left = Rect(width / 2 - col_w - margin / 2, margin, col_w, height - 150 - margin)
        right = Rect(width / 2 + margin / 2, margin, col_w, height - 150 - margin)
        self.items.append(Panel(self.batch, self.group, left, alpha=200))
        self.items.append(Panel(self.batch, self.group, right, alpha=200))
        self._build_practice(left, value, focused)
        self._build_tables(right)
        if self.on_options is not None:
            self.button(Rect(width - 130, height - 50, 110, 34), "Options", self.on_options)
        if self.on_stats is not None:
            self.button(Rect(20, height - 50, 110, 34), "Stats", self._stats)
        if self._message:
            self.text(
                self._message,
                width / 2,
                8,
                size=13,
                colour=WARN,
                anchor_x="center",
                anchor_y="bottom",
            )
        self.dirty = True

    def _build_practice(self, left: Rect, name: str, focused: bool) -> None:
        """The left column: the player's name and a practice game against bots."""
        s = self.settings
        x, y = left.x + 20, left.top - 34
        self.text("Your name", x, y, size=15, bold=True)
        y -= 46
        self.name_field = TextField(
            self.batch, self.group, self.text_group, Rect(x, y, left.w - 40, 34), name
        )
        self.name_field.focus(focused)
        y -= 46
        self.text("Practice against bots", x, y, size=17, bold=True, colour=ACCENT)
        # (name, value, on, back): the rows of more than two values cycle both ways.
        rows: list[tuple[str, str, Callable[[], None], Callable[[], None] | None]] = [
            ("Opponents", str(s.opponents), self._more_opponents, self._fewer_opponents),
            ("Bot level", s.level, self._next_level, self._previous_level),
            ("Flip", f"{s.flip} at a time", self._toggle_flip, None),
            (
                "Partners",
                "on (a bot partner)" if s.partners else "off",
                self._toggle_partners,
                None,
            ),
            ("Match target", str(self.target), self._next_target, self._previous_target),
        ]
        row_h = min(44.0, (y - left.y - 90) / len(rows))
        for name, value_text, action, back in rows:
            y -= row_h
            self.text(name, x, y + row_h * 0.35, size=14)
            rect = Rect(left.right - 20 - 190, y + 2, 190, row_h - 8)
            self.button(rect, value_text, action, on_back=back)
        self.button(
            Rect(x, left.y + 20, left.w - 40, 46), "Practice", self._practice, (40, 120, 72)
        )

    def _build_tables(self, right: Rect) -> None:
        """The right column: the tables found on the LAN, to join or watch, and hosting one."""
        x, y = right.x + 20, right.top - 34
        self.text("Tables on your LAN", x, y, size=17, bold=True, colour=ACCENT)
        y -= 36
        self._warning = network_warning(self)
        if self._warning:  # what keeps the tables from showing up, and the setting to change
            self.text(self._warning, x, y + 10, colour=WARN, anchor_y="top", width=right.w - 40)
            y -= 56
        if not self._tables:
            self.text("No tables found yet — looking…", x, y, size=14, colour=TEXT_DIM)
            y -= 24
            self.text("Friends' tables show up here by themselves.", x, y, size=12, colour=TEXT_DIM)
        for table in self._tables[:8]:
            seated = sum(len(team) for team in table.teams) or table.taken
            kind = "partners" if table.partnership else "singles"
            state = " · playing" if table.started else ""
            state += " · needs a code" if table.needs_code else ""
            room = right.right - 110 - 12 - x  # clear of the Join button
            fit(self.text(f"{table.name}  ({table.host})", x, y, size=14, bold=True), room)
            details = f"{seated} seated · {table.seats} teams · {kind}{state}"
            fit(self.text(details, x, y - 18, size=12, colour=TEXT_DIM), room)
            caption = "Watch" if table.started else "Join"
            self.button(Rect(right.right - 110, y - 22, 90, 32), caption, self._joiner(table))
            y -= 50
        self.button(
            Rect(x, right.y + 20, right.w - 40, 46), "Host a table", self._host, (52, 90, 130)
        )
        draw_network(self, x, right.y + 90, right.right - 20)
        # For a network that hides the tables (multicast dropped): the host's lobby shows it.
        # (Above the Host button, clear of the network's line just above it.)
        by_address = Rect(x, right.y + 114, right.w - 40, 36)
        self.button(by_address, "Join by address", self._join_address, (52, 70, 84))

    def close(self) -> None:
        self._store_name()
        self._clear()

    # --- input ---------------------------------------------------------------------------------

    def on_key_press(self, symbol: int, modifiers: int) -> None:
        field = self.name_field
        typing = field is not None and field.focused
        if symbol == keys.ESCAPE and not typing and self.on_quit is not None:
            self.on_quit()
            return
        if field is not None and field.focused:
            if symbol == keys.BACKSPACE:
                field.backspace()
            elif symbol in (keys.ENTER, keys.RETURN, keys.ESCAPE):
                field.focus(False)
                self._store_name()
            self.dirty = True
        elif symbol in (keys.ENTER, keys.RETURN, keys.P):
            self._practice()

    # --- actions -------------------------------------------------------------------------------

    def player(self) -> str:
        """The name the player typed (or "You")."""
        return self._player()

    def say(self, message: str) -> None:
        """Show one line at the bottom of the menu (a problem worth knowing, not a question)."""
        self._message = message
        self.resize(self.window.width, self.window.height)

    def tell(self, text: str) -> None:
        """The window's news goes to the line at the bottom (``say``)."""
        self.say(text)

    def typed_name(self) -> str | None:
        return self.player()

    def use_settings(self, settings: Settings) -> None:
        """The menu saves its own copy of the settings: it takes the new ones."""
        self.settings = settings

    def _stats(self) -> None:
        self._store_name()
        if self.on_stats is not None:
            self.on_stats()

    def _player(self) -> str:
        name = self.name_field.value.strip() if self.name_field is not None else ""
        return name or "You"

    def _store_name(self) -> None:
        if self.name_field is not None:
            name = self.name_field.value.strip()
            if name != self.settings.player_name:
                self._update(player_name=name)

    def _update(self, **changes: Any) -> None:
        self.settings = self.settings.with_(**changes)
        self._save(self.settings)

    def _change(self, **changes: Any) -> None:
        self._store_name()
        self._update(**changes)
        self.resize(self.window.width, self.window.height)

    def _more_opponents(self) -> None:
        self._change(opponents=(self.settings.opponents + 1) % (MAX_OPPONENTS + 1))

    def _fewer_opponents(self) -> None:
        self._change(opponents=(self.settings.opponents - 1) % (MAX_OPPONENTS + 1))

    def _next_level(self, step: int = 1) -> None:
        levels = [level for level in LEVELS if level != "instant"]
        index = levels.index(self.settings.level) if self.settings.level in levels else 0
        self._change(level=levels[(index + step) % len(levels)])

    def _previous_level(self) -> None:
        self._next_level(-1)

    def _toggle_flip(self) -> None:
        self._change(flip=1 if self.settings.flip == 3 else 3)

    def _toggle_partners(self) -> None:
        self._change(partners=not self.settings.partners)

    def _next_target(self, step: int = 1) -> None:
        index = _TARGETS.index(self.target) if self.target in _TARGETS else 0
        self.target = _TARGETS[(index + step) % len(_TARGETS)]
        self._store_name()
        self.resize(self.window.width, self.window.height)

    def _previous_target(self) -> None:
        self._next_target(-1)

    def _practice(self) -> None:
        self._store_name()
        s = self.settings
        config = PracticeConfig(
            player=self._player(),
            opponents=s.opponents,
            level=s.level,
            partners=s.partners,
            options=Options(flip=s.flip, target=self.target),
        )
        self.on_practice(config)

    def _host(self) -> None:
        self._store_name()
        if self.on_host is not None:
            self.on_host()
            return
        self.lobby.host(self._player(), HostRequest(f"{self._player()}'s table"))
        self._message = "Hosting LAN tables comes with the network: try Practice meanwhile"
        self.resize(self.window.width, self.window.height)

    def _join_address(self) -> None:
        self._store_name()
        if self.on_join_address is not None:
            self.on_join_address()
            return
        self.lobby.join_address(self._player(), "")
        self._message = "Joining LAN tables comes with the network: try Practice meanwhile"
        self.resize(self.window.width, self.window.height)

    def _joiner(self, table: ListedTable) -> Callable[[], None]:
        return lambda: self._join(table)

    def _join(self, table: ListedTable) -> None:
        self._store_name()
        if self.on_join is not None:
            self.on_join(table)
            return
        self.lobby.join(self._player(), table.table_id)

    # --- drawing helpers -----------------------------------------------------------------------

    def _clear(self) -> None:
        self._clear_widgets()
        if self.name_field is not None:
            self.name_field.delete()
            self.name_field = None
