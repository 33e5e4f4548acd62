"""The player's gestures on their own cards, arcade's drag sequence: a press picks the card
(and the cards on it), motion moves them, the release asks which move a drop there means; a
press and release without motion is a click, which plays the card where it fits best.

The engine is the only judge: a move goes to ``submit``, and a refused one flies back as the
view follows the state again (``TableView.end_drag`` lets the cards settle where it puts them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from nerts_lan.rules.actions import Action
from nerts_lan.rules.cards import DECK
from nerts_lan.rules.state import State
from ui.table import intents
from ui.table.layout import PileRef, Placement, card_at, drop_targets
from ui.table.view import TableView

__all__ = ["DOUBLE_CLICK", "DRAG_START", "DragControl"]

DRAG_START = 5.0
"""How far (in UI units, across plus up) the pointer moves before a press becomes a drag."""
DOUBLE_CLICK = 0.35
"""Seconds within which a second click on the same pile is a double-click's, and ignored."""


@dataclass
class _Press:
    """The card under a press that may become a drag, and the cards on it."""

    x: float
    y: float
    pile: PileRef
    card: int
    keys: list[tuple[object, ...]]
    """The dragged cards' sprites in the view."""
    cards: tuple[str, ...]
    """Their names, for the pointer the other players see."""
    dragging: bool = field(default=False)


class DragControl:
    """One player's press, drag and release on their own team's cards."""

    def __init__(self, submit: Callable[[Action], None]) -> None:
        self._submit = submit
        self._press: _Press | None = None
        self._last_click: tuple[float, PileRef | None] = (-1.0, None)

    @property
    def holding(self) -> tuple[str, ...]:
        """The cards under the press (shown with the pointer the others see), or none."""
        return self._press.cards if self._press is not None else ()

    def press(
        self, placements: Sequence[Placement], state: State, team: int, x: float, y: float
    ) -> bool:
        """A press at ``x``, ``y``: True when it is on one of ``team``'s cards (picked when it
        is a nerts or waste pile's top card or a work pile's card), so it is nothing else."""
        placement = card_at(placements, x, y, team)  # a face card: never a back
        if placement is None or placement.pile.kind not in ("nerts", "waste", "work"):
            return False
        pile, card = placement.pile, placement.card
        assert card is not None
        tableau = state.teams[team]
        cards: Sequence[int] = (card,)
        if pile.kind == "work":
            cards = tableau.work[pile.work_index][placement.position :]
        elif (
            placement.position != len(tableau.nerts if pile.kind == "nerts" else tableau.waste) - 1
        ):
            return True  # only the top card of the nerts pile or the waste comes away
        self._press = _Press(
            x, y, pile, card, [(team, each) for each in cards], tuple(str(DECK[c]) for c in cards)
        )
        return True

    def drag_to(self, view: TableView, x: float, y: float) -> bool:
        """The pointer moved with the button held: True when the picked cards moved with it."""
        press = self._press
        if press is None:
            return False
        ox, oy = x - press.x, y - press.y
        if not press.dragging:
            if abs(ox) + abs(oy) < DRAG_START:
                return False
            press.dragging = True
            view.begin_drag(press.keys)
        view.drag_by(ox, oy)
        return True

    def release(self, view: TableView, state: State, player: str, now: float) -> bool:
        """The button went up: a drop or a click becomes the move it means, if any; True when
        there was a press to end."""
        press, self._press = self._press, None
        if press is None:
            return False
        layout = view.layout
        if press.dragging:
            dragged = view.dragged_rect()
            view.end_drag(now)
            if dragged is None or layout is None:
                return True
            targets = drop_targets(layout, state, dragged, press.pile)
            action = intents.drop_action(state, player, press.pile, press.card, targets)
            if action is not None:
                self._submit(action)
            return True
        last_time, last_pile = self._last_click
        if now - last_time < DOUBLE_CLICK and last_pile == press.pile:
            return True  # the second click of a double-click: the first one played the card
        action = intents.click_action(state, player, press.pile, press.card)
        self._last_click = (now, press.pile)
        if action is not None:
            self._submit(action)
        return True
