"""Where everything goes on the table: pure functions of the window size and the state.

No OpenGL here (and no pyglet import), so that layout, hit-testing and drop targets are tested
without a window. Coordinates are pyglet's: pixels, origin at the bottom left, y up.

- ``compute_layout(width, height, teams, own, work)`` places every team's piles: the local team
  large along the bottom, the other teams smaller around the top and the sides, the shared
  foundations in the middle.
- ``placements(layout, state)`` says where each visible card is drawn, face up or as a back, and
  in which order; the window's sprites follow it.
- ``card_at``, ``pile_at`` (over ``clickable_piles``) and ``drop_targets`` answer what the
  pointer is over and where a dropped card may be meant to go (the engine decides whether it
  may).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from nerts_lan.rules.piles import ANY_FOUNDATION as ANY_FOUNDATION_PILE
from nerts_lan.rules.piles import NERTS, STOCK, WASTE, Pile, PileKind, foundation_pile, work_pile
from nerts_lan.rules.state import State, Tableau
from ui.kit.geometry import Rect

__all__ = [
    "ANY_FOUNDATION",
    "CARD_ASPECT",
    "FOUNDATION_TEAM",
    "MESSAGE_LINES",
    "PileRef",
    "Placement",
    "TableLayout",
    "TeamArea",
    "card_at",
    "clickable_piles",
    "compute_layout",
    "drop_targets",
    "enlarged_area",
    "foundation_placements",
    "pile_at",
    "placements",
    "side_counts",
    "team_placements",
]

CARD_ASPECT: Final = 0.7
"""Card width over card height."""

FOUNDATION_TEAM: Final = -1
"""The ``team`` of a foundation's ``PileRef``."""

MESSAGE_LINES: Final = 2
"""Lines of the message strip above the local tableau."""


@dataclass(frozen=True, slots=True)
class PileRef:
    """One pile on the table: ``pile`` of team ``team``, or a foundation (team
    ``FOUNDATION_TEAM``; the pile ``f`` means "any foundation")."""

    team: int
    pile: Pile

    @property
    def kind(self) -> PileKind:
        return self.pile.kind

    @property
    def work_index(self) -> int:
        """The index (from 0) of a work pile; ``ValueError`` for any other pile."""
        if self.pile.kind != "work" or self.pile.index is None:
            raise ValueError(f"{self.pile} is not a work pile")
        return self.pile.index


ANY_FOUNDATION: Final = PileRef(FOUNDATION_TEAM, ANY_FOUNDATION_PILE)


@dataclass(frozen=True, slots=True)
class TeamArea:
    """One team's tableau on screen."""

    team: int
    own: bool
    card_w: float
    card_h: float
    fan: float
    """Vertical step between cards of a work pile (before squeezing a long pile)."""
    floor: float
    """The lowest y a work pile may reach."""
    area: Rect
    label: tuple[float, float]
    """Where the team's name goes (left end, vertical middle)."""
    nerts: Rect
    stock: Rect
    waste: Rect
    waste_step: float
    work: tuple[Rect, ...]

    def pile_rect(self, pile: Pile) -> Rect:
        """Where ``pile`` (the nerts pile, the stock, the waste or a work pile) lies."""
        if pile.kind == "work":
            assert pile.index is not None
            return self.work[pile.index]
        if pile.kind == "nerts":
            return self.nerts
        if pile.kind == "stock":
            return self.stock
        return self.waste

    def work_step(self, count: int) -> float:
        """The vertical step between the cards of a work pile of ``count`` cards."""
        if count <= 1:
            return self.fan
        room = self.work[0].y - self.floor
        return max(min(self.fan, room / (count - 1)), 2.0)

    def work_card(self, index: int, position: int, count: int) -> Rect:
        """Where card ``position`` (0 = bottom) of a ``count``-card work pile ``index`` goes."""
        base = self.work[index]
        return base.moved_to(base.x, base.y - position * self.work_step(count))


@dataclass(frozen=True, slots=True)
class TableLayout:
    """Every pile of the table for one window size."""

    width: int
    height: int
    own: int
    teams: tuple[TeamArea, ...]
    center: Rect
    """The middle of the table, where the foundations are."""
    foundation_w: float
    foundation_h: float
    foundation_cols: int
    foundation_rows: int
    messages: Rect = Rect(0, 0, 0, 0)  # noqa: RUF009 - a frozen Rect is immutable
    """The message strip: the whole free width between the local tableau (and its name) and
    the rest of the table, ``MESSAGE_LINES`` lines high."""

    @property
    def own_area(self) -> TeamArea:
        return self.teams[self.own]

    def foundation_rect(self, index: int) -> Rect:
        """Foundation ``index`` (from 0): filled row by row from the top left of the middle."""
        cols = self.foundation_cols
        gap_x = (self.center.w - cols * self.foundation_w) / (cols + 1)
        gap_y = (self.center.h - self.foundation_rows * self.foundation_h) / (
            self.foundation_rows + 1
        )
        row, col = divmod(index, cols)
        x = self.center.x + gap_x + col * (self.foundation_w + gap_x)
        y = self.center.top - (row + 1) * (self.foundation_h + gap_y)
        return Rect(x, y, self.foundation_w, self.foundation_h)

    def pile_rect(self, pile: PileRef) -> Rect:
        if pile.kind == "foundation":
            return self.foundation_rect(pile.pile.index or 0)
        return self.teams[pile.team].pile_rect(pile.pile)


@dataclass(frozen=True, slots=True)
class Placement:
    """One card drawn on the table: face ``card`` (0..51) or a back (``card`` None) of ``team``."""

    key: tuple[object, ...]
    """Stable identity across states: ``(team, card)`` for a face, so a card that moves keeps it."""
    card: int | None
    team: int
    rect: Rect
    z: int
    pile: PileRef
    position: int
    """Index of the card in its pile (0 = bottom), -1 for a back standing for hidden cards."""
    spawn: tuple[float, float] | None = None
    """Where a card that just became visible comes from (a flip comes from the stock)."""


def side_counts(others: int) -> tuple[int, int]:
    """How many other teams go along the top and on each side (left, right)."""
    if others <= 3:
        return others, 0
    if others == 4:
        return 2, 1
    if others == 5:
        return 3, 1
    if others == 6:
        return 2, 2
    return others - 4, 2


def compute_layout(
    width: int,
    height: int,
    teams: int,
    own: int,
    work: int | Sequence[int] = 4,
    card_scale: float = 1.0,
    foundations: int = 0,
) -> TableLayout:
    """Place the table for a window of ``width`` x ``height`` pixels.

    ``own`` is the local team's index; ``work`` the number of work piles (or each team's, with
    handicaps); ``card_scale`` (0.5 to 1) shrinks the local cards from the largest that fit;
    ``foundations`` is how many exist, for more than four per team (the kings option).
    """
    counts = (work,) * teams if isinstance(work, int) else tuple(work)
    work, width, height = max(counts), max(int(width), 160), max(int(height), 120)
    margin = max(6.0, 0.012 * min(width, height))
    span = _row_span(work)

    # The local tableau along the bottom: a row of piles with room below for the work piles.
    own_h = _own_card_height(width, height, margin, span, card_scale)
    own_w = own_h * CARD_ASPECT
    label_h = max(14.0, own_h * 0.16)
    band_h = own_h * 2.55 + label_h
    strip_h = MESSAGE_LINES * min(max(own_h * 0.2, 18.0), 28.0)
    others = teams - 1
    top_n, side_n = side_counts(others)

    # The other teams: small rows along the top, then down the sides.
    small_label = 14.0
    above = height - band_h - margin - strip_h
    small_h = _small_card_height(width, above, margin, own_h, span, others)
    small = (small_h * CARD_ASPECT, small_h, work, small_label)
    block = (span * small[0], small_h * 1.9 + small_label)
    top_y = height - margin - small_label
    order = [(own + step) % teams for step in range(1, teams)]
    side_bottom = band_h + margin + strip_h
    areas = dict(
        _other_areas(width, margin, order, (side_n, top_n), (top_y, side_bottom), small, block)
    )
    own_x = (width - span * own_w) / 2
    areas[own] = _team_area(
        own, True, own_x, band_h - label_h, own_w, own_h, work, label_h, floor=margin, bottom=margin
    )

    center = _center(width, margin, block, (side_n, top_n), top_y, band_h + margin * 0.5 + strip_h)
    f_h, cols, rows = _foundation_grid(center, max(4 * teams, foundations), own_h * 0.85)
    return TableLayout(
        width,
        height,
        own,
        tuple(_with_work(areas[team], counts[team]) for team in range(teams)),
        center,
        f_h * CARD_ASPECT,
        f_h,
        cols,
        rows,
        Rect(margin, band_h + margin * 0.5, width - 2 * margin, strip_h),
    )


def _with_work(area: TeamArea, work: int) -> TeamArea:
    """``area`` with only its first ``work`` work piles (a team with fewer than the most)."""
    return area if len(area.work) == work else replace(area, work=area.work[:work])


def _other_areas(
    width: int,
    margin: float,
    order: list[int],
    counts: tuple[int, int],
    span: tuple[float, float],
    small: tuple[float, float, int, float],
    block: tuple[float, float],
) -> list[tuple[int, TeamArea]]:
    """The other teams' blocks, in seat ``order`` after the local team: ``counts`` (on each
    side, along the top) of them down the left side, along the top, then down the right side;
    ``span``: from the top of the top row's names down to the bottom of the sides; ``small``
    is their card size, work piles and name height, ``block`` the size of one."""
    side_n, top_n = counts
    top_y, side_bottom = span
    block_w, block_h = block
    left = order[:side_n][::-1]
    top = order[side_n : side_n + top_n]
    right = order[side_n + top_n :]
    found: list[tuple[int, TeamArea]] = []
    if top:
        gap = (width - len(top) * block_w) / (len(top) + 1)
        for slot, team in enumerate(top):
            x = gap + slot * (block_w + gap)
            found.append((team, _small_area(team, x, top_y, *small)))
    side_top = top_y - (block_h + margin if top else 0)
    side_step = (side_top - side_bottom) / max(side_n, 1)
    for column, teams_here in ((0, left), (1, right)):
        for slot, team in enumerate(teams_here):
            x = margin if column == 0 else width - margin - block_w
            y = side_top - slot * side_step - (side_step - block_h) / 2
            found.append((team, _small_area(team, x, y, *small)))
    return found


def _center(
    width: int,
    margin: float,
    block: tuple[float, float],
    counts: tuple[int, int],
    top_y: float,
    bottom: float,
) -> Rect:
    """The middle of the table, between the columns of other teams' blocks down the sides (if
    ``counts`` has any), their row along the top (if any) and the local band at ``bottom``."""
    side_n, top_n = counts
    sides = block[0] + margin if side_n else 0
    top = top_y - (block[1] if top_n else 0) - margin
    center_x = margin + sides
    center_right = width - margin - sides
    return Rect(center_x, bottom, max(center_right - center_x, 20), max(top - bottom, 20))


def _own_card_height(
    width: int, height: int, margin: float, span: float, card_scale: float
) -> float:
    """The local cards' height: the largest a row of ``span`` card widths fits across the window
    and 0.4 of its height fits the band, at most 220, shrunk by ``card_scale`` (0.5 to 1)."""
    own_h = min((width - 2 * margin) / (span * CARD_ASPECT), height * 0.4 / 2.55, 220.0)
    own_h *= min(max(card_scale, 0.5), 1.0)
    return own_h


def _small_card_height(
    width: int, above: float, margin: float, own_h: float, span: float, others: int
) -> float:
    """The card height of the other teams' blocks: as large as fits the room above the local
    band, along the top and down the sides, and never larger than 0.62 of the local cards."""
    top_n, side_n = side_counts(others)
    small_label = 14.0
    small_h = own_h * 0.62
    if top_n:
        per_block = (width - 2 * margin - (top_n - 1) * margin * 2) / top_n
        small_h = min(small_h, per_block / (span * CARD_ASPECT), (above * 0.36) / 1.9)
    if side_n:
        side_room = (above - (small_h * 1.9 + small_label if top_n else 0)) / side_n
        small_h = min(small_h, width * 0.26 / (span * CARD_ASPECT), (side_room - small_label) / 1.9)
    return max(small_h, 12.0)


def enlarged_area(layout: TableLayout, team: int, card_h: float) -> TeamArea:
    """Team ``team``'s tableau drawn again at ``card_h`` (the rival the player points at, to
    read): centred on its block and kept inside the window, below its block when that is along
    the top, inward of it when it is down a side."""
    small = layout.teams[team]
    card_w = card_h * CARD_ASPECT
    width = _row_span(len(small.work)) * card_w
    label_h = 18.0
    height = card_h * 1.9 + label_h
    margin = max(6.0, 0.012 * min(layout.width, layout.height))
    x = small.area.x + small.area.w / 2 - width / 2
    top = small.area.y - margin - label_h
    if small.area.x < layout.width * 0.2 or small.area.right > layout.width * 0.8:
        x = small.area.right + margin if small.area.x < layout.width / 2 else small.area.x - width
        top = small.area.top - label_h
    x = min(max(x, margin), layout.width - margin - width)
    top = min(max(top, height + margin - label_h), layout.height - margin - label_h)
    return _team_area(
        team,
        False,
        x,
        top,
        card_w,
        card_h,
        len(small.work),
        label_h,
        top - card_h * 1.9,
        top - height,
    )


def placements(layout: TableLayout, state: State) -> list[Placement]:
    """Every card to draw for ``state``, bottom layer first within each pile."""
    teams = (team_placements(area, state.teams[area.team]) for area in layout.teams)
    return [p for found in teams for p in found] + foundation_placements(layout, state)


def foundation_placements(layout: TableLayout, state: State) -> list[Placement]:
    """The cards drawn on the foundations: the top two of each (what a player sees of it)."""
    out: list[Placement] = []
    for index, (cards, owners) in enumerate(zip(state.f_cards, state.f_owners)):
        rect = layout.foundation_rect(index)
        pile = PileRef(FOUNDATION_TEAM, foundation_pile(index))
        start = max(len(cards) - 2, 0)
        for position in range(start, len(cards)):
            key = (owners[position], cards[position])
            out.append(Placement(key, key[1], key[0], rect, position - start, pile, position))
    return out


def card_at(found: Sequence[Placement], x: float, y: float, team: int) -> Placement | None:
    """The topmost face-up card of ``team``'s tableau under the point, if any."""
    best: Placement | None = None
    for placement in found:
        if placement.team != team or placement.card is None:
            continue
        if placement.pile.team != team or not placement.rect.contains(x, y):
            continue
        if best is None or placement.z > best.z:
            best = placement
    return best


def pile_at(layout: TableLayout, x: float, y: float) -> PileRef | None:
    """The local team's pile (its base place, or the fanned work pile's column) under the point,
    or ``f`` for anywhere in the middle of the table."""
    for pile, rect in clickable_piles(layout):
        if rect.contains(x, y):
            return pile
    if layout.center.contains(x, y):
        return ANY_FOUNDATION
    return None


def clickable_piles(layout: TableLayout) -> list[tuple[PileRef, Rect]]:
    """The local team's piles and where the mouse finds them: the nerts pile, the stock, the
    waste with its fan, and each work pile's whole column down to its floor."""
    area = layout.own_area
    found: list[tuple[PileRef, Rect]] = []
    for pile in (NERTS, STOCK, WASTE):
        rect = area.pile_rect(pile)
        if pile is WASTE:
            rect = Rect(rect.x, rect.y, rect.w + 2 * area.waste_step, rect.h)
        found.append((PileRef(area.team, pile), rect))
    for index, rect in enumerate(area.work):
        column = Rect(rect.x, area.floor, rect.w, rect.top - area.floor)
        found.append((PileRef(area.team, work_pile(index)), column))
    return found


def drop_targets(
    layout: TableLayout, state: State, dragged: Rect, source: PileRef
) -> list[PileRef]:
    """Piles a card dropped at ``dragged`` may be meant for, the likeliest first.

    Forgiving: any local work pile whose landing place (where the next card would lie) is within
    about a card's size of the dropped card, and ``f`` (any foundation) when the card is over the
    middle of the table or near a foundation. Whether a pile takes the card is the engine's call.
    """
    area = layout.own_area
    cx, cy = dragged.center
    scored: list[tuple[float, PileRef]] = []
    tableau = state.teams[area.team]
    for index, pile in enumerate(tableau.work):
        ref = PileRef(area.team, work_pile(index))
        if ref == source:
            continue
        landing = area.work_card(index, len(pile), len(pile) + 1)
        tops = [landing]
        if pile:
            tops.append(area.work_card(index, len(pile) - 1, len(pile)))
            tops.append(area.work[index])  # the bottom card: a slide under
        distance = min(rect.distance_to(cx, cy) for rect in tops)
        column = Rect(landing.x, landing.y, landing.w, area.work[index].top - landing.y)
        if column.contains(cx, cy):
            distance = 0.0
        if distance <= area.card_w * 0.5:
            scored.append((distance + abs(cx - landing.center[0]) * 0.01, ref))
    near_foundation = layout.center.inflate(area.card_h * 0.25).contains(cx, cy)
    for index in range(len(state.f_cards)):
        rect = layout.foundation_rect(index)
        if rect.distance_to(cx, cy) <= area.card_w * 0.8:
            near_foundation = True
    if near_foundation:
        distance = 0.0 if layout.center.contains(cx, cy) else area.card_w * 0.3
        scored.append((distance, ANY_FOUNDATION))
    scored.sort(key=lambda item: item[0])
    return [ref for _, ref in scored]


# --- helpers ------------------------------------------------------------------------------------


def _row_span(work: int) -> float:
    """Width of a tableau row in card widths: nerts, work piles, stock and a fanned waste."""
    return 1 + work + 1 + 1.6 + (work + 2) * 0.16 + 0.9


def team_placements(area: TeamArea, tableau: Tableau) -> list[Placement]:
    """One team's cards: its nerts pile (two backs under the top card), a back for its stock,
    the top three of its waste fanned, and its work piles."""
    out: list[Placement] = []
    team = area.team
    nerts = tableau.nerts
    if nerts:
        backs = min(len(nerts) - 1, 2)
        step = area.card_w * 0.04
        for i in range(backs):
            rect = area.nerts.moved_to(area.nerts.x - (backs - i) * step, area.nerts.y)
            out.append(Placement(("nb", team, i), None, team, rect, i, PileRef(team, NERTS), -1))
        out.append(
            Placement(
                (team, nerts[-1]),
                nerts[-1],
                team,
                area.nerts,
                backs,
                PileRef(team, NERTS),
                len(nerts) - 1,
            )
        )
    if tableau.stock:
        out.append(Placement(("sb", team), None, team, area.stock, 0, PileRef(team, STOCK), -1))
    waste = tableau.waste
    shown = waste[-3:]
    first = len(waste) - len(shown)
    for i, card in enumerate(shown):
        rect = area.waste.moved_to(area.waste.x + i * area.waste_step, area.waste.y)
        out.append(
            Placement(
                (team, card),
                card,
                team,
                rect,
                i,
                PileRef(team, WASTE),
                first + i,
                spawn=(area.stock.x, area.stock.y),
            )
        )
    for index, pile in enumerate(tableau.work):
        for position, card in enumerate(pile):
            out.append(
                Placement(
                    (team, card),
                    card,
                    team,
                    area.work_card(index, position, len(pile)),
                    position,
                    PileRef(team, work_pile(index)),
                    position,
                )
            )
    return out


def _team_area(
    team: int,
    own: bool,
    x: float,
    top: float,
    card_w: float,
    card_h: float,
    work: int,
    label_h: float,
    floor: float,
    bottom: float,
) -> TeamArea:
    gap = card_w * 0.16
    y = top - card_h
    nerts = Rect(x, y, card_w, card_h)
    cursor = x + card_w + gap + card_w * 0.45
    piles = []
    for _ in range(work):
        piles.append(Rect(cursor, y, card_w, card_h))
        cursor += card_w + gap
    cursor += card_w * 0.45
    stock = Rect(cursor, y, card_w, card_h)
    waste = Rect(cursor + card_w + gap, y, card_w, card_h)
    right = waste.right + 2 * card_w * 0.3
    return TeamArea(
        team,
        own,
        card_w,
        card_h,
        card_h * 0.24 if own else card_h * 0.2,
        floor,
        Rect(x, bottom, right - x, top + label_h - bottom),
        (x, top + label_h * 0.5),
        nerts,
        stock,
        waste,
        card_w * 0.3,
        tuple(piles),
    )


def _small_area(
    team: int, x: float, top: float, card_w: float, card_h: float, work: int, label_h: float
) -> TeamArea:
    floor = top - card_h * 1.9
    return _team_area(team, False, x, top, card_w, card_h, work, label_h, floor, floor)


def _foundation_grid(center: Rect, count: int, max_h: float) -> tuple[float, int, int]:
    best = (0.0, 1, count)
    for cols in range(1, count + 1):
        rows = math.ceil(count / cols)
        h = min(center.h / (rows * 1.1 + 0.1), center.w / (cols * 1.12 + 0.12) / CARD_ASPECT)
        if h > best[0]:
            best = (h, cols, rows)
    h, cols, rows = best
    return min(h, max_h), cols, rows
