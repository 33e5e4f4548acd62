"""The guided first round: one explanation at a time, pointing at the next useful move.

Built on the hints (``ui.table.hints``): each step is the hint for the state on the table. The
goal comes first (empty the nerts pile), whatever the first move is; then the first time a kind
of move comes up, a sentence of the rules that make it possible comes with it, and after that
the hint alone. A sentence counts as taught once the player has moved after reading it: when a
rival's play changes the step first, it comes again with the next step of its kind. A step holds
while its move is still the one to make, so that a rival's play elsewhere does not change the
words under the player's eyes.

Pure: no pyglet (``ui.table.guide_panel`` shows the steps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from nerts_lan.rules.actions import Action, CallNerts, DeclareStuck, Flip, Play, SlideUnder
from nerts_lan.rules.cards import card_rank
from nerts_lan.rules.state import State, Tableau
from ui.table.hints import Hint, StockWatch, next_hint

__all__ = ["LESSONS", "Guide", "GuideStep", "lesson_kind"]

LESSONS: Final = {
    "nerts": "Your nerts pile (its count under it) is the one to empty: each card left in it "
    "costs 2 points. Drag the outlined card onto the other outline (or click it).",
    "onto": "A card goes on a work pile's top card one rank higher of the other colour "
    "(red on black, black on red); an empty work pile takes any card.",
    "ace": "An ace starts a foundation in the middle, shared by everyone: +1 point a card.",
    "foundation": "A foundation takes the next card of its suit (A, 2, 3 … K): +1 point.",
    "move": "A card moves with the cards on it; moving them frees the card below.",
    "under": "While one of your work piles is empty, your nerts or waste card may slide under a "
    "work pile whose bottom card is one rank lower, of the other colour: the pile then sits on "
    "it.",
    "flip": "Nothing fits now: your stock (the face-down pile) turns three cards onto the "
    "waste, and the waste's top card can be played.",
    "turn": "The stock is used up: turning the waste over lets you go through it again.",
    "stuck": "A whole pass through the stock found nothing: declare yourself stuck. When "
    "everyone is stuck, the stocks move on a card.",
    "wait": "While you are stuck, watch the middle: a card of yours may fit when others play.",
    "call": "Calling Nerts ends the round for everyone: +1 for each of your cards on the "
    "foundations, −2 for each left in a nerts pile.",
}
"""The sentence of the rules each kind of step teaches, the first time it comes up."""


@dataclass(frozen=True, slots=True)
class GuideStep:
    """What the guide shows now: the move it points at (None: wait) and its words."""

    action: Action | None
    text: str


class Guide:
    """The steps of one guided round, each explanation given once."""

    def __init__(self) -> None:
        self.explained: set[str] = set()
        """The lessons taught: shown, and the player moved after reading them."""
        self.current: GuideStep | None = None
        self._teaching: tuple[str, Tableau] | None = None
        """The lesson the current step shows, and the player's piles when it came up."""

    def step(self, state: State, player: str, watch: StockWatch) -> GuideStep:
        """The step for ``state``: the same as before while its move is still the one to make."""
        team = state.table.team_of(player)
        own = state.teams[team] if team is not None else None
        if self._teaching is not None and own is not None and own != self._teaching[1]:
            self.explained.add(self._teaching[0])  # the player moved after reading it
        hint = next_hint(state, player, watch)
        if self.current is not None and self.current.action == hint.action:
            return self.current
        kinds = ["nerts", lesson_kind(hint, state, player)]  # the goal first
        text = hint.text
        new = [kind for kind in kinds if kind not in self.explained]
        self._teaching = None
        if new and own is not None:  # one explanation at a time: the next one comes later
            self._teaching = (new[0], own)
            text = f"{LESSONS[new[0]]}\n{text}"
        self.current = GuideStep(hint.action, text)
        return self.current


def lesson_kind(hint: Hint, state: State, player: str) -> str:
    """Which sentence of ``LESSONS`` a hint needs."""
    action = hint.action
    if action is None:
        return "wait"
    if isinstance(action, CallNerts):
        return "call"
    if isinstance(action, DeclareStuck):
        return "stuck"
    if isinstance(action, Flip):
        team = state.table.team_of(player)
        empty = team is not None and not state.teams[team].stock
        return "turn" if empty else "flip"
    if isinstance(action, SlideUnder):
        return "under"
    assert isinstance(action, Play)
    if action.target.kind == "foundation":
        return "ace" if card_rank(action.card) == 1 else "foundation"
    if action.source.kind == "work":
        return "move"
    return "onto"
