"""What a ``TablePeer`` asks its driver to do (effects) and the timers it asks for.

Each effect is a frozen record; a driver (the LAN's ``TableAgent``, the simulator's ``GameApp``)
carries it out on its own node and clock, and hands timers back when they are due.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from nerts_lan.rules.actions import Action
from nerts_lan.table.commands import TableCommand
from nerts_lan.table.replica import EntryKey
from net.events import LogEntry

__all__ = [
    "ActTimer",
    "CommitTimer",
    "Effect",
    "Installed",
    "MemberLogged",
    "Post",
    "ProvideSnapshot",
    "Rejoin",
    "ReportHash",
    "Stabilized",
    "StartTimer",
    "Submit",
    "ThinkTimer",
    "Timer",
    "Traced",
    "Warned",
]


# --- timers ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ThinkTimer:
    """The bot of ``player`` looks at the table."""

    player: str


@dataclass(frozen=True, slots=True)
class ActTimer:
    """The bot of ``player`` has reacted: ``action`` (decided in ``round``) leaves now."""

    player: str
    action: Action
    round: int


@dataclass(frozen=True, slots=True)
class CommitTimer:
    """The intermission after a round is over: commit to the deal of ``round``."""

    round: int


Timer: TypeAlias = ThinkTimer | ActTimer | CommitTimer


# --- effects -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Submit:
    """Order ``command`` in the log now, then tell ``on_submitted`` what became of it."""

    command: TableCommand


@dataclass(frozen=True, slots=True)
class ReportHash:
    """Report the table's digest right after stable entry ``index`` to the core."""

    index: int
    digest: bytes


@dataclass(frozen=True, slots=True)
class ProvideSnapshot:
    """Answer the core's ``SnapshotRequested``."""

    peer: str
    stable_index: int
    snapshot: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StartTimer:
    """Call ``on_timer(timer, ...)`` after ``delay`` seconds."""

    timer: Timer
    delay: float


@dataclass(frozen=True, slots=True)
class Post:
    """Show ``event`` to the front end (a session event, ``LobbyChanged``, ``LobbyView``...)."""

    event: Any


@dataclass(frozen=True, slots=True)
class Rejoin:
    """The group went on without us: join again as a new incarnation and catch up."""


@dataclass(frozen=True, slots=True)
class Stabilized:
    """Stable entry ``index`` was folded (for the match log). ``accepted`` tells, for an action
    of the round in play, whether it counted; None for anything else."""

    index: int
    entry: LogEntry
    accepted: bool | None


@dataclass(frozen=True, slots=True)
class Installed:
    """The table was restored from a snapshot at ``stable_index`` (for the match log)."""

    stable_index: int
    snapshot: Any


@dataclass(frozen=True, slots=True)
class MemberLogged:
    """Membership changed, for the match log."""

    change: Literal["joined", "returned", "gone"]
    peer: str


@dataclass(frozen=True, slots=True)
class Traced:
    """An action of the log was submitted here, received, or became stable (for benchmarks)."""

    kind: Literal["submit", "applied", "stable"]
    key: EntryKey


@dataclass(frozen=True, slots=True)
class Warned:
    """Something an operator should read in the log."""

    message: str


Effect: TypeAlias = (
    Submit
    | ReportHash
    | ProvideSnapshot
    | StartTimer
    | Post
    | Rejoin
    | Stabilized
    | Installed
    | MemberLogged
    | Traced
    | Warned
)
