"""The table's heads-up display: a column of buttons at the bottom right, the round's line at
the bottom left (its number and scores) and the message strip above the local tableau.

The screen says which buttons (``ButtonSpec``s, bottom first) and what the lines say; the HUD
places and draws them, and answers the pointer over them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pyglet.graphics import Group

from nerts_lan.rules.engine import round_scores
from nerts_lan.rules.handicap import multiplier_text
from nerts_lan.rules.scoring import Match
from nerts_lan.rules.state import State, Table
from ui.kit.geometry import Rect
from ui.kit.glyph_run import GlyphRun
from ui.kit.theme import TEXT_DIM
from ui.kit.widgets import Button
from ui.kit.wording import team_label
from ui.table.layout import TableLayout
from ui.table.message_strip import Message, MessageStrip

__all__ = ["ButtonSpec", "Hud", "round_line", "stuck_line"]

_WIDEST_ROUND_LINE = "Round 10   this round -26 ×1.5   match 100 / 100"
"""What the round's line may grow to: the reactions' row keeps clear of it."""

ButtonSpec = tuple[str, Callable[[], None], tuple[int, int, int]]
"""A HUD button: its caption, what a click does, its colour."""


class Hud:
    """The buttons, the labels and the message strip of the table, in the HUD's groups."""

    def __init__(self, batch: Any, group: Group, text_group: Group) -> None:
        self.batch = batch
        self.group = group
        self.text_group = text_group
        self.buttons: list[Button] = []
        self.labels: list[Any] = []
        """Everything else the HUD drew (the round's line first), deleted with it."""
        self.round_label: Any = None
        self.strip = MessageStrip(batch, group, text_group)
        self.reaction_buttons: list[Button] = []
        """The reactions' row along the bottom, left of the column (none for a watcher)."""

    def build(
        self,
        layout: TableLayout,
        width: int,
        specs: Sequence[ButtonSpec],
        reactions: Sequence[ButtonSpec] = (),
    ) -> None:
        """The buttons in a column at the bottom right (``specs`` bottom first), the round's
        line at the bottom left and the ``reactions`` in a row between them, sized for
        ``layout``."""
        self.clear()
        area = layout.own_area
        margin = 10.0
        free_right = width - area.area.right - 2 * margin
        button_w = min(max(free_right, 96.0), 170.0)
        button_h = min(max(area.card_h * 0.26, 26.0), 36.0)
        x = width - margin - button_w
        y = margin
        for caption, callback, colour in specs:
            button = Button(
                self.batch,
                self.group,
                self.text_group,
                Rect(x, y, button_w, button_h),
                caption,
                callback,
                colour,
            )
            self.buttons.append(button)
            y += button_h + 6
        text_size = min(max(area.card_h * 0.12, 12.0), 16.0)
        # Glyph sprites, not a label: the round's score changes with nearly every play.
        self.round_label = GlyphRun(
            self.batch,
            self.text_group,
            "",
            margin,
            margin + 8,
            size=text_size,
            colour=TEXT_DIM,
            anchor_y="bottom",
        )
        self.labels = [self.round_label]
        row_h = min(button_h, 28.0)
        row_w = len(reactions) * (row_h * 2.2 + 4.0)
        row_y = margin
        line_right = margin + self.round_label.width_of(_WIDEST_ROUND_LINE)
        if x - margin - row_w < line_right + margin:  # a narrow window: above the line
            row_y = margin + 8 + self.round_label.line_height + 6
        self._build_reactions(reactions, x - margin, row_y, row_h)

    def place_messages(self, layout: TableLayout, visible: tuple[Message, ...]) -> None:
        """The message strip spans the layout's free width, short of the buttons when their
        column reaches up beside it."""
        rect = layout.messages
        beside = [b.rect for b in self.buttons if b.rect.top > rect.y and b.rect.y < rect.top]
        if beside:
            left = min(button.x for button in beside)
            rect = Rect(rect.x, rect.y, max(left - 8 - rect.x, 40.0), rect.h)
        self.strip.place(rect)
        self.strip.show(visible)

    def set_round_line(self, text: str) -> None:
        if self.round_label is not None and self.round_label.text != text:
            self.round_label.text = text

    def click(self, x: float, y: float) -> bool:
        """A press over a button clicks it: True when one was there."""
        for item in [*self.buttons, *self.reaction_buttons]:
            if item.hit(x, y):
                item.on_click()
                return True
        return False

    def highlight(self, x: float, y: float) -> None:
        """Light up the button under the pointer, if any."""
        for item in [*self.buttons, *self.reaction_buttons]:
            item.set_highlight(item.hit(x, y))

    def clear(self) -> None:
        """Take the buttons and labels away (the strip stays)."""
        for item in [*self.buttons, *self.reaction_buttons]:
            item.delete()
        for item in self.labels:
            item.delete()
        self.buttons, self.labels, self.reaction_buttons = [], [], []

    def delete(self) -> None:
        self.clear()
        self.strip.delete()

    def _build_reactions(
        self, specs: Sequence[ButtonSpec], right: float, y: float, height: float
    ) -> None:
        """The reactions' buttons in a row whose right end is ``right``."""
        width, gap = height * 2.2, 4.0
        x = right - len(specs) * (width + gap) + gap
        for caption, callback, colour in specs:
            rect = Rect(x, y, width, height)
            button = Button(
                self.batch, self.group, self.text_group, rect, caption, callback, colour
            )
            self.reaction_buttons.append(button)
            x += width + gap


def stuck_line(table: Table, state: State, team: int) -> str:
    """Who is stuck, seen from ``team``'s seat ("" for nobody)."""
    stuck = [
        team_label(table, i)
        for i in range(len(table.team_names))
        if state.teams[i].stuck and i != team
    ]
    text_value = ""
    if stuck:
        text_value = "Stuck: " + ", ".join(stuck)
        if len(stuck) == len(table.team_names) - 1 and not state.teams[team].stuck:
            text_value += " — everyone but you: press S if you are stuck too"
    if state.teams[team].stuck:
        text_value = "You are stuck" + (f"; so are {', '.join(stuck)}" if stuck else "")
    return text_value


def round_line(round_number: int, table: Table, state: State, match: Match, team: int) -> str:
    """The round's number, ``team``'s score in it so far, and its match total of the target."""
    scores = round_scores(state)
    mine = table.team_names[team]
    percent = table.options.handicap_of(mine).score
    times = "" if percent == 100 else f" {multiplier_text(percent)}"
    return (
        f"Round {round_number}   this round {scores[mine]:+d}{times}   "
        f"match {match.totals.get(mine, 0)} / {table.options.target}"
    )
