"""The rival the player points at, enlarged: with three or more other teams their blocks are
small (40-50 px cards at 1024x640), so the one under the pointer is drawn again beside its
block at most of the player's own card size, on an opaque panel with its players' names, and
follows its play until the pointer leaves it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import pyglet
from pyglet import shapes
from pyglet.graphics import Group

from nerts_lan.rules.state import State
from ui.kit.geometry import Rect
from ui.kit.theme import PANEL, TEXT
from ui.kit.widgets import label
from ui.kit.wording import team_label
from ui.table.layout import TableLayout, enlarged_area, team_placements

__all__ = ["PEEK_SHARE", "RivalPeek"]

PEEK_SHARE: Final = 0.8
"""The enlarged rival's cards, as a share of the player's own."""

Region = Callable[[object], Any]
"""The image of a card face (0..51) or of a back (``("back", team)``) at the player's size."""


class RivalPeek:
    """``point(x, y)`` shows the rival block under the point enlarged (or nothing); ``sync``
    follows the state; ``team`` is the one shown (None: none)."""

    def __init__(self, batch: Any, parent: Group | None) -> None:
        self.batch = batch
        # Over the table's cards, names and marks; under the other players' pointers.
        self.group = Group(order=116, parent=parent)
        self.card_group = Group(order=117, parent=parent)
        self.team: int | None = None
        self.rect: Rect | None = None
        """Where the enlarged block is drawn."""
        self._items: list[Any] = []

    def point(self, layout: TableLayout, state: State, region: Region, x: float, y: float) -> bool:
        """The pointer is at (x, y): enlarge the rival block under it; True when that changed."""
        team = next(
            (a.team for a in layout.teams if not a.own and a.area.contains(x, y)),
            None,
        )
        if team is None and self.rect is not None and self.rect.contains(x, y):
            team = self.team  # over the enlarged block itself: it stays
        if team == self.team:
            return False
        self.team = team
        self.sync(layout, state, region)
        return True

    def sync(self, layout: TableLayout | None, state: State | None, region: Region) -> None:
        """Draw the enlarged block again for ``state`` (a move, a new size)."""
        self.delete()
        if self.team is None or layout is None or state is None:
            self.rect = None
            return
        area = enlarged_area(layout, self.team, layout.own_area.card_h * PEEK_SHARE)
        pad = area.card_w * 0.15
        self.rect = area.area.inflate(pad)
        box = self.rect
        self._items.append(
            shapes.Rectangle(box.x, box.y, box.w, box.h, color=(*PANEL, 255), batch=self.batch,
                             group=self.group)
        )  # fmt: skip
        name = team_label(state.table, self.team)
        self._items.append(
            label(self.batch, self.card_group, name, area.label[0], area.label[1], 13, colour=TEXT)
        )
        for placement in team_placements(area, state.teams[self.team]):
            card: object = placement.card if placement.card is not None else ("back", self.team)
            image = region(card)
            sprite = pyglet.sprite.Sprite(image, batch=self.batch, group=self.card_group)
            rect = placement.rect
            sprite.update(x=round(rect.x), y=round(rect.y), scale_x=rect.w / image.width,
                          scale_y=rect.h / image.height)  # fmt: skip
            self._items.append(sprite)

    @property
    def drawn(self) -> tuple[Any, ...]:
        """What it draws now: its panel, the team's name and the cards' sprites."""
        return tuple(self._items)

    def delete(self) -> None:
        for item in self._items:
            item.delete()
        self._items = []
