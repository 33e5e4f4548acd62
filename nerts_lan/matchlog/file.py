"""The match log: every peer appends the stable log of its match to a file as it goes.

A crash loses at most what was not yet stable, and a finished match can be replayed
(``nerts-lan replay FILE``, in the window or ``--headless``). The file is the header
``NERTSLOG2\\n`` and then records, each a 4-byte big-endian length, a 4-byte checksum and the
msgpack body. The checksum is the CRC-32 of the body chained from the record before it
(``zlib.crc32(body, previous)``, 0 before the first record), so a whole record that is missing,
doubled or moved breaks the chain where it happened, as a changed byte does: every record is
checked against its place, not only against itself. A ``NERTSLOG1\\n`` log (written before the
chain) is read too, each checksum of its body alone, and a writer appending to one keeps that
form; nothing there tells a whole record dropped from it. The records:

- ``["entry", ts, peer, payload]`` a stable entry, in log order, or ``["entry", ts, peer, payload,
  at]`` with ``at`` the wall-clock time (Unix milliseconds) at which this peer saw it stable: the
  log's order holds no wall time, and the history and the coach need one (``entry_time``);
- ``["member", "joined" | "returned" | "gone", peer]`` a membership change, at its place;
- ``["snapshot", stable_index, table_snapshot]`` where a peer that joined late starts.

Reading stops at the first damaged record (cut short by a crash, a flipped byte, a record out
of its place) and says which and where: every record before it is kept. A log that ends on a
whole record cannot be told from one whose writer stopped there (a crash, a match still being
played). A writer that opens a damaged log keeps its good prefix the same way: it cuts the
file back to the last whole record (setting the bytes it drops aside in ``NAME.nlog.damaged``)
before it appends, so what a restarted peer writes stays readable. The writer syncs at every
round's end (``sync``) and on close.

Replaying folds the records as the table did (``LogFold``). A record can pass its checksum and
still not apply: an entry that is not a table command is ignored, as the table ignored it; so
is an entry the log holds already, or one stamped before the entry ahead of it (the table's log
holds each entry once, in the order of its timestamps); a snapshot that cannot be installed is
ignored with the records after it, up to the next snapshot that can be. Each such stretch is
reported (``Ignored``), and every round folded around it is kept.
"""

from __future__ import annotations

import logging
import os
import re
import struct
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import msgpack

from nerts_lan.rules.actions import MalformedError
from nerts_lan.table.machine import TableEvent, TableMachine, TablePhase
from nerts_lan.table.session import EntryIgnored, IgnoredKind

__all__ = [
    "CUT_SHORT",
    "MAGIC",
    "UNCHAINED_MAGIC",
    "Ignored",
    "LogFold",
    "MatchLogWriter",
    "apply_record",
    "damage_report",
    "entry_time",
    "read_match_log",
    "replay_problems",
    "writer_of",
]

log = logging.getLogger(__name__)

MAGIC = b"NERTSLOG2\n"
"""The header of the logs written now: each record's checksum chained from the one before."""
UNCHAINED_MAGIC = b"NERTSLOG1\n"
"""The header of the logs written before the chain: each checksum of its record alone."""
_HEADER = struct.Struct(">II")
_MAX_RECORD = 8 << 20
_LISTED = 5
"""How many ignored records a replay names one by one."""
CUT_SHORT = "the log is cut short"
"""How ``read_match_log``'s problem begins for a log whose last record is torn (a crash while
writing it): every record before it is whole."""


class MatchLogWriter:
    """Appends records; ``sync`` makes what was appended survive a crash of the machine.

    Opening a log that does not end on a whole record (a crash while writing, a damaged byte)
    cuts it back to its last whole record first, and says so in ``repaired`` (None when the log
    was whole) and as a warning of this module's logger. With a ``clock`` (seconds, as
    ``time.time``) every entry carries the wall-clock time it was written at."""

    def __init__(self, path: Path, clock: Callable[[], float] | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._clock = clock
        self.repaired = _repair(path)
        if self.repaired is not None:
            log.warning("%s", self.repaired)
        self._chained, self._last = True, 0
        """Whether checksums chain (not in a log begun before the chain), and the last one."""
        fresh = not path.exists() or path.stat().st_size == 0
        if not fresh:
            scanned = _scan(path.read_bytes())  # whole, once repaired
            self._chained, self._last = scanned.chained, scanned.last
        self._file: BinaryIO = open(path, "ab")  # noqa: SIM115 - closed in close()
        if fresh:
            self._file.write(MAGIC)

    def flush(self) -> None:
        """Hand what was appended to the OS: it survives a crash of this process."""
        self._file.flush()

    def entry(self, ts: int, peer: str, payload: Any, at: int | None = None) -> None:
        """A stable entry; ``at`` (Unix ms) is when it was seen stable (default: the clock's
        time, or none without a clock)."""
        if at is None and self._clock is not None:
            at = int(self._clock() * 1000)
        record: list[Any] = ["entry", ts, peer, payload]
        self._write(record if at is None else [*record, at])

    def member(self, change: str, peer: str) -> None:
        """A membership change: "joined", "returned", "gone", or "left" for this log's own peer
        leaving on purpose (so a restart later does not take the table for a crashed one)."""
        self._write(["member", change, peer])

    def snapshot(self, stable_index: int, snapshot: Any) -> None:
        self._write(["snapshot", stable_index, snapshot])

    def sync(self) -> None:
        """Put what was appended on the disk (at a round's end and on close)."""
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if not self._file.closed:
            self.sync()
            self._file.close()

    def _write(self, record: list[Any]) -> None:
        body = msgpack.packb(record, use_bin_type=True)
        checksum = zlib.crc32(body, self._last if self._chained else 0)
        self._file.write(_HEADER.pack(len(body), checksum) + body)
        self._last = checksum


def read_match_log(path: Path) -> tuple[list[list[Any]], str | None]:
    """The records of a match log, and what is wrong with the rest of it (None if nothing)."""
    data = path.read_bytes()
    if not data.startswith((MAGIC, UNCHAINED_MAGIC)):
        return [], f"{path} is not a nerts-lan match log (bad header)"
    scanned = _scan(data)
    return scanned.records, scanned.problem


@dataclass(frozen=True)
class Ignored:
    """Records a replay could not apply: the first one's index (from 0), how many, and why."""

    first: int
    count: int
    reason: str

    def line(self) -> str:
        """One sentence for a person: the record by its number (from 1), what is wrong."""
        if self.count == 1:
            return f"record {self.first + 1} {self.reason}; it was ignored"
        after = _counted(self.count - 1, "record")
        return f"record {self.first + 1} {self.reason}; it and the {after} after it were ignored"


class LogFold:
    """A match log's records folded as the table folded them, past what cannot be applied.

    ``fold`` takes the records in order and gives each one's table events. An entry that is not a
    table command is ignored, as the table ignores it (its events say so). A snapshot that cannot
    be installed is ignored with every record after it up to the next snapshot that can be: they
    were folded from its state, which is lost. ``machine`` is the table so far (a new one after
    each snapshot); ``ignored`` what was left out; ``joined_at`` the round a log that starts at a
    snapshot starts in (None when it holds the match from its lobby)."""

    def __init__(self, local_peer: str = "replay") -> None:
        self.machine = TableMachine(local_peer)
        self.ignored: list[Ignored] = []
        self.joined_at: int | None = None
        self._index = 0
        self._started = False  # a record that carries the table was folded
        self._lost = False  # after a snapshot that could not be installed
        self._keys: dict[tuple[int, str], int] = {}
        """Each entry's key since the last snapshot, with its record's index: the table's log
        holds an entry once, in the order of its timestamps."""
        self._latest = 0  # the timestamp of the last entry since the last snapshot

    @property
    def folded(self) -> int:
        """How many records were given to ``fold``."""
        return self._index

    def fold(self, record: list[Any]) -> list[TableEvent]:
        """Fold the next record; the table's events (none for a record that was ignored)."""
        index = self._index
        self._index += 1
        if record[0] == "snapshot":
            return self._install(index, record)
        if self._lost:
            last = self.ignored[-1]
            self.ignored[-1] = Ignored(last.first, last.count + 1, last.reason)
            return []
        misplaced = self._out_of_order(index, record)
        if misplaced is not None:
            self.ignored.append(Ignored(index, 1, f"({_described(record)}) {misplaced}"))
            return []
        try:
            self.machine = apply_record(self.machine, record)
        except (MalformedError, KeyError, TypeError, ValueError, IndexError) as error:
            why = f"({_described(record)}) cannot be applied: {error}"
            self.ignored.append(Ignored(index, 1, why))
            return []
        self._started = self._started or record[0] == "entry"
        events = self.machine.take_events()
        for event in events:
            if isinstance(event, EntryIgnored) and event.kind is IgnoredKind.MALFORMED:
                why = f"({_described(record)}) is not a table command: {event.reason}"
                self.ignored.append(Ignored(index, 1, why))
        return events

    def _install(self, index: int, record: list[Any]) -> list[TableEvent]:
        try:
            machine = apply_record(self.machine, record)
        except (MalformedError, KeyError, TypeError, ValueError, IndexError) as error:
            self.ignored.append(Ignored(index, 1, f"(a snapshot) cannot be installed: {error}"))
            self._lost = True
            return []
        if not self._started:
            self.joined_at = _first_round_seen(machine)
        self.machine, self._started, self._lost = machine, True, False
        self._keys, self._latest = {}, 0
        return machine.take_events()

    def _out_of_order(self, index: int, record: list[Any]) -> str | None:
        """What places an entry out of the table's order (None: it is in order), which a log
        of the old form (no chained checksums) or one written by another program can hold."""
        if record[0] != "entry":
            return None
        key = (record[1], record[2])
        if key in self._keys:
            return f"is doubled: record {self._keys[key] + 1} holds it already"
        if key[0] < self._latest:
            return f"is out of order: it is stamped {key[0]}, after an entry stamped {self._latest}"
        self._keys[key], self._latest = index, key[0]
        return None


def replay_problems(
    ignored: list[Ignored], records: int, rounds: int, reading: str | None = None
) -> list[str]:
    """What a replay says about a log it could not replay whole, one line each: the records it
    ignored (the first few by number), how many, and where the log stops short (``reading``)."""
    lines = [stretch.line() for stretch in ignored[:_LISTED]]
    if len(ignored) > _LISTED:
        lines.append(f"and {len(ignored) - _LISTED} more records that could not be applied")
    if ignored:
        left = sum(stretch.count for stretch in ignored)
        lines.append(
            f"{left} of the {records} records were ignored; the replay keeps the "
            f"{_counted(rounds, 'round')} folded around them"
        )
    if reading is not None:
        lines.append(damage_report(reading, records))
    return lines


def apply_record(machine: TableMachine, record: list[Any]) -> TableMachine:
    """Fold one record of a match log into ``machine``; the machine to go on with (a new one
    after a snapshot). Its events wait in ``machine.take_events()``; ``MalformedError`` for a
    snapshot that does not hold together."""
    kind = record[0]
    if kind == "snapshot":
        return TableMachine.from_snapshot(machine.local_peer, record[2])
    if kind == "member":
        change, peer = record[1], record[2]
        if change == "left":
            pass  # this log's own peer left on purpose: its last record, nothing to fold
        elif change == "gone":
            machine.member_gone(peer)
        elif change == "returned":
            machine.member_returned(peer)
        else:
            machine.member_joined(peer)
    else:
        machine.stable_entry((record[1], record[2]), record[3])
    return machine


def entry_time(record: list[Any]) -> int | None:
    """When an entry record was seen stable (Unix ms), or None when the log does not say."""
    if record[0] == "entry" and len(record) == 5:
        return int(record[4])
    return None


def damage_report(problem: str, kept: int) -> str:
    """What a replay says about a damaged log (the command line and the window alike)."""
    return f"{problem}; the {kept} records before it were replayed"


def _counted(count: int, thing: str) -> str:
    return f"{count} {thing}" if count == 1 else f"{count} {thing}s"


def _described(record: list[Any]) -> str:
    if record[0] == "entry":
        return f"an entry by {record[2]}"
    if record[0] == "member":
        return f"{record[2]} {record[1]}"
    return "a snapshot"


def _first_round_seen(machine: TableMachine) -> int | None:
    """The round a log that starts from this snapshot starts in (None: it holds every round)."""
    if machine.phase is TablePhase.PLAYING:
        return machine.round_number
    after = machine.round_number + 1
    return after if after > 1 else None


@dataclass
class _Scan:
    """What reading a log's bytes found: its whole records, the byte where they end, what is
    wrong there (None: nothing), whether its checksums chain and the last one."""

    records: list[list[Any]]
    end: int
    problem: str | None
    chained: bool
    last: int


def _scan(data: bytes) -> _Scan:
    """Read the records after the header, up to the first one that is damaged or out of place."""
    chained = not data.startswith(UNCHAINED_MAGIC)
    found = _Scan([], len(MAGIC), None, chained, 0)
    while found.end < len(data) and found.problem is None:
        found.problem = _read_record(data, found)
    return found


def _read_record(data: bytes, found: _Scan) -> str | None:
    """Read the record at ``found.end`` into ``found``; what is wrong with it (None: nothing)."""
    offset, number = found.end, len(found.records) + 1
    where = f"record {number} (at byte {offset})"
    if len(data) - offset < _HEADER.size:
        return f"{CUT_SHORT} at byte {offset}, in record {number} (a crash while writing)"
    length, crc = _HEADER.unpack_from(data, offset)
    start = offset + _HEADER.size
    if length > _MAX_RECORD:
        return f"{where} claims {length} bytes: damaged"
    if start + length > len(data):
        return f"{CUT_SHORT} at byte {offset}, in record {number} (a crash while writing)"
    body = data[start : start + length]
    if zlib.crc32(body, found.last if found.chained else 0) != crc:
        if not found.chained:
            return f"{where} is damaged (checksum mismatch)"
        return (
            f"{where} is damaged or out of its place: its checksum does not follow "
            f"{'the header' if number == 1 else f'record {number - 1}'} (a record missing, "
            "doubled or moved there, or changed bytes)"
        )
    try:
        record = msgpack.unpackb(body, raw=False, strict_map_key=True, max_ext_len=0)
    except Exception as error:  # hostile or damaged bytes: several exception types
        return f"{where} cannot be read: {type(error).__name__}"
    if not _well_formed(record):
        return f"{where} is not a log record"
    found.records.append(record)
    found.end, found.last = start + length, crc
    return None


def _repair(path: Path) -> str | None:
    """Cut a log back to its last whole record before appending to it (what follows a damaged
    record could never be read); what was done, or None when the log was whole or absent.

    Cutting keeps one file per table and peer that reads end to end, where a second file would
    need every reader to chain them. The dropped bytes go to ``NAME.nlog.damaged``: a torn tail
    is a few bytes of nothing, but a flipped byte in the middle drops whole records, and those
    are kept for whoever wants to look."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if not data or data in (MAGIC, UNCHAINED_MAGIC):
        return None
    if not data.startswith((MAGIC, UNCHAINED_MAGIC)):
        if MAGIC.startswith(data):  # a crash while writing the header: nothing to keep
            path.write_bytes(b"")
            return f"the match log {path} was cut short in its header: started it again"
        aside = _set_aside(path, data)
        path.write_bytes(b"")
        return f"{path} was not a nerts-lan match log: moved it to {aside}, started a new log"
    scanned = _scan(data)
    records, end, problem = scanned.records, scanned.end, scanned.problem
    if problem is None:
        return None
    aside = _set_aside(path, data[end:])
    with path.open("r+b") as file:
        file.truncate(end)
        file.flush()
        os.fsync(file.fileno())
    return (
        f"the match log {path} was damaged ({problem}): kept its {len(records)} whole records, "
        f"cut off the {len(data) - end} bytes after them (kept in {aside}) and went on from there"
    )


def _set_aside(path: Path, data: bytes) -> Path:
    aside = path.with_name(path.name + ".damaged")
    number = 1
    while aside.exists():
        number += 1
        aside = path.with_name(f"{path.name}.damaged-{number}")
    aside.write_bytes(data)
    return aside


def _well_formed(record: Any) -> bool:
    if not isinstance(record, list) or not record:
        return False
    kind = record[0]
    if kind == "entry":
        timed = len(record) == 5 and type(record[4]) is int
        return (len(record) == 4 or timed) and type(record[1]) is int and isinstance(record[2], str)
    if kind == "member":
        return (
            len(record) == 3
            and record[1] in ("joined", "returned", "gone", "left")
            and isinstance(record[2], str)
        )
    if kind == "snapshot":
        return len(record) == 3 and type(record[1]) is int and isinstance(record[2], dict)
    return False


def writer_of(path: Path, records: Iterable[list[Any]]) -> str | None:
    """The peer that wrote a log, from its file name (``TABLE-PEER.nlog``) if that peer is in
    the log, else None."""
    found = re.fullmatch(r"[0-9a-f]{8}-(.+)", path.stem)
    if found is None:
        return None
    peer = found.group(1)
    for record in records:
        if record[0] == "entry" and record[2] == peer:
            return peer
        if record[0] == "member" and record[2] == peer:
            return peer
    return None
