"""The table a peer was playing when it stopped: found in its data folder, to go back to.

A host whose laptop crashed does not end its table: the others play on (its seat with a bot) and
the lowest remaining member advertises the table under its id. When the player starts hosting
again with the same table name, what they expect is their seat back, not a second, empty table
of that name. ``live_table`` finds that table in the match logs of the data folder (one file
per table and peer, ``<table id>-<peer id>.nlog``): a recent log of this peer, of a table of
that name, whose match is not over and that the peer did not leave on purpose. The front ends
then look for its id on the LAN for a few seconds (``LOOK_FOR``) and join it as ``join`` would,
or host anew when nobody advertises it.

Beside each log lies the peer's latest vote in the table's membership changes,
``<table id>-<peer id>.vote`` (``save_vote`` / ``saved_vote``): a peer that comes back to a
table (any join of a table its peer id was at) votes in its predecessor's place only with it,
which is what lets a table of two whose lowest id restarted go on (see "Returning
incarnations" in docs/protocol.md).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from nerts_lan.matchlog.file import apply_record, read_match_log
from nerts_lan.table.machine import TableMachine, TablePhase
from net import VoteRecord, vote_record_from_data, vote_record_to_data

__all__ = ["LOOK_FOR", "RECENT", "LiveTable", "live_table", "save_vote", "saved_vote", "vote_path"]

log = logging.getLogger(__name__)

LOOK_FOR = 5.0
"""Seconds a restarted host looks for its table on the LAN before it hosts anew (the others
let a silent member go after about 3 s and only then advertise the table themselves)."""

RECENT = 3600.0
"""A log written to longer ago than this (seconds) is of a table long over, not a live one."""


@dataclass(frozen=True)
class LiveTable:
    """A table this peer was at, whose match was not over when its log was last written."""

    table_id: str
    name: str
    log_path: Path


def live_table(
    log_folder: Path, peer_id: str, name: str, now: float | None = None
) -> LiveTable | None:
    """The most recently written table of ``peer_id`` named ``name`` in ``log_folder`` whose
    match is not over (None: there is none, or its log cannot be read)."""
    now = time.time() if now is None else now
    suffix = f"-{peer_id}.nlog"
    try:
        logs = [(p.stat().st_mtime, p) for p in log_folder.glob(f"*{suffix}")]
    except OSError:
        return None
    continued: set[str] = set()
    """Tables whose match a newer log's table went on with (``nerts_lan.lan.resume``)."""
    for written, path in sorted(logs, reverse=True):
        if now - written > RECENT:
            break
        table_id = path.name[: -len(suffix)]
        folded = _folded(path, name, peer_id)
        if folded is None:
            continue
        machine, left = folded
        if machine.resumed_from is not None:
            continued.add(machine.resumed_from)
        if left or not table_id.isalnum() or table_id in continued:
            continue
        if machine.phase is not TablePhase.OVER:
            return LiveTable(table_id, name, path)
    return None


def vote_path(log_folder: Path, table_id: str, peer_id: str) -> Path:
    """Where ``peer_id`` keeps its latest vote at table ``table_id`` (beside its match log)."""
    return log_folder / f"{table_id}-{peer_id}.vote"


def save_vote(path: Path, record: VoteRecord) -> None:
    """Keep ``record`` in ``path`` so that a crash, of the process or of the machine, does not
    lose it: written whole to a temporary file, synced, then renamed over the old one."""
    data = json.dumps(vote_record_to_data(record), separators=(",", ":")).encode()
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
    with contextlib.suppress(OSError):  # the rename itself survives a power cut too
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def saved_vote(path: Path) -> VoteRecord | None:
    """The record ``save_vote`` kept in ``path``; None when there is none, or (with a one-line
    warning) when it cannot be read or is not a record: then this peer does not vote in its
    predecessor's place, which is safe."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a device or a pipe would never end
            log.warning("ignoring the vote kept in %s: not a regular file", path)
            return None
        with open(path, "rb") as file:
            data = file.read(_MAX_VOTE_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as error:
        log.warning("cannot read the vote kept in %s: %s", path, error)
        return None
    if len(data) > _MAX_VOTE_BYTES:
        log.warning("ignoring the vote kept in %s: the file is too large", path)
        return None
    try:
        return vote_record_from_data(json.loads(data))
    except (ValueError, RecursionError) as error:  # JSONDecodeError and UnicodeError among them
        log.warning("ignoring the vote kept in %s: %s", path, str(error).splitlines()[0])
        return None


_MAX_VOTE_BYTES = 1 << 20
"""A vote record of a real table is far smaller (a damaged or hostile file costs no more)."""


def _folded(path: Path, name: str, peer_id: str) -> tuple[TableMachine, bool] | None:
    """The table named ``name`` as its log leaves it (the good prefix of a damaged log), and
    whether this log's peer left it on purpose (its log ends with that); None for a table of
    another name (known from its first records) or a log that cannot be read."""
    try:
        records, _ = read_match_log(path)
        left = bool(records) and records[-1] == ["member", "left", peer_id]
        machine = TableMachine("comeback")
        for record in records:
            machine = apply_record(machine, record)
            machine.take_events()
            if machine.settings is not None and machine.settings.name != name:
                return None
    except (OSError, KeyError, TypeError, ValueError, IndexError):  # MalformedError among them
        return None
    return (machine, left) if machine.settings is not None else None
