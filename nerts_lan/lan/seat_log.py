"""What a seat at a LAN table keeps on this laptop's disk: the table's match log and the peer's
latest vote, one file each per table and peer in the log folder (``<table id>-<peer id>.nlog``
and ``.vote``).

``SeatLog`` belongs to the seat's ``TableAgent`` (``nerts_lan.lan.agent``), in the network
thread. A log that cannot be written is one warning, and the game goes on without it; so is a
vote that cannot be kept.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from nerts_lan.lan.comeback import save_vote, saved_vote, vote_path
from nerts_lan.matchlog.file import MatchLogWriter
from nerts_lan.table.effects import Effect, Installed, MemberLogged, Stabilized
from net import VoteRecord

__all__ = ["SeatLog"]

log = logging.getLogger("nerts_lan.lan.agent")
"""The seat's logger: its warnings name the seat's agent, as before its files were kept here."""


class SeatLog:
    """The match log and the kept vote of one peer at one table: nothing until ``open``, and
    nothing at all when there is no log folder."""

    def __init__(self) -> None:
        self.path: Path | None = None
        """The match log being appended to (None: none)."""
        self._writer: MatchLogWriter | None = None
        self._vote_path: Path | None = None
        self._vote_kept: VoteRecord | None = None
        """The core's vote record as last kept in ``_vote_path``."""

    def open(self, folder: str | None, table_id: str, peer_id: str) -> None:
        """Append this table's stable log to ``folder`` (a restarted peer appends, after a
        snapshot record); None: keep nothing."""
        if folder is None:
            return
        where = Path(folder)
        self.path = where / f"{table_id}-{peer_id}.nlog"
        self._vote_path = vote_path(where, table_id, peer_id)
        try:
            self._writer = MatchLogWriter(self.path, clock=time.time)  # entries with wall time
        except OSError as error:
            log.warning("cannot write the match log %s: %s", self.path, error)
            self._writer, self.path = None, None

    def predecessor(self) -> VoteRecord | None:
        """The vote this peer kept at this table in an earlier run (a crash, a restart), which it
        votes in the place of; from now on, the vote kept."""
        self._vote_kept = saved_vote(self._vote_path) if self._vote_path is not None else None
        return self._vote_kept

    def keep_vote(self, record: VoteRecord | None) -> None:
        """Keep the core's vote where a crash does not lose it (a vote must not be heard and then
        forgotten), when it changed."""
        if record == self._vote_kept:
            return
        self._vote_kept = record
        if record is None or self._vote_path is None:
            return
        try:
            save_vote(self._vote_path, record)
        except OSError as error:
            log.warning("cannot keep the vote in %s: %s", self._vote_path, error)

    def record(self, effect: Effect) -> None:
        """Append what the table peer made stable (an entry, a membership change, a snapshot it
        installed); any other effect is not the log's."""
        writer = self._writer
        if writer is None:
            return
        if isinstance(effect, Stabilized):
            writer.entry(effect.entry.ts, effect.entry.peer, effect.entry.payload)
        elif isinstance(effect, MemberLogged):
            writer.member(effect.change, effect.peer)
        elif isinstance(effect, Installed):
            writer.snapshot(effect.stable_index, effect.snapshot)

    def flush(self) -> None:
        """What is stable survives a crash of this process."""
        if self._writer is not None:
            self._writer.flush()

    def sync(self) -> None:
        """What is stable survives a crash of the machine (at a round's end)."""
        if self._writer is not None:
            self._writer.sync()

    def close(self, left: str | None = None) -> None:
        """Close the log; ``left``: this peer, which leaves on purpose (so that a restart later
        does not take the table for a crashed one)."""
        if self._writer is None:
            return
        if left is not None:
            self._writer.member("left", left)
        self._writer.close()
