"""The left-handed layout (an accessibility option): the player's own piles mirrored.

A transform of ``compute_layout``'s rectangles, pure like it (no pyglet): every pile of the local
tableau swaps sides within the tableau's own band (the nerts pile to the right end, the stock and
waste to the left, the work piles in mirrored order), so everything that reads the layout (the
sprites, the slots, ``pile_at``, ``drop_targets``, the keyboard's marks) follows by itself. The
waste still fans to the right (its corner indices stay readable) and the foundations, the other
teams and the message strip do not move.
"""

from __future__ import annotations

from dataclasses import replace

from ui.kit.geometry import Rect
from ui.table.layout import TableLayout, TeamArea

__all__ = ["is_mirrored", "left_handed"]


def left_handed(layout: TableLayout) -> TableLayout:
    """``layout`` with the local team's piles mirrored left for right."""
    teams = list(layout.teams)
    teams[layout.own] = _mirrored(layout.own_area)
    return replace(layout, teams=tuple(teams))


def is_mirrored(area: TeamArea) -> bool:
    """Whether ``area``'s piles run right to left (the nerts pile right of the stock)."""
    return area.nerts.x > area.stock.x


def _mirrored(area: TeamArea) -> TeamArea:
    left = min(area.nerts.x, area.area.x)
    right = max(area.waste.right + 2 * area.waste_step, area.area.right)
    axis = left + right

    def flip(rect: Rect) -> Rect:
        return rect.moved_to(axis - rect.right, rect.y)

    fanned = Rect(area.waste.x, area.waste.y, area.waste.w + 2 * area.waste_step, area.waste.h)
    waste = flip(fanned)
    return replace(
        area,
        nerts=flip(area.nerts),
        stock=flip(area.stock),
        waste=Rect(waste.x, waste.y, area.waste.w, area.waste.h),
        work=tuple(flip(rect) for rect in area.work),
    )
