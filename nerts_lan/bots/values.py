"""What a bot's card moves are worth: a table of named values and the valuer of one decision.

Pure and deterministic: a value depends only on the redacted view the bot decides from and on its
level's habits. ``Bot`` adds its noise and its misses on top (``nerts_lan.bots.bot``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, TypeAlias

from nerts_lan.rules.actions import Action, Play, SlideUnder
from nerts_lan.rules.cards import card_color, card_rank, card_suit
from nerts_lan.rules.piles import Pile
from nerts_lan.rules.state import State

__all__ = ["FLIP_VALUE", "HIDDEN_CARD", "MOVE_VALUES", "MoveValuer", "MoveValues", "WorkLayout"]

HIDDEN_CARD: Final = 52
"""What a face-down card reads as in a redacted state: no card value (indexing any table by it
fails loudly), so hidden cards cannot sway a decision even by mistake."""

FLIP_VALUE: Final = 100.0
"""What flipping the stock is worth: a card move worth no more is never made."""

WorkLayout: TypeAlias = tuple[tuple[int, ...], ...]
"""Work piles sorted: a layout of the work piles whatever their order."""


@dataclass(frozen=True, slots=True)
class MoveValues:
    """What a card move is worth to a bot, most urgent first (see ``FLIP_VALUE``)."""

    nerts_to_foundation: float = 1000.0
    nerts_onto_pile: float = 900.0
    nerts_slide_under: float = 890.0
    nerts_onto_space: float = 880.0
    uncover_for_nerts: float = 870.0
    """A work-to-work move that uncovers a card the nerts top can go on."""
    open_space_for_nerts: float = 850.0
    """A whole work pile moved onto another: a space for the nerts pile."""
    waste_to_foundation: float = 700.0
    work_to_foundation: float = 680.0
    uncover_for_foundation: float = 600.0
    """A work-to-work move that uncovers a card a foundation takes."""
    waste_onto_pile: float = 400.0
    waste_slide_under: float = 380.0
    open_space: float = 200.0
    """A whole work pile moved onto another once the nerts pile is empty."""
    waste_onto_space: float = 150.0
    """Only once the nerts pile is empty: before that the space is kept for it."""
    waste_onto_space_kept: float = -1.0
    frees_space_for_nerts: float = 60.0
    """Added when a work pile's last card goes to a foundation while the nerts pile has cards."""
    race: float = 90.0
    """Added (for levels that race) when another team could play the same card there."""
    spends_space: float = 150.0
    """Taken off an uncovering move that fills a space."""


MOVE_VALUES: Final = MoveValues()
"""The values bots play by."""


class MoveValuer:
    """Values the card moves of one decision (see ``MoveValues``), or None for a move not to
    make at all."""

    __slots__ = (
        "careful",
        "f_next",
        "kings",
        "may_shuffle",
        "nerts_top",
        "race",
        "rivals",
        "seen_layouts",
        "team",
        "view",
        "with_waste",
        "work",
    )

    def __init__(
        self,
        view: State,
        team: int,
        *,
        race: bool,
        careful: bool,
        with_waste: bool,
        seen_layouts: set[WorkLayout],
        may_shuffle: bool,
    ) -> None:
        """``view`` is what ``team`` sees; ``race`` and ``careful`` are the level's habits
        (``LevelProfile``); ``with_waste``: this seat plays from the waste; ``seen_layouts``:
        work layouts a work-to-work move must not go back to; ``may_shuffle``: work-to-work moves
        are still allowed since the last progress."""
        own = view.teams[team]
        self.view = view
        self.team = team
        self.work = own.work
        self.nerts_top = own.nerts[-1] if own.nerts else -1
        self.f_next = view.f_next
        self.kings = view.table.options.kings
        self.race = race
        self.careful = careful
        self.with_waste = with_waste
        self.seen_layouts = seen_layouts
        self.may_shuffle = may_shuffle
        self.rivals: set[int] | None = None

    def value(self, action: Action) -> tuple[float, WorkLayout | None] | None:
        """The move's value and, for a work-to-work move, the work layout it leads to."""
        if type(action) is SlideUnder:
            if action.source.kind == "nerts":
                return MOVE_VALUES.nerts_slide_under, None
            return (MOVE_VALUES.waste_slide_under, None) if self.with_waste else None
        if type(action) is not Play:
            return None
        source, target = action.source, action.target
        if source.kind == "waste" and not self.with_waste:
            return None
        if target.kind == "foundation":
            return self._to_foundation(action.card, source), None
        if source.kind == "nerts":
            return self._nerts_onto(target), None
        if source.kind == "waste":
            return self._waste_onto(target), None
        return self._work_to_work(action.card, source, target)

    def _to_foundation(self, card: int, source: Pile) -> float:
        if source.kind == "nerts":
            value = MOVE_VALUES.nerts_to_foundation
        elif source.kind == "waste":
            value = MOVE_VALUES.waste_to_foundation
        else:
            value = MOVE_VALUES.work_to_foundation
            if self.nerts_top >= 0 and len(self.work[_index(source)]) == 1:
                value += MOVE_VALUES.frees_space_for_nerts
        if self.race:
            if self.rivals is None:
                self.rivals = _rival_tops(self.view, self.team)
            if card in self.rivals:
                value += MOVE_VALUES.race
            value += 14 - card_rank(card)
        return value

    def _nerts_onto(self, target: Pile) -> float:
        if self.work[_index(target)]:
            return MOVE_VALUES.nerts_onto_pile
        return MOVE_VALUES.nerts_onto_space

    def _waste_onto(self, target: Pile) -> float:
        dest = self.work[_index(target)]
        if not dest:
            if self.nerts_top < 0:
                return MOVE_VALUES.waste_onto_space
            return MOVE_VALUES.waste_onto_space_kept
        value = MOVE_VALUES.waste_onto_pile
        if self.careful:
            value -= _burial_cost(dest, self.view, self.kings)
        return value

    def _work_to_work(
        self, card: int, source: Pile, target: Pile
    ) -> tuple[float, WorkLayout] | None:
        work = self.work
        src_index, dest_index = _index(source), _index(target)
        src, dest = work[src_index], work[dest_index]
        at = src.index(card)
        value = self._uncovering_value(src, at, dest)
        if value is None:
            return None
        moved = list(work)
        moved[dest_index] = dest + src[at:]
        moved[src_index] = src[:at]
        after = tuple(sorted(moved))
        if after in self.seen_layouts or not self.may_shuffle:
            return None
        return value, after

    def _uncovering_value(
        self, src: tuple[int, ...], at: int, dest: tuple[int, ...]
    ) -> float | None:
        """What moving ``src[at:]`` onto ``dest`` is worth, by what it uncovers (None: nothing
        worth it)."""
        if at == 0:
            if not dest:
                return None  # the same pile in another place: pointless
            if len(src) == 1 and self._foundation_takes(src[0]):
                return None  # the foundation play opens the same space, and scores
            return (
                MOVE_VALUES.open_space_for_nerts if self.nerts_top >= 0 else MOVE_VALUES.open_space
            )
        exposed = src[at - 1]
        if self.nerts_top >= 0 and _fits(self.nerts_top, exposed):
            value = MOVE_VALUES.uncover_for_nerts
        elif self._foundation_takes(exposed):
            value = MOVE_VALUES.uncover_for_foundation
        else:
            return None
        if not dest:
            value -= MOVE_VALUES.spends_space
        return value

    def _foundation_takes(self, card: int) -> bool:
        """Whether a foundation takes ``card`` now (a new one takes an ace, or a king when
        foundations may start from kings)."""
        rank = card_rank(card)
        return card in self.f_next or rank == 1 or (self.kings and rank == 13)


# --- helpers ------------------------------------------------------------------------------------


def _index(pile: Pile) -> int:
    """A work pile's index (a legal action names only piles that exist)."""
    assert pile.index is not None
    return pile.index


def _fits(card: int, onto: int) -> bool:
    """True when ``card`` may be played onto ``onto`` in a work pile."""
    return card_rank(onto) == card_rank(card) + 1 and card_color(onto) != card_color(card)


def _rival_tops(view: State, team: int) -> set[int]:
    """Cards other teams could play to a foundation now (their visible tops)."""
    tops: set[int] = set()
    for index, tableau in enumerate(view.teams):
        if index == team:
            continue
        if tableau.nerts:
            tops.add(tableau.nerts[-1])
        if tableau.waste:
            tops.add(tableau.waste[-1])
        for pile in tableau.work:
            if pile:
                tops.add(pile[-1])
    return tops


def _burial_cost(dest: tuple[int, ...], view: State, kings: bool) -> float:
    """How much covering ``dest`` delays the foundations: cards in it that are one or two plays
    away from a foundation weigh most, and a long sequence weighs by its length."""
    cost = 12.0 * max(0, len(dest) - 2)
    for card in dest:
        if _plays_away(card, view, kings) <= 1:
            cost += 90.0
    return cost


def _plays_away(card: int, view: State, kings: bool) -> int:
    """How many cards of its suit must reach a foundation before ``card`` can."""
    rank = card_rank(card)
    suit = card_suit(card)
    best = rank - 1
    if kings:
        best = min(best, 13 - rank)
    for cards, wanted in zip(view.f_cards, view.f_next):
        if wanted < 0 or card_suit(wanted) != suit:
            continue
        step = card_rank(wanted)
        distance = rank - step if card_rank(cards[0]) == 1 else step - rank
        if 0 <= distance < best:
            best = distance
    return best
