"""What is pointed out on the table: the keyboard's pick (``selection``), a hint, and in the
guided first round its next move with the explanation's panel; and the outlines that show them.

Part of ``TableScreen``, which feeds it every state it shows (``follow``), since a hint and the
guide's step are about the table as it is now, and a pick whose cards moved is gone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pyglet.graphics import Group

from nerts_lan.rules.actions import Action
from nerts_lan.rules.state import State
from ui.kit.geometry import Rect
from ui.kit.theme import ACCENT, GOOD
from ui.table import intents
from ui.table.guide import Guide
from ui.table.guide_panel import GuidePanel
from ui.table.hints import Hint, StockWatch, hint_marks, hint_stands, next_hint
from ui.table.layout import Placement, TableLayout

__all__ = ["Marking"]

_MARK_WIDTH = 3.0
"""How far ``TableView.set_marks`` draws its outline outside a rect."""


class Marking:
    """One seat's pick, hint and guide, and what this team's stock went through (for hints)."""

    def __init__(self, batch: Any, guided: bool, on_skip: Callable[[], None]) -> None:
        """``guided``: the guided first round (its panel's Skip runs ``on_skip``)."""
        self.selection: intents.Selection | None = None
        self.hint: Action | None = None
        self.hint_token: object | None = None
        """Stands for the Hint button's hint while it holds (``hint_stands``): a message about
        it lasts as long as this is the same object."""
        self._hinted: State | None = None
        self.stock_watch = StockWatch()
        """What this team's stock went through this round, for hints."""
        self.guide: Guide | None = None
        self.guide_panel: GuidePanel | None = None
        if guided:
            self.guide, self.guide_panel = Guide(), GuidePanel(batch, Group(order=190), on_skip)

    def new_round(self) -> None:
        self.selection = None
        self._drop_hint()
        self.stock_watch = StockWatch()

    def follow(
        self,
        state: State,
        layout: TableLayout,
        shown: Sequence[Placement],
        seat: tuple[str, int],
        watching: bool,
    ) -> None:
        """The table changed to ``state``: a pick whose cards went is dropped, a hint stays only
        while it holds (``hint_stands``), the stock's pass goes on (not for a spectator), the
        guide takes its next step."""
        player, team = seat
        if self.selection is not None and not intents.stack_from(
            state, self.selection.pile, self.selection.depth
        ):
            self.selection = None
        if self._hinted is None or not hint_stands(self.hint, self._hinted, state, team):
            self._drop_hint()
        if not watching:
            self.stock_watch.observe(state, team)
        if self.guide is not None and self.guide_panel is not None:
            step = self.guide.step(state, player, self.stock_watch)
            self.hint = step.action
            marks = hint_marks(step.action, state, layout, shown, team)
            in_play = [layout.foundation_rect(i) for i in range(len(state.f_cards) + 1)]
            self.guide_panel.show(step.text, marks, in_play)

    def next_hint(self, state: State, player: str) -> Hint:
        """The Hint button's: it is outlined from now on, while it holds."""
        hint = next_hint(state, player, self.stock_watch)
        self.hint = hint.action
        self.hint_token, self._hinted = object(), state
        return hint

    def marks(
        self, state: State, layout: TableLayout, shown: Sequence[Placement], team: int
    ) -> list[tuple[Rect, tuple[int, int, int]]]:
        """The outlines of the hint and the pick, each just inside its card: an outline outside
        it would cut through the name above the nerts pile and the count below it. A pick on a
        card the hint outlines too goes one outline further in, inside the hint's: drawn on the
        same line, one of the two hid the other (issue 25)."""
        hinted = hint_marks(self.hint, state, layout, shown, team)
        marks = [(_inset(rect, _MARK_WIDTH), GOOD) for rect in hinted]
        if self.selection is not None:
            cards = intents.stack_from(state, self.selection.pile, self.selection.depth)
            for placement in shown:
                if placement.pile == self.selection.pile and placement.card in cards:
                    rect = placement.rect
                    under_hint = any(rect.overlap(other) > 0 for other in hinted)
                    inset = _MARK_WIDTH * (2 if under_hint else 1)
                    marks.append((_inset(rect, inset), ACCENT))
        return marks

    def end_guide(self) -> None:
        """Skip or finish the guided round: its panel and its pointing go."""
        if self.guide_panel is not None:
            self.guide_panel.delete()
        self.guide, self.guide_panel = None, None
        self._drop_hint()

    def delete(self) -> None:
        if self.guide_panel is not None:
            self.guide_panel.delete()

    def _drop_hint(self) -> None:
        self.hint, self.hint_token, self._hinted = None, None, None


def _inset(rect: Rect, by: float) -> Rect:
    return Rect(rect.x + by, rect.y + by, max(rect.w - 2 * by, 0.0), max(rect.h - 2 * by, 0.0))
