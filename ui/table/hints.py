"""What the Hint button says: the next useful thing this seat may do, and why, in one line.

A hint speaks to the person at this seat: any move this seat may make (``legal_actions``), never a
bot's split of the work between partners. In order: call Nerts once the nerts pile is empty; else
the card move most worth making (``bots.suggest_card_move``); else flip the stock; after a pass
through the whole stock that played nothing, declare stuck; once stuck and looked through, wait.

Pure: no pyglet, no clock. ``StockWatch`` remembers what the team's stock went through (fed every
state the screen shows) so that a fruitless pass can be told from a first one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nerts_lan.bots.bot import suggest_card_move
from nerts_lan.bots.values import WorkLayout
from nerts_lan.rules.actions import Action, CallNerts, DeclareStuck, Flip, Play, SlideUnder
from nerts_lan.rules.engine import apply
from nerts_lan.rules.state import Rejection, State
from ui.kit.geometry import Rect
from ui.table.intents import describe
from ui.table.layout import PileRef, Placement, TableLayout

__all__ = ["Hint", "StockWatch", "hint_marks", "hint_stands", "next_hint"]


@dataclass(frozen=True, slots=True)
class Hint:
    """One hint: the action it points at (None: nothing to do but wait) and what it says."""

    action: Action | None
    text: str


class StockWatch:
    """The stock positions (cards in the stock, cards in the waste) a team has been at since it
    last played a card: coming back to one means a full pass through the stock found nothing."""

    __slots__ = ("_key", "_last", "_positions", "_stuck_total", "fruitless", "layouts")

    def __init__(self) -> None:
        self._key: object = None
        self._positions: set[tuple[int, int]] = set()
        self._last = (-1, -1)
        self._stuck_total = -1
        self.fruitless = False
        """True once the stock has come round to a position seen since the team last played."""
        self.layouts: set[WorkLayout] = set()
        """Work layouts (piles sorted) seen since the team last played: no hint goes back."""

    def observe(self, state: State, team: int) -> None:
        """Take note of ``state`` as the team sees it now (call it on every change)."""
        own = state.teams[team]
        work_cards = sum(len(pile) for pile in own.work)
        key = (state.table, len(own.nerts), len(own.stock) + len(own.waste), work_cards)
        key_now = (key, state.rotations)
        if key_now != self._key:
            self._key = key_now
            self._forget()
        foundation_cards = sum(len(cards) for cards in state.f_cards)
        if own.stuck and self.fruitless and foundation_cards != self._stuck_total:
            # A rival's play may have made a card of the stock playable: look once more.
            self._forget()
        position = (len(own.stock), len(own.waste))
        if position != self._last and position in self._positions and not self.fruitless:
            self.fruitless = True
            self._stuck_total = foundation_cards
        self._positions.add(position)
        self._last = position
        self.layouts.add(tuple(sorted(own.work)))

    def _forget(self) -> None:
        self._positions.clear()
        self._last = (-1, -1)
        self.layouts.clear()
        self.fruitless = False
        self._stuck_total = -1


def next_hint(state: State, player: str, watch: StockWatch) -> Hint:
    """What ``player`` could usefully do now on ``state`` (``watch`` has seen the states so
    far; this one is noted too)."""
    team = state.table.team_of(player)
    if team is None:
        return Hint(None, "You are watching this match")
    if state.outcome is not None:
        return Hint(None, "The round is over")
    watch.observe(state, team)
    own = state.teams[team]
    if not own.nerts:
        return Hint(CallNerts(player), "Your nerts pile is empty: call Nerts! (X) to end the round")
    move = suggest_card_move(state, player, watch.layouts)
    if move is not None:
        return Hint(move, f"Hint: {describe(move)}{_why(move, own.work)}")
    if not own.stock and not own.waste:
        if own.stuck:
            return Hint(None, _WAIT)
        return Hint(DeclareStuck(player), "No card left to play: declare stuck (S)")
    if watch.fruitless:
        if own.stuck:
            return Hint(None, _WAIT)
        return Hint(
            DeclareStuck(player), "Nothing fits after a whole pass through the stock: press S"
        )
    if not own.stock:
        return Hint(Flip(player), "Nothing to play: turn the waste over (Space) and look again")
    return Hint(Flip(player), "Nothing to play: flip the stock (Space) for new cards")


def hint_stands(action: Action | None, hinted: State, state: State, team: int) -> bool:
    """Whether a hint given on ``hinted`` still holds on ``state``, after someone's move: this
    team's piles are as they were and the rules still take its move (a card move; calling Nerts);
    a flip or a stuck also needs the foundations unchanged, since a rival's play there may have
    made a card of ours playable. At a busy table the others play all the time: a hint that went
    at each of their moves was gone before it could be read."""
    if action is None or state.outcome is not None:
        return False
    if state.teams[team] != hinted.teams[team]:
        return False
    if isinstance(action, (Flip, DeclareStuck)) and state.f_next != hinted.f_next:
        return False
    return not isinstance(apply(state, action), Rejection)


def hint_marks(
    action: Action | None,
    state: State,
    layout: TableLayout,
    shown: Sequence[Placement],
    team: int,
) -> list[Rect]:
    """Where a hint's highlight goes: the part of the card it names that shows (in a cascade,
    that card's strip, not the cards on it), and the card or place it goes to (the target pile's
    top card, the foundation that takes it); the stock for a flip; nothing for the rest."""
    area = layout.own_area
    if isinstance(action, Flip):
        return [area.stock]
    if not isinstance(action, (Play, SlideUnder)):
        return []
    card = int(action.card)
    marks = [_visible_part(placement, shown) for placement in shown if _is(placement, team, card)]
    target = action.target
    if target.kind == "work":
        pile = PileRef(team, target)
        cards = [p for p in shown if p.pile == pile and p.card is not None]
        if isinstance(action, Play) and cards:
            marks.append(max(cards, key=lambda p: p.position).rect)
        else:
            marks.append(area.pile_rect(target))
    else:
        marks.append(_foundation_for(card, state, layout))
    return marks


_WAIT = "You are stuck: wait for the others, or play a card if one fits"


def _is(placement: Placement, team: int, card: int) -> bool:
    return placement.team == team and placement.pile.team == team and placement.card == card


def _visible_part(placement: Placement, shown: Sequence[Placement]) -> Rect:
    """The part of a card that the next card of its pile (a cascade goes down) leaves showing."""
    rect = placement.rect
    above = [
        p.rect for p in shown if p.pile == placement.pile and p.position == placement.position + 1
    ]
    if placement.pile.kind != "work" or not above or above[0].top >= rect.top:
        return rect
    return Rect(rect.x, above[0].top, rect.w, rect.top - above[0].top)


def _foundation_for(card: int, state: State, layout: TableLayout) -> Rect:
    """The foundation that takes ``card``, or where a new one starts (the whole middle when the
    layout has no room laid out for it)."""
    for index, wanted in enumerate(state.f_next):
        if wanted == card:
            return layout.foundation_rect(index)
    new = len(state.f_cards)
    if new < layout.foundation_cols * layout.foundation_rows:
        return layout.foundation_rect(new)
    return layout.center


def _why(move: Action, work: tuple[tuple[int, ...], ...]) -> str:
    """Why the move helps, in a few words."""
    if not isinstance(move, (Play, SlideUnder)):
        return ""
    if move.source.kind == "nerts":
        return " (empty your nerts pile first)"
    if isinstance(move, Play) and move.target.kind == "foundation":
        return " (+1 a card)"
    index = move.source.index
    if move.source.kind == "work" and index is not None:
        if work[index][:1] == (int(move.card),):
            return " (it empties a work pile for your nerts cards)"
        return " (it frees the card below)"
    return ""
