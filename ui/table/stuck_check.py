"""Declaring stuck (S, the Stuck button) while a card still plays: the window asks once more.

The rules let a team declare stuck at any time (docs/rules.md), and the engine stays so. But a
player who presses S while a card plays has almost always missed that card, and once every team
is stuck the stocks rotate under everyone: so the first S names the card and where it goes,
and a second S soon after declares stuck all the same. Asking again rather than refusing: the
declaration is legal and a player may mean it (a card they would rather keep where it is), so
the window must not make it impossible, only not make it by accident.

The plays that count are the ones a player would call "a card that plays": a top card to a
foundation, the nerts or the waste top card onto (or under) a work pile. A move from one work
pile to another does not: many are legal and worth nothing, and any of them would stop S.
"""

from __future__ import annotations

from typing import Final

from nerts_lan.rules.actions import Play, SlideUnder
from nerts_lan.rules.engine import legal_actions
from nerts_lan.rules.state import State
from ui.kit.wording import card_name, pile_name

__all__ = ["CONFIRM_SECONDS", "StuckCheck", "card_that_plays"]

CONFIRM_SECONDS: Final = 5.0
"""How long after the question a second S declares stuck (and how long the question shows)."""


def card_that_plays(state: State, player: str) -> str | None:
    """What says that ``player``'s team is not stuck: "5♣ still plays to a foundation", the
    first such play (to a foundation first); None when no card plays (see the module)."""
    for action in legal_actions(state, player):
        if not isinstance(action, (Play, SlideUnder)):
            continue
        if action.source.kind == "work" and action.target.kind == "work":
            continue
        card = card_name(int(action.card))
        if isinstance(action, SlideUnder):
            return f"{card} still slides under {pile_name(action.target)}"
        where = "a foundation" if action.target.kind == "foundation" else pile_name(action.target)
        return f"{card} still plays to {where}"
    return None


class StuckCheck:
    """Whether an S declares stuck now, or asks first (what it asked, and when)."""

    __slots__ = ("_asked", "_asked_at")

    def __init__(self) -> None:
        self._asked: str | None = None
        self._asked_at = 0.0

    def question(self, state: State, player: str, now: float) -> str | None:
        """What to say instead of declaring stuck, or None: declare it. None when the team is
        stuck already (again changes nothing), when no card plays, and for the second S within
        ``CONFIRM_SECONDS`` of a question about the same card."""
        team = state.table.team_of(player)
        if team is None or state.teams[team].stuck:
            return None
        plays = card_that_plays(state, player)
        again = plays == self._asked and now - self._asked_at <= CONFIRM_SECONDS
        if plays is None or again:
            self._asked = None
            return None
        self._asked, self._asked_at = plays, now
        return f"{plays}: S again to declare stuck"
