"""Handicaps for mixed tables: one team's own nerts-pile size, work piles and score multiplier.

A ``Handicap`` is a table option given per team (by team name, ``Options.handicaps``). A field
left at ``None`` (``pile``, ``work``) takes the table's option; ``score`` is a whole percent
(100: the round's points as they are). The multiplier is exact integer arithmetic with one
rounding rule (docs/rules.md, "Handicaps"): a positive round score becomes
``(points * score + 50) // 100`` (half a point rounds up); zero and negative scores are never
scaled. A handicap equal to the default is no handicap: ``Options`` drops it, so a table without
handicaps has the same wire form, fingerprint and digests as before handicaps existed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "HANDICAP_FIELDS",
    "MAX_SCORE_PERCENT",
    "MIN_SCORE_PERCENT",
    "Handicap",
    "handicaps_from_wire",
    "multiplier_text",
    "scaled_score",
]

MIN_SCORE_PERCENT: Final = 100
MAX_SCORE_PERCENT: Final = 400
MIN_WORK: Final = 3
MAX_WORK: Final = 6
HANDICAP_FIELDS: Final = ("pile", "work", "score")
MAX_TEAM_NAME: Final = 40


@dataclass(frozen=True, slots=True)
class Handicap:
    """One team's handicap: its nerts pile's size and its number of work piles (None: the
    table's), and ``score``, the percent its positive round scores are multiplied by."""

    pile: int | None = None
    work: int | None = None
    score: int = 100

    def __post_init__(self) -> None:
        for name in ("pile", "work"):
            value = getattr(self, name)
            if value is not None and type(value) is not int:
                raise ValueError(f"handicap field {name!r} must be a whole number")
        if type(self.score) is not int:
            raise ValueError("handicap field 'score' must be a whole number (a percent)")
        if self.work is not None and not MIN_WORK <= self.work <= MAX_WORK:
            raise ValueError(f"handicap field 'work' must be from {MIN_WORK} to {MAX_WORK}")
        if self.pile is not None and not 1 <= self.pile <= 52 - MIN_WORK:
            raise ValueError(f"handicap field 'pile' must be from 1 to {52 - MIN_WORK}")
        if not MIN_SCORE_PERCENT <= self.score <= MAX_SCORE_PERCENT:
            raise ValueError(
                f"handicap field 'score' must be from {MIN_SCORE_PERCENT} to "
                f"{MAX_SCORE_PERCENT} (a percent)"
            )

    @property
    def is_default(self) -> bool:
        return self.pile is None and self.work is None and self.score == 100

    def to_wire(self) -> dict[str, int]:
        """Only the fields that differ from the table's, in a fixed order."""
        wire: dict[str, int] = {}
        if self.pile is not None:
            wire["pile"] = self.pile
        if self.work is not None:
            wire["work"] = self.work
        if self.score != 100:
            wire["score"] = self.score
        return wire

    @classmethod
    def from_wire(cls, data: Any, where: str = "handicap") -> Handicap:
        """A handicap from its wire object; ``ValueError`` names the bad field."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{where} must be an object")
        for name in data:
            if name not in HANDICAP_FIELDS:
                raise ValueError(f"{where}: unknown handicap field {str(name)[:20]!r}")
        try:
            return cls(pile=data.get("pile"), work=data.get("work"), score=data.get("score", 100))
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None

    def label(self, pile: int, work: int) -> str:
        """A neutral description against the table's ``pile`` and ``work``, e.g.
        ``Pile 10 · +1 work pile · ×1.5``; empty for no handicap."""
        parts = []
        if self.pile is not None and self.pile != pile:
            parts.append(f"Pile {self.pile}")
        if self.work is not None and self.work != work:
            more = self.work - work
            piles = "work pile" if abs(more) == 1 else "work piles"
            parts.append(f"{more:+d} {piles}".replace("-", "\u2212"))
        if self.score != 100:
            parts.append(multiplier_text(self.score))
        return " · ".join(parts)


def multiplier_text(percent: int) -> str:
    """``×1.5`` for 150, ``×2`` for 200, ``×1.25`` for 125: exact, no float."""
    whole, part = divmod(percent, 100)
    return f"×{whole}" if part == 0 else f"×{whole}.{part:02d}".rstrip("0")


def scaled_score(points: int, percent: int) -> int:
    """A round's ``points`` under a ``percent`` multiplier: positive points are multiplied and
    rounded half up, ``(points * percent + 50) // 100``; zero and negative points stay."""
    if points <= 0 or percent == 100:
        return points
    return (points * percent + 50) // 100


def handicaps_from_wire(data: Any) -> tuple[tuple[str, Handicap], ...]:
    """The ``handicaps`` option's wire object (team name -> handicap) as ``Options`` keeps it;
    ``ValueError`` names what is wrong."""
    if not isinstance(data, Mapping):
        raise ValueError("option 'handicaps' must map team names to handicaps")
    if len(data) > 8:
        raise ValueError("option 'handicaps' names more than 8 teams")
    pairs = []
    for name, value in data.items():
        check_team_name(name)
        pairs.append((name, Handicap.from_wire(value, f"handicap of team {name!r}")))
    return tuple(pairs)


def check_team_name(name: Any) -> None:
    if not isinstance(name, str) or not 0 < len(name) <= MAX_TEAM_NAME or not name.isprintable():
        raise ValueError(
            f"option 'handicaps': a team name must be printable text of 1 to {MAX_TEAM_NAME} "
            "characters"
        )
