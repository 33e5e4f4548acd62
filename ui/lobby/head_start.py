"""The host form's head starts (the rules' handicaps, docs/rules.md): one team at a time, a
neutral preset each, shown as what it does ("Pile 10 · +1 work pile · ×1.5"), never as a level.

``head_start_text`` is how the lobby and the table show a team's head start.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from nerts_lan.rules.handicap import Handicap
from nerts_lan.rules.state import BACK_COLOURS, Options
from ui.kit.geometry import Rect
from ui.kit.widgets import FormScreen

__all__ = ["PRESETS", "HeadStarts", "head_start_text"]

PRESETS: Final = (
    Handicap(),
    Handicap(pile=10),
    Handicap(pile=10, work=5),
    Handicap(pile=10, work=5, score=150),
    Handicap(score=125),
    Handicap(score=150),
    Handicap(score=200),
)
"""What the form offers, in the order its button cycles (the table's pile 13 and 4 work piles
are the form's: it has no choice of them)."""


class HeadStarts:
    """The head start chosen for each team, and the team the form's row shows."""

    def __init__(self) -> None:
        self.team = 0
        self.chosen: dict[int, int] = {}
        """Team number -> index in ``PRESETS``."""

    def build(
        self, form: FormScreen, x: float, y: float, teams: int, again: Callable[[], None]
    ) -> None:
        """The form's row: the team, then what it gets; both cycle both ways, then ``again``
        (the form redraws)."""
        form.text("Head start", x, y, size=15)
        form.button(
            Rect(x + 200, y - 17, 110, 34),
            self.team_caption(teams),
            _then(lambda: self.next_team(teams), again),
            on_back=_then(lambda: self.next_team(teams, -1), again),
        )
        form.button(
            Rect(x + 318, y - 17, 290, 34),
            self.preset_caption(),
            _then(self.next_preset, again),
            on_back=_then(lambda: self.next_preset(-1), again),
        )

    def next_team(self, teams: int, step: int = 1) -> None:
        self.team = (self.team % teams + step) % teams

    def next_preset(self, step: int = 1) -> None:
        index = (self.chosen.get(self.team, 0) + step) % len(PRESETS)
        self.chosen[self.team] = index

    def team_caption(self, teams: int) -> str:
        self.team %= teams
        return f"for {BACK_COLOURS[self.team].capitalize()}"

    def preset_caption(self) -> str:
        handicap = PRESETS[self.chosen.get(self.team, 0)]
        defaults = Options()
        return handicap.label(defaults.pile, defaults.work) or "none"

    def handicaps(self, teams: int) -> tuple[tuple[str, Handicap], ...]:
        """The chosen head starts of the table's ``teams`` teams, by team name."""
        return tuple(
            (BACK_COLOURS[team].capitalize(), PRESETS[index])
            for team, index in sorted(self.chosen.items())
            if team < teams and index
        )


def head_start_text(options: Options, team: str) -> str:
    """``team``'s head start as the screen says it ("Head start: Pile 10 · ×1.5"); empty for
    none."""
    label = options.handicap_of(team).label(options.pile, options.work)
    return f"Head start: {label}" if label else ""


def _then(first: Callable[[], None], second: Callable[[], None]) -> Callable[[], None]:
    def both() -> None:
        first()
        second()

    return both
