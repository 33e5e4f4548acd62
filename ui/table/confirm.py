"""The question before leaving a match: Stay is the answer of every stray key.

A player who hammers Space to flip or Enter to play a card expects to go on playing, so Enter,
Space and Esc all stay; only the Leave button or the L key leave. The question's panel keeps
clear of what the player was clicking (the piles, the buttons of the table) where the window
has room, so a click meant for them lands on nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from pyglet.graphics import Group
from pyglet.window import key as keys

from ui.kit.geometry import Rect
from ui.kit.theme import ACCENT, TEXT_DIM
from ui.kit.widgets import Panel
from ui.table.overlays import PANEL_ALPHA, Overlay

__all__ = ["LEAVE_KEYS", "STAY_KEYS", "ConfirmOverlay", "lift_clear"]

STAY_KEYS: Final = frozenset({keys.ENTER, keys.RETURN, keys.NUM_ENTER, keys.SPACE, keys.ESCAPE})
"""Keys that answer Stay: the safe answer of a key pressed out of habit."""
LEAVE_KEYS: Final = frozenset({keys.L})
"""Keys that answer Leave: one no play key shares."""

_PANEL_W = 460.0
_PANEL_H = 170.0
_GAP = 8.0


class ConfirmOverlay(Overlay):
    """A yes-or-no question about leaving: Stay (Enter, Space, Esc, its button) or Leave (L, its
    button); its panel sits above ``keep_clear`` (rects of things just clickable) if it fits."""

    def __init__(
        self,
        batch: Any,
        group: Group,
        question: str,
        detail: str,
        on_leave: Callable[[], None],
        on_stay: Callable[[], None],
        keep_clear: Sequence[Rect] = (),
    ) -> None:
        super().__init__(batch, group)
        self.question = question
        self.detail = detail
        self.on_leave = on_leave
        self.on_stay = on_stay
        self.keep_clear = tuple(keep_clear)
        self.rect = Rect(0, 0, 0, 0)
        """Where the panel went at the last build."""

    def on_key(self, symbol: int) -> None:
        """A key pressed while the question is open: Leave, Stay, or nothing."""
        if symbol in LEAVE_KEYS:
            self.on_leave()
        elif symbol in STAY_KEYS:
            self.on_stay()

    def content(self, width: int, height: int) -> None:
        w, h = min(_PANEL_W, width - 20), min(_PANEL_H, height - 20)
        centred = Rect((width - w) / 2, (height - h) / 2, w, h)
        rect = lift_clear(centred, self.keep_clear, ceiling=height - 10)
        self.rect = rect
        self.items.append(Panel(self.batch, self.panel_group, rect, alpha=PANEL_ALPHA))
        self.text(self.question, rect.x + 24, rect.top - 36, size=22, bold=True, colour=ACCENT)
        self.text(self.detail, rect.x + 24, rect.top - 74, size=15, colour=TEXT_DIM)
        self.button(
            Rect(rect.x + 24, rect.y + 20, 130, 38), "Leave (L)", self.on_leave, (150, 52, 48)
        )
        self.button(
            Rect(rect.right - 184, rect.y + 20, 160, 38),
            "Stay (Enter)",
            self.on_stay,
            (40, 110, 70),
        )


def lift_clear(rect: Rect, keep_clear: Sequence[Rect], ceiling: float) -> Rect:
    """``rect`` moved up just above each rect of ``keep_clear`` it would overlap (with a small
    gap), but never with its top over ``ceiling``."""
    moved = rect
    for _ in range(len(keep_clear) + 1):
        clashes = [other for other in keep_clear if moved.inflate(_GAP).overlap(other) > 0]
        if not clashes:
            break
        moved = moved.moved_to(moved.x, max(other.top for other in clashes) + _GAP)
    if moved.top > ceiling:
        moved = moved.moved_to(moved.x, max(ceiling - moved.h, 0.0))
    return moved
