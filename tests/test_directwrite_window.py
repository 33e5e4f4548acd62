"""The window's font under Windows' own text renderer, DirectWrite: the card suits are drawn.

This runs in the Windows lane (Windows CPython under Wine) with an X display: `xvfb-run`. Wine 8
shows nothing of pyglet's OpenGL window on the screen there (its GL child window stays off
screen), but the frame renders and is read back from the framebuffer, as the Linux window tests
read theirs. Elsewhere it is skipped: the Linux window tests (tests/ui) run under FreeType.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(
    sys.platform != "win32", reason="DirectWrite is Windows' renderer: a Windows-lane test"
)

MESSAGE = "Q♥ needs J♥ on a foundation first · ♠ ♦ ♣"


@pytest.fixture
def window() -> Iterator[Any]:
    pyglet = pytest.importorskip("pyglet")
    try:
        made = pyglet.window.Window(320, 140, caption="Nerts font")
    except Exception as error:  # no display: the lane runs without xvfb-run
        pytest.skip(f"no display for a window on Windows here ({type(error).__name__}: {error})")
    try:
        yield made
    finally:
        made.close()


def test_directwrite_draws_the_suits_of_the_shipped_font(window: Any) -> None:
    import pyglet
    from pyglet import gl

    from ui.theme import FONT
    from ui.widgets import drawable, label, use_shipped_font

    use_shipped_font()
    font = pyglet.font.load(FONT, 20)
    assert not hasattr(getattr(font, "face", None), "get_character_index"), "not DirectWrite"
    assert drawable(MESSAGE) == MESSAGE, "the label filter dropped the suits"

    batch = pyglet.graphics.Batch()
    hearts = label(batch, None, "♥♥", 10, 70, size=60, colour=(255, 0, 0))
    assert hearts.content_width > 60
    window.switch_to()
    gl.glClearColor(0, 0, 0, 1)
    window.clear()
    batch.draw()
    image = pyglet.image.get_buffer_manager().get_color_buffer().get_image_data()
    data = image.get_data("RGBA", image.width * 4)
    red = sum(1 for i in range(0, len(data), 4) if data[i] > 200 and data[i + 1] < 60)
    assert red > 1000, f"{red} red pixels: the hearts were not drawn"
