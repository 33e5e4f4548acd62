"""From what the player did (a drop, a click, a key) to the action to submit: pure functions.

The engine is the only judge: where a gesture could mean several moves (a card dropped between
two piles, a click on a card that could go to a foundation or a work pile), each candidate is
tried with ``engine.apply`` on the current view and the first it accepts is chosen. When none is
accepted the likeliest one is still submitted, so that the engine's refusal (its short reason)
reaches the player.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from nerts_lan.rules.actions import Action, CallNerts, DeclareStuck, Flip, Play, SlideUnder
from nerts_lan.rules.cards import DECK
from nerts_lan.rules.engine import apply
from nerts_lan.rules.piles import NERTS, WASTE, work_pile
from nerts_lan.rules.state import Rejection, State
from ui.kit.wording import card_name, pile_name
from ui.table.layout import ANY_FOUNDATION, PileRef

__all__ = [
    "KEY_HELP",
    "Selection",
    "click_action",
    "describe",
    "drop_action",
    "hint_action",
    "key_action",
    "stack_from",
]

KEY_HELP: Final = (
    ("Space", "flip three cards from the stock (or turn the waste over)"),
    ("N", "pick the nerts pile's top card"),
    ("W", "pick the waste's top card"),
    ("1-6", "pick a work pile; with a card picked, move it there"),
    ("Up / Down", "pick more or fewer cards of the picked work pile"),
    ("F or Enter", "send the picked card (or the best one) to a foundation"),
    ("H", "show a hint"),
    ("S", "declare your team stuck (while a card still plays, it asks for a second S)"),
    ("X", "call Nerts! (once your nerts pile is empty)"),
    ("Shift+1-5", "react: Nice!, Wow!, Oops!, Hot!, GG (click a rival's cards to mute theirs)"),
    ("Esc", "drop the pick, close a panel, or leave (it asks first)"),
    ("F1 or ?", "this help"),
    ("O", "options"),
)
"""The keyboard plays the whole game: every key, as the help overlay shows it."""


@dataclass(frozen=True, slots=True)
class Selection:
    """A card picked with the keyboard: from ``pile``, ``depth`` cards from the top (1 = top)."""

    pile: PileRef
    depth: int = 1


def stack_from(state: State, pile: PileRef, depth: int = 1) -> tuple[int, ...]:
    """The cards a pick of ``depth`` cards from the top of ``pile`` holds, bottom first."""
    tableau = state.teams[pile.team]
    if pile.kind == "nerts":
        return tableau.nerts[-1:]
    if pile.kind == "waste":
        return tableau.waste[-1:]
    if pile.kind == "work":
        cards = tableau.work[pile.work_index]
        return cards[max(len(cards) - depth, 0) :] if cards else ()
    return ()


def drop_action(
    state: State, player: str, source: PileRef, card: int, targets: Sequence[PileRef]
) -> Action | None:
    """The move a drop of ``card`` (with any cards on it) near ``targets`` means, or None when
    it was dropped nowhere near a pile."""
    candidates: list[Action] = []
    for target in targets:
        candidates.extend(_moves_to(state, player, source, card, target))
    return _first_accepted(state, candidates)


def click_action(state: State, player: str, source: PileRef, card: int) -> Action | None:
    """A click on a playable card: to a foundation if one takes it, else to the best work pile
    (one with cards before an empty one), else to a foundation anyway (to say why not)."""
    candidates: list[Action] = []
    if source.kind in ("nerts", "waste") or _is_top(state, source, card):
        candidates.append(Play(player, DECK[card], source.pile, ANY_FOUNDATION.pile))
    work = state.teams[source.team].work
    filled = [i for i, pile in enumerate(work) if pile]
    empty = [i for i, pile in enumerate(work) if not pile]
    for index in filled + empty:
        target = PileRef(source.team, work_pile(index))
        if target == source:
            continue
        if (
            source.kind == "work"
            and not work[index]
            and state.teams[source.team].work[source.work_index][0] == card
        ):
            continue  # a whole pile to an empty one changes nothing
        candidates.extend(_moves_to(state, player, source, card, target))
    return _first_accepted(state, candidates)


def hint_action(state: State, player: str) -> Action | None:
    """The card move most worth making now by ``player``, whatever its seat (None: none is
    worth more than a flip); ``ui.table.hints`` says the rest (flip, stuck, Nerts)."""
    from nerts_lan.bots.bot import suggest_card_move

    return suggest_card_move(state, player)


def key_action(
    state: State, player: str, team: int, selection: Selection | None, key: str
) -> tuple[Selection | None, Action | None]:
    """What a key does: the new pick and the action to submit (either may be None).

    ``key`` is a plain name: ``space``, ``n``, ``w``, ``1`` … ``6``, ``up``, ``down``, ``f``,
    ``enter``, ``s``, ``x``, ``escape``.
    """
    tableau = state.teams[team]
    if key == "space":
        return None, Flip(player)
    if key == "s":
        return None, DeclareStuck(player)
    if key == "x":
        return None, CallNerts(player)
    if key == "escape":
        return None, None
    if key in ("n", "w"):
        pile = PileRef(team, NERTS if key == "n" else WASTE)
        if selection is not None and selection.pile == pile:
            return None, None
        return (Selection(pile) if stack_from(state, pile) else None), None
    if key.isdigit() and len(key) == 1:
        return _work_key(state, player, team, selection, int(key) - 1)
    if key in ("up", "down") and selection is not None and selection.pile.kind == "work":
        size = len(tableau.work[selection.pile.work_index])
        depth = selection.depth + (1 if key == "up" else -1)
        return Selection(selection.pile, max(1, min(depth, size))), None
    if key in ("f", "enter"):
        return None, _foundation_key(state, player, selection)
    return selection, None


def describe(action: Action) -> str:
    """A short human phrase for an action (for hints)."""
    if isinstance(action, Play):
        where = pile_name(action.target)
        return f"{card_name(action.card)} from {pile_name(action.source)} to {where}"
    if isinstance(action, SlideUnder):
        return f"slide {card_name(action.card)} under {pile_name(action.target)}"
    if isinstance(action, Flip):
        return "flip the stock"
    if isinstance(action, DeclareStuck):
        return "declare stuck"
    return "call Nerts!"


# --- helpers ------------------------------------------------------------------------------------


def _work_key(
    state: State, player: str, team: int, selection: Selection | None, index: int
) -> tuple[Selection | None, Action | None]:
    """A work pile's number key: pick that pile, or move the pick onto it."""
    work = state.teams[team].work
    if not 0 <= index < len(work):
        return selection, None
    pile = PileRef(team, work_pile(index))
    if selection is None:
        return (Selection(pile) if work[index] else None), None
    if selection.pile == pile:
        return None, None
    cards = stack_from(state, selection.pile, selection.depth)
    if not cards:
        return None, None
    moves = _moves_to(state, player, selection.pile, cards[0], pile)
    return None, _first_accepted(state, moves)


def _foundation_key(state: State, player: str, selection: Selection | None) -> Action | None:
    """F or Enter: the pick's top card to a foundation, or the hint's foundation play."""
    if selection is None:
        hint = hint_action(state, player)
        return hint if isinstance(hint, Play) and hint.target.kind == "foundation" else None
    cards = stack_from(state, selection.pile, 1)
    if not cards:
        return None
    return Play(player, DECK[cards[-1]], selection.pile.pile, ANY_FOUNDATION.pile)


def _moves_to(
    state: State, player: str, source: PileRef, card: int, target: PileRef
) -> list[Action]:
    if target.kind == "foundation":
        return [Play(player, DECK[card], source.pile, target.pile)]
    if target.kind != "work":
        return []
    moves: list[Action] = [Play(player, DECK[card], source.pile, target.pile)]
    if source.kind in ("nerts", "waste") and state.teams[target.team].work[target.work_index]:
        moves.append(SlideUnder(player, DECK[card], source.pile, target.pile))
    return moves


def _first_accepted(state: State, candidates: Sequence[Action]) -> Action | None:
    for action in candidates:
        if not isinstance(apply(state, action), Rejection):
            return action
    return candidates[0] if candidates else None


def _is_top(state: State, pile: PileRef, card: int) -> bool:
    if pile.kind != "work":
        return False
    cards = state.teams[pile.team].work[pile.work_index]
    return bool(cards) and cards[-1] == card
