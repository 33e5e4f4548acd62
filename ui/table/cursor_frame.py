"""The shared cursor frame: every machine maps a pointer to it and from it to its own layout,
so another player's pointer shows over the same pile on every screen, whatever its size.

A pure function of the layout, like ``ui.table.layout`` (no pyglet here). A tableau shown
mirrored here (the left-handed layout, ``ui.table.mirror``) is mirrored in the frame too, so the
pointer stays over the same pile on a screen that does not mirror it.
"""

from __future__ import annotations

from ui.kit.geometry import Rect
from ui.table.layout import TableLayout, TeamArea
from ui.table.mirror import is_mirrored

__all__ = ["from_table_units", "to_table_units"]


def to_table_units(layout: TableLayout, x: float, y: float) -> tuple[float, float]:
    """A local pointer in the shared cursor frame, which every machine maps to its own layout.

    Over (or below) the local tableau: ``y`` in [0, 0.3), ``x`` and ``y`` relative to the tableau's
    row of piles. Elsewhere: ``y`` in [0.3, 1], relative to the middle of the table.
    """
    area = layout.own_area
    band = _band(area)
    if y < band.top:
        u = _clamp01((x - band.x) / band.w)
        v = _clamp01((y - band.y) / band.h)
        return (1 - u if is_mirrored(area) else u, v * 0.299)
    u = _clamp01((x - layout.center.x) / layout.center.w)
    v = _clamp01((y - layout.center.y) / layout.center.h)
    return (u, 0.3 + v * 0.7)


def from_table_units(layout: TableLayout, team: int, u: float, v: float) -> tuple[float, float]:
    """Where another player's pointer goes on this screen: over that player's team's tableau when
    its ``v`` is below 0.3, else in the middle of the table."""
    u = _clamp01(u)
    v = _clamp01(v)
    if v < 0.3:
        area = layout.teams[team]
        band = _band(area)
        u = 1 - u if is_mirrored(area) else u
        return (band.x + u * band.w, band.y + v / 0.299 * band.h)
    center = layout.center
    return (center.x + u * center.w, center.y + (v - 0.3) / 0.7 * center.h)


# --- helpers ------------------------------------------------------------------------------------


def _band(area: TeamArea) -> Rect:
    """The part of the screen a team's tableau stands for in the shared cursor frame."""
    left, right = area.nerts.x, area.waste.right
    if is_mirrored(area):  # the same band, mirrored: from the waste's fan to the nerts pile
        left, right = area.area.x + 2 * area.waste_step, area.area.right
    return Rect(left, area.floor, right - left, area.nerts.top - area.floor)


def _clamp01(value: float) -> float:
    return 0.0 if value < 0 else 1.0 if value > 1 else value
