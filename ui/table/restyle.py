"""The table's cards in a new look (the Options' four colours or card size), drawn a few per
frame while the old look stays: redrawing them all at once held the window up for seconds, and
players clicked again, undoing their choice. The options' button shows its new value at once.
"""

from __future__ import annotations

from typing import Any

from nerts_lan.rules.state import State
from ui.config import CARD_SIZES, Settings
from ui.kit.atlas import CardAtlas
from ui.table.view import TableView

__all__ = ["Restyle", "changes_look"]


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
        self.atlas = view.staged_atlas(
            *size, state, settings.four_colour, CARD_SIZES.get(settings.card_size, 1.0)
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
    return new.four_colour != old.four_colour or new.card_size != old.card_size
