"""Help for someone who has never played Nerts: the game in a few lines and a small picture.

``GAME_LINES`` say the goal, the piles, the foundations, the scoring, stuck and Nerts;
``table_sketch`` draws one player's piles and the shared foundations with shapes, named, so that
the words have something to point at. ``HelpOverlay`` shows them beside the keys.
"""

from __future__ import annotations

from typing import Any, Final

from pyglet import shapes

from ui.kit.geometry import Rect
from ui.kit.theme import ACCENT, CARD_FACE, TEXT_DIM
from ui.kit.widgets import label

__all__ = ["GAME_LINES", "table_sketch"]

GAME_LINES: Final = (
    ("Goal", "empty your nerts pile before the others, then call Nerts! (X)."),
    ("No turns", "everyone plays at once, as fast as they can."),
    ("Foundations", "shared, in the middle: start one with an ace, build it up by suit to K."),
    (
        "Work piles",
        "build down in alternating colours (red 6 on black 7); an empty one takes "
        "any card. Move a card with the cards on it.",
    ),
    ("Stock", "flip it (Space) three at a time; the waste's top card can be played."),
    ("Score", "+1 for each of your cards on a foundation, −2 for each left in your nerts pile."),
    (
        "Stuck",
        "a whole pass through the stock and nothing fits? Press S. When everyone is "
        "stuck, the stocks move on a card.",
    ),
    ("Hint", "press H: the next useful move is outlined."),
)
"""The game in a few lines: (what, how)."""

_RED: Final = (200, 30, 40)
_BLACK: Final = (20, 20, 24)
_BACK: Final = (160, 40, 48)


def table_sketch(batch: Any, group: Any, text_group: Any, area: Rect) -> list[Any]:
    """One player's piles under the shared foundations, drawn in ``area``; returns the items."""
    sketch = _Sketch(batch, group, text_group, area)
    sketch.foundations()
    sketch.tableau()
    return sketch.items


class _Sketch:
    """The help page's drawing of a table, card by card and name by name."""

    def __init__(self, batch: Any, group: Any, text_group: Any, area: Rect) -> None:
        self.batch, self.group, self.text_group, self.area = batch, group, text_group, area
        self.items: list[Any] = []
        self.name_size = max(10.0, min(area.h * 0.05, 13.0))
        # Two rows of cards, a cascade's overlap and three lines of names.
        self.card_h = min((area.h - self.name_size * 4.6) / 2.35, area.w * 0.14)
        self.card_w = self.card_h * 0.7
        self.gap = self.card_w * 0.28

    def foundations(self) -> None:
        """The shared foundations along the top."""
        area, card_w, gap = self.area, self.card_w, self.gap
        top = area.top - self.name_size * 1.2
        self.name("foundations (shared by all)", area.x + area.w / 2, top, ACCENT)
        row_y = top - self.name_size - self.card_h
        fx = area.x + area.w / 2 - (3 * card_w + 2 * gap) / 2
        for index, face in enumerate(("3♥", "A♣", "5♠")):
            self.card(fx + index * (card_w + gap), row_y, face)

    def tableau(self) -> None:
        """One player's tableau along the bottom."""
        card_w, card_h, gap, name_size = self.card_w, self.card_h, self.gap, self.name_size
        base = self.area.y + name_size * 1.4 + card_h * 0.28
        x = self.area.x
        self.card(x, base + 2, None)
        self.card(x + 2, base + 1, None)
        self.card(x + 4, base, "9♦")
        self.name("nerts: 13", x + card_w / 2 + 2, base - name_size * 0.8, ACCENT)
        x += card_w + gap * 1.6
        work_x = x
        for faces in (("7♠", "6♥"), ("K♣",), ("4♦",), ()):
            for position, face in enumerate(faces):
                self.card(x, base - position * card_h * 0.28, face)
            if not faces:
                self.items.append(
                    shapes.Box(
                        x,
                        base,
                        card_w,
                        card_h,
                        thickness=1,
                        color=(*TEXT_DIM, 255),
                        batch=self.batch,
                        group=self.group,
                    )
                )
            x += card_w + gap
        self.name("work piles", (work_x + x - gap) / 2, base - name_size * 0.8 - card_h * 0.28)
        x += gap * 0.6
        self.card(x, base, None)
        self.name("stock", x + card_w / 2, base - name_size * 0.8)
        x += card_w + gap
        self.card(x, base, "J♠")
        self.name("waste", x + card_w / 2, base - name_size * 0.8)

    def card(self, x: float, y: float, face: str | None) -> None:
        card_w, card_h, batch, group = self.card_w, self.card_h, self.batch, self.group
        colour = CARD_FACE if face is not None else _BACK
        self.items.append(
            shapes.Rectangle(x, y, card_w, card_h, color=(*colour, 255), batch=batch, group=group)
        )
        self.items.append(
            shapes.Box(
                x, y, card_w, card_h, thickness=1, color=(60, 60, 60, 255), batch=batch, group=group
            )
        )
        if face:
            red = face[-1] in "♥♦"
            self.items.append(
                label(
                    batch,
                    self.text_group,
                    face,
                    x + 4,
                    y + card_h - self.name_size * 0.8,
                    size=self.name_size,
                    colour=_RED if red else _BLACK,
                    bold=True,
                )
            )

    def name(self, text: str, x: float, y: float, colour: tuple[int, int, int] = TEXT_DIM) -> None:
        size = self.name_size
        self.items.append(
            label(
                self.batch, self.text_group, text, x, y, size=size, colour=colour, anchor_x="center"
            )
        )
