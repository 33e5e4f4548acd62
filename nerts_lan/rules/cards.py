"""Cards as small immutable values: ``Card.parse("10H")``, ``str(card) == "10H"``.

A card is an ``int`` from 0 to 51 (``suit * 13 + rank - 1``) so that piles are tuples of small
ints: cheap to copy, compare and hash. Each team owns a full deck, so the same card value exists
once per team; who owns a card on a foundation is kept beside it.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "DECK",
    "RANK_NAMES",
    "SUIT_NAMES",
    "Card",
    "CardError",
    "card_color",
    "card_rank",
    "card_suit",
]

SUIT_NAMES: Final = "SHDC"
"""Suits in card order: spades, hearts, diamonds, clubs."""

RANK_NAMES: Final = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
"""Rank names from A (1) to K (13)."""

_BLACK: Final = 0
_RED: Final = 1


class CardError(ValueError):
    """A card name that is not of the form rank then suit (``AS``, ``10H``, ``QC``)."""


class Card(int):
    """One card face: rank 1 (A) to 13 (K) and suit S, H, D or C."""

    __slots__ = ()

    @classmethod
    def parse(cls, name: str) -> Card:
        """The card named ``name``: ``"AS"``, ``"10H"``; names are upper case."""
        card = _BY_NAME.get(name) if isinstance(name, str) else None
        if card is None:
            raise CardError(
                f"bad card name {name!r} (expected rank A,2..10,J,Q,K then suit S,H,D,C)"
            )
        return card

    @classmethod
    def of(cls, rank: int, suit: str) -> Card:
        """The card of ``rank`` (1..13) and ``suit`` (one of ``SHDC``)."""
        if not 1 <= rank <= 13 or len(suit) != 1 or suit not in SUIT_NAMES:
            raise CardError(f"no card of rank {rank!r} and suit {suit!r}")
        return DECK[SUIT_NAMES.index(suit) * 13 + rank - 1]

    @property
    def rank(self) -> int:
        return _RANKS[self]

    @property
    def suit(self) -> str:
        return SUIT_NAMES[_SUITS[self]]

    @property
    def is_red(self) -> bool:
        return _COLORS[self] == _RED

    def __str__(self) -> str:
        return _NAMES[self]

    def __repr__(self) -> str:
        return f"Card.parse({_NAMES[self]!r})"


def card_rank(card: int) -> int:
    """Rank 1..13 of a card value (a fast table lookup for the engine's hot path)."""
    return _RANKS[card]


def card_suit(card: int) -> int:
    """Suit index 0..3 (S, H, D, C) of a card value."""
    return _SUITS[card]


def card_color(card: int) -> int:
    """0 for black (spades, clubs), 1 for red (hearts, diamonds)."""
    return _COLORS[card]


_RANKS: Final = tuple(c % 13 + 1 for c in range(52))
_SUITS: Final = tuple(c // 13 for c in range(52))
_COLORS: Final = tuple(_RED if SUIT_NAMES[c // 13] in "HD" else _BLACK for c in range(52))
_NAMES: Final = tuple(RANK_NAMES[c % 13] + SUIT_NAMES[c // 13] for c in range(52))

DECK: Final[tuple[Card, ...]] = tuple(int.__new__(Card, c) for c in range(52))
"""The 52 cards in order AS..KS, AH..KH, AD..KD, AC..KC; ``DECK[c]`` is the Card of value c."""

_BY_NAME: Final = {_NAMES[c]: DECK[c] for c in range(52)}
