"""Where the guided round speaks: a small panel at the top of the middle, with a Skip button."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pyglet.graphics import Group

from ui.kit.geometry import Rect
from ui.kit.theme import ACCENT, TEXT
from ui.kit.widgets import Button, Panel, label

__all__ = ["GuidePanel"]


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

    def build(self, middle: Rect, avoid: Sequence[Rect] | None = None) -> None:
        """Lay the panel out at the top of ``middle``: on its right (the foundations fill from
        the left), or on its left when that would cover one of ``avoid`` (what the step points
        at; None: as last time)."""
        self.delete()
        self._middle = middle
        if avoid is not None:
            self._avoid = tuple(avoid)
        avoid = self._avoid
        width = min(max(middle.w * 0.5, 280.0), middle.w - 8)
        size = max(11.0, min(middle.h * 0.07, 14.0))
        height = min(size * 8.6, middle.h - 8)
        rect = Rect(middle.right - width - 4, middle.top - height - 4, width, height)
        if any(rect.overlap(other) for other in avoid):
            rect = Rect(middle.x + 4, rect.y, width, height)
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

    def show(self, text: str, avoid: Sequence[Rect] = ()) -> None:
        """Say ``text`` (the step of the guide), away from ``avoid`` (what the step points at)."""
        self.text = text
        if self._middle is not None and tuple(avoid) != self._avoid:
            self.build(self._middle, avoid)
        if self._body is not None and self._body.text != text:
            self._body.text = text

    def on_click(self, x: float, y: float) -> bool:
        """True when the click was the panel's (Skip, or on the panel itself)."""
        if self.skip is not None and self.skip.hit(x, y):
            self.on_skip()
            return True
        return self._area.contains(x, y)

    def delete(self) -> None:
        for item in self.items:
            item.delete()
        if self.skip is not None:
            self.skip.delete()
        self.items, self.skip, self._body = [], None, None
