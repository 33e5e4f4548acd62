"""A match log's rounds, folded once for everyone who reads a log: the replay (the window's and
``nerts-lan replay --headless``), the history and the coach.

The log is folded as the table folded it (``matchlog.file.LogFold``), so the rounds, their scores
and their ends are exactly the table's. A ``LoggedRound`` holds every action in log order, the
ones the rules refused included, each with the state before and after it and when it was seen
stable; the replay shows its ``steps``. ``at`` is wall time in Unix milliseconds, from the entries
a peer wrote with a clock (``matchlog.file.entry_time``); a log written without one has None there,
and whatever needs a duration says it does not know.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Final

from nerts_lan.matchlog.file import (
    Ignored,
    LogFold,
    entry_time,
    read_match_log,
    replay_problems,
)
from nerts_lan.rules.actions import Action, Play
from nerts_lan.rules.scoring import Match
from nerts_lan.rules.state import State, Table
from nerts_lan.table.machine import TableMachine, TablePhase
from nerts_lan.table.replica import ActionApplied, ActionRejected, EntryKey, RoundEnded
from nerts_lan.table.session import MatchEnded, RoundStarted

__all__ = [
    "RECORDER_PEER",
    "REPLAY_PEER",
    "FoldedLog",
    "LoggedAction",
    "LoggedRound",
    "RoundRecorder",
    "fold_log",
    "fold_logged_rounds",
    "is_foundation_play",
    "last_logged_round",
]

REPLAY_PEER: Final = "replay"
"""The peer a log is folded (and replayed) as: nobody at the table."""
RECORDER_PEER: Final = "this-laptop"
"""The owner ``RoundRecorder`` gives the local player's seat (there is no peer)."""


@dataclass(frozen=True, slots=True)
class LoggedAction:
    """One action at its place in a round: ``refused`` is the rules' reason when it did not
    count (then ``after`` is ``before``)."""

    at: int | None
    key: EntryKey
    action: Action
    before: State
    after: State
    refused: str | None = None


@dataclass(frozen=True)
class LoggedRound:
    """One round of a match log.

    ``match_number`` counts the matches of the log from 1; ``owners`` maps each person's peer to
    the player it sat as (bots own no peer); ``whole`` is False when the log holds only part of
    the round (its writer caught up from a snapshot during it): ``jumps`` then says where, as
    (how many of ``actions`` came before, the state it caught up to). ``ended`` is None when the
    log stops before the round's end; ``match_before`` is the match before the round (None: not
    known, as for a round recorded on this machine)."""

    table_name: str
    match_number: int
    number: int
    table: Table
    start: State
    started_at: int | None
    actions: tuple[LoggedAction, ...]
    owners: dict[str, str]
    whole: bool
    ended: RoundEnded | None = None
    ended_at: int | None = None
    match_after: Match | None = None
    match_ended: MatchEnded | None = None
    match_before: Match | None = None
    jumps: tuple[tuple[int, State], ...] = ()

    @property
    def duration_ms(self) -> int | None:
        """How long the round took (None when the log holds no wall time or no end)."""
        if self.started_at is None or self.ended_at is None:
            return None
        return max(self.ended_at - self.started_at, 0)

    def players(self) -> Iterator[tuple[str, int]]:
        """Every player of the round with its team index, in seat order."""
        for team, players in enumerate(self.table.team_players):
            for player in players:
                yield player, team

    @cached_property
    def steps(self) -> tuple[tuple[Action | None, State], ...]:
        """What a replay shows, in log order: each action that counted with the state after it,
        and a None action where the log jumps to a later state (a snapshot caught its writer up:
        what happened meanwhile is not in it)."""
        steps: list[tuple[Action | None, State]] = []
        jumps = list(self.jumps)
        for index, logged in enumerate(self.actions):
            while jumps and jumps[0][0] <= index:
                steps.append((None, jumps.pop(0)[1]))
            if logged.refused is None:
                steps.append((logged.action, logged.after))
        steps += [(None, state) for _, state in jumps]
        return tuple(steps)


@dataclass(frozen=True)
class FoldedLog:
    """What a match log folds to: its rounds, the match's end if it holds it, the round it
    starts in (None: it holds the match from its lobby), what it had to leave out and how many
    records it holds."""

    rounds: list[LoggedRound]
    ended: MatchEnded | None
    joined_at: int | None
    ignored: list[Ignored]
    records: int

    def problems(self, reading: str | None = None) -> list[str]:
        """One line per thing wrong with the log (``reading``: what ``read_match_log`` said about
        its end), empty when it folded whole."""
        return replay_problems(self.ignored, self.records, len(self.rounds), reading)


def fold_log(records: Iterable[list[Any]]) -> FoldedLog:
    """Fold a match log's records as the table did (records that cannot be applied are left
    out, as ``LogFold`` leaves them, and every round around them is kept)."""
    fold = LogFold(REPLAY_PEER)
    builder = _Builder()
    for record in records:
        at = entry_time(record)
        if at is not None:
            builder.now = at
        before = fold.machine
        view = before.view if before.phase is TablePhase.PLAYING else None
        events = fold.fold(record)
        if fold.machine is not before:
            builder.snapshot(fold.machine)
            view = None
        for event in events:
            view = builder.event(fold.machine, event, view)
    return FoldedLog(builder.rounds(), builder.ended, fold.joined_at, fold.ignored, fold.folded)


def fold_logged_rounds(records: Iterable[list[Any]]) -> list[LoggedRound]:
    """The rounds of a match log's records, in order (``fold_log``'s rounds)."""
    return fold_log(records).rounds


def last_logged_round(path: Path) -> LoggedRound | None:
    """The last round of the match log at ``path`` that it holds whole and to its end (None:
    no such round, or the log cannot be read)."""
    try:
        records, _ = read_match_log(path)
    except OSError:
        return None
    for played in reversed(fold_logged_rounds(records)):
        if played.ended is not None:
            return played if played.whole else None
    return None


def is_foundation_play(action: Action) -> bool:
    """A card move onto a foundation."""
    return isinstance(action, Play) and action.target.kind == "foundation"


@dataclass
class _OpenRound:
    table_name: str
    match_number: int
    number: int
    table: Table
    start: State
    started_at: int | None
    owners: dict[str, str]
    match_before: Match | None = None
    whole: bool = True
    actions: list[LoggedAction] = field(default_factory=list)
    jumps: list[tuple[int, State]] = field(default_factory=list)
    ended: RoundEnded | None = None
    ended_at: int | None = None
    match_after: Match | None = None
    match_ended: MatchEnded | None = None

    def closed(self) -> LoggedRound:
        return LoggedRound(
            self.table_name,
            self.match_number,
            self.number,
            self.table,
            self.start,
            self.started_at,
            tuple(self.actions),
            self.owners,
            self.whole,
            self.ended,
            self.ended_at,
            self.match_after,
            self.match_ended,
            self.match_before,
            tuple(self.jumps),
        )


class _Builder:
    """Collects the rounds while the log is folded; ``now`` is the time of the record folded,
    ``ended`` the last end of a match seen."""

    def __init__(self) -> None:
        self.now: int | None = None
        self.ended: MatchEnded | None = None
        self._done: list[LoggedRound] = []
        self._open: _OpenRound | None = None
        self._match = 1
        self._match_over = False

    def rounds(self) -> list[LoggedRound]:
        self._close()
        return list(self._done)

    def snapshot(self, machine: TableMachine) -> None:
        """The writer caught up from a snapshot: the round in play goes on from its state,
        partly unseen."""
        if machine.phase is not TablePhase.PLAYING or machine.view is None:
            return
        current = self._open
        if current is not None and current.number == machine.round_number:
            current.whole = False
            current.jumps.append((len(current.actions), machine.view))
        else:
            self._start(machine, machine.round_number, machine.view)
            if self._open is not None:
                self._open.whole = False

    def event(self, machine: TableMachine, event: Any, view: State | None) -> State | None:
        """Take one table event; the view after it (``view``: the one before)."""
        if isinstance(event, MatchEnded):
            self.ended = event
        current = self._open
        if isinstance(event, RoundStarted):
            self._start(machine, event.number, event.state)
            return event.state
        if current is None or view is None:
            return machine.view
        if isinstance(event, ActionApplied) and machine.view is not None:
            after = machine.view
            current.actions.append(LoggedAction(self.now, event.key, event.action, view, after))
            return after
        if isinstance(event, ActionRejected) and event.action is not None:
            refused = LoggedAction(self.now, event.key, event.action, view, view, event.reason)
            current.actions.append(refused)
        elif isinstance(event, RoundEnded):
            current.ended, current.ended_at, current.match_after = event, self.now, machine.match
        elif isinstance(event, MatchEnded):
            current.match_ended, current.match_after = event, event.match
            self._match_over = True
        return view

    def _start(self, machine: TableMachine, number: int, state: State) -> None:
        self._close()
        if self._match_over or (number == 1 and self._done):
            self._match += 1
            self._match_over = False
        table = machine.round_table if machine.round_table is not None else state.table
        owners = {seat.owner: seat.player for seat in machine.seats if seat.owner}
        name = machine.settings.name if machine.settings is not None else ""
        before = machine.match or Match(table.team_names, table.options.target)
        self._open = _OpenRound(name, self._match, number, table, state, self.now, owners, before)

    def _close(self) -> None:
        if self._open is not None:
            self._done.append(self._open.closed())
            self._open = None


class RoundRecorder:
    """Builds the ``LoggedRound``s of a match played on this machine as it goes (a practice
    table has no match log): ``start``, then ``played`` per action, ``ended`` at its end,
    ``new_match`` when a new match begins. Times are the game's clock (kept in ms)."""

    def __init__(self, table_name: str, player: str) -> None:
        self._name = table_name
        self._owners = {RECORDER_PEER: player}
        self._match = 1
        self._done: list[LoggedRound] = []
        self._open: _OpenRound | None = None

    def start(self, number: int, state: State, now: float) -> None:
        self._open = _OpenRound(
            self._name, self._match, number, state.table, state, _ms(now), self._owners
        )

    def played(
        self,
        key: EntryKey,
        action: Action,
        before: State,
        after: State,
        refused: str | None,
        now: float,
    ) -> None:
        """One action at its place: ``after`` is ``before`` when it was ``refused``."""
        if self._open is not None:
            self._open.actions.append(LoggedAction(_ms(now), key, action, before, after, refused))

    def ended(self, ended: RoundEnded, match: Match, over: bool, now: float) -> None:
        """The round's end (``over``: the match's too)."""
        current = self._open
        if current is not None:
            current.ended, current.ended_at, current.match_after = ended, _ms(now), match
            current.match_ended = MatchEnded(match) if over else None
            self._done.append(current.closed())

    def new_match(self) -> None:
        self._match += 1
        self._done = []

    def round(self) -> LoggedRound | None:
        """The round so far (None before the first deal)."""
        return self._open.closed() if self._open is not None else None

    def match_rounds(self) -> list[LoggedRound]:
        """The finished rounds of the match so far."""
        return list(self._done)


def _ms(seconds: float) -> int:
    return round(seconds * 1000)
