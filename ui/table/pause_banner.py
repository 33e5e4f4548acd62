"""The banner a LAN table shows while it waits for its members ("Waiting for the table…").

A table pauses when members went silent and those still heard are not enough to go on without
them (``nerts_lan.table.session.TablePaused``). The player may still play: the moves show at once
but are not final until the table is back, when each counts at its place or is refused there. The
banner stays across the top of the window, over the other players' piles, until then.
"""

from __future__ import annotations

from typing import Any, Final

from pyglet.graphics import Group

from nerts_lan.table.session import AddressChanged, Away, BackAtTable, Reconnected
from ui.kit.geometry import Rect
from ui.kit.theme import ACCENT, TEXT
from ui.kit.widgets import Panel, label
from ui.kit.wording import TABLE_PAUSED

__all__ = [
    "AWAY",
    "BACK_AT_TABLE",
    "LEFT_BEHIND",
    "MOVED",
    "PAUSED_DETAIL",
    "PAUSED_TITLE",
    "RECONNECTED",
    "PauseBanner",
    "whereabouts_text",
]

PAUSED_TITLE: Final = TABLE_PAUSED
PAUSED_DETAIL: Final = "A player dropped out. Your moves are not final until the table is back."
LEFT_BEHIND: Final = "The table went on without you: your moves it missed are undone"
"""Said when the wait ends with the others going on without this player (``LeftBehind``)."""
AWAY: Final = "You were away: looking for the table…"
"""Said on waking up from a closed lid (``Away``), until the table answers."""
BACK_AT_TABLE: Final = "You were away: back at the table"
"""Said once the table has this player again (``BackAtTable``; a bot played meanwhile)."""
MOVED: Final = "Your network changed: reconnecting…"
"""Said when the laptop's address changed mid-game (``AddressChanged``)."""
RECONNECTED: Final = "Reconnected to the table"


def whereabouts_text(event: AddressChanged | Reconnected | Away | BackAtTable) -> str:
    """What the table says of a laptop that moved or slept (the end of a table that went while
    it slept is said by the menu: ``TableGone.reason``)."""
    if isinstance(event, Away):
        return AWAY
    if isinstance(event, BackAtTable):
        return BACK_AT_TABLE
    return MOVED if isinstance(event, AddressChanged) else RECONNECTED


class PauseBanner:
    """Shown while the table is paused (``show``), gone when it is back (``hide``)."""

    def __init__(self, batch: Any, group: Group) -> None:
        self._batch = batch
        self._group = group
        self._items: list[Any] = []
        self._size: tuple[int, int] | None = None

    @property
    def shown(self) -> bool:
        return bool(self._items)

    @property
    def texts(self) -> tuple[str, ...]:
        """What the banner says now (empty when hidden)."""
        return tuple(item.text for item in self._items if hasattr(item, "text"))

    def show(self, width: int, height: int) -> None:
        """Show the banner for a window of ``width`` x ``height`` (again after a resize)."""
        self.hide()
        self._size = (width, height)
        panel_w, panel_h = min(width * 0.7, 620.0), min(height * 0.12, 70.0)
        top = height - panel_h - min(height * 0.02, 12.0)
        rect = Rect((width - panel_w) / 2, top, panel_w, panel_h)
        text_group = Group(order=1, parent=self._group)
        self._items = [
            Panel(self._batch, self._group, rect, colour=(40, 44, 70), alpha=235),
            label(
                self._batch,
                text_group,
                PAUSED_TITLE,
                width / 2,
                top + panel_h * 0.66,
                size=panel_h * 0.3,
                colour=ACCENT,
                anchor_x="center",
                bold=True,
            ),
            label(
                self._batch,
                text_group,
                PAUSED_DETAIL,
                width / 2,
                top + panel_h * 0.26,
                size=panel_h * 0.17,
                colour=TEXT,
                anchor_x="center",
            ),
        ]

    def resize(self, width: int, height: int) -> None:
        if self.shown and self._size != (width, height):
            self.show(width, height)

    def hide(self) -> None:
        for item in self._items:
            item.delete()
        self._items = []
