"""A match brought back from this laptop's match log, when its table is gone from the LAN.

When every laptop of a table stops at once (a power cut, the same crash, everyone killed), nobody
is left to rejoin: the table's ordering group is gone, though every laptop's match log holds the
match's stable rounds. A player who hosts that table again (``nerts_lan.lan.comeback`` found its
log, and nobody advertises it any more) then gets the match back: a new table of the same name,
whose first entry (``Create`` with a ``ResumedMatch``) holds the seats and the scores of the
finished rounds, and whose match goes on with the next round. That entry is the table's, folded
by every peer alike; a peer that joins later gets it in the table's snapshot. The players who come
back take their seats (the table knows them by their peer ids); a bot plays the others' meanwhile.

``match_to_resume`` decides from the log, which it reads as hostile input: a log another peer
wrote, one damaged before its last record, one with records that cannot be applied, or one that
folds to something the table would refuse, is not resumed: ``NotResumable`` says why in one
sentence, and a fresh match starts. A torn last record is an ordinary crash: the rounds before it
are whole. A match that is over, or whose first round never ended, has nothing to resume (then
``told`` is False: there is nothing to tell).
"""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

from nerts_lan.matchlog.file import CUT_SHORT, LogFold, read_match_log, writer_of
from nerts_lan.rules.actions import MalformedError
from nerts_lan.table.commands import Create, ResumedMatch, TableSettings
from nerts_lan.table.machine import TableMachine, TablePhase
from nerts_lan.table.session import EntryIgnored

__all__ = ["NotResumable", "Resumable", "match_to_resume"]

_MAX_LOG_BYTES = 256 << 20
"""A match log of a real match is far smaller (a hostile or runaway file costs no more)."""


@dataclass(frozen=True)
class Resumable:
    """The match to go on with: the table's settings as its log holds them, the entry's match,
    the round it goes on with and the totals so far (team name to points)."""

    settings: TableSettings
    match: ResumedMatch
    next_round: int
    totals: dict[str, int]


@dataclass(frozen=True)
class NotResumable:
    """Why the match is not brought back (one sentence); ``told``: the player should read it (a
    damaged or foreign log), not merely a match with nothing to resume."""

    reason: str
    told: bool = True


def match_to_resume(log_path: Path, table_id: str, peer_id: str) -> Resumable | NotResumable:
    """Whether the match of table ``table_id``, whose log ``peer_id`` wrote at ``log_path``,
    can be brought back, and with what (see the module)."""
    where = f"the match log {log_path.name}"
    try:
        if not stat.S_ISREG(log_path.stat().st_mode):
            return NotResumable(f"{where} is not a regular file")
        if log_path.stat().st_size > _MAX_LOG_BYTES:
            return NotResumable(f"{where} is too large to be a match log")
        records, problem = read_match_log(log_path)
    except OSError as error:
        return NotResumable(f"cannot read {where}: {error.strerror or error}")
    if problem is not None and not problem.startswith(CUT_SHORT):
        return NotResumable(f"{where} is damaged ({problem})")
    if writer_of(log_path, records) != peer_id:
        return NotResumable(f"{where} was not written by this player")
    fold = LogFold(peer_id)
    try:
        for record in records:
            fold.fold(record)
    except (MalformedError, KeyError, TypeError, ValueError, IndexError, RecursionError) as error:
        return NotResumable(f"{where} cannot be replayed: {error}")
    if fold.ignored:
        return NotResumable(f"{where} cannot be replayed whole: {fold.ignored[0].line()}")
    return _resumable(fold.machine, table_id, where)


def _resumable(machine: TableMachine, table_id: str, where: str) -> Resumable | NotResumable:
    """The match ``machine`` (a log's fold) holds, checked as the table will check it."""
    settings, match = machine.settings, machine.match
    if machine.phase is TablePhase.OVER:
        return NotResumable("its match is over", told=False)
    if settings is None or match is None or not match.rounds:
        return NotResumable("no round of its match had ended", told=False)
    seats = tuple(
        (seat.player, seat.team, seat.owner, None if seat.owner else seat.bot)
        for seat in machine.seats
    )
    resumed = ResumedMatch(table_id, seats, match.rounds)
    # Folded as every peer of the new table will fold it: what the table would refuse is told
    # here, and a fresh match starts instead.
    host = machine.local_peer
    trial = TableMachine(host)
    trial.member_joined(host)
    trial.stable_entry((1, host), Create(settings, resumed).to_wire())
    refused = [event for event in trial.take_events() if isinstance(event, EntryIgnored)]
    if refused or trial.match is None or trial.match.team_names != match.team_names:
        why = refused[0].reason if refused else "its teams do not fit together"
        return NotResumable(f"{where} holds a match the table cannot go on with: {why}")
    return Resumable(settings, resumed, len(match.rounds) + 1, match.totals)
