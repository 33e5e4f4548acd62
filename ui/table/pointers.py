"""What points at the table's cards: the outlines of the keyboard pick and a hint (marks), and
the other players' pointers with the cards they drag (cursors), each gone a few seconds after
its last move. Part of ``TableView``, which hands it the layout and the atlas it draws with.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyglet
from pyglet import shapes
from pyglet.graphics import Group

from nerts_lan.rules.cards import Card
from nerts_lan.rules.state import Table
from ui.kit.atlas import CardAtlas
from ui.kit.geometry import Rect
from ui.kit.theme import ACCENT, TEXT, team_rgb
from ui.kit.widgets import label
from ui.table.cursor_frame import from_table_units
from ui.table.layout import TableLayout

__all__ = ["CURSOR_SECONDS", "Pointers"]

CURSOR_SECONDS = 3.0
"""How long another player's pointer stays after its last move."""


class Pointers:
    """The marks and the other players' cursors, in their own groups of the table's batch."""

    def __init__(
        self, batch: Any, mark_group: Group, cursor_group: Group, table: Table, own_team: int
    ) -> None:
        self.batch = batch
        self.mark_group = mark_group
        self.cursor_group = cursor_group
        self.table = table
        self.own_team = own_team
        self.marks: list[Any] = []
        self.cursors: dict[str, tuple[float, list[Any]]] = {}
        """Each player's pointer shown: until when, and its shapes."""

    def set_marks(self, rects: Iterable[tuple[Rect, tuple[int, int, int]]]) -> None:
        """Outline ``rects`` (the keyboard pick, a hint) in their colours."""
        for mark in self.marks:
            mark.delete()
        self.marks = []
        for rect, colour in rects:
            box = shapes.Box(
                rect.x - 3,
                rect.y - 3,
                rect.w + 6,
                rect.h + 6,
                thickness=3,
                color=(*colour, 255),
                batch=self.batch,
                group=self.mark_group,
            )
            self.marks.append(box)

    def set_cursor(
        self,
        layout: TableLayout,
        atlas: CardAtlas,
        player: str,
        at: tuple[float, float],
        holding: tuple[str, ...],
        partner: bool,
        now: float,
    ) -> None:
        """Show ``player``'s pointer (and the cards it drags) at shared table units ``at``."""
        team = self.table.team_of(player)
        if team is None:
            return
        self._forget(player)
        x, y = from_table_units(layout, team, *at)
        size = "own" if team == self.own_team else "small"
        parts = self._held_cards(atlas, size, holding, x, y)
        parts += self._pointer(player, team, partner, x, y)
        self.cursors[player] = (now + CURSOR_SECONDS, parts)

    def expire(self, now: float) -> bool:
        """Take away the pointers that have not moved for a while; True when one went."""
        changed = False
        for player, (until, _) in list(self.cursors.items()):
            if now >= until:
                self._forget(player)
                changed = True
        return changed

    def delete(self) -> None:
        for mark in self.marks:
            mark.delete()
        self.marks = []
        for player in list(self.cursors):
            self._forget(player)

    # --- helpers -------------------------------------------------------------------------------

    def _forget(self, player: str) -> None:
        old = self.cursors.pop(player, None)
        if old is not None:
            for part in old[1]:
                part.delete()

    def _held_cards(
        self, atlas: CardAtlas, size: str, holding: tuple[str, ...], x: float, y: float
    ) -> list[Any]:
        """The cards the pointer drags, fanned down below it (cards it cannot name are left)."""
        parts: list[Any] = []
        for i, name in enumerate(holding[:13]):
            try:
                card = int(Card.parse(name))
            except ValueError:
                continue
            sprite = pyglet.sprite.Sprite(
                atlas.region(size, card),
                x=x - 6,
                y=y - 20 - i * 8,
                batch=self.batch,
                group=self.cursor_group,
            )
            sprite.opacity = 220
            parts.append(sprite)
        return parts

    def _pointer(self, player: str, team: int, partner: bool, x: float, y: float) -> list[Any]:
        """The dot in the team's colour (ringed for a partner) and the player's name."""
        colour = team_rgb(self.table.back_colours[team])
        parts: list[Any] = []
        radius = 11 if partner else 7
        if partner:
            parts.append(
                shapes.Circle(
                    x,
                    y,
                    radius + 4,
                    color=(*ACCENT, 255),
                    batch=self.batch,
                    group=self.cursor_group,
                )
            )
        parts.append(
            shapes.Circle(
                x, y, radius, color=(*colour, 255), batch=self.batch, group=self.cursor_group
            )
        )
        parts.append(
            label(
                self.batch,
                self.cursor_group,
                player + (" (partner)" if partner else ""),
                x + radius + 6,
                y + 2,
                size=13,
                colour=ACCENT if partner else TEXT,
                bold=partner,
            )
        )
        return parts
