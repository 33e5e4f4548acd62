"""The counts that change at nearly every flip are glyph sprites, not labels: they read and
sit where a label with the same text would (so the felt looks the same), and a new text reuses
the sprites it has."""

from __future__ import annotations

import pyglet
import pytest

from tests.ui.conftest import Harness
from ui.kit.glyph_run import GlyphRun
from ui.kit.widgets import label


def _ink(batch: pyglet.graphics.Batch, harness: Harness) -> tuple[int, int, int, int] | None:
    """The box of the non-background pixels drawn by ``batch`` alone (x0, y0, x1, y1)."""
    window = harness.window
    window.switch_to()
    pyglet.gl.glClearColor(0, 0, 0, 1)
    window.clear()
    batch.draw()
    image = pyglet.image.get_buffer_manager().get_color_buffer().get_image_data()
    data = image.get_data("RGBA", image.width * 4)
    xs, ys = [], []
    for y in range(0, image.height):
        row = data[y * image.width * 4 : (y + 1) * image.width * 4]
        for x in range(0, image.width):
            if row[x * 4] > 60:
                xs.append(x)
                ys.append(y)
    return (min(xs), min(ys), max(xs), max(ys)) if xs else None


@pytest.mark.parametrize(("anchor_x", "anchor_y"), [("center", "center"), ("left", "bottom")])
def test_a_glyph_run_covers_the_pixels_a_label_of_its_text_would(
    harness: Harness, anchor_x: str, anchor_y: str
) -> None:
    ours, theirs = pyglet.graphics.Batch(), pyglet.graphics.Batch()
    kwargs = {"size": 16, "colour": (255, 255, 255), "anchor_x": anchor_x, "anchor_y": anchor_y}
    drawn = [  # held: a sprite that is collected is deleted
        GlyphRun(ours, None, "13 left", 200, 150, **kwargs),
        label(theirs, None, "13 left", 200, 150, **kwargs),
    ]
    run_box, label_box = _ink(ours, harness), _ink(theirs, harness)
    assert len(drawn) == 2
    assert run_box is not None and label_box is not None
    assert all(abs(a - b) <= 1 for a, b in zip(run_box, label_box)), (run_box, label_box)


def test_a_new_text_reuses_the_sprites_and_an_empty_one_hides_them(harness: Harness) -> None:
    batch = pyglet.graphics.Batch()
    count = GlyphRun(batch, None, "35", 100, 100, anchor_x="center")
    first = list(count._sprites)
    count.text = "34"
    assert count.text == "34" and count._sprites == first
    count.text = ""
    assert all(not sprite.visible for sprite in count._sprites)
    assert _ink(batch, harness) is None
    count.text = "9 left"
    assert _ink(batch, harness) is not None
    count.delete()
