"""A match: rounds are played until a team reaches the target with a total no other team ties."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Match"]


@dataclass(frozen=True)
class Match:
    """Round scores so far and what they add up to. Immutable: ``with_round`` gives the next."""

    team_names: tuple[str, ...]
    target: int = 100
    rounds: tuple[tuple[int, ...], ...] = ()

    def with_round(self, scores: Mapping[str, int]) -> Match:
        """The match after one more round's scores (one per team, by name)."""
        if set(scores) != set(self.team_names):
            raise ValueError("round scores must name exactly the match's teams")
        row = tuple(scores[name] for name in self.team_names)
        return Match(self.team_names, self.target, (*self.rounds, row))

    @property
    def totals(self) -> dict[str, int]:
        return {name: sum(row[i] for row in self.rounds) for i, name in enumerate(self.team_names)}

    @property
    def over(self) -> bool:
        """True once a team has reached the target and the top total is not tied."""
        return self.winner is not None

    @property
    def winner(self) -> str | None:
        """The team with the highest total once someone reached the target, unless tied."""
        totals = self.totals
        if not totals or max(totals.values()) < self.target:
            return None
        best = max(totals.values())
        leaders: Sequence[str] = [name for name in self.team_names if totals[name] == best]
        return leaders[0] if len(leaders) == 1 else None

    def differences(self) -> dict[str, int]:
        """Each team's total minus the leader's (0 for the leader, negative behind it)."""
        totals = self.totals
        best = max(totals.values()) if totals else 0
        return {name: total - best for name, total in totals.items()}
