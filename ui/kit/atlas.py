"""Card faces and backs drawn once into one texture atlas, then shown as sprites.

Drawing a card from shapes and labels every frame costs a draw call per card; drawn once into a
texture, every card of the table is a textured quad of one texture, a few draw calls in all.
High-visibility cards (an accessibility option) have larger corner indices, four suit colours
(♠ black, ♥ red, ♦ blue, ♣ green, whatever the four-colour option) and a strong dark outline.
The atlas holds each card size the table uses (the local cards, the foundations, the other teams'
cards) and is rebuilt when the window's size changes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyglet
from pyglet import gl, shapes, text
from pyglet.image.buffer import Framebuffer
from pyglet.math import Mat4

from nerts_lan.rules.cards import RANK_NAMES
from ui.kit.theme import (
    CARD_EDGE,
    CARD_FACE,
    FONT,
    HIGH_VISIBILITY_EDGE,
    SUIT_SYMBOLS,
    darker,
    lighter,
    suit_colour,
    team_rgb,
)
from ui.kit.widgets import use_shipped_font

__all__ = ["CELLS_PER_STEP", "CORNER_SHARE", "SLOT", "CardAtlas"]

_PAD = 2
_CELLS = 52 + 8 + 1  # faces, one back per team colour, the empty-pile slot
SLOT = -1
CELLS_PER_STEP = 6
"""Cards a staged atlas draws per frame: a few dozen milliseconds at most, where all of them at
once held the window up for seconds on a slow laptop."""
CORNER_SHARE = {False: 0.17, True: 0.22}
"""The corner index's em as a share of the card's height: plain and high-visibility cards (the
larger one still fits the strip a fanned work pile leaves, a quarter of the height)."""


class CardAtlas:
    """Card images at several sizes in one texture: ``region(size, card)``.

    ``card`` is 0..51 for a face, ``("back", team)`` for a back, ``SLOT`` for an empty pile.
    """

    def __init__(
        self,
        window: Any,
        sizes: dict[str, tuple[int, int]],
        back_colours: Sequence[str],
        four_colour: bool,
        *,
        staged: bool = False,
        high_visibility: bool = False,
    ) -> None:
        """Draw every card now, or with ``staged`` none yet: ``draw_more`` then draws them a
        few at a time, so a window can keep answering its player while a new look is drawn."""
        self.sizes = dict(sizes)
        self.back_colours = tuple(back_colours)
        self.four_colour = four_colour
        self.high_visibility = high_visibility
        self._regions: dict[tuple[str, object], Any] = {}
        self._todo: list[tuple[str, int, int, int, int, object]] = []
        """Cells still to draw: size name, x, y, w, h, card (drawn from the end)."""
        self._cleared = False
        self._allocate()
        if not staged:
            self.draw_more(window, len(self._todo))

    @property
    def ready(self) -> bool:
        """Every card is drawn."""
        return not self._todo

    def draw_more(self, window: Any, cells: int = CELLS_PER_STEP) -> bool:
        """Draw up to ``cells`` more cards into the texture; True once every card is drawn."""
        if not self._todo:
            return True
        step = self._todo[-cells:]
        del self._todo[-cells:]
        self._draw(window, step)
        return not self._todo

    def matches(
        self,
        sizes: dict[str, tuple[int, int]],
        back_colours: Sequence[str],
        four_colour: bool,
        high_visibility: bool = False,
    ) -> bool:
        return (
            self.sizes == sizes
            and self.back_colours == tuple(back_colours)
            and self.four_colour == four_colour
            and self.high_visibility == high_visibility
        )

    def region(self, size: str, card: object) -> Any:
        return self._regions[(size, card)]

    def delete(self) -> None:
        self.texture.delete()

    # --- drawing -------------------------------------------------------------------------------

    def _allocate(self) -> None:
        """The texture, each card's region in it, and the list of cells to draw."""
        cells: list[object] = [*range(52), *(("back", t) for t in range(8)), SLOT]
        placed: list[tuple[str, int, int, int, int, object]] = []
        max_width = 2048
        y = 0
        width_used = 0
        for name, (w, h) in self.sizes.items():
            cell_w, cell_h = w + 2 * _PAD, h + 2 * _PAD
            columns = max(1, min(_CELLS, max_width // cell_w))
            rows = -(-_CELLS // columns)
            for i, card in enumerate(cells):
                row, col = divmod(i, columns)
                placed.append((name, col * cell_w + _PAD, y + row * cell_h + _PAD, w, h, card))
            y += rows * cell_h
            width_used = max(width_used, columns * cell_w)
        self.texture = pyglet.image.Texture.create(
            max(width_used, 4), max(y, 4), min_filter=gl.GL_NEAREST, mag_filter=gl.GL_NEAREST
        )
        for name, x0, y0, w, h, card in placed:
            self._regions[(name, card)] = self.texture.get_region(x0, y0, w, h)
        self._todo = placed[::-1]

    def _draw(self, window: Any, cells: list[tuple[str, int, int, int, int, object]]) -> None:
        use_shipped_font()  # the faces' rank and suit labels
        window.switch_to()  # its viewport is set back below: the window's, not another's
        tex_w, tex_h = self.texture.width, self.texture.height
        framebuffer = Framebuffer()
        framebuffer.attach_texture(self.texture)
        framebuffer.bind()
        old_projection = window.projection
        try:
            gl.glViewport(0, 0, tex_w, tex_h)
            window.projection = Mat4.orthogonal_projection(0, tex_w, 0, tex_h, -255, 255)
            if not self._cleared:  # a new texture holds whatever the driver left there
                gl.glClearColor(0, 0, 0, 0)
                gl.glClear(gl.GL_COLOR_BUFFER_BIT)
                self._cleared = True
            batch = pyglet.graphics.Batch()
            keep: list[Any] = []
            for _, x0, y0, w, h, card in cells:
                if isinstance(card, int) and card >= 0:
                    keep += self._face(batch, x0, y0, w, h, card)
                elif card == SLOT:
                    keep += self._slot(batch, x0, y0, w, h)
                else:
                    team = card[1]  # type: ignore[index]
                    colour = self.back_colours[team] if team < len(self.back_colours) else ""
                    keep += self._back(batch, x0, y0, w, h, colour)
            batch.draw()
            for item in keep:
                item.delete()
        finally:
            framebuffer.unbind()
            framebuffer.delete()
            window.projection = old_projection
            fb_w, fb_h = window.get_framebuffer_size()
            gl.glViewport(0, 0, fb_w, fb_h)

    def _face(self, batch: Any, x: int, y: int, w: int, h: int, card: int) -> list[Any]:
        suit, rank = divmod(card, 13)
        bold = self.high_visibility
        colour = (*suit_colour(suit, self.four_colour or bold), 255)
        items = _face_ground(batch, x, y, w, h, bold)
        rank_name = RANK_NAMES[rank]
        symbol = SUIT_SYMBOLS[suit]
        # The corner reads "10♥" within the strip that a fanned pile leaves visible.
        corner_px = h * CORNER_SHARE[bold]
        items.append(
            text.Label(
                rank_name + symbol,
                font_name=FONT,
                font_size=corner_px * 0.75,
                weight="bold",
                x=x + w * 0.07,
                y=y + h - h * 0.025,
                anchor_x="left",
                anchor_y="top",
                color=colour,
                batch=batch,
            )
        )
        centre_px = h * (0.5 if rank >= 10 or rank == 0 else 0.42)
        items.append(
            text.Label(
                symbol,
                font_name=FONT,
                font_size=centre_px * 0.75,
                x=x + w / 2,
                y=y + h * 0.4,
                anchor_x="center",
                anchor_y="center",
                color=colour,
                batch=batch,
            )
        )
        if h >= 70:
            items.append(
                text.Label(
                    rank_name,
                    font_name=FONT,
                    font_size=h * 0.11 * 0.75,
                    weight="bold",
                    x=x + w - w * 0.08,
                    y=y + h * 0.03,
                    anchor_x="right",
                    anchor_y="bottom",
                    color=colour,
                    batch=batch,
                )
            )
        return items

    def _back(self, batch: Any, x: int, y: int, w: int, h: int, colour_name: str) -> list[Any]:
        colour = team_rgb(colour_name)
        radius = max(2.0, w * 0.08)
        inset = max(2.0, w * 0.07)
        items: list[Any] = [
            _rounded(x, y, w, h, radius, color=(*darker(colour, 0.45), 255), batch=batch),
            _rounded(x + 1, y + 1, w - 2, h - 2, radius, color=(250, 250, 245, 255), batch=batch),
            _rounded(
                x + inset,
                y + inset,
                w - 2 * inset,
                h - 2 * inset,
                max(radius * 0.6, 1),
                color=(*colour, 255),
                batch=batch,
            ),
        ]
        # A lattice of lighter diamonds: a card back that reads as a back at any size.
        light = (*lighter(colour, 0.28), 255)
        inner_w, inner_h = w - 2 * inset, h - 2 * inset
        step = max(inner_w / 4, 5.0)
        size = step * 0.3
        rows = int(inner_h / step)
        cols = int(inner_w / step)
        off_x = x + inset + (inner_w - (cols - 1) * step) / 2
        off_y = y + inset + (inner_h - (rows - 1) * step) / 2
        for row in range(rows):
            for col in range(cols):
                cx, cy = off_x + col * step, off_y + row * step
                items.append(
                    shapes.Polygon(
                        (cx, cy - size),
                        (cx + size, cy),
                        (cx, cy + size),
                        (cx - size, cy),
                        color=light,
                        batch=batch,
                    )
                )
        return items

    def _slot(self, batch: Any, x: int, y: int, w: int, h: int) -> list[Any]:
        radius = max(2.0, w * 0.08)
        line = max(1.0, w * 0.025)
        return [
            _rounded(x, y, w, h, radius, color=(255, 255, 255, 70), batch=batch),
            _rounded(
                x + line,
                y + line,
                w - 2 * line,
                h - 2 * line,
                max(radius - line, 1),
                color=(0, 0, 0, 40),
                batch=batch,
            ),
        ]


def _face_ground(batch: Any, x: int, y: int, w: int, h: int, bold: bool) -> list[Any]:
    """A face's white ground in its outline: a thin grey one, or a strong dark one for a
    high-visibility card."""
    radius = max(2.0, w * 0.08)
    edge, line = (HIGH_VISIBILITY_EDGE, max(2, round(w * 0.035))) if bold else (CARD_EDGE, 1)
    return [
        _rounded(x, y, w, h, radius, color=(*edge, 255), batch=batch),
        _rounded(
            x + line,
            y + line,
            w - 2 * line,
            h - 2 * line,
            max(radius - line, 1),
            color=(*CARD_FACE, 255),
            batch=batch,
        ),
    ]


def _rounded(*args: Any, **kwargs: Any) -> Any:
    """A rounded rectangle with enough corner segments at any size (pyglet divides by them)."""
    kwargs.setdefault("segments", 6)
    return shapes.RoundedRectangle(*args, **kwargs)
