"""What the history keeps of a round: per player its score, Nerts call, cards played and races.

Pure functions of a ``LoggedRound`` (``matchlog.rounds``), deterministic.

A *race* is two teams playing the same card (each team has its own deck) to the foundations at
nearly the same moment: the one the log orders first counts, the other is refused. A refused
foundation play is a race lost when another team put that same card on a foundation within
``RACE_WINDOW_MS`` before it (or, in a log without wall time, within the ``RACE_WINDOW_ACTIONS``
actions before it); the other team won that race.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Final

from nerts_lan.matchlog.rounds import LoggedAction, LoggedRound, is_foundation_play
from nerts_lan.rules.actions import Play

__all__ = [
    "RACE_WINDOW_ACTIONS",
    "RACE_WINDOW_MS",
    "PlayerRound",
    "Race",
    "RoundFacts",
    "races_of",
    "round_facts",
]

RACE_WINDOW_MS: Final = 2000
RACE_WINDOW_ACTIONS: Final = 12


@dataclass(frozen=True, slots=True)
class Race:
    """A race for a foundation: ``winner``'s play counted, ``loser``'s (``lost``) was refused.
    ``margin_ms``: how long after the winning play the losing one was seen (None: no wall time)."""

    winner: str
    loser: str
    won: LoggedAction
    lost: LoggedAction
    margin_ms: int | None


@dataclass(frozen=True, slots=True)
class PlayerRound:
    """One player's round."""

    player: str
    team: str
    score: int
    """The team's score for the round (partners share it)."""
    won: bool
    """The team scored the most (a tie for the most counts for each)."""
    called: bool
    cards: int
    """Cards this player put on the foundations."""
    races_won: int
    races_lost: int


@dataclass(frozen=True)
class RoundFacts:
    """One finished round as the history keeps it."""

    number: int
    started_at: int | None
    duration_ms: int | None
    ending: str
    caller: str | None
    state_hash: str
    whole: bool
    players: tuple[PlayerRound, ...]


def races_of(played: LoggedRound) -> list[Race]:
    """Every race of the round, in log order."""
    races: list[Race] = []
    actions = played.actions
    team_of = played.table.player_team
    for index, lost in enumerate(actions):
        if lost.refused is None or not is_foundation_play(lost.action):
            continue
        assert isinstance(lost.action, Play)
        loser = lost.action.by
        for won in reversed(actions[max(0, index - RACE_WINDOW_ACTIONS) : index]):
            if not _beat(won, lost, team_of.get(loser)):
                continue
            margin = None if won.at is None or lost.at is None else lost.at - won.at
            if margin is not None and margin > RACE_WINDOW_MS:
                break
            races.append(Race(won.action.by, loser, won, lost, margin))
            break
    return races


def round_facts(played: LoggedRound) -> RoundFacts | None:
    """The facts of a round that ended (None for one the log does not see end)."""
    ended = played.ended
    if ended is None:
        return None
    cards: Counter[str] = Counter(
        action.action.by
        for action in played.actions
        if action.refused is None and is_foundation_play(action.action)
    )
    races = races_of(played)
    won = Counter(race.winner for race in races)
    lost = Counter(race.loser for race in races)
    best = max(ended.scores.values()) if ended.scores else 0
    names = played.table.team_names
    players = tuple(
        PlayerRound(
            player,
            names[team],
            ended.scores.get(names[team], 0),
            ended.scores.get(names[team], 0) == best,
            ended.outcome.caller == player,
            cards[player],
            won[player],
            lost[player],
        )
        for player, team in played.players()
    )
    return RoundFacts(
        played.number,
        played.started_at,
        played.duration_ms,
        ended.outcome.ending,
        ended.outcome.caller,
        ended.digest.hex(),
        played.whole,
        players,
    )


def _beat(won: LoggedAction, lost: LoggedAction, loser_team: int | None) -> bool:
    """``won`` is another team's counted foundation play of the card ``lost`` tried to play."""
    if won.refused is not None or not is_foundation_play(won.action):
        return False
    assert isinstance(won.action, Play) and isinstance(lost.action, Play)
    if won.action.card != lost.action.card:
        return False
    return won.before.table.team_of(won.action.by) != loser_team
