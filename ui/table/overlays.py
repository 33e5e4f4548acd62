"""Panels over the table: keyboard help, options, and the scoreboard with its chart."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from pyglet import shapes
from pyglet.graphics import Group

from nerts_lan.rules.handicap import multiplier_text
from nerts_lan.rules.scoring import Match
from nerts_lan.rules.state import State, Table
from nerts_lan.table.replica import RoundEnded
from ui.config import CARD_SIZES, READOUTS, Settings
from ui.kit.geometry import Rect
from ui.kit.theme import ACCENT, GOOD, TEXT, TEXT_DIM, team_rgb
from ui.kit.widgets import Button, Panel, fit, label
from ui.kit.wording import team_label, wins
from ui.table.help_page import GAME_LINES, table_sketch
from ui.table.intents import KEY_HELP
from ui.table.tally import CountedRow, Tally

__all__ = [
    "PANEL_ALPHA",
    "HelpOverlay",
    "OptionsOverlay",
    "Overlay",
    "ScoreOverlay",
    "waiting_caption",
]

PANEL_ALPHA = 255
"""A panel over the table hides the cards under it: at the widgets' usual 248 the cards showed
through the help, the scores and the question whether to leave (issue 25)."""


class Overlay:
    """A panel in the middle of the window, with buttons; rebuilt on every resize."""

    def __init__(self, batch: Any, group: Group) -> None:
        self.batch = batch
        self.group = group
        self.back_group = Group(order=0, parent=group)
        self.panel_group = Group(order=1, parent=group)
        self.text_group = Group(order=2, parent=group)
        self.items: list[Any] = []
        self.buttons: list[Button] = []

    def build(self, width: int, height: int) -> None:
        self.delete()
        self.items.append(
            shapes.Rectangle(
                0, 0, width, height, color=(0, 0, 0, 110), batch=self.batch, group=self.back_group
            )
        )
        self.content(width, height)

    def content(self, width: int, height: int) -> None:
        raise NotImplementedError

    def on_click(self, x: float, y: float) -> None:
        for button in self.buttons:
            if button.hit(x, y):
                button.on_click()
                return

    def delete(self) -> None:
        for item in self.items:
            item.delete()
        for button in self.buttons:
            button.delete()
        self.items, self.buttons = [], []

    def panel(self, width: int, height: int, w: float, h: float) -> Rect:
        w, h = min(w, width - 20), min(h, height - 20)
        rect = Rect((width - w) / 2, (height - h) / 2, w, h)
        self.items.append(Panel(self.batch, self.panel_group, rect, alpha=PANEL_ALPHA))
        return rect

    def text(self, value: str, x: float, y: float, **style: Any) -> Any:
        item = label(self.batch, self.text_group, value, x, y, **style)
        self.items.append(item)
        return item

    def button(
        self,
        rect: Rect,
        caption: str,
        on_click: Callable[[], None],
        colour: tuple[int, int, int] = (52, 70, 84),
    ) -> Button:
        button = Button(
            self.batch, self.panel_group, self.text_group, rect, caption, on_click, colour
        )
        self.buttons.append(button)
        return button


class HelpOverlay(Overlay):
    """The game for a newcomer (goal, piles, scoring, stuck, Nerts, with a picture) beside every
    key and the mouse."""

    def __init__(self, batch: Any, group: Group, on_close: Callable[[], None]) -> None:
        super().__init__(batch, group)
        self.on_close = on_close

    def content(self, width: int, height: int) -> None:
        rect = self.panel(width, height, 1000, 640)
        size = max(11.0, min(rect.h / 40, 15.0))
        left_w = rect.w * 0.56 - 36
        y = self._column_title("How to play Nerts", rect.x + 24, rect.top - 28)
        for what, how in GAME_LINES:
            self.text(what, rect.x + 24, y, size=size, bold=True, colour=GOOD, anchor_y="top")
            y -= self._wrapped(how, rect.x + 24 + size * 8, y, left_w - size * 8, size) + 4
        picture = Rect(rect.x + 24, rect.y + 14, left_w, y - rect.y - 24)
        if picture.h > size * 6:
            self.items.extend(table_sketch(self.batch, self.panel_group, self.text_group, picture))
        right = rect.x + rect.w * 0.56
        right_w = rect.right - right - 20
        y = self._column_title("Keys", right, rect.top - 28)
        mouse = "Mouse: drag cards onto piles; click a card to play it to a foundation or the "
        y -= self._wrapped(
            mouse + "best work pile; click the stock to flip.", right, y, right_w, size
        )
        y -= size * 0.6
        for key_name, meaning in KEY_HELP:
            self.text(key_name, right, y, size=size, bold=True, colour=GOOD, anchor_y="top")
            y -= self._wrapped(meaning, right + size * 6.5, y, right_w - size * 6.5, size) + 3
        self.button(Rect(rect.right - 130, rect.y + 14, 110, 34), "Close (Esc)", self.on_close)

    def _column_title(self, title: str, x: float, y: float) -> float:
        self.text(title, x, y, size=20, bold=True, colour=ACCENT)
        return y - 26

    def _wrapped(self, value: str, x: float, y: float, width: float, size: float) -> float:
        """A paragraph from ``y`` down; returns its height."""
        item = self.text(value, x, y, size=size, anchor_y="top", width=width)
        return float(item.content_height)


class OptionsOverlay(Overlay):
    """Sounds, the four-colour deck, the card size and the accessibility options (left-handed
    layout, high-visibility cards, reduced motion, move readout and speaking it); changes apply
    and are saved at once."""

    def __init__(
        self,
        batch: Any,
        group: Group,
        settings: Settings,
        on_change: Callable[[Settings], None],
        on_close: Callable[[], None],
    ) -> None:
        super().__init__(batch, group)
        self.settings = settings
        self.on_change = on_change
        self.on_close = on_close
        self._size = (0, 0)

    def build(self, width: int, height: int) -> None:
        self._size = (width, height)
        super().build(width, height)

    def content(self, width: int, height: int) -> None:
        rows = self._rows()
        rect = self.panel(width, height, 480, 150 + 50 * len(rows))
        self.text("Options", rect.x + 24, rect.top - 34, size=22, bold=True, colour=ACCENT)
        step = min(50.0, (rect.h - 140) / len(rows))
        y = rect.top - 50 - step
        for name, value, action in rows:
            self.text(name, rect.x + 24, y + step * 0.35, size=min(16.0, step * 0.34))
            self.button(Rect(rect.right - 184, y + 2, 160, step - 10), value, action)
            y -= step
        self.button(Rect(rect.right - 130, rect.y + 14, 110, 34), "Close (Esc)", self.on_close)

    def _rows(self) -> list[tuple[str, str, Callable[[], None]]]:
        """Each option: its name, its value's caption, what a click does."""
        settings = self.settings

        def on_off(value: bool) -> str:
            return "on" if value else "off"

        return [
            ("Sounds", sound_choice(settings), self._next_sounds),
            (
                "Four-colour deck",
                "on" if settings.four_colour else "off",
                lambda: self._change(four_colour=not settings.four_colour),
            ),
            ("Card size", settings.card_size, self._next_size),
            (
                "Left-handed layout",
                on_off(settings.left_handed),
                lambda: self._change(left_handed=not settings.left_handed),
            ),
            (
                "High-visibility cards",
                on_off(settings.high_visibility),
                lambda: self._change(high_visibility=not settings.high_visibility),
            ),
            (
                "Reduced motion",
                on_off(settings.reduced_motion),
                lambda: self._change(reduced_motion=not settings.reduced_motion),
            ),
            ("Move readout", _READOUT_CAPTIONS.get(settings.readout, "off"), self._next_readout),
            (
                "Speak moves",
                on_off(settings.speak_moves),
                lambda: self._change(speak_moves=not settings.speak_moves),
            ),
        ]

    def _change(self, **changes: Any) -> None:
        self.settings = self.settings.with_(**changes)
        self.on_change(self.settings)
        self.build(*self._size)

    def _next_readout(self) -> None:
        index = READOUTS.index(self.settings.readout) if self.settings.readout in READOUTS else 0
        self._change(readout=READOUTS[(index + 1) % len(READOUTS)])

    def _next_sounds(self) -> None:
        """Muted, then on, then on with the suit called after each foundation play."""
        settings = self.settings
        if not settings.sounds:
            self._change(sounds=True, suit_callouts=False)
        elif not settings.suit_callouts:
            self._change(suit_callouts=True)
        else:
            self._change(sounds=False, suit_callouts=False)

    def _next_size(self) -> None:
        names = list(CARD_SIZES)
        index = names.index(self.settings.card_size) if self.settings.card_size in names else 0
        self._change(card_size=names[(index + 1) % len(names)])


_READOUT_CAPTIONS = {"off": "off", "everyone": "everyone's moves", "yours": "your moves only"}


def sound_choice(settings: Settings) -> str:
    """The Sounds option as the Options panel shows it."""
    if not settings.sounds:
        return "muted"
    return "suits called" if settings.suit_callouts else "on"


def waiting_caption(names: Sequence[str]) -> str:
    """The Next button's caption once pressed at a LAN table, until the deal: whom it waits for
    (two names at most fit the button)."""
    if not names:
        return "Waiting for the others"
    if len(names) <= 2:
        return "Waiting for " + " and ".join(names)
    return f"Waiting for {len(names)} players"


class ScoreOverlay(Overlay):
    """The round's scoreboard, each team's match total over the rounds, and the match result.

    It comes up while the player may still be hammering play keys, so for ``quiet`` seconds of
    the window's clock (``clock``) its buttons are dimmed and take no click, and the table screen
    passes it no key (``ready``); after that only Enter or its buttons deal on. Its buttons keep
    clear of ``keep_clear`` (the piles and buttons the player was just clicking): along the
    panel's bottom when that is clear, else under its title.
    """

    def __init__(
        self,
        batch: Any,
        group: Group,
        table: Table,
        state: State,
        match: Match,
        ended: RoundEnded,
        match_over: bool,
        on_next: Callable[[], None],
        on_menu: Callable[[], None],
        *,
        keep_clear: Sequence[Rect] = (),
        clock: Callable[[], float] = lambda: 0.0,
        quiet: float = 0.0,
        coach: Sequence[tuple[str, Callable[[], None]]] = (),
        rematch: bool = False,
        count_up: bool = True,
    ) -> None:
        """``coach``: the moments that cost this seat the most (a sentence each, and what
        showing it does: the replay window at that moment); ``rematch``: once the match is over,
        its button asks the table for a rematch (a LAN table) rather than a new match;
        ``count_up``: the scores count up team by team (``ui.table.tally``; off: reduced
        motion)."""
        super().__init__(batch, group)
        self.coach = tuple(coach)
        self.table = table
        self.state = state
        self.match = match
        self.ended = ended
        self.match_over = match_over
        self.rematch = rematch
        self.tally = Tally(clock(), [], count_up)
        """Counts the scores up; made again at every build, from the same start."""
        self.on_next = on_next
        self.on_menu = on_menu
        self.keep_clear = tuple(keep_clear)
        self._clock = clock
        self.quiet_until = clock() + quiet
        self._awake = quiet <= 0
        self.waiting_for_others = False
        """This player pressed Next round at a LAN table: the deal waits for the others."""
        self._waiting_names: tuple[str, ...] = ()

    def wait_for_the_others(self, names: Sequence[str] = ()) -> bool:
        """Next round was pressed at a LAN table: say the deal waits for the others (``names``,
        when known); True when what the panel says changed."""
        changed = not self.waiting_for_others or tuple(names) != self._waiting_names
        self.waiting_for_others = True
        self._waiting_names = tuple(names)
        if self.buttons:
            self.buttons[0].set_caption(waiting_caption(self._waiting_names))
            self.buttons[0].set_enabled(False)
        return changed

    def ready(self) -> bool:
        """True once the quiet moment is over: the panel takes keys and clicks."""
        return self._clock() >= self.quiet_until

    def wake(self) -> bool:
        """Count the tally on; light the buttons up once the quiet moment is over; True when
        either changed what is shown."""
        counted = self.tally.update(self._clock())
        if self._awake or not self.ready():
            return counted
        self._awake = True
        for button in self.buttons:
            button.set_enabled(True)
        if self.waiting_for_others and self.buttons:
            self.buttons[0].set_enabled(False)
        return True

    def on_click(self, x: float, y: float) -> None:
        if self.ready():
            super().on_click(x, y)

    def content(self, width: int, height: int) -> None:
        teams = len(self.table.team_names)
        coached = 34 + 30 * len(self.coach) if self.coach else 0
        crowned = 34 if self.match_over else 0
        rect = self.panel(width, height, 820, 250 + teams * 26 + 190 + coached + crowned)
        next_rect, menu_rect, on_top = self._button_places(rect)
        x0 = rect.x + 24
        number = len(self.match.rounds)
        outcome = self.ended.outcome
        how = f"{outcome.caller} called Nerts" if outcome.caller else "everyone was stuck"
        y = rect.top - 36
        counted: list[CountedRow] = []
        finale = None
        if self.match_over and self.match.winner is not None:
            winner = team_label(self.table, self.match.winner)
            finale = (self.text("", x0, y, size=26, bold=True, colour=GOOD), f"{wins(winner)}!")
            y -= 34
        self.text(f"Round {number} over: {how}", x0, y, size=22, bold=True, colour=ACCENT)
        y -= 90 if on_top else 40
        y = self._rows(x0, y, counted)
        self.tally = Tally(self.tally.start, counted[::-1], self.tally.counting, finale)
        self.tally.update(self._clock())
        footer_y = rect.y + (24 if on_top else 40)
        caption = self._footer(x0, footer_y)
        # Next first: `buttons[0]` is the one that says whom the deal waits for.
        for place, name, action, colour in (
            (next_rect, caption, self.on_next, (40, 110, 70)),
            (menu_rect, "Menu", self.on_menu, (52, 70, 84)),
        ):
            self.button(place, name, action, colour).set_enabled(self._awake)
        if self.coach:
            y = self._coach_rows(x0, y - 6, rect.w - 48)
        chart_y = footer_y + 30
        self._chart(Rect(x0, chart_y, rect.w - 48, max(y - 20 - chart_y, 60)))
        if self.waiting_for_others:
            self.wait_for_the_others(self._waiting_names)  # a rebuild keeps saying so

    def _coach_rows(self, x0: float, y: float, width: float) -> float:
        """What cost this seat the most, a Show button each; the y below them."""
        self.text("What cost you most this round", x0, y, size=13, colour=TEXT_DIM, bold=True)
        for text, show in self.coach:
            y -= 30
            shown = self.button(Rect(x0, y - 13, 70, 26), "Show", show, (52, 90, 130))
            shown.set_enabled(self._awake)
            fit(self.text(text, x0 + 82, y, size=13), width - 82)
        return y - 26

    def _button_places(self, rect: Rect) -> tuple[Rect, Rect, bool]:
        """Where Next and Menu go: along the bottom of the panel, or under the title when the
        bottom would cover something just clickable (then True)."""
        places: list[tuple[Rect, Rect, bool]] = []
        for y, on_top in ((rect.y + 22, False), (rect.top - 100, True)):
            places.append(
                (Rect(rect.right - 210, y, 190, 36), Rect(rect.right - 320, y, 100, 36), on_top)
            )
        for place in places:
            buttons = place[:2]
            if not any(b.inflate(6).overlap(other) for b in buttons for other in self.keep_clear):
                return place
        return places[-1]

    def _rows(self, x0: float, y: float, counted: list[CountedRow]) -> float:
        """The column heads and one row per team, best match total first (its round score and
        total added to ``counted``); the y below them."""
        table, state, match = self.table, self.state, self.match
        teams = len(table.team_names)
        columns = [
            ("team", 0),
            ("played", 250),
            ("nerts left", 340),
            ("bonus", 450),
            ("round", 530),
            ("match", 620),
        ]
        for name, offset in columns:
            self.text(name, x0 + offset, y, size=13, colour=TEXT_DIM, bold=True)
        y -= 26
        totals = match.totals
        played = [0] * teams
        for owners in state.f_owners:
            for owner in owners:
                played[owner] += 1
        scores = self.ended.scores
        caller = self.ended.outcome.caller
        caller_team = table.team_of(caller) if caller else None
        order = sorted(range(teams), key=lambda i: -totals[table.team_names[i]])
        for i in order:
            name = table.team_names[i]  # the match's key; the screen shows the players
            colour = team_rgb(table.back_colours[i])
            self.items.append(
                shapes.Circle(
                    x0 + 7, y, 7, color=(*colour, 255), batch=self.batch, group=self.text_group
                )
            )
            bonus = table.options.caller_bonus if caller_team == i else 0
            cells = [
                (team_label(table, i), 0),
                (str(played[i]), 250),
                (str(len(state.teams[i].nerts)), 340),
                (f"+{bonus}" if bonus else "–", 450),
                (f"{scores[name]:+d}{_multiplier(table, name)}", 530),
                (str(totals[name]), 620),
            ]
            made = [
                self.text(value, x0 + offset + (20 if offset == 0 else 0), y, size=15)
                for value, offset in cells
            ]
            suffix = _multiplier(table, name)
            counted.append(CountedRow(made[4], made[5], scores[name], totals[name], suffix))
            y -= 26
        return y

    def _footer(self, x0: float, y: float) -> str:
        """The match's result or its target along the bottom; the Next button's caption."""
        match = self.match
        if self.match_over and match.winner is not None:
            differences = match.differences()
            table = self.table
            behind = ", ".join(
                f"{team_label(table, n)} {d:+d}"
                for n, d in sorted(differences.items(), key=lambda kv: -kv[1])
                if d
            )
            winner = wins(team_label(table, match.winner))
            self.text(f"{winner} the match!  {behind}", x0, y, size=17, bold=True, colour=GOOD)
            return "Rematch (Enter)" if self.rematch else "New match (Enter)"
        self.text(f"First to {match.target} wins the match.", x0, y, size=14, colour=TEXT_DIM)
        return "Next round (Enter)"

    def _chart(self, area: Rect) -> None:
        """Each team's running total after each round, one line per team in its colour."""
        match, table = self.match, self.table
        series: list[list[int]] = []
        for i in range(len(table.team_names)):
            running, total = [0], 0
            for row in match.rounds:
                total += row[i]
                running.append(total)
            series.append(running)
        low = min(min(s) for s in series)
        high = max(max(max(s) for s in series), match.target)
        span = max(high - low, 1)
        count = max(len(series[0]) - 1, 1)
        self.items.append(
            shapes.Rectangle(
                area.x,
                area.y,
                area.w,
                area.h,
                color=(255, 255, 255, 18),
                batch=self.batch,
                group=self.text_group,
            )
        )

        def point(index: int, value: int) -> tuple[float, float]:
            return (
                area.x + 30 + (area.w - 40) * index / count,
                area.y + 8 + (area.h - 16) * (value - low) / span,
            )

        for value, caption in ((match.target, f"target {match.target}"), (0, "0")):
            if low <= value <= high:
                self._chart_rule(area, point(0, value)[1], caption)
        for i, running in enumerate(series):
            colour = (*team_rgb(table.back_colours[i]), 255)
            self._chart_line([point(j, v) for j, v in enumerate(running)], colour)
        self.text(
            "match totals by round",
            area.right - 8,
            area.top - 10,
            size=11,
            colour=TEXT,
            anchor_x="right",
        )

    def _chart_rule(self, area: Rect, y: float, caption: str) -> None:
        """A faint level across the chart (the target, zero), named at its left."""
        self.items.append(
            shapes.Line(
                area.x + 30,
                y,
                area.right - 10,
                y,
                thickness=1,
                color=(255, 255, 255, 70),
                batch=self.batch,
                group=self.text_group,
            )
        )
        self.text(caption, area.x + 2, y, size=10, colour=TEXT_DIM)

    def _chart_line(
        self, points: list[tuple[float, float]], colour: tuple[int, int, int, int]
    ) -> None:
        """One team's totals: a line through them, a dot at each round's."""
        for (ax, ay), (bx, by) in itertools.pairwise(points):
            self.items.append(
                shapes.Line(
                    ax,
                    ay,
                    bx,
                    by,
                    thickness=3,
                    color=colour,
                    batch=self.batch,
                    group=self.text_group,
                )
            )
        for px, py in points[1:]:
            self.items.append(
                shapes.Circle(px, py, 4, color=colour, batch=self.batch, group=self.text_group)
            )


def _multiplier(table: Table, team: str) -> str:
    """`` ×1.5`` beside the round's score of a team whose handicap multiplies it."""
    percent = table.options.handicap_of(team).score
    return "" if percent == 100 else f" {multiplier_text(percent)}"
