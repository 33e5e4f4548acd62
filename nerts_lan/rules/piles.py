"""Piles as small immutable values: ``Pile.parse("w3")``, ``str(pile) == "w3"``.

On the wire (actions, network frames, saved match logs, scenario files) a pile is a short name:
``nerts``, ``waste``, ``w1`` … (work piles, numbered from 1), ``f`` (any foundation) and ``f1`` …
(a numbered foundation). ``stock`` names the stock, which no card move names but the window points
at. A ``Pile`` is such a name parsed once: a kind and, for a work pile or a numbered foundation, its
index from 0. ``parse`` is the one parser and ``str`` the one printer; they round-trip.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

__all__ = [
    "ANY_FOUNDATION",
    "MAX_PILE_NUMBER",
    "NERTS",
    "STOCK",
    "WASTE",
    "Pile",
    "PileError",
    "PileKind",
    "foundation_pile",
    "work_pile",
]

PileKind: TypeAlias = Literal["nerts", "waste", "stock", "work", "foundation"]

MAX_PILE_NUMBER: Final = 9999
"""The highest pile number a name may carry (``w9999``, ``f9999``)."""


class PileError(ValueError):
    """A pile name not of the form nerts, waste, stock, wN, f or fN."""


@dataclass(frozen=True, slots=True)
class Pile:
    """One pile of a tableau, or a foundation; ``index`` counts from 0.

    ``index`` is None for the nerts pile, the waste, the stock and ``f`` (any foundation, the one
    that takes the card); it is required for a work pile and optional for a foundation.
    """

    kind: PileKind
    index: int | None = None

    def __post_init__(self) -> None:
        problem = _problem(self.kind, self.index)
        if problem:
            raise PileError(problem)

    @classmethod
    def parse(cls, name: str) -> Pile:
        """The pile named ``name``: ``"nerts"``, ``"w3"`` (index 2), ``"f"``, ``"f12"``."""
        pile = _BY_NAME.get(name) if isinstance(name, str) else None
        if pile is not None:
            return pile
        match = _NUMBERED.fullmatch(name) if isinstance(name, str) else None
        if match is None:
            raise PileError(f"bad pile name {name!r} (expected nerts, waste, stock, wN, f or fN)")
        kind: PileKind = "work" if match[1] == "w" else "foundation"
        return cls(kind, int(match[2]) - 1)

    def __str__(self) -> str:
        if self.index is None:
            return "f" if self.kind == "foundation" else self.kind
        return f"{'w' if self.kind == 'work' else 'f'}{self.index + 1}"

    def __repr__(self) -> str:
        return f"Pile.parse({str(self)!r})"


def work_pile(index: int) -> Pile:
    """Work pile ``index`` (from 0): ``work_pile(0)`` is ``w1``."""
    if 0 <= index < len(_WORK_PILES):
        return _WORK_PILES[index]
    return Pile("work", index)


def foundation_pile(index: int) -> Pile:
    """Foundation ``index`` (from 0): ``foundation_pile(0)`` is ``f1``."""
    if 0 <= index < len(_FOUNDATION_PILES):
        return _FOUNDATION_PILES[index]
    return Pile("foundation", index)


# --- helpers ------------------------------------------------------------------------------------

_KINDS: Final = frozenset(("nerts", "waste", "stock", "work", "foundation"))
_NUMBERED: Final = re.compile(r"([wf])([1-9][0-9]{0,3})")


def _problem(kind: object, index: object) -> str | None:
    """Why (``kind``, ``index``) is no pile, or None."""
    if kind not in _KINDS:
        return f"unknown pile kind {kind!r}"
    if index is None:
        return "a work pile needs its index" if kind == "work" else None
    if kind not in ("work", "foundation"):
        return f"the {kind} pile has no index"
    if type(index) is not int or not 0 <= index < MAX_PILE_NUMBER:
        return f"pile index {index!r} is not from 0 to {MAX_PILE_NUMBER - 1}"
    return None


# The named piles (built once the checks above exist).

NERTS: Final = Pile("nerts")
WASTE: Final = Pile("waste")
STOCK: Final = Pile("stock")
ANY_FOUNDATION: Final = Pile("foundation")
"""``f``: whichever foundation takes the card (a new one for an ace)."""


_WORK_PILES: Final = tuple(Pile("work", i) for i in range(16))
_FOUNDATION_PILES: Final = tuple(Pile("foundation", i) for i in range(64))
_BY_NAME: Final[dict[str, Pile]] = {
    str(pile): pile
    for pile in (NERTS, WASTE, STOCK, ANY_FOUNDATION, *_WORK_PILES, *_FOUNDATION_PILES)
}
