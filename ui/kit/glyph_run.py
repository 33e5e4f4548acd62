"""A short line of text that changes often, drawn as one sprite per character from the font's
own glyph textures: a new text swaps the sprites' images and places them, where a pyglet
``Label`` lays its whole text out again (0.3-0.8 ms each time; the felt's counts change at
nearly every flip of every player, half a millisecond of a busy table's frame).

It reads like a label where the table uses one: ``text`` and ``color`` to get and set,
``delete()``; one line, no wrapping, anchored as ``ui.kit.widgets.label`` anchors (its centre
or its bottom).
"""

from __future__ import annotations

from typing import Any

import pyglet

from ui.kit.theme import FONT, TEXT
from ui.kit.widgets import drawable, use_shipped_font

__all__ = ["GlyphRun"]

_DPI = 96
"""The resolution labels lay their type out at (pyglet's default): the same glyphs."""


class GlyphRun:
    """``value`` at (``x``, ``y``) in ``batch``, ``size`` in pixels like ``label``'s."""

    def __init__(
        self,
        batch: Any,
        group: Any,
        value: str,
        x: float,
        y: float,
        size: float = 12,
        colour: tuple[int, int, int] = TEXT,
        anchor_x: str = "left",
        anchor_y: str = "center",
        bold: bool = False,
    ) -> None:
        if anchor_x not in ("left", "center", "right"):
            raise ValueError(f"anchor_x must be left, center or right, not {anchor_x!r}")
        if anchor_y not in ("center", "bottom"):
            raise ValueError(f"anchor_y must be center or bottom, not {anchor_y!r}")
        use_shipped_font()
        self.font_size = size * 0.75
        """In points, as a label's."""
        self._font = pyglet.font.load(FONT, self.font_size, "bold" if bold else "normal", dpi=_DPI)
        self._batch, self._group = batch, group
        self._x, self._anchor_x = x, anchor_x
        ascent, descent = self._font.ascent, self._font.descent
        if anchor_y == "bottom":
            self._baseline = y - descent
        else:  # a one-line label's "center": what pyglet finds looks centred
            self._baseline = y - ascent + (ascent // 2 - descent // 4)
        self._colour: tuple[int, int, int, int] = (*colour, 255)
        self._sprites: list[Any] = []
        self._text = ""
        self.text = value

    @property
    def text(self) -> str:
        return self._text

    @text.setter
    def text(self, value: str) -> None:
        if value == self._text and self._sprites:
            return
        self._text = value
        glyphs, offsets = self._font.get_glyphs(drawable(value)) if value else ([], [])
        advances = [round(g.advance + o.x_advance) for g, o in zip(glyphs, offsets)]
        width = sum(advances)
        pen = self._x - {"left": 0.0, "center": width / 2, "right": width}[self._anchor_x]
        shown = 0
        for glyph, offset, advance in zip(glyphs, offsets, advances):
            if glyph.width and glyph.height:  # a space moves the pen and draws nothing
                x = round(pen + offset.x_offset + glyph.vertices[0])
                y = round(self._baseline + offset.y_offset + glyph.vertices[1])
                self._show(shown, glyph, x, y)
                shown += 1
            pen += advance
        for sprite in self._sprites[shown:]:
            sprite.visible = False

    def width_of(self, value: str) -> float:
        """How wide ``value`` would be drawn (in pixels, for the layout around it)."""
        glyphs, offsets = self._font.get_glyphs(drawable(value)) if value else ([], [])
        return float(sum(round(g.advance + o.x_advance) for g, o in zip(glyphs, offsets)))

    @property
    def line_height(self) -> float:
        return float(self._font.ascent - self._font.descent)

    @property
    def color(self) -> tuple[int, int, int, int]:
        return self._colour

    @color.setter
    def color(self, value: tuple[int, ...]) -> None:
        rgba = (*value[:3], value[3] if len(value) > 3 else 255)
        self._colour = (int(rgba[0]), int(rgba[1]), int(rgba[2]), int(rgba[3]))
        for sprite in self._sprites:
            sprite.color = self._colour

    def delete(self) -> None:
        for sprite in self._sprites:
            sprite.delete()
        self._sprites = []

    # --- helpers -------------------------------------------------------------------------------

    def _show(self, index: int, glyph: Any, x: int, y: int) -> None:
        if index == len(self._sprites):
            sprite = pyglet.sprite.Sprite(glyph, x, y, batch=self._batch, group=self._group)
            sprite.color = self._colour
            self._sprites.append(sprite)
            return
        sprite = self._sprites[index]
        if sprite.image is not glyph:
            sprite.image = glyph
        sprite.update(x=x, y=y)
        if not sprite.visible:
            sprite.visible = True
