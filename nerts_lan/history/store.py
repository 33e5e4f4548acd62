"""The history of every match played on this laptop: a SQLite database in the data folder.

The match logs (``matchlog``) are the truth; the database is what they replay to, kept so that
statistics are quick: ``History.update(logs_folder)`` replays every log that is new or grew since
it was last read (with the engine, as the table folded it) and records its matches and finished
rounds, one log per transaction. The window, ``nerts-lan stats`` and the headless peers all
record through that one call. Two logs of one match (two peers on one laptop) count once: the
one that holds more rounds.

The schema is versioned (``PRAGMA user_version``) and migrated forward on open. A database that
is locked (another nerts-lan writing) or damaged raises ``HistoryUnavailable`` with one sentence
for the player; a damaged one is first set aside (``history.sqlite.damaged``) and rebuilt from
the logs, since they hold everything it held. Nothing here is ever in the way of a game: callers
catch ``HistoryUnavailable`` and go on without history.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from nerts_lan.folders import data_folder
from nerts_lan.history.facts import RoundFacts, round_facts
from nerts_lan.matchlog.file import read_match_log, writer_of
from nerts_lan.matchlog.rounds import RECORDER_PEER, LoggedRound, fold_logged_rounds

__all__ = [
    "DATABASE_NAME",
    "SCHEMA_VERSION",
    "History",
    "HistoryUnavailable",
    "Imported",
    "open_history",
    "record_new_logs",
    "record_played_rounds",
]

DATABASE_NAME: Final = "history.sqlite"
LOG_SUFFIX: Final = ".nlog"
BUSY_TIMEOUT: Final = 2.0
"""Seconds to wait for another nerts-lan's write before saying the history is locked."""

log = logging.getLogger(__name__)

_MIGRATIONS: Final = (
    """
    CREATE TABLE sources (
        path TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        problem TEXT
    );
    CREATE TABLE matches (
        id INTEGER PRIMARY KEY,
        source TEXT NOT NULL REFERENCES sources(path) ON DELETE CASCADE,
        table_id TEXT NOT NULL,
        number INTEGER NOT NULL,
        table_name TEXT NOT NULL,
        started_at INTEGER,
        options TEXT NOT NULL,
        teams TEXT NOT NULL,
        winner TEXT,
        local_player TEXT,
        UNIQUE (table_id, number)
    );
    CREATE TABLE rounds (
        id INTEGER PRIMARY KEY,
        match_id INTEGER NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
        number INTEGER NOT NULL,
        started_at INTEGER,
        duration_ms INTEGER,
        ending TEXT NOT NULL,
        caller TEXT,
        state_hash TEXT NOT NULL,
        whole INTEGER NOT NULL,
        UNIQUE (match_id, number)
    );
    CREATE TABLE round_players (
        round_id INTEGER NOT NULL REFERENCES rounds(id) ON DELETE CASCADE,
        player TEXT NOT NULL,
        team TEXT NOT NULL,
        score INTEGER NOT NULL,
        won INTEGER NOT NULL,
        called INTEGER NOT NULL,
        cards INTEGER NOT NULL,
        races_won INTEGER NOT NULL,
        races_lost INTEGER NOT NULL,
        local INTEGER NOT NULL,
        PRIMARY KEY (round_id, player)
    );
    CREATE INDEX round_players_player ON round_players (player);
    """,
)
"""Migration N (from 0) takes a database from schema version N to N + 1."""

SCHEMA_VERSION: Final = len(_MIGRATIONS)


class HistoryUnavailable(Exception):
    """The history cannot be read or written now; ``str()`` is one sentence for the player."""


class _NewerSchema(Exception):
    """The database was made by a newer nerts-lan: neither damaged nor ours to change."""


@dataclass(frozen=True)
class Imported:
    """What ``History.update`` did: logs read, matches recorded, logs it could not read."""

    logs: int
    matches: int
    problems: tuple[str, ...] = ()


def open_history(folder: Path) -> History:
    """The history database of the data folder ``folder`` (made, or migrated, as needed).

    ``HistoryUnavailable`` when it is locked or cannot be opened; a damaged one is set aside and
    started again empty (the next ``update`` rebuilds it from the logs)."""
    path = folder / DATABASE_NAME
    try:
        return History(_connect(path), path)
    except _NewerSchema as error:
        raise HistoryUnavailable(f"the match history {path} {error}: left it as it is") from None
    except sqlite3.DatabaseError as error:
        if _locked(error):
            raise HistoryUnavailable(_locked_sentence(path)) from None
        aside = _set_aside(path)
        log.warning("the history %s was damaged (%s): moved it to %s", path, error, aside)
    try:
        history = History(_connect(path), path)
    except sqlite3.DatabaseError as error:
        raise HistoryUnavailable(f"the match history {path} cannot be opened: {error}") from None
    history.notice = f"the match history was damaged: set it aside ({aside}) and rebuilt it"
    return history


def record_new_logs(folder: Path | None = None) -> str | None:
    """Record the new and grown logs of the data folder (``folder``, default this user's): the
    one sentence to show the player when the history is unavailable or was rebuilt, else None.
    Never raises for the history's sake: a game is never stopped by it."""
    folder = data_folder() if folder is None else folder
    try:
        with open_history(folder) as history:
            history.update(folder / "logs")
            return history.notice
    except HistoryUnavailable as error:
        return str(error)
    except OSError as error:  # the data folder itself cannot be made or read
        return f"the match history cannot be kept in {folder}: {error.strerror or error}"


def record_played_rounds(
    key: str, rounds: list[LoggedRound], wall_offset_ms: int, folder: Path | None = None
) -> str | None:
    """Record the finished rounds of a match played on this machine alone (practice: it writes
    no log), as the match ``key``; their times plus ``wall_offset_ms`` are Unix ms. The one
    sentence to show when the history is unavailable, else None; never raises."""
    if not rounds:
        return None
    folder = data_folder() if folder is None else folder
    dated = [
        replace(
            played,
            started_at=None if played.started_at is None else played.started_at + wall_offset_ms,
            ended_at=None if played.ended_at is None else played.ended_at + wall_offset_ms,
        )
        for played in rounds
    ]
    try:
        with open_history(folder) as history:
            history.record_rounds(key, dated)
            return history.notice
    except HistoryUnavailable as error:
        return str(error)
    except OSError as error:
        return f"the match history cannot be kept in {folder}: {error.strerror or error}"


class History:
    """An open history database; use as a context manager, or ``close()``."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.path = path
        self.notice: str | None = None
        """Something the player should hear about the history (it was rebuilt), or None."""
        self._db = connection

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    @property
    def connection(self) -> sqlite3.Connection:
        """For the statistics' queries (``history_stats``): read only, by contract."""
        return self._db

    def update(self, logs_folder: Path) -> Imported:
        """Record every log of ``logs_folder`` that is new or changed since it was last read."""
        logs = matches = 0
        problems: list[str] = []
        paths = sorted(logs_folder.glob(f"*{LOG_SUFFIX}")) if logs_folder.is_dir() else []
        for path in paths:
            try:
                stat = path.stat()
            except OSError:
                continue
            if self._known(path, stat.st_size, stat.st_mtime_ns):
                continue
            count, problem = self.record_log(path, stat.st_size, stat.st_mtime_ns)
            logs += 1
            matches += count
            if problem is not None:
                problems.append(problem)
        return Imported(logs, matches, tuple(problems))

    def record_log(self, path: Path, size: int, mtime_ns: int) -> tuple[int, str | None]:
        """Record the matches of one log (again, replacing what it gave before): how many, and
        what was wrong with the log (None if nothing)."""
        try:
            records, problem = read_match_log(path)
        except OSError as error:
            return 0, f"cannot read {path}: {error.strerror or error}"
        rounds = fold_logged_rounds(records)
        writer = writer_of(path, records)
        table_id = path.stem.split("-", 1)[0]
        recorded = 0
        with self._transaction():
            self._db.execute("DELETE FROM sources WHERE path = ?", (str(path),))
            self._db.execute(
                "INSERT INTO sources (path, size, mtime_ns, problem) VALUES (?, ?, ?, ?)",
                (str(path), size, mtime_ns, problem),
            )
            for number, match in _by_match(rounds).items():
                if self._record_match(str(path), table_id, number, match, writer, mtime_ns):
                    recorded += 1
        return recorded, problem

    def record_rounds(self, key: str, rounds: list[LoggedRound]) -> None:
        """Record (again) one match played without a log, its source and table named ``key``;
        its local player is the one ``matchlog.rounds.RECORDER_PEER`` owns."""
        with self._transaction():
            self._db.execute(
                "INSERT OR IGNORE INTO sources (path, size, mtime_ns) VALUES (?, 0, 0)", (key,)
            )
            for number, match in _by_match(rounds).items():
                self._record_match(key, key, number, match, RECORDER_PEER, 0)

    def forget_logs(self) -> None:
        """Forget which logs were read: the next ``update`` reads every one again."""
        with self._transaction():
            self._db.execute("UPDATE sources SET size = -1")

    def counts(self) -> dict[str, int]:
        """How many logs, matches and rounds are recorded."""
        row = self._db.execute(
            "SELECT (SELECT COUNT(*) FROM sources), (SELECT COUNT(*) FROM matches), "
            "(SELECT COUNT(*) FROM rounds)"
        ).fetchone()
        return {"logs": row[0], "matches": row[1], "rounds": row[2]}

    # --- private ---------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        try:
            with self._db:
                yield
        except sqlite3.DatabaseError as error:
            if _locked(error):
                raise HistoryUnavailable(_locked_sentence(self.path)) from None
            raise HistoryUnavailable(f"the match history {self.path} failed: {error}") from None

    def _known(self, path: Path, size: int, mtime_ns: int) -> bool:
        row = self._db.execute(
            "SELECT size, mtime_ns FROM sources WHERE path = ?", (str(path),)
        ).fetchone()
        return row is not None and (row[0], row[1]) == (size, mtime_ns)

    def _record_match(
        self,
        source: str,
        table_id: str,
        number: int,
        rounds: list[tuple[LoggedRound, RoundFacts]],
        writer: str | None,
        mtime_ns: int,
    ) -> bool:
        """Record one match unless another log already holds as many of its rounds (a log
        without wall time dates its matches by the file's last change)."""
        existing = self._db.execute(
            "SELECT m.id, COUNT(r.id) FROM matches m LEFT JOIN rounds r ON r.match_id = m.id "
            "WHERE m.table_id = ? AND m.number = ? GROUP BY m.id",
            (table_id, number),
        ).fetchone()
        if existing is not None:
            if existing[1] >= len(rounds):
                return False
            self._db.execute("DELETE FROM matches WHERE id = ?", (existing[0],))
        first = rounds[0][0]
        local = first.owners.get(writer) if writer is not None else None
        last = rounds[-1][0]
        winner = last.match_ended.match.winner if last.match_ended is not None else None
        teams = [list(players) for players in first.table.team_players]
        cursor = self._db.execute(
            "INSERT INTO matches (source, table_id, number, table_name, started_at, options, "
            "teams, winner, local_player) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                source,
                table_id,
                number,
                first.table_name,
                first.started_at if first.started_at is not None else mtime_ns // 1_000_000,
                json.dumps(first.table.options.to_wire()),
                json.dumps({"names": list(first.table.team_names), "players": teams}),
                winner,
                local,
            ),
        )
        match_id = cursor.lastrowid
        for played, facts in rounds:
            self._record_round(match_id, played, facts, local)
        return True

    def _record_round(
        self, match_id: int | None, played: LoggedRound, facts: RoundFacts, local: str | None
    ) -> None:
        cursor = self._db.execute(
            "INSERT OR REPLACE INTO rounds (match_id, number, started_at, duration_ms, ending, "
            "caller, state_hash, whole) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                match_id,
                facts.number,
                facts.started_at,
                facts.duration_ms,
                facts.ending,
                facts.caller,
                facts.state_hash,
                int(facts.whole),
            ),
        )
        self._db.executemany(
            "INSERT INTO round_players (round_id, player, team, score, won, called, cards, "
            "races_won, races_lost, local) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    cursor.lastrowid,
                    p.player,
                    p.team,
                    p.score,
                    int(p.won),
                    int(p.called),
                    p.cards,
                    p.races_won,
                    p.races_lost,
                    int(p.player == local),
                )
                for p in facts.players
            ],
        )


def _by_match(rounds: list[LoggedRound]) -> dict[int, list[tuple[LoggedRound, RoundFacts]]]:
    """The finished rounds of a log, by match number (matches with none are left out)."""
    matches: dict[int, list[tuple[LoggedRound, RoundFacts]]] = {}
    for played in rounds:
        facts = round_facts(played)
        if facts is not None:
            matches.setdefault(played.match_number, []).append((played, facts))
    return matches


def _connect(path: Path) -> sqlite3.Connection:
    """Open and migrate the database; ``sqlite3.DatabaseError`` when it is locked or damaged."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT, isolation_level=None)
    try:
        connection.execute("PRAGMA foreign_keys = ON")
        _migrate(connection)
        connection.isolation_level = "DEFERRED"  # from here, ``with connection`` is a transaction
    except BaseException:
        connection.close()
        raise
    return connection


def _migrate(connection: sqlite3.Connection) -> None:
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise _NewerSchema(
            f"was made by a newer nerts-lan (schema {version}; this one knows {SCHEMA_VERSION})"
        )
    for target in range(version + 1, SCHEMA_VERSION + 1):
        connection.execute("BEGIN IMMEDIATE")
        try:
            for statement in _MIGRATIONS[target - 1].split(";"):
                if statement.strip():
                    connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {target}")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise


def _locked(error: sqlite3.DatabaseError) -> bool:
    return "locked" in str(error) or "busy" in str(error)


def _locked_sentence(path: Path) -> str:
    return (
        f"the match history {path} is in use by another nerts-lan (locked): "
        "this game is not recorded now; it will be the next time nerts-lan starts"
    )


def _set_aside(path: Path) -> Path:
    aside = path.with_name(path.name + ".damaged")
    number = 1
    while aside.exists():
        number += 1
        aside = path.with_name(f"{path.name}.damaged-{number}")
    for suffix in ("", "-journal", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            with contextlib.suppress(OSError):
                part.replace(aside.with_name(aside.name + suffix))
    return aside
