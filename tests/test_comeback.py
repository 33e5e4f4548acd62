"""Which table a restarted peer goes back to: a recent log of its own, of a table of the name it
hosts again, whose match is not over (``comeback.live_table``), from real match log files."""

from __future__ import annotations

import os
import time
from pathlib import Path

from nerts_lan.lan.comeback import RECENT, live_table
from nerts_lan.matchlog.file import MatchLogWriter
from nerts_lan.rules.state import Options
from nerts_lan.table.commands import Create, Hello, Sit, TableSettings
from nerts_lan.table.machine import TableMachine


def _log(
    folder: Path, table_id: str, peer: str, name: str, over: bool = False, left: bool = False
) -> Path:
    """The log ``peer`` wrote at table ``table_id`` named ``name`` (a match over, if ``over``;
    ending with its deliberate leave, if ``left``)."""
    path = folder / f"{table_id}-{peer}.nlog"
    writer = MatchLogWriter(path)
    writer.member("joined", peer)
    commands = [Create(TableSettings(name, Options(), teams=2)), Hello("Ann"), Sit(0)]
    for ts, command in enumerate(commands, start=1):
        writer.entry(ts, peer, command.to_wire())
    if over:
        machine = TableMachine(peer)
        machine.member_joined(peer)
        for ts, command in enumerate(commands, start=1):
            machine.stable_entry((ts, peer), command.to_wire())
        writer.snapshot(len(commands), {**machine.snapshot(), "phase": "over"})
    if left:
        writer.member("left", peer)
    writer.close()
    return path


def test_the_live_table_is_the_recent_unfinished_one_of_that_name_and_peer(
    tmp_path: Path,
) -> None:
    live = _log(tmp_path, "a1b2c3d4", "ann-1", "Kitchen")
    found = live_table(tmp_path, "ann-1", "Kitchen")
    assert found is not None and (found.table_id, found.log_path) == ("a1b2c3d4", live)
    assert live_table(tmp_path, "ann-1", "Attic") is None  # another table's name: host anew
    assert live_table(tmp_path, "bo-2", "Kitchen") is None  # another peer's log


def test_a_match_over_or_a_log_left_long_ago_is_not_a_live_table(tmp_path: Path) -> None:
    _log(tmp_path, "0000000a", "ann-1", "Kitchen", over=True)
    assert live_table(tmp_path, "ann-1", "Kitchen") is None
    old = _log(tmp_path, "0000000b", "ann-1", "Kitchen")
    long_ago = time.time() - RECENT - 60
    os.utime(old, (long_ago, long_ago))
    assert live_table(tmp_path, "ann-1", "Kitchen") is None
    (tmp_path / "0000000c-ann-1.nlog").write_bytes(b"not a log")
    assert live_table(tmp_path, "ann-1", "Kitchen") is None
    assert live_table(tmp_path / "missing", "ann-1", "Kitchen") is None


def test_a_table_left_on_purpose_is_not_a_live_table(tmp_path: Path) -> None:
    _log(tmp_path, "0000000d", "ann-1", "Kitchen", left=True)
    assert live_table(tmp_path, "ann-1", "Kitchen") is None
