"""The window's one geometry type: an axis-aligned rectangle, in pixels or in table units."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Rect"]


@dataclass(frozen=True, slots=True)
class Rect:
    """An axis-aligned rectangle: ``x``, ``y`` is the bottom-left corner."""

    x: float
    y: float
    w: float
    h: float

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def top(self) -> float:
        return self.y + self.h

    @property
    def center(self) -> tuple[float, float]:
        return (self.x + self.w / 2, self.y + self.h / 2)

    def contains(self, px: float, py: float) -> bool:
        return self.x <= px < self.x + self.w and self.y <= py < self.y + self.h

    def distance_to(self, px: float, py: float) -> float:
        """0 inside, else the distance from the point to the rectangle's edge."""
        dx = max(self.x - px, 0.0, px - self.right)
        dy = max(self.y - py, 0.0, py - self.top)
        return math.hypot(dx, dy)

    def overlap(self, other: Rect) -> float:
        """The area shared with ``other``."""
        w = min(self.right, other.right) - max(self.x, other.x)
        h = min(self.top, other.top) - max(self.y, other.y)
        return w * h if w > 0 and h > 0 else 0.0

    def moved_to(self, x: float, y: float) -> Rect:
        return Rect(x, y, self.w, self.h)

    def inflate(self, d: float) -> Rect:
        return Rect(self.x - d, self.y - d, self.w + 2 * d, self.h + 2 * d)
