"""A round's end as a show: every card on the foundations flies home to the nerts pile of the
team that played it, one after another, the top cards first, while the banner is up (so the
scores come up over a table that has been gathered). No pyglet here: ``TableView`` flies the
sprites where ``homed`` puts them, on the timetable ``departures`` gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from nerts_lan.rules.piles import foundation_pile
from nerts_lan.rules.state import State
from ui.kit.geometry import Rect
from ui.table.layout import FOUNDATION_TEAM, PileRef, Placement, TableLayout

__all__ = ["HOME_FLIGHT", "LAST_DEPARTURE", "departures", "gathering_order", "homed", "start_rect"]

HOME_FLIGHT: Final = 0.45
"""Seconds one card takes from its foundation to its owner's nerts pile."""

LAST_DEPARTURE: Final = 0.9
"""The last card leaves this long after the first, however many there are (every card is
home after ``LAST_DEPARTURE + HOME_FLIGHT``, within the banner's 1.8 s)."""

_MOST_BETWEEN: Final = 0.06
"""At most this long between two departures (a table with few cards gathers them quickly)."""

_LAYERS: Final = 48
"""The view's card layers: a card landing home goes on top of those already there."""


def homed(layout: TableLayout, state: State, found: Sequence[Placement]) -> list[Placement]:
    """``found`` (the placements of ``state``) with the foundations gathered home: every card
    of every foundation, not only the two drawn on top during play, put on its owner's nerts
    pile (at that team's card size), coming from its foundation (``spawn``), in the order of
    ``departures``; the last to arrive lies on top."""
    homes = {area.team: area for area in layout.teams}
    out = [p for p in found if p.pile.team != FOUNDATION_TEAM]
    for order, (index, position) in enumerate(gathering_order(state)):
        owner = state.f_owners[index][position]
        area = homes.get(owner)
        if area is None:
            continue  # a team with no place on this screen (never at a dealt table)
        card = state.f_cards[index][position]
        start = layout.foundation_rect(index)
        out.append(
            Placement(
                (owner, card),
                card,
                owner,
                Rect(area.nerts.x, area.nerts.y, area.card_w, area.card_h),
                min(order, _LAYERS - 1),
                PileRef(FOUNDATION_TEAM, foundation_pile(index)),
                position,
                spawn=(start.x, start.y),
            )
        )
    return out


def departures(count: int) -> list[float]:
    """When each of ``count`` cards leaves, in seconds after the round ended."""
    if count <= 1:
        return [0.0] * count
    between = min(_MOST_BETWEEN, LAST_DEPARTURE / (count - 1))
    return [i * between for i in range(count)]


def start_rect(layout: TableLayout, placement: Placement) -> Rect:
    """Where a card flying home starts: its foundation, at the foundation's card size."""
    assert placement.spawn is not None
    x, y = placement.spawn
    return Rect(x, y, layout.foundation_w, layout.foundation_h)


def gathering_order(state: State) -> list[tuple[int, int]]:
    """(foundation, position) of every foundation card, in the order they leave: the top card
    of each foundation, then the next one down of each, and so on, as hands gather a table."""
    tallest = max((len(cards) for cards in state.f_cards), default=0)
    order: list[tuple[int, int]] = []
    for depth in range(tallest):
        for index, cards in enumerate(state.f_cards):
            if depth < len(cards):
                order.append((index, len(cards) - 1 - depth))
    return order
