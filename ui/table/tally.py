"""The scoreboard's tally: at a round's end each team's round score and match total count up,
one team after another from the last place to the first, and the match's winner is named once
the count reaches them. With reduced motion everything stands at once. No pyglet here: the
labels are anything with a ``text``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

__all__ = ["ROW_SECONDS", "CountedRow", "Tally"]

ROW_SECONDS: Final = 0.45
"""How long one team's count takes."""


@dataclass
class CountedRow:
    """One team's two counting cells: its round score (``suffix``: its multiplier, if any) and
    its match total, which counts from what it was before this round."""

    round_cell: Any
    total_cell: Any
    score: int
    total: int
    suffix: str = ""


class Tally:
    """Counts ``rows`` (in the order they are counted) from ``start``; ``finale``, when given, is
    a label that reads ``finale_text`` once every row has counted (the winner's moment)."""

    def __init__(
        self,
        start: float,
        rows: list[CountedRow],
        counting: bool = True,
        finale: tuple[Any, str] | None = None,
    ) -> None:
        self.start = start
        self.rows = rows
        self.counting = counting
        self.finale = finale
        self._shown: list[tuple[str, str]] = []

    def done(self, now: float) -> bool:
        return not self.counting or now >= self.start + ROW_SECONDS * len(self.rows)

    def update(self, now: float) -> bool:
        """Set every cell to what the count shows at ``now``; True when a text changed."""
        shown = [self._cells(i, row, now) for i, row in enumerate(self.rows)]
        changed = shown != self._shown
        for row, (round_text, total_text) in zip(self.rows, shown):
            row.round_cell.text, row.total_cell.text = round_text, total_text
        self._shown = shown
        if self.finale is not None and self.done(now) and self.finale[0].text != self.finale[1]:
            self.finale[0].text = self.finale[1]
            changed = True
        return changed

    def _cells(self, index: int, row: CountedRow, now: float) -> tuple[str, str]:
        if not self.counting:
            share = 1.0
        else:
            share = min(1.0, max(0.0, (now - self.start - index * ROW_SECONDS) / ROW_SECONDS))
        if share <= 0.0:
            return "…", str(row.total - row.score)
        counted = round(row.score * share)
        return f"{counted:+d}{row.suffix}", str(row.total - row.score + counted)
