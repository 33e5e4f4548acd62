"""Damaged match logs: a writer that opens a torn log keeps its good prefix, and a replay that
meets records it cannot apply keeps every round around them and says which it left out."""

from __future__ import annotations

import json
import logging
import random
import re
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgpack
import pytest

from nerts_lan.cli.main import main
from nerts_lan.matchlog.file import (
    MAGIC,
    UNCHAINED_MAGIC,
    MatchLogWriter,
    apply_record,
    read_match_log,
)
from nerts_lan.matchlog.rounds import fold_log
from nerts_lan.replay import ReplaySession
from nerts_lan.table.machine import TableMachine
from tests.test_replay import simulated_match

LAST_RECORD = ["entry", 10**6, "p01", {"k": "act", "r": 99, "a": {"by": "p01", "do": "flip"}}]
"""A record written after the damage (as a restarted peer would append)."""


def write_records(path: Path, records: list[list[Any]]) -> Path:
    """A log file of exactly these records, each with a good checksum."""
    path.unlink(missing_ok=True)
    writer = MatchLogWriter(path)
    for kind, *rest in records:
        {"entry": writer.entry, "member": writer.member, "snapshot": writer.snapshot}[kind](*rest)
    writer.close()
    return path


def append_after_restart(path: Path) -> MatchLogWriter:
    """What a restarted peer does: open the log again and append to it."""
    writer = MatchLogWriter(path)
    writer.entry(*LAST_RECORD[1:])
    writer.close()
    return writer


def replay_cli(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict], str]:
    code = main(["replay", str(path), "--headless"])
    out = capsys.readouterr()
    return code, [json.loads(line) for line in out.out.splitlines()], out.err


def round_hashes(lines: list[dict]) -> dict[int, str]:
    return {line["round"]: line["state_hash"] for line in lines if line["event"] == "round_over"}


def first_records(count: int = 40) -> list[list[Any]]:
    return simulated_match()[0][:count]


# --- a torn tail -----------------------------------------------------------------------------


@pytest.mark.parametrize("cut", [1, 2, 5, 7, 8, 9, 20])
def test_a_log_torn_by_a_few_bytes_keeps_its_whole_records_and_what_comes_after(
    tmp_path: Path, cut: int, caplog: pytest.LogCaptureFixture
) -> None:
    records = first_records()
    path = write_records(tmp_path / "t.nlog", records)
    size = path.stat().st_size
    path.write_bytes(path.read_bytes()[: size - cut])  # a crash while writing the last record

    with caplog.at_level(logging.WARNING, logger="nerts_lan.matchlog.file"):
        writer = append_after_restart(path)

    kept, problem = read_match_log(path)
    assert problem is None
    assert kept == [*records[:-1], LAST_RECORD]  # the torn record goes, all else stays
    assert writer.repaired is not None and "damaged" in writer.repaired
    assert "kept its 39 whole records" in writer.repaired
    assert [r.message for r in caplog.records] == [writer.repaired]
    assert (tmp_path / "t.nlog.damaged").stat().st_size == size - cut - _end_of(records[:-1])


def test_a_garbage_tail_is_cut_off_and_set_aside(tmp_path: Path) -> None:
    records = first_records()
    path = write_records(tmp_path / "g.nlog", records)
    garbage = random.Random(7).randbytes(300)
    path.write_bytes(path.read_bytes() + garbage)

    writer = append_after_restart(path)

    assert read_match_log(path) == ([*records, LAST_RECORD], None)
    assert writer.repaired is not None
    assert (tmp_path / "g.nlog.damaged").read_bytes() == garbage


def test_a_whole_log_is_appended_to_untouched(tmp_path: Path) -> None:
    records = first_records()
    path = write_records(tmp_path / "w.nlog", records)
    writer = append_after_restart(path)
    assert writer.repaired is None and not (tmp_path / "w.nlog.damaged").exists()
    assert read_match_log(path) == ([*records, LAST_RECORD], None)


def test_a_torn_header_starts_the_log_again_and_a_foreign_file_is_set_aside(
    tmp_path: Path,
) -> None:
    torn = tmp_path / "torn.nlog"
    torn.write_bytes(MAGIC[:4])  # the crash came while the header was written
    assert append_after_restart(torn).repaired is not None
    assert read_match_log(torn) == ([LAST_RECORD], None)

    foreign = tmp_path / "foreign.nlog"
    foreign.write_bytes(b"somebody's notes, not a log")
    writer = append_after_restart(foreign)
    assert writer.repaired is not None and "not a nerts-lan match log" in writer.repaired
    assert read_match_log(foreign) == ([LAST_RECORD], None)
    assert (tmp_path / "foreign.nlog.damaged").read_bytes() == b"somebody's notes, not a log"


# --- records that pass their checksum but cannot be applied -------------------------------------


def test_an_entry_that_is_not_a_table_command_is_named_and_the_rest_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records, hashes = simulated_match()
    bad = len(records) // 2
    nonsense = ["entry", records[bad - 1][1], "p09", {"k": "nonsense"}]  # in the log's order
    damaged = [*records[:bad], nonsense, *records[bad:]]
    path = write_records(tmp_path / "e.nlog", damaged)

    code, lines, err = replay_cli(path, capsys)

    assert round_hashes(lines) == hashes  # the table ignored it, as it would have when playing
    assert code == 1
    assert f"record {bad + 1} (an entry by p09) is not a table command" in err
    assert f"1 of the {len(damaged)} records were ignored" in err
    assert "Traceback" not in err


def test_a_broken_deal_keeps_the_rounds_before_it_and_names_the_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records, hashes = simulated_match()
    reveals = [i for i, r in enumerate(records) if r[0] == "entry" and r[3].get("k") == "reveal"]
    round_2 = next(i for i in reveals if records[i][3].get("r") == 2)
    damaged = list(records)
    damaged[round_2] = ["entry", *records[round_2][1:3], {"k": "reveal", "r": 2, "n": 12345}]
    path = write_records(tmp_path / "deal.nlog", damaged)

    code, lines, err = replay_cli(path, capsys)

    assert code == 1 and f"record {round_2 + 1} (an entry by " in err
    assert round_hashes(lines)[1] == hashes[1]  # the round folded before the bad record
    assert "Traceback" not in err


def _bad_snapshot_log(folder: Path, after: list[list[Any]] | None = None) -> tuple[Path, int]:
    """The match's first round and a bit of round 2, then a snapshot that cannot be installed,
    then the rest of the match (or ``after``); the log and the bad record's index."""
    records, _ = simulated_match()
    acts = [i for i, r in enumerate(records) if r[0] == "entry" and r[3].get("k") == "act"]
    cut = next(i for i in acts if records[i][3]["r"] == 2) + 3
    broken = ["snapshot", cut, {"phase": "playing", "round": "two"}]
    rest = records[cut:] if after is None else after
    return write_records(folder / "s.nlog", [*records[:cut], broken, *rest]), cut


def test_a_snapshot_that_cannot_be_installed_keeps_the_rounds_before_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records, hashes = simulated_match()
    path, bad = _bad_snapshot_log(tmp_path)
    total = len(records) + 1

    code, lines, err = replay_cli(path, capsys)

    assert code == 1
    assert round_hashes(lines) == {1: hashes[1]}
    assert f"record {bad + 1} (a snapshot) cannot be installed" in err
    assert f"it and the {total - bad - 1} records after it were ignored" in err
    assert f"{total - bad} of the {total} records were ignored" in err
    assert f"the {total} records before it" not in err and "Traceback" not in err

    session = ReplaySession.from_records(read_match_log(path)[0])  # the window keeps round 1
    assert session.notice is not None and f"record {bad + 1}" in session.notice
    assert session.last_round_number == 2  # the part of round 2 before the snapshot


def test_replay_goes_on_from_the_next_snapshot_that_can_be_installed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records, hashes = simulated_match()
    starts = [i for i, r in enumerate(records) if r[0] == "entry" and r[3].get("k") == "reveal"]
    in_round_3 = [i for i in starts if records[i][3]["r"] == 3][-1] + 1
    machine = TableMachine("someone")
    for record in records[:in_round_3]:
        machine = apply_record(machine, record)
    good = ["snapshot", in_round_3, machine.snapshot()]
    path, bad = _bad_snapshot_log(tmp_path, [good, *records[in_round_3:]])

    code, lines, err = replay_cli(path, capsys)

    assert code == 1 and f"record {bad + 1} (a snapshot) cannot be installed" in err
    assert round_hashes(lines) == {n: h for n, h in hashes.items() if n != 2}


def test_hostile_records_with_good_checksums_never_raise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records, _ = simulated_match()
    chance = random.Random(13)
    for trial in range(40):
        damaged = [list(r) for r in records]
        for _ in range(3):
            index = chance.randrange(len(damaged))
            damaged[index] = _mangled(damaged[index], chance)
        path = write_records(tmp_path / f"h{trial}.nlog", damaged)
        code, _, err = replay_cli(path, capsys)
        assert code in (0, 1) and "Traceback" not in err
        if fold_log(damaged).rounds:
            ReplaySession.from_records(damaged)


# --- damage to the bytes of a log ------------------------------------------------------------


def _frames(data: bytes) -> list[tuple[int, int]]:
    """Where each record of a log's bytes starts and ends."""
    frames, offset = [], len(MAGIC)
    while offset < len(data):
        (length,) = struct.unpack_from(">I", data, offset)
        frames.append((offset, offset + 8 + length))
        offset += 8 + length
    return frames


def _nth(records: list[list[Any]], kind: str, number: int = 0) -> int:
    """The index of the ``number``-th entry of ``kind`` (``act``, ``reveal``...)."""
    found = [i for i, r in enumerate(records) if r[0] == "entry" and r[3].get("k") == kind]
    return found[number]


def _flipped(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x5A]) + data[at + 1 :]


def _dropped(data: bytes, frame: tuple[int, int]) -> bytes:
    return data[: frame[0]] + data[frame[1] :]


def _doubled(data: bytes, first: tuple[int, int], last: tuple[int, int]) -> bytes:
    return data[: last[1]] + data[first[0] : last[1]] + data[last[1] :]


def _swapped(data: bytes, one: tuple[int, int], two: tuple[int, int]) -> bytes:
    """Two neighbouring records in each other's place."""
    return data[: one[0]] + data[two[0] : two[1]] + data[one[0] : one[1]] + data[two[1] :]


def _moved_to_the_end(data: bytes, frame: tuple[int, int]) -> bytes:
    return _dropped(data, frame) + data[frame[0] : frame[1]]


def _spliced(data: bytes, at: tuple[int, int], folder: Path) -> bytes:
    """Records of another peer's log (the same table, another laptop) inserted at ``at``."""
    other = write_records(folder / "other.nlog", [["member", "joined", "p09"], LAST_RECORD])
    return data[: at[0]] + other.read_bytes()[len(MAGIC) :] + data[at[0] :]


def _chained_log(records: list[Any]) -> bytes:
    """A log of these records as the writer chains them, whatever they hold."""
    data, last = bytearray(MAGIC), 0
    for record in records:
        body = msgpack.packb(record, use_bin_type=True)
        last = zlib.crc32(body, last)
        data += struct.pack(">II", len(body), last) + body
    return bytes(data)


_Damage = Callable[[bytes, list[tuple[int, int]], list[list[Any]], Path], bytes]
_MIDDLE = 180
"""A record in round 2 or 3 of the simulated match (of 373 records, 5 rounds)."""

BYTE_DAMAGE: dict[str, _Damage] = {
    "torn-last-record": lambda d, f, r, p: d[:-5],
    "cut-in-a-header": lambda d, f, r, p: d[: f[_MIDDLE][0] + 3],
    "cut-in-a-body": lambda d, f, r, p: d[: f[_MIDDLE][0] + 12],
    "byte-flipped-in-a-body": lambda d, f, r, p: _flipped(d, f[_MIDDLE][0] + 12),
    "byte-flipped-in-a-length": lambda d, f, r, p: _flipped(d, f[_MIDDLE][0] + 3),
    "byte-flipped-in-a-checksum": lambda d, f, r, p: _flipped(d, f[_MIDDLE][0] + 5),
    "bytes-zeroed": lambda d, f, r, p: d[: f[_MIDDLE][0]] + bytes(16) + d[f[_MIDDLE][0] + 16 :],
    "garbage-appended": lambda d, f, r, p: d + random.Random(3).randbytes(64),
    "bad-header": lambda d, f, r, p: _flipped(d, 3),
    "a-record-dropped": lambda d, f, r, p: _dropped(d, f[_MIDDLE]),
    "the-first-record-dropped": lambda d, f, r, p: _dropped(d, f[0]),
    "a-member-record-dropped": lambda d, f, r, p: _dropped(d, f[1]),
    "a-commit-dropped": lambda d, f, r, p: _dropped(d, f[_nth(r, "commit", 4)]),
    "a-reveal-dropped": lambda d, f, r, p: _dropped(d, f[_nth(r, "reveal", 4)]),
    "the-start-dropped": lambda d, f, r, p: _dropped(d, f[_nth(r, "start")]),
    "a-record-doubled": lambda d, f, r, p: _doubled(d, f[_MIDDLE], f[_MIDDLE]),
    "a-stretch-doubled": lambda d, f, r, p: _doubled(d, f[_MIDDLE], f[_MIDDLE + 20]),
    "two-records-swapped": lambda d, f, r, p: _swapped(d, f[_MIDDLE], f[_MIDDLE + 1]),
    "a-deal-moved-to-the-end": lambda d, f, r, p: _moved_to_the_end(d, f[_nth(r, "reveal", 4)]),
    "another-logs-records-spliced-in": lambda d, f, r, p: _spliced(d, f[_MIDDLE], p),
    "the-log-twice": lambda d, f, r, p: d + d[len(MAGIC) :],
}
"""Damage to a whole log's bytes as a disk, a copy or a hand could do it: each loses a round or
changes what is replayed, unless the replay finds it (a log cut at a record's end is not here:
nothing tells it from a log whose writer stopped there)."""


def _inserted(records: list[list[Any]], record: list[Any]) -> list[list[Any]]:
    return [*records[:_MIDDLE], record, *records[_MIDDLE:]]


RECORD_DAMAGE: dict[str, tuple[Callable[[list[list[Any]]], list[list[Any]]], int]] = {
    "an-entry-not-a-command": (lambda r: _inserted(r, ["entry", r[_MIDDLE][1], "p9", {}]), 181),
    "an-unknown-record-kind": (lambda r: _inserted(r, ["note", "hi"]), 181),
    "an-entry-of-wrong-types": (lambda r: _inserted(r, ["entry", "5", 7, {}]), 181),
    "an-entry-doubled": (lambda r: _inserted(r, r[_MIDDLE - 1]), 181),
    "an-entry-out-of-order": (lambda r: _inserted(r, r[_MIDDLE - 9]), 181),
}
"""Records rewritten with good checksums (a program that wrote a log of its own, or a log of
the old form, whose checksums do not chain), and the number of the record the replay names."""


@pytest.mark.parametrize("damage", sorted(BYTE_DAMAGE))
def test_every_damage_to_a_logs_bytes_is_named_by_record_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    records, hashes = simulated_match()
    path = write_records(tmp_path / "0badcafe-p01.nlog", records)
    data = path.read_bytes()
    path.write_bytes(BYTE_DAMAGE[damage](data, _frames(data), records, tmp_path))

    code, lines, err = replay_cli(path, capsys)

    assert code == 1, f"{damage}: replayed {sorted(round_hashes(lines))} with no word"
    assert re.search(r"record \d+|bad header", err), err
    assert err.count("\n") <= 3 and "Traceback" not in err, err
    printed = round_hashes(lines)
    assert all(hashes[number] == digest for number, digest in printed.items()), printed


@pytest.mark.parametrize("damage", sorted(RECORD_DAMAGE))
def test_a_rewritten_record_that_does_not_fit_is_named_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    path = tmp_path / "r.nlog"
    rewrite, named = RECORD_DAMAGE[damage]
    path.write_bytes(_chained_log(rewrite(simulated_match()[0])))

    code, _, err = replay_cli(path, capsys)

    assert code == 1 and f"record {named} " in err and "Traceback" not in err, err


def test_a_log_that_ends_on_a_whole_record_replays_as_far_as_it_goes_without_a_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The documented exception: nothing tells a log cut at a record's end from one whose
    writer stopped there (a crash between two records, a match still being played)."""
    records, hashes = simulated_match()
    path = write_records(tmp_path / "short.nlog", records[:_MIDDLE])

    code, lines, err = replay_cli(path, capsys)

    assert (code, err) == (0, "")
    assert round_hashes(lines) == {n: h for n, h in hashes.items() if n in round_hashes(lines)}


def test_a_log_written_before_the_chained_checksums_still_replays_and_grows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records, hashes = simulated_match()
    path = tmp_path / "old.nlog"
    with path.open("wb") as file:
        file.write(UNCHAINED_MAGIC)
        for record in records:
            body = msgpack.packb(record, use_bin_type=True)
            file.write(struct.pack(">II", len(body), zlib.crc32(body)) + body)

    code, lines, err = replay_cli(path, capsys)
    assert (code, err, round_hashes(lines)) == (0, "", hashes)

    append_after_restart(path)  # a peer of this version appends to it in the old form
    assert read_match_log(path) == ([*records, LAST_RECORD], None)


# --- where a log starts ----------------------------------------------------------------------


def test_a_log_that_starts_at_a_snapshot_says_which_round_it_joined_at(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records, hashes = simulated_match()
    acts = [i for i, r in enumerate(records) if r[0] == "entry" and r[3].get("k") == "act"]
    middle = [i for i in acts if records[i][3]["r"] == 2][5]
    machine = TableMachine("someone")
    for record in records[:middle]:
        machine = apply_record(machine, record)
    late = [["snapshot", middle, machine.snapshot()], *records[middle:]]  # as the joiner wrote
    path = write_records(tmp_path / "late.nlog", late)

    code, lines, err = replay_cli(path, capsys)

    assert code == 0, err
    assert lines[0]["event"] == "log_starts" and lines[0]["round"] == 2
    assert "joined at round 2" in lines[0]["note"]
    assert round_hashes(lines) == {n: h for n, h in hashes.items() if n >= 2}

    whole = write_records(tmp_path / "whole.nlog", records)
    code, lines, _ = replay_cli(whole, capsys)
    assert code == 0 and not [line for line in lines if line["event"] == "log_starts"]


# --- syncing ----------------------------------------------------------------------------------


def test_the_peer_puts_its_log_on_the_disk_at_every_rounds_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nerts_lan.lan.advert import LanOptions
    from nerts_lan.lan.agent import TableAgent
    from nerts_lan.matchlog import file as matchlog
    from nerts_lan.rules.state import Outcome
    from nerts_lan.table.effects import Post, Stabilized
    from nerts_lan.table.replica import RoundEnded
    from net.events import LogEntry

    synced: list[int] = []
    monkeypatch.setattr(matchlog.os, "fsync", synced.append)
    posted: list[object] = []
    network = SimpleNamespace(post=posted.append)
    agent = TableAgent(network, LanOptions("Ann", "ann-1"))  # type: ignore[arg-type]
    agent._log.open(str(tmp_path), "0badcafe", "ann-1")  # as hosting the table does
    assert agent.log_path is not None
    agent._run([Stabilized(0, LogEntry(*LAST_RECORD[1:]), True)])

    agent._run([Post(RoundEnded(Outcome("nerts", "Ann"), {"Red": 3}))])

    assert len(posted) == 1 and len(synced) == 1  # not only when the log is closed
    records, problem = read_match_log(agent.log_path)
    assert problem is None and [record[:4] for record in records] == [LAST_RECORD]
    agent._log.close()


# --- helpers ---------------------------------------------------------------------------------


def _end_of(records: list[list[Any]]) -> int:
    """The size of a log holding these records."""
    return len(MAGIC) + sum(8 + len(msgpack.packb(r, use_bin_type=True)) for r in records)


def _mangled(record: list[Any], chance: random.Random) -> list[Any]:
    """A well-formed record whose body is hostile: wrong types, missing or extra fields."""
    junk: list[Any] = [None, -1, 2**62, "x" * 50, [], {}, [1, [2, [3]]], {"k": None}, b"\x00"]
    if record[0] == "snapshot" or chance.random() < 0.2:
        snapshot = TableMachine("x").snapshot() if record[0] != "snapshot" else dict(record[2])
        key = chance.choice(sorted(snapshot))
        snapshot[key] = chance.choice(junk)
        return ["snapshot", 1, snapshot]
    if record[0] == "member":
        return ["member", chance.choice(["joined", "returned", "gone"]), chance.choice(["", "?"])]
    payload = dict(record[3])
    key = chance.choice(sorted(payload))
    payload[key] = chance.choice(junk)
    return ["entry", record[1], record[2], payload]
