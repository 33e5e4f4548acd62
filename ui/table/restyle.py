"""The table's cards in a new look (the Options' four colours, high-visibility cards or card
size), drawn a few per frame while the old look stays: redrawing them all at once held the
window up for seconds, and players clicked again, undoing their choice. The options' button
shows its new value at once. The options that need no new cards (the left-handed layout, reduced
motion) apply to the view at once (``use_access``); ``new_view`` makes a view with them all.
"""

from __future__ import annotations

from typing import Any

from pyglet.graphics import Group

from nerts_lan.rules.state import State, Table
from ui.config import CARD_SIZES, Settings
from ui.kit.atlas import CardAtlas
from ui.table.view import TableView

__all__ = ["Restyle", "changes_look", "new_view", "use_access"]


class Restyle:
    """The atlas of the new look being drawn (``atlas``; None: no new look under way)."""

    def __init__(self) -> None:
        self.atlas: CardAtlas | None = None

    def start(
        self, view: TableView, size: tuple[int, int], state: State, settings: Settings
    ) -> None:
        """Begin drawing the look of ``settings`` for ``view``'s table at window ``size``
        (a look under way is dropped)."""
        if self.atlas is not None:
            self.atlas.delete()
        scale = CARD_SIZES.get(settings.card_size, 1.0)
        self.atlas = view.staged_atlas(
            *size, state, settings.four_colour, scale, settings.high_visibility
        )

    def finished(self, window: Any) -> CardAtlas | None:
        """Draw a few more cards; the atlas (the caller's from then on) once all are drawn."""
        atlas = self.atlas
        if atlas is None or not atlas.draw_more(window):
            return None
        self.atlas = None
        return atlas

    def delete(self) -> None:
        if self.atlas is not None:
            self.atlas.delete()


def changes_look(old: Settings, new: Settings) -> bool:
    """Whether ``new`` draws the cards otherwise than ``old``."""
    return (
        new.four_colour != old.four_colour
        or new.card_size != old.card_size
        or new.high_visibility != old.high_visibility
    )


def new_view(
    window: Any, batch: Any, parent: Group, table: Table, team: int, settings: Settings
) -> TableView:
    """A view of ``table`` from ``team``'s seat in the look and layout of ``settings``."""
    return TableView(
        window,
        batch,
        parent,
        table,
        team,
        four_colour=settings.four_colour,
        card_scale=CARD_SIZES.get(settings.card_size, 1.0),
        left_handed=settings.left_handed,
        reduced_motion=settings.reduced_motion,
        high_visibility=settings.high_visibility,
    )


def use_access(view: TableView, settings: Settings) -> bool:
    """Give ``view`` the options of ``settings`` that need no new cards; True when its layout
    changed (the table must be laid out again)."""
    view.reduced_motion = settings.reduced_motion
    if view.left_handed == settings.left_handed:
        return False
    view.left_handed = settings.left_handed
    return True
