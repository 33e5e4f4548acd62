"""Where the guided round speaks: a small panel at the top of the middle, with a Skip button."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pyglet.graphics import Group

from ui.kit.geometry import Rect
from ui.kit.theme import ACCENT, TEXT
from ui.kit.widgets import Button, Panel, label

__all__ = ["GuidePanel"]

_NARROWEST = 240.0
"""The narrowest the panel may be and still read well (its Skip button takes 118)."""


class GuidePanel:
    """One explanation at a time over the table; ``build`` again on every resize."""

    def __init__(self, batch: Any, group: Group, on_skip: Callable[[], None]) -> None:
        self.batch = batch
        self.panel_group = Group(order=0, parent=group)
        self.text_group = Group(order=1, parent=group)
        self.on_skip = on_skip
        self.text = ""
        self.items: list[Any] = []
        self.skip: Button | None = None
        self._body: Any = None
        self._area = Rect(0, 0, 0, 0)
        self._middle: Rect | None = None
        self._avoid: tuple[Rect, ...] = ()
        self._keep_clear: tuple[Rect, ...] = ()

    def build(
        self,
        middle: Rect,
        avoid: Sequence[Rect] | None = None,
        keep_clear: Sequence[Rect] | None = None,
    ) -> None:
        """Lay the panel out in a corner of ``middle``: never over ``avoid`` (what the step
        points at), and over as little as it can of ``keep_clear`` (the foundations in play and
        the next one); the top right first (the foundations fill from the top left). None: as
        last time."""
        self.delete()
        self._middle = middle
        if avoid is not None:
            self._avoid = tuple(avoid)
        if keep_clear is not None:
            self._keep_clear = tuple(keep_clear)
        width = min(max(middle.w * 0.5, 280.0), middle.w - 8)
        size = max(11.0, min(middle.h * 0.07, 14.0))
        height = min(size * 8.6, middle.h - 8)
        rect = self._corner(middle, width, height)
        self._area = rect
        self.items.append(Panel(self.batch, self.panel_group, rect, colour=(20, 44, 36)))
        self.items.append(
            label(
                self.batch,
                self.text_group,
                "Guided round",
                rect.x + 12,
                rect.top - size,
                size=size,
                bold=True,
                colour=ACCENT,
            )
        )
        self._body = label(
            self.batch,
            self.text_group,
            self.text,
            rect.x + 12,
            rect.top - size * 2,
            size=size,
            colour=TEXT,
            anchor_y="top",
            width=rect.w - 24,
        )
        self.items.append(self._body)
        self.skip = Button(
            self.batch,
            self.panel_group,
            self.text_group,
            Rect(rect.right - 118, rect.top - size * 1.9, 108, size * 1.6),
            "Skip the guide",
            self.on_skip,
            (70, 70, 80),
        )

    def show(self, text: str, avoid: Sequence[Rect] = (), keep_clear: Sequence[Rect] = ()) -> None:
        """Say ``text`` (the step of the guide), away from ``avoid`` (what the step points at)
        and, as far as it can, from ``keep_clear`` (see ``build``)."""
        self.text = text
        moved = (tuple(avoid), tuple(keep_clear)) != (self._avoid, self._keep_clear)
        if self._middle is not None and moved:
            self.build(self._middle, avoid, keep_clear)
        if self._body is not None and self._body.text != text:
            self._body.text = text

    def on_click(self, x: float, y: float) -> bool:
        """True when the click was the panel's (Skip, or on the panel itself)."""
        if self.skip is not None and self.skip.hit(x, y):
            self.on_skip()
            return True
        return self._area.contains(x, y)

    def _corner(self, middle: Rect, width: float, height: float) -> Rect:
        """The corner of ``middle`` that covers none of ``avoid`` and least of ``keep_clear``
        (the first such, top right, top left, bottom right, bottom left)."""
        left, right = middle.x + 4, middle.right - width - 4
        top, bottom = middle.top - height - 4, middle.y + 4
        corners = [Rect(x, y, width, height) for y in (top, bottom) for x in (right, left)]
        if self._keep_clear:
            # In a low middle every corner meets the row of foundations: the strip right of
            # the last one in play, as high as the middle, when it is wide enough to read.
            free = max(rect.right for rect in self._keep_clear) + 6
            if middle.right - 4 - free >= _NARROWEST:
                corners.append(Rect(free, middle.y + 4, middle.right - 4 - free, middle.h - 8))

        def cost(rect: Rect) -> tuple[float, float]:
            return (
                sum(rect.overlap(other) for other in self._avoid),
                sum(rect.overlap(other) for other in self._keep_clear),
            )

        return min(corners, key=cost)

    def delete(self) -> None:
        for item in self.items:
            item.delete()
        if self.skip is not None:
            self.skip.delete()
        self.items, self.skip, self._body = [], None, None
