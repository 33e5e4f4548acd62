"""The match log: every peer appends the stable log of its match to a file as it goes.

A crash loses at most what was not yet stable, and a finished match can be replayed
(``nerts-lan replay FILE``, in the window or ``--headless``). The file is the header
``NERTSLOG1\\n`` and then records, each a 4-byte big-endian length, a 4-byte CRC-32 of the body
and the msgpack body:

- ``["entry", ts, peer, payload]`` a stable entry, in log order;
- ``["member", "joined" | "returned" | "gone", peer]`` a membership change, at its place;
- ``["snapshot", stable_index, table_snapshot]`` where a peer that joined late starts.

Reading stops at the first damaged record (cut short by a crash, a flipped byte) and says where:
every record before it is kept.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import msgpack

from .replica import RoundEnded
from .session import MatchEnded, RoundStarted
from .table import TableMachine

__all__ = [
    "MAGIC",
    "MatchLogWriter",
    "ReplayedRound",
    "apply_record",
    "damage_report",
    "data_folder",
    "read_match_log",
    "replay_match_log",
]

MAGIC = b"NERTSLOG1\n"
_HEADER = struct.Struct(">II")
_MAX_RECORD = 8 << 20


class MatchLogWriter:
    """Appends records; ``sync`` makes what was appended survive a crash."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not path.exists() or path.stat().st_size == 0
        self.path = path
        self._file: BinaryIO = open(path, "ab")  # noqa: SIM115 - closed in close()
        if fresh:
            self._file.write(MAGIC)

    def flush(self) -> None:
        """Hand what was appended to the OS: it survives a crash of this process."""
        self._file.flush()

    def entry(self, ts: int, peer: str, payload: Any) -> None:
        self._write(["entry", ts, peer, payload])

    def member(self, change: str, peer: str) -> None:
        self._write(["member", change, peer])

    def snapshot(self, stable_index: int, snapshot: Any) -> None:
        self._write(["snapshot", stable_index, snapshot])

    def sync(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if not self._file.closed:
            self.sync()
            self._file.close()

    def _write(self, record: list[Any]) -> None:
        body = msgpack.packb(record, use_bin_type=True)
        self._file.write(_HEADER.pack(len(body), zlib.crc32(body)) + body)


def read_match_log(path: Path) -> tuple[list[list[Any]], str | None]:
    """The records of a match log, and what is wrong with the rest of it (None if nothing)."""
    data = path.read_bytes()
    if not data.startswith(MAGIC):
        return [], f"{path} is not a nerts-lan match log (bad header)"
    records: list[list[Any]] = []
    offset = len(MAGIC)
    while offset < len(data):
        if len(data) - offset < _HEADER.size:
            return records, f"the log is cut short at byte {offset} (a crash while writing)"
        length, crc = _HEADER.unpack_from(data, offset)
        start = offset + _HEADER.size
        if length > _MAX_RECORD:
            return records, f"the record at byte {offset} claims {length} bytes: damaged"
        if start + length > len(data):
            return records, f"the log is cut short at byte {offset} (a crash while writing)"
        body = data[start : start + length]
        if zlib.crc32(body) != crc:
            return records, f"the record at byte {offset} is damaged (checksum mismatch)"
        try:
            record = msgpack.unpackb(body, raw=False, strict_map_key=True, max_ext_len=0)
        except Exception as error:  # hostile or damaged bytes: several exception types
            return records, f"the record at byte {offset} cannot be read: {type(error).__name__}"
        if not _well_formed(record):
            return records, f"the record at byte {offset} is not a log record"
        records.append(record)
        offset = start + length
    return records, None


@dataclass(frozen=True)
class ReplayedRound:
    """One round of a replayed match."""

    number: int
    scores: dict[str, int]
    state_hash: str
    ending: str
    caller: str | None


def replay_match_log(records: Iterable[list[Any]]) -> tuple[list[ReplayedRound], MatchEnded | None]:
    """Fold a match log's records as the table did: its rounds and, if it ended, the match."""
    machine = TableMachine("replay")
    rounds: list[ReplayedRound] = []
    ended: MatchEnded | None = None
    number = 0
    for record in records:
        after = apply_record(machine, record)
        if after is not machine:
            machine, number = after, after.round_number
        for event in machine.take_events():
            if isinstance(event, RoundStarted):
                number = event.number
            elif isinstance(event, RoundEnded):
                rounds.append(
                    ReplayedRound(
                        number,
                        event.scores,
                        event.digest.hex(),
                        event.outcome.ending,
                        event.outcome.caller,
                    )
                )
            elif isinstance(event, MatchEnded):
                ended = event
    return rounds, ended


def apply_record(machine: TableMachine, record: list[Any]) -> TableMachine:
    """Fold one record of a match log into ``machine``; the machine to go on with (a new one
    after a snapshot). Its events wait in ``machine.take_events()``; ``MalformedError`` for a
    snapshot that does not hold together."""
    kind = record[0]
    if kind == "snapshot":
        return TableMachine.from_snapshot(machine.local_peer, record[2])
    if kind == "member":
        change, peer = record[1], record[2]
        if change == "gone":
            machine.member_gone(peer)
        elif change == "returned":
            machine.member_returned(peer)
        else:
            machine.member_joined(peer)
    else:
        machine.stable_entry((record[1], record[2]), record[3])
    return machine


def damage_report(problem: str, kept: int) -> str:
    """What a replay says about a damaged log (the command line and the window alike)."""
    return f"{problem}; the {kept} records before it were replayed"


def _well_formed(record: Any) -> bool:
    if not isinstance(record, list) or not record:
        return False
    kind = record[0]
    if kind == "entry":
        return len(record) == 4 and type(record[1]) is int and isinstance(record[2], str)
    if kind == "member":
        return (
            len(record) == 3
            and record[1] in ("joined", "returned", "gone")
            and isinstance(record[2], str)
        )
    if kind == "snapshot":
        return len(record) == 3 and type(record[1]) is int and isinstance(record[2], dict)
    return False


def data_folder() -> Path:
    """This user's nerts-lan data folder (``NERTS_LAN_DATA`` overrides it)."""
    base = os.environ.get("NERTS_LAN_DATA")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / "nerts-lan"
