"""The lobby of the table the player hosted or joined, drawn on the lobby screen: its name and
options (and its code, for a private one), each team's seats with "Sit here" and the host's
"+ Bot", who is at the table and what each is doing, the player's Ready and the host's Start
(enabled only when the table machine says the match can start: its reason shows otherwise), and
for the host the addresses others may type to join by address.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nerts_lan.rules.state import BACK_COLOURS
from nerts_lan.table.commands import TableSettings
from nerts_lan.table.lobby_view import LobbyView
from ui.kit.geometry import Rect
from ui.kit.theme import ACCENT, GOOD, TEXT_DIM, WARN, team_rgb
from ui.kit.widgets import FormScreen, fit
from ui.lobby.head_start import head_start_text
from ui.lobby.provider import LobbyProvider

__all__ = ["BOT_LEVELS", "TablePage"]

BOT_LEVELS = ("easy", "medium", "hard")
"""The levels of the bots the host adds, easiest first."""


class TablePage:
    """The table's lobby on ``form`` (the lobby screen's labels and buttons), as ``lobby``
    reports it; ``redraw()`` lays the screen out again (the host's bot level changed)."""

    def __init__(self, form: FormScreen, lobby: LobbyProvider, redraw: Callable[[], None]) -> None:
        self.form = form
        self.lobby = lobby
        self.redraw = redraw
        self.bot_level = "medium"
        """The level of the bots the host adds from now on."""

    def build(
        self, panel: Rect, view: LobbyView | None, open_problem: str, back: Callable[[], None]
    ) -> None:
        """The table in ``panel`` (or that it is opening, or could not be: ``open_problem``);
        Leave and Back run ``back``."""
        form = self.form
        x, y = panel.x + 28, panel.top - 44
        form.button(Rect(panel.right - 148, panel.top - 62, 120, 40), "Leave", back)
        settings = view.settings if view is not None else None
        if view is None or settings is None:
            if self.lobby.active:
                waiting = self.lobby.notice or "Opening the table…"
            else:
                waiting = "Could not open the table" if open_problem else "Not at a table"
            form.text(waiting, x, y, size=22, bold=True, colour=ACCENT)
            if not self.lobby.active:
                form.button(Rect(x, panel.y + 24, 160, 46), "Back", back, (70, 70, 80))
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
        form = self.form
        code = self.lobby.table_code
        # Clear of the Leave button, and of the table's code when there is one.
        room = (panel.x + 56 + _column(panel) if code is not None else panel.right - 148) - x - 16
        fit(form.text(settings.name, x, y, size=24, bold=True, colour=ACCENT), room)
        mode = "partnership" if settings.partnership else "singles"
        options = settings.options
        host = _host_name(view)
        form.text(
            f"hosted by {host} · {mode} · flip {options.flip} · to {options.target}",
            x,
            y - 30,
            size=13,
            colour=TEXT_DIM,
        )
        if code is not None:
            # Above the members' list, clear of the Leave button: the host reads it out.
            cx = panel.x + 56 + _column(panel)
            form.text(f"Table code: {code}", cx, panel.top - 66, size=18, bold=True, colour=GOOD)
            form.text("the players who join type it", cx, panel.top - 88, size=12, colour=TEXT_DIM)
        if view.phase != "lobby":
            form.text(
                "The match is under way: you will watch it (the table opens with the next deal)",
                x,
                y - 56,
                size=14,
                colour=WARN,
            )

    def _build_teams(self, panel: Rect, view: LobbyView, settings: TableSettings, y: float) -> None:
        """The teams, on the left: who sits where, and the buttons to sit or add a bot."""
        form = self.form
        x = panel.x + 28
        row_h = min(46.0, (y - panel.y - 150) / max(settings.teams, 1))
        mine = view.my_seat
        in_lobby = view.phase == "lobby"
        for team in range(settings.teams):
            seats = view.team(team)
            head_start = head_start_text(settings.options, BACK_COLOURS[team].capitalize())
            colour = team_rgb(BACK_COLOURS[team])
            names = ", ".join(s.player + (" ✓" if _is_ready(view, s.owner) else "") for s in seats)
            form.items.append(_Swatch(form.batch, form.group, x, y - row_h / 2 + 4, colour))
            lift = 6 if head_start else 0
            form.text(
                BACK_COLOURS[team].capitalize(),
                x + 26,
                y - row_h / 2 + 4 + lift,
                size=15,
                bold=True,
            )
            free = len(seats) < settings.per_team
            bx = x + _column(panel) - 200
            seated = form.text(
                f"{len(seats)}/{settings.per_team}  {names or '(free)'}",
                x + 120,
                y - row_h / 2 + 4 + lift,
                size=14,
            )
            room = (bx if in_lobby and free else x + _column(panel)) - 8 - (x + 120)
            fit(seated, room)
            if head_start:  # under the team's name and its players, clear of the buttons
                start = form.text(head_start, x + 26, y - row_h / 2 - 11, size=11, colour=GOOD)
                fit(start, room + 94)
            if in_lobby and free and (mine is None or mine.team != team):
                form.button(
                    Rect(bx, y - row_h + 8, 100, row_h - 10), "Sit here", self._sitter(team)
                )
            if in_lobby and free and view.is_host:
                form.button(
                    Rect(bx + 108, y - row_h + 8, 92, row_h - 10),
                    "+ Bot",
                    self._botter(team),
                    (52, 90, 130),
                )
            y -= row_h

    def _build_members(self, panel: Rect, view: LobbyView) -> None:
        """The members, on the right, and what each is doing."""
        form = self.form
        mx, my = panel.x + 56 + _column(panel), panel.top - 124
        form.text("At the table", mx, my, size=16, bold=True, colour=ACCENT)
        for peer, name in view.members:
            my -= 26
            state = _member_state(view, peer)
            role = " (host)" if peer == view.host else ""
            you = " — you" if peer == view.me else ""
            fit(
                form.text(
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
        form = self.form
        by = panel.y + 24
        in_lobby = view.phase == "lobby"
        mine = view.my_seat
        if in_lobby and mine is not None:
            ready = view.me in view.ready
            form.button(
                Rect(x, by, 180, 46),
                "Ready ✓" if ready else "I'm ready",
                self._toggle_ready,
                (40, 120, 72) if ready else (52, 70, 84),
            )
        if in_lobby and view.is_host:
            problem = view.start_problem
            start = form.button(
                Rect(x + 200, by, 180, 46), "Start", self.lobby.start, (160, 90, 30)
            )
            start.set_enabled(problem is None)
            if view.is_host:
                form.button(
                    Rect(x + 400, by, 190, 46),
                    f"Bots: {self.bot_level}",
                    self._next_bot_level,
                    on_back=self._previous_bot_level,
                )
                # The level goes with "+ Bot": say so, or the host expects seated bots to change.
                form.text(
                    "for bots added from now on; seated bots keep theirs",
                    x + 400,
                    by - 10,
                    size=11,
                    colour=TEXT_DIM,
                    anchor_y="top",
                )
            form.text(
                problem or "Everyone is ready: start when you like",
                x,
                by + 64,
                size=13,
                colour=WARN if problem else GOOD,
            )
        elif in_lobby:
            form.text(
                f"{_host_name(view)} starts the match once everyone is ready"
                if mine is not None
                else "Pick a team to play",
                x,
                by + 64,
                size=13,
                colour=TEXT_DIM,
            )

    def _build_join_addresses(self, panel: Rect) -> None:
        """The host's: where the others may type to join (when the table does not show up on
        their screens by itself), above the bottom of the members' column."""
        form = self.form
        addresses = self.lobby.join_addresses()
        if not addresses:
            return
        mx, y = panel.x + 56 + _column(panel), panel.y + 172
        form.text("Not on their screens? They join by address:", mx, y, size=12, colour=TEXT_DIM)
        for address in addresses[:3]:
            y -= 22
            fit(form.text(address, mx, y, size=15, bold=True), panel.right - 16 - mx)

    def _sitter(self, team: int) -> Callable[[], None]:
        return lambda: self.lobby.sit(team)

    def _botter(self, team: int) -> Callable[[], None]:
        return lambda: self.lobby.add_bot(team, self.bot_level)

    def _next_bot_level(self, step: int = 1) -> None:
        index = BOT_LEVELS.index(self.bot_level)
        self.bot_level = BOT_LEVELS[(index + step) % len(BOT_LEVELS)]
        self.redraw()

    def _previous_bot_level(self) -> None:
        self._next_bot_level(-1)

    def _toggle_ready(self) -> None:
        view = self.lobby.lobby()
        if view is not None:
            self.lobby.set_ready(view.me not in view.ready)


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
