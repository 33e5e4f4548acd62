"""The window's own font draws the card suits, here (FreeType) and, as far as this machine can
tell, under Windows' DirectWrite and macOS' Quartz, whose font objects answer no question about
their glyphs. Those systems have no DejaVu Sans: "Q♥ needs J♥" was drawn "Q needs J" there.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from tests.ui.conftest import Harness
from ui.kit.font import FONT_FILES, characters_in
from ui.kit.theme import FONT, SUIT_SYMBOLS

pyglet = pytest.importorskip("pyglet")

MESSAGE = "Q♥ needs J♥ on a foundation first · ♠ ♦ ♣ → ← ↑ ↓ …"


class DirectWriteLikeFont:
    """What pyglet's DirectWrite and Quartz fonts look like to the label filter: no FreeType
    ``face.get_character_index``, no fallbacks to ask."""

    name = FONT
    fallbacks: ClassVar[list[Any]] = []


def test_the_shipped_font_is_loaded_by_its_name_and_draws_the_suits(harness: Harness) -> None:
    from pyglet.font.freetype import FreeTypeMemoryFace

    from ui.kit.widgets import drawable, label

    for weight in ("normal", "bold"):
        font = pyglet.font.load(FONT, 12, weight=weight)
        assert isinstance(font.face, FreeTypeMemoryFace), "not the wheel's font, a system one"
        assert all(font.face.get_character_index(suit) for suit in SUIT_SYMBOLS)
    assert drawable(MESSAGE) == MESSAGE
    # Drawn: a heart label's ink is the heart's shape, as wide as the font's heart.
    item = label(harness.window.batch, None, "♥", 20, 20, size=40, colour=(255, 0, 0))
    assert item.content_width > 20
    harness.window.needs_draw = True
    data, _, _ = harness.pixels()
    red = sum(1 for i in range(0, len(data), 3) if data[i] > 200 and data[i + 1] < 60)
    assert red > 200, "no heart on the screen"


def test_on_directwrite_and_quartz_the_filter_keeps_the_suits_of_our_font(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyglet.font.freetype import FreeTypeFont

    from ui.kit import widgets

    # As on Windows or macOS: fonts are what the system has (no DejaVu Sans) plus those the
    # game added from its files; pyglet hands back a font object with no glyph lookup.
    monkeypatch.setattr(pyglet.font, "load", lambda *args, **kwargs: DirectWriteLikeFont())
    monkeypatch.setattr(pyglet.font, "have_font", FreeTypeFont._memory_faces.contains)
    widgets._font_draws.cache_clear()
    try:
        assert widgets.drawable(MESSAGE) == MESSAGE
        # What the font lacks still gets a stand-in, or goes: an emoji would be an empty box.
        assert widgets.drawable("Bo 🃏✅") == "Bo ★✓"
    finally:
        widgets._font_draws.cache_clear()


def test_what_the_filter_reads_from_the_font_file_is_what_freetype_finds_in_it(
    harness: Harness,
) -> None:
    font = pyglet.font.load(FONT, 12)
    drawn = characters_in(FONT_FILES[0])
    for code in range(0x20, 0x2800):
        assert bool(font.face.get_character_index(chr(code))) == (code in drawn), hex(code)
