"""The window under Windows' own parts: the card suits drawn by DirectWrite, and the window
at a display scale of 200 % (pyglet's Win32 window reading the monitor's DPI).

This runs in the Windows lane (Windows CPython under Wine) with an X display: `xvfb-run`; the
scale test needs Wine's DPI at 192 (`wine reg add "HKCU\\Control Panel\\Desktop" /v LogPixels
/t REG_DWORD /d 192 /f` in the lane's prefix), and is skipped at 100 %. Wine 8
shows nothing of pyglet's OpenGL window on the screen there (its GL child window stays off
screen), but the frame renders and is read back from the framebuffer, as the Linux window tests
read theirs. Elsewhere it is skipped: the Linux window tests (tests/ui) run under FreeType.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = [
    pytest.mark.window,  # the lane's main run leaves it out; its own step runs it on a display
    pytest.mark.skipif(
        sys.platform != "win32", reason="DirectWrite and Win32 DPI: a Windows-lane test"
    ),
]

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

    from ui.kit.theme import FONT
    from ui.kit.widgets import drawable, label, use_shipped_font

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


def test_at_a_windows_display_scale_the_window_opens_at_its_size_in_points(
    window: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows at 200 % (in the lane: Wine's "LogPixels" set to 192 in its registry): the
    window is 1280 x 800 pixels for its 640 x 400 points, and the table is drawn in points."""
    from nerts_lan.practice import PracticeConfig
    from tests.kit import layout, team
    from ui.app import make_window
    from ui.kit.theme import CARD_FACE

    if window.scale <= 1:
        pytest.skip(f"the display is at {window.scale:.0%}: no Windows scaling to test here")
    monkeypatch.setenv("NERTS_LAN_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("NERTS_LAN_DATA", str(tmp_path / "data"))
    scale = window.scale
    game = make_window(640, 400)
    try:
        assert game.get_size() == (round(640 * scale), round(400 * scale))
        assert (game.width, game.height) == (640, 400)
        you = team("You", ("You",), nerts="AH", work=("9D", "6S", "", "2C"), stock="3S 4S")
        ada = team("Ada", ("Ada",), nerts="KD QD", work=("KC", "KH", "KS", "QC"), stock="2D")
        config = PracticeConfig(player="You", opponents=1, seed="t", delay_scale=1e6)
        game.start_practice(config, first_deal=layout(you, ada))
        game.draw_frame()
        nerts = game.current.view.layout.own_area.nerts
        x, y = nerts.x + nerts.w * 0.9, nerts.y + nerts.h * 0.55  # beside the heart
        game.switch_to()
        game.on_draw()
        image = _colour_buffer()
        offset = (round(y * scale) * image.width + round(x * scale)) * 4
        data = image.get_data("RGBA", image.width * 4)
        assert all(abs(a - b) <= 6 for a, b in zip(data[offset : offset + 3], CARD_FACE))
    finally:
        game.close()


def _colour_buffer() -> Any:
    import pyglet

    return pyglet.image.get_buffer_manager().get_color_buffer().get_image_data()


def test_a_glyph_run_under_directwrite_covers_the_pixels_of_a_label(window: Any) -> None:
    """The felt's counts are glyph sprites placed from the font's advances and DirectWrite's
    offsets (``ui.kit.glyph_run``): they must sit where a label of the same text sits."""
    import pyglet

    from ui.kit.glyph_run import GlyphRun
    from ui.kit.widgets import label

    ours, theirs = pyglet.graphics.Batch(), pyglet.graphics.Batch()
    white = (255, 255, 255)
    drawn = [  # held: a sprite that is collected is deleted
        GlyphRun(ours, None, "13 left ↻", 160, 70, size=20, colour=white, anchor_x="center"),
        label(theirs, None, "13 left ↻", 160, 70, size=20, colour=white, anchor_x="center"),
    ]
    boxes = [_ink(window, batch) for batch in (ours, theirs)]
    assert len(drawn) == 2 and None not in boxes
    assert all(abs(a - b) <= 1 for a, b in zip(*boxes)), boxes  # type: ignore[misc]


def _ink(window: Any, batch: Any) -> tuple[int, int, int, int] | None:
    """The box of the pixels ``batch`` alone lights (x0, y0, x1, y1)."""
    import pyglet
    from pyglet import gl

    window.switch_to()
    gl.glClearColor(0, 0, 0, 1)
    window.clear()
    batch.draw()
    image = pyglet.image.get_buffer_manager().get_color_buffer().get_image_data()
    data = image.get_data("RGBA", image.width * 4)
    lit = [i // 4 for i in range(0, len(data), 4) if data[i] > 60]
    if not lit:
        return None
    xs, ys = [i % image.width for i in lit], [i // image.width for i in lit]
    return min(xs), min(ys), max(xs), max(ys)
