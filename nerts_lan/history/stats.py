"""Statistics from the history (``history``): per player name on this laptop, and per opponent.

``player_stats(history, name)`` is what the Stats screen draws and ``nerts-lan stats`` prints:
matches and rounds played and won, average score per round, Nerts calls, the fastest round won,
races won and lost, cards put on the foundations per minute, and one point per match over time
(the chart). Pure queries; nothing here writes.
"""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass, field
from typing import Any

from nerts_lan.history.store import History

__all__ = ["ChartPoint", "Opponent", "PlayerStats", "local_players", "player_stats", "stats_text"]


@dataclass(frozen=True)
class Record:
    """Matches and rounds played and won, and what the rounds add up to."""

    matches: int = 0
    """Matches played to their end (a team reached the target)."""
    matches_won: int = 0
    matches_unfinished: int = 0
    """Matches left before their end: their rounds count, the match neither as played nor
    as lost."""
    rounds: int = 0
    rounds_won: int = 0
    average_score: float = 0.0
    nerts_calls: int = 0
    fastest_round_ms: int | None = None
    """The shortest round this player's team won (None: none won, or no wall time)."""
    races_won: int = 0
    races_lost: int = 0
    cards_per_minute: float | None = None
    """Cards put on the foundations per minute of play (None: no round with wall time)."""


@dataclass(frozen=True)
class Opponent:
    """How a player did against one opponent (in the rounds they played at one table)."""

    name: str
    record: Record
    opponent_average: float
    """The opponent's own average score in those rounds."""


@dataclass(frozen=True)
class ChartPoint:
    """One match: when it started (Unix ms, None if unknown), its average score per round and
    cards per minute."""

    started_at: int | None
    average_score: float
    cards_per_minute: float | None


@dataclass(frozen=True)
class PlayerStats:
    name: str
    record: Record
    opponents: tuple[Opponent, ...] = ()
    chart: tuple[ChartPoint, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def local_players(history: History) -> list[str]:
    """The player names that played on this laptop, most rounds first."""
    rows = history.connection.execute(
        "SELECT player, COUNT(*) AS n FROM round_players WHERE local = 1 "
        "GROUP BY player ORDER BY n DESC, player"
    ).fetchall()
    return [row[0] for row in rows]


def player_stats(history: History, name: str) -> PlayerStats:
    """Everything the history says about ``name``."""
    db = history.connection
    record = _record(db, name, None)
    opponents = tuple(
        Opponent(other, _record(db, name, other), _average(db, other, name))
        for other in _opponents(db, name)
    )
    return PlayerStats(name, record, opponents, _chart(db, name))


def stats_text(stats: PlayerStats) -> list[str]:
    """The statistics as lines for a terminal."""
    lines = [f"{stats.name}: " + _record_words(stats.record)]
    for opponent in stats.opponents:
        words = _record_words(opponent.record)
        lines.append(
            f"  against {opponent.name}: {words} (they average {opponent.opponent_average:.1f})"
        )
    return lines


# --- private ----------------------------------------------------------------------------------

_ROUNDS_OF = """
    SELECT rp.round_id, rp.score, rp.won, rp.called, rp.cards, rp.races_won, rp.races_lost,
           r.duration_ms, r.match_id, rp.team
    FROM round_players rp JOIN rounds r ON r.id = rp.round_id
    WHERE rp.player = ?
"""

_WITH_OPPONENT = """
    AND EXISTS (SELECT 1 FROM round_players o WHERE o.round_id = rp.round_id
                AND o.player = ? AND o.team != rp.team)
"""


def _record(db: sqlite3.Connection, name: str, opponent: str | None) -> Record:
    query, args = _ROUNDS_OF, [name]
    if opponent is not None:
        query, args = query + _WITH_OPPONENT, [name, opponent]
    rows = db.execute(query, args).fetchall()
    if not rows:
        return Record()
    matches = {row[8]: row[9] for row in rows}
    winners = {
        match_id: db.execute("SELECT winner FROM matches WHERE id = ?", (match_id,)).fetchone()[0]
        for match_id in matches
    }
    finished = [match_id for match_id, winner in winners.items() if winner is not None]
    won_matches = sum(1 for match_id in finished if winners[match_id] == matches[match_id])
    timed = [row for row in rows if row[7]]
    minutes = sum(row[7] for row in timed) / 60000
    fastest = [row[7] for row in rows if row[2] and row[7]]
    return Record(
        matches=len(finished),
        matches_won=won_matches,
        matches_unfinished=len(matches) - len(finished),
        rounds=len(rows),
        rounds_won=sum(row[2] for row in rows),
        average_score=sum(row[1] for row in rows) / len(rows),
        nerts_calls=sum(row[3] for row in rows),
        fastest_round_ms=min(fastest) if fastest else None,
        races_won=sum(row[5] for row in rows),
        races_lost=sum(row[6] for row in rows),
        cards_per_minute=sum(row[4] for row in timed) / minutes if minutes > 0 else None,
    )


def _opponents(db: sqlite3.Connection, name: str) -> list[str]:
    rows = db.execute(
        "SELECT o.player, COUNT(*) AS n FROM round_players rp JOIN round_players o "
        "ON o.round_id = rp.round_id AND o.team != rp.team "
        "WHERE rp.player = ? GROUP BY o.player ORDER BY n DESC, o.player",
        (name,),
    ).fetchall()
    return [row[0] for row in rows]


def _average(db: sqlite3.Connection, player: str, against: str) -> float:
    row = db.execute(
        "SELECT AVG(rp.score) FROM round_players rp WHERE rp.player = ?" + _WITH_OPPONENT,
        (player, against),
    ).fetchone()
    return float(row[0] or 0.0)


def _chart(db: sqlite3.Connection, name: str) -> tuple[ChartPoint, ...]:
    rows = db.execute(
        "SELECT m.started_at, AVG(rp.score), SUM(rp.cards), SUM(r.duration_ms) "
        "FROM round_players rp JOIN rounds r ON r.id = rp.round_id "
        "JOIN matches m ON m.id = r.match_id WHERE rp.player = ? "
        "GROUP BY m.id ORDER BY m.started_at IS NULL, m.started_at, m.id",
        (name,),
    ).fetchall()
    return tuple(
        ChartPoint(row[0], float(row[1]), row[2] / (row[3] / 60000) if row[3] else None)
        for row in rows
    )


def _record_words(record: Record) -> str:
    unfinished = f" ({record.matches_unfinished} unfinished)" if record.matches_unfinished else ""
    parts = [
        f"{record.matches_won}/{record.matches} matches won{unfinished}",
        f"{record.rounds_won}/{record.rounds} rounds won",
        f"{record.average_score:.1f} points a round",
        f"{record.nerts_calls} Nerts call{'' if record.nerts_calls == 1 else 's'}",
        f"races {record.races_won} won, {record.races_lost} lost",
    ]
    if record.fastest_round_ms is not None:
        parts.append(f"fastest round won {record.fastest_round_ms / 1000:.0f} s")
    if record.cards_per_minute is not None:
        parts.append(f"{record.cards_per_minute:.1f} cards a minute")
    return ", ".join(parts)
