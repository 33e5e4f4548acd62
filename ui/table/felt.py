"""What lies on the table under the cards: the middle's outline, each pile's empty slot, each
team's colour chip and name, and the counts under the nerts and stock piles. Part of
``TableView``: built for a layout, its words kept up to date with the state.
"""

from __future__ import annotations

from typing import Any

import pyglet
from pyglet import shapes
from pyglet.graphics import Group

from nerts_lan.rules.piles import NERTS, STOCK, WASTE, work_pile
from nerts_lan.rules.state import State, Table
from ui.kit.atlas import SLOT, CardAtlas
from ui.kit.glyph_run import GlyphRun
from ui.kit.theme import ACCENT, TEXT, TEXT_DIM, WARN, lighter, team_rgb
from ui.kit.widgets import label
from ui.kit.wording import head_start
from ui.table.layout import PileRef, TableLayout, TeamArea

__all__ = ["Felt"]


class Felt:
    """The table's slots and labels, in the felt, slot and label groups of the table's batch."""

    def __init__(
        self, batch: Any, felt_group: Group, slot_group: Group, label_group: Group, table: Table
    ) -> None:
        self.batch = batch
        self.felt_group = felt_group
        self.slot_group = slot_group
        self.label_group = label_group
        self.table = table
        self._static: list[Any] = []
        self._slots: dict[PileRef, Any] = {}
        self._team_labels: list[Any] = []
        self._counts: dict[tuple[int, str], Any] = {}
        self._written: dict[int, object] = {}
        """The tableau each team's words and slots were last set for (``update`` skips it)."""
        self._names = tuple(
            " & ".join(players) + (f"  · {start}" if (start := head_start(table, i)) else "")
            for i, players in enumerate(table.team_players)
        )
        """Each team's name on the felt: its players, and its head start if it has one."""

    def build(self, layout: TableLayout, atlas: CardAtlas) -> None:
        """Lay everything out again for ``layout`` (the words come with ``update``)."""
        self.delete()
        center = layout.center
        # An outline, not a filled panel: filling the middle costs a millisecond a frame on
        # software GL.
        self._static.append(
            shapes.Box(
                center.x,
                center.y,
                center.w,
                center.h,
                thickness=2,
                color=(14, 70, 42, 255),
                batch=self.batch,
                group=self.felt_group,
            )
        )
        for area in layout.teams:
            self._build_slots(area, atlas)
            self._build_labels(area)

    def update(self, layout: TableLayout, state: State) -> None:
        """The names (and who is stuck), the counts, and the slots of the empty piles."""
        if not self._team_labels:
            return
        for area, team_label in zip(layout.teams, self._team_labels):
            team = area.team
            tableau = state.teams[team]
            if self._written.get(team) is tableau:
                continue  # the same cards: nothing here changed (most teams, most frames)
            self._written[team] = tableau
            self._name(team_label, self._names[team], tableau.stuck)
            # Only empty piles show their slot: a slot under cards would cost fill for nothing.
            piles = ((NERTS, tableau.nerts), (STOCK, tableau.stock), (WASTE, tableau.waste))
            work = ((work_pile(i), cards) for i, cards in enumerate(tableau.work))
            for pile, cards in (*piles, *work):
                slot = self._slots.get(PileRef(team, pile))
                if slot is not None and slot.visible != (not cards):
                    slot.visible = not cards
            nerts = self._counts[(team, "nerts")]
            value = f"{len(tableau.nerts)} left" if tableau.nerts else "NERTS!"
            if nerts.text != value:
                nerts.text = value
                colour = (*(ACCENT if len(tableau.nerts) <= 3 else TEXT), 255)
                if tuple(nerts.color) != colour:
                    nerts.color = colour
            stock = self._counts[(team, "stock")]
            value = str(len(tableau.stock)) if tableau.stock else ("↻" if tableau.waste else "")
            if stock.text != value:
                stock.text = value

    def delete(self) -> None:
        for item in self._static + self._team_labels + list(self._counts.values()):
            item.delete()
        self._static, self._team_labels, self._counts, self._slots = [], [], {}, {}
        self._written = {}

    # --- helpers -------------------------------------------------------------------------------

    def _build_slots(self, area: TeamArea, atlas: CardAtlas) -> None:
        slot = atlas.region("own" if area.own else "small", SLOT)
        piles = (NERTS, STOCK, WASTE, *(work_pile(i) for i in range(len(area.work))))
        for slot_pile in piles:
            rect = area.pile_rect(slot_pile)
            sprite = pyglet.sprite.Sprite(
                slot, x=round(rect.x), y=round(rect.y), batch=self.batch, group=self.slot_group
            )
            sprite.update(scale_x=rect.w / slot.width, scale_y=rect.h / slot.height)
            self._static.append(sprite)
            self._slots[PileRef(area.team, slot_pile)] = sprite

    def _build_labels(self, area: TeamArea) -> None:
        """The team's chip and name, and the empty counts under its nerts and stock piles."""
        colour = team_rgb(self.table.back_colours[area.team])
        lx, ly = area.label
        chip = area.card_h * (0.09 if area.own else 0.14)
        self._static.append(
            shapes.Circle(
                lx + chip,
                ly,
                chip,
                color=(*lighter(colour, 0.15), 255),
                batch=self.batch,
                group=self.felt_group,
            )
        )
        text_size = max(11.0, min(area.card_h * (0.13 if area.own else 0.22), 18.0))
        self._team_labels.append(
            label(
                self.batch,
                self.label_group,
                "",
                lx + chip * 2 + 6,
                ly,
                size=text_size,
                bold=area.own,
            )
        )
        for pile in ("nerts", "stock"):
            rect = area.nerts if pile == "nerts" else area.stock
            badge_size = max(10.0, min(area.card_h * 0.13, 16.0))
            # Glyph sprites, not a label: the counts change at nearly every flip.
            self._counts[(area.team, pile)] = GlyphRun(
                self.batch,
                self.label_group,
                "",
                rect.x + rect.w / 2,
                rect.y - badge_size * 0.8,
                size=badge_size,
                colour=TEXT_DIM,
                anchor_x="center",
                bold=pile == "nerts",
            )

    @staticmethod
    def _name(team_label: Any, name: str, stuck: bool) -> None:
        text_value = name + ("  · stuck" if stuck else "")
        if team_label.text != text_value:
            team_label.text = text_value
            colour = (*(WARN if stuck else TEXT), 255)
            if tuple(team_label.color) != colour:
                team_label.color = colour
