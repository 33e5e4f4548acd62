"""A headless peer's match goes into the history; a locked history never stops its game."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from nerts_lan.history.stats import local_players, player_stats
from nerts_lan.history.store import DATABASE_NAME, open_history, record_new_logs

ROOT = Path(__file__).resolve().parents[2]
SOLO = [
    "host", "--headless", "--name", "Solo", "--table", "Solo", "--players", "1", "--bot", "hard",
    "--bot-delay", "0.05", "--rounds", "1", "--pile", "5", "--interface", "127.0.0.1",
    "--timeout", "60",
]  # fmt: skip


def _play(data: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NERTS_LAN_DATA": str(data)}
    return subprocess.run(
        [sys.executable, "-m", "nerts_lan", *SOLO],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def test_a_headless_round_is_recorded_as_the_peer_leaves(tmp_path: Path) -> None:
    done = _play(tmp_path)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    ended = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["event"] for line in ended][-1] == "round_over"
    with open_history(tmp_path) as history:
        assert history.counts()["matches"] == 1  # recorded by the peer itself, nothing updated
        assert local_players(history) == ["Solo"]
        record = player_stats(history, "Solo").record
    # Timed (a rate, 0.0 when the deal let the bot go out without a card on the foundations)
    assert record.rounds == 1 and record.nerts_calls == 1 and record.cards_per_minute is not None


def test_a_locked_history_is_one_line_and_the_game_goes_on(tmp_path: Path) -> None:
    open_history(tmp_path).close()
    other = sqlite3.connect(tmp_path / DATABASE_NAME, isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")  # another nerts-lan busy writing, the whole time
        done = _play(tmp_path)
    finally:
        other.close()
    assert done.returncode == 0
    assert '"event": "round_over"' in done.stdout
    problem = done.stderr.splitlines()
    assert len(problem) == 1 and "in use by another nerts-lan" in problem[0], done.stderr
    with open_history(tmp_path) as history:
        assert history.counts()["matches"] == 0
    assert record_new_logs(tmp_path) is None  # the next start records it
    with open_history(tmp_path) as history:
        assert history.counts()["matches"] == 1
