"""Colours and fonts of the window (plain values: no pyglet import)."""

from __future__ import annotations

from typing import Final

__all__ = [
    "BACKGROUND",
    "FONT",
    "HIGH_VISIBILITY_EDGE",
    "PANEL",
    "STAND_INS",
    "SUIT_COLOURS",
    "SUIT_SYMBOLS",
    "TEAM_RGB",
    "TEXT",
    "suit_colour",
    "team_rgb",
]

Colour = tuple[int, int, int]

FONT: Final = "Nerts Sans"
"""The font the wheel ships (ui/kit/fonts/, a subset of DejaVu Sans: it draws ♠♥♦♣ on every system;
``ui.kit.widgets.use_shipped_font`` registers it with pyglet before any label)."""

BACKGROUND: Final[Colour] = (22, 92, 58)
FELT_DARK: Final[Colour] = (17, 76, 47)
PANEL: Final[Colour] = (24, 32, 40)
TEXT: Final[Colour] = (240, 244, 238)
TEXT_DIM: Final[Colour] = (176, 204, 186)
ACCENT: Final[Colour] = (255, 206, 84)
WARN: Final[Colour] = (255, 122, 98)
GOOD: Final[Colour] = (140, 230, 150)
CARD_FACE: Final[Colour] = (252, 251, 246)
CARD_EDGE: Final[Colour] = (120, 120, 112)
HIGH_VISIBILITY_EDGE: Final[Colour] = (16, 16, 20)
"""The outline of a high-visibility card: near black, a few pixels wide."""

SUIT_SYMBOLS: Final = ("♠", "♥", "♦", "♣")

STAND_INS: Final[dict[str, str]] = {
    "🃏": "★",  # the joker
    "🂠": "▮",  # a card's back
    "🎴": "▮",
    "♤": "♠",
    "♡": "♥",
    "♢": "♦",
    "♧": "♣",
    "✅": "✓",
    "✔️": "✓",
    "❤️": "♥",
    "❤": "♥",
    "⭐": "★",
    "🏆": "★",
}
"""Symbols the font may lack (emoji, mostly), and one it has to draw instead."""
"""By suit index (S, H, D, C)."""

SUIT_COLOURS: Final[dict[bool, tuple[Colour, Colour, Colour, Colour]]] = {
    False: ((28, 28, 32), (204, 24, 36), (204, 24, 36), (28, 28, 32)),
    True: ((28, 28, 32), (204, 24, 36), (22, 92, 210), (18, 132, 52)),
}
"""Suit colours for the two-colour deck (False) and the four-colour deck (True)."""

TEAM_RGB: Final[dict[str, Colour]] = {
    "red": (196, 48, 48),
    "blue": (46, 98, 196),
    "green": (40, 150, 70),
    "purple": (128, 70, 176),
    "orange": (226, 128, 30),
    "teal": (24, 150, 150),
    "brown": (134, 88, 50),
    "grey": (112, 118, 126),
}


def team_rgb(name: str) -> Colour:
    """The RGB of a back-colour name (grey for a name it does not know)."""
    return TEAM_RGB.get(name, TEAM_RGB["grey"])


def suit_colour(suit: int, four_colour: bool) -> Colour:
    return SUIT_COLOURS[four_colour][suit]


def lighter(colour: Colour, amount: float = 0.35) -> Colour:
    r, g, b = colour
    return (
        int(r + (255 - r) * amount),
        int(g + (255 - g) * amount),
        int(b + (255 - b) * amount),
    )


def darker(colour: Colour, amount: float = 0.3) -> Colour:
    r, g, b = colour
    return (int(r * (1 - amount)), int(g * (1 - amount)), int(b * (1 - amount)))
