"""The match history: recorded from the match logs into SQLite, and the statistics from it."""

from __future__ import annotations

import json
import shutil
import sqlite3
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from nerts_lan.cli.main import main
from nerts_lan.history import store as history_module
from nerts_lan.history.facts import races_of, round_facts
from nerts_lan.history.stats import local_players, player_stats, stats_text
from nerts_lan.history.store import (
    DATABASE_NAME,
    SCHEMA_VERSION,
    HistoryUnavailable,
    open_history,
    record_new_logs,
)
from nerts_lan.matchlog.file import MatchLogWriter, entry_time, read_match_log
from nerts_lan.matchlog.rounds import fold_log, fold_logged_rounds
from tests.test_replay import TABLE_ID, simulated_match

START_MS = 1_767_000_000_000
STEP_MS = 400
"""Each entry of the simulated match is seen stable 0.4 s after the one before it."""


@cache
def timed_records() -> tuple[list[Any], ...]:
    """The simulated match's records with a wall time on every entry."""
    timed: list[list[Any]] = []
    for index, record in enumerate(simulated_match()[0]):
        if record[0] == "entry":
            record = [*record, START_MS + index * STEP_MS]
        timed.append(record)
    return tuple(timed)


def write_log(folder: Path, writer: str = "p01", cut_records: int = 0) -> Path:
    """The timed match as the log ``writer`` wrote (``cut_records`` records short)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{TABLE_ID}-{writer}.nlog"
    path.unlink(missing_ok=True)
    log = MatchLogWriter(path)
    records = timed_records()
    for record in records[: len(records) - cut_records]:
        if record[0] == "member":
            log.member(record[1], record[2])
        else:
            log.entry(record[1], record[2], record[3], at=record[4])
    log.close()
    return path


def test_entries_carry_their_wall_time_and_replay_the_same(tmp_path: Path) -> None:
    path = write_log(tmp_path)
    records, problem = read_match_log(path)
    assert problem is None and records == list(timed_records())
    assert entry_time(records[-1]) == START_MS + (len(records) - 1) * STEP_MS
    assert entry_time(["entry", 1, "p", {}]) is None
    timed, untimed = fold_log(records), fold_log(simulated_match()[0])
    assert [r.ended for r in timed.rounds] == [r.ended for r in untimed.rounds]
    assert timed.ended == untimed.ended and timed.ended is not None
    ticking = MatchLogWriter(tmp_path / "clock.nlog", clock=lambda: 12.3456)
    ticking.entry(1, "p01", {"k": "hello"})
    ticking.close()
    assert read_match_log(tmp_path / "clock.nlog")[0] == [
        ["entry", 1, "p01", {"k": "hello"}, 12345]
    ]


def test_a_finished_match_is_recorded_with_its_rounds_players_and_times(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    write_log(logs)
    rounds = fold_logged_rounds(timed_records())
    with open_history(tmp_path) as history:
        imported = history.update(logs)
        assert (imported.logs, imported.matches, imported.problems) == (1, 1, ())
        db = history.connection
        matches = db.execute("SELECT table_id, winner, local_player, started_at FROM matches")
        stored = db.execute("SELECT number, duration_ms, caller FROM rounds ORDER BY number")
        expected = [(r.number, r.duration_ms, r.ended.outcome.caller) for r in rounds if r.ended]
        assert stored.fetchall() == expected and all(r.duration_ms for r in rounds)
        ended = rounds[-1].match_ended
        assert ended is not None
        assert matches.fetchall() == [(TABLE_ID, ended.match.winner, "p01", rounds[0].started_at)]


def test_statistics_add_up_to_what_the_log_replays_to(tmp_path: Path) -> None:
    write_log(tmp_path / "logs")
    rounds = fold_logged_rounds(timed_records())
    facts = [round_facts(played) for played in rounds]
    mine = [next(p for p in f.players if p.player == "p01") for f in facts if f is not None]
    with open_history(tmp_path) as history:
        history.update(tmp_path / "logs")
        assert local_players(history) == ["p01"]
        stats = player_stats(history, "p01")
    record = stats.record
    assert (record.matches, record.rounds) == (1, len(mine))
    assert record.rounds_won == sum(p.won for p in mine)
    assert record.average_score == pytest.approx(sum(p.score for p in mine) / len(mine))
    assert record.nerts_calls == sum(p.called for p in mine)
    assert record.races_lost == sum(p.races_lost for p in mine) > 0  # the sim's races
    minutes = sum(r.duration_ms or 0 for r in rounds) / 60000
    assert record.cards_per_minute == pytest.approx(sum(p.cards for p in mine) / minutes)
    won = [r.duration_ms for r, p in zip(rounds, mine) if p.won]
    assert record.fastest_round_ms == min(won)
    assert [o.name for o in stats.opponents] == ["p00"]
    assert [point.started_at for point in stats.chart] == [rounds[0].started_at]


def test_every_race_lost_names_the_card_played_first_by_another_team() -> None:
    for played in fold_logged_rounds(timed_records()):
        for race in races_of(played):
            assert race.won.action.card == race.lost.action.card  # type: ignore[union-attr]
            assert played.table.team_of(race.winner) != played.table.team_of(race.loser)
            assert race.margin_ms is not None and 0 <= race.margin_ms <= 2000


def test_a_log_is_read_again_only_when_it_grew_and_one_match_counts_once(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    write_log(logs, cut_records=60)
    with open_history(tmp_path) as history:
        assert history.update(logs).logs == 1
        assert history.update(logs).logs == 0  # nothing new
        before = history.counts()["rounds"]
        write_log(logs)  # the match went on
        assert history.update(logs).logs == 1
        after = history.counts()
        shutil.copy(logs / f"{TABLE_ID}-p01.nlog", logs / f"{TABLE_ID}-p00.nlog")
        history.update(logs)  # the same match written by a second peer on this laptop
        assert history.counts() == {**after, "logs": 2}
    assert after["matches"] == 1 and after["rounds"] > before


def test_a_damaged_database_is_set_aside_and_rebuilt_from_the_logs(tmp_path: Path) -> None:
    write_log(tmp_path / "logs")
    (tmp_path / DATABASE_NAME).write_bytes(b"not a database at all" * 100)
    notice = record_new_logs(tmp_path)
    assert notice is not None and "damaged" in notice and "rebuilt" in notice
    assert (tmp_path / (DATABASE_NAME + ".damaged")).exists()
    with open_history(tmp_path) as history:
        assert history.notice is None and history.counts()["matches"] == 1


def test_a_locked_database_is_one_sentence_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history_module, "BUSY_TIMEOUT", 0.05)
    write_log(tmp_path / "logs")
    open_history(tmp_path).close()
    other = sqlite3.connect(tmp_path / DATABASE_NAME, isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")  # another nerts-lan in the middle of writing
        notice = record_new_logs(tmp_path)
        with pytest.raises(HistoryUnavailable, match="in use by another nerts-lan"):
            open_history(tmp_path).update(tmp_path / "logs")
    finally:
        other.close()
    assert notice is not None and "locked" in notice and "not recorded now" in notice
    assert not (tmp_path / (DATABASE_NAME + ".damaged")).exists()
    assert record_new_logs(tmp_path) is None  # once free, the match is recorded


def test_the_schema_is_versioned_and_a_newer_one_is_left_alone(tmp_path: Path) -> None:
    with open_history(tmp_path) as history:
        version = history.connection.execute("PRAGMA user_version").fetchone()[0]
    assert version == SCHEMA_VERSION
    newer = sqlite3.connect(tmp_path / DATABASE_NAME)
    newer.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    newer.close()
    content = (tmp_path / DATABASE_NAME).read_bytes()
    with pytest.raises(HistoryUnavailable, match="newer nerts-lan"):
        open_history(tmp_path)
    assert (tmp_path / DATABASE_NAME).read_bytes() == content


def test_stats_command_records_the_logs_and_prints_json(
    capsys: pytest.CaptureFixture[str], _private_data_folder: Path
) -> None:
    write_log(_private_data_folder / "logs")
    assert main(["stats", "--json"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [player["name"] for player in out] == ["p01"]
    assert out[0]["record"]["matches"] == 1 and out[0]["opponents"][0]["name"] == "p00"
    assert main(["stats", "--import"]) == 0
    printed = capsys.readouterr()
    assert printed.out.startswith("p01: 0/1 matches won") or "matches won" in printed.out
    rounds = len(fold_logged_rounds(timed_records()))
    assert f"1 matches, {rounds} rounds recorded" in printed.err


def test_stats_command_says_when_the_history_is_locked(
    capsys: pytest.CaptureFixture[str],
    _private_data_folder: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(history_module, "BUSY_TIMEOUT", 0.05)
    open_history(_private_data_folder).close()
    other = sqlite3.connect(_private_data_folder / DATABASE_NAME, isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")
        assert main(["stats"]) == 1
    finally:
        other.close()
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "in use by another nerts-lan" in err[0]


def test_a_match_left_before_its_end_is_not_counted_as_played(tmp_path: Path) -> None:
    # Issue 25: abandoned matches counted as played (and, not won, as lost).
    write_log(tmp_path / "logs", cut_records=60)  # the match's end is never reached
    with open_history(tmp_path) as history:
        history.update(tmp_path / "logs")
        stats = player_stats(history, "p01")
    record = stats.record
    assert (record.matches, record.matches_won, record.matches_unfinished) == (0, 0, 1)
    assert record.rounds > 0  # its rounds were played, and count
    assert "0/0 matches won (1 unfinished)" in stats_text(stats)[0]
