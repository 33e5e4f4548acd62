"""What a seat at a table looks like to its user (the window, a headless peer, a test).

A *session* is one machine's place at one table: it hosts the replica of the current round, runs
the match from round to round, carries the local players' intents to the table (over the network,
or straight to a local replica in practice mode) and hands back what changed, as events. The
window polls it once per frame; nothing in a session blocks or draws.

Two implementations share this interface: the practice session (this machine alone, bots in the
other seats) and the network session (peers on the LAN).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol, TypeAlias, runtime_checkable

from nerts_lan.rules.actions import Action
from nerts_lan.rules.scoring import Match
from nerts_lan.rules.state import State, Table
from nerts_lan.table.replica import ActionApplied, ActionRejected, RoundEnded

__all__ = [
    "AddressChanged",
    "Away",
    "BackAtTable",
    "ClockLags",
    "CursorMoved",
    "DealOnSession",
    "EntryIgnored",
    "IgnoredKind",
    "LeftBehind",
    "MatchEnded",
    "PacedSession",
    "PausableSession",
    "PeerGone",
    "PeerHeardAgain",
    "PeerReturned",
    "PeerWentSilent",
    "Reconnected",
    "RoundStarted",
    "Session",
    "SessionEvent",
    "TableGone",
    "TablePaused",
    "Unreachable",
]


@dataclass(frozen=True, slots=True)
class RoundStarted:
    """A new round is dealt: ``number`` counts from 1 within the match."""

    number: int
    state: State


@dataclass(frozen=True, slots=True)
class MatchEnded:
    """The match is over: ``match.winner`` won, ``match.differences()`` says by how much."""

    match: Match


@dataclass(frozen=True, slots=True)
class PeerGone:
    """The table let a member go (it left, or stayed silent too long): ``players`` are the seats
    it held, now played by a bot or frozen, as the table's settings say. ``left``: it said
    goodbye (a deliberate leave), rather than going silent (a crash, a lost link)."""

    peer: str
    players: tuple[str, ...]
    left: bool = False
    name: str = ""
    """The member's name (its player's): the laptop that went, whose bots are among
    ``players`` too."""


@dataclass(frozen=True, slots=True)
class LeftBehind:
    """The others went on without this peer (a long pause, a cut on its side): it joins the
    table again at once, as a new incarnation, and catches up from their state (or, let go too
    often in a row, first waits: ``Unreachable``)."""


@dataclass(frozen=True, slots=True)
class Unreachable:
    """The table let this laptop go ``exclusions`` times in a row, each time soon after taking
    it back: the others cannot hear it (a firewall, a one-way Wi-Fi problem). Instead of
    rejoining at once again it waits ``seconds`` (meanwhile a bot plays its seat and the others'
    rounds start on time), then tries again. ``unheard``: the names of the members it could not
    hear itself (empty: it heard everyone, they did not hear it); ``message`` says all that to
    the player (``nerts_lan.lan.rejoining``)."""

    seconds: float
    exclusions: int
    unheard: tuple[str, ...]
    message: str


@dataclass(frozen=True, slots=True)
class TablePaused:
    """``paused``: the table waits for enough of its members to agree on who is at it (members
    went silent, and those still heard are not a majority); ``False``: the table is back.

    Meanwhile this machine's plays show at once as always, but none of them is final: when the
    table is back each counts at its place in the order, or is refused there (``ActionRejected``);
    if the table went on without this machine (``LeftBehind``), the plays the others never
    received are lost as it catches up from their state."""

    paused: bool


@dataclass(frozen=True, slots=True)
class AddressChanged:
    """This laptop's address changed mid-game (it roamed, its lease was renewed): it dials the
    others again from ``new``, and they learn where it listens now."""

    old: str
    new: str


@dataclass(frozen=True, slots=True)
class Reconnected:
    """After ``AddressChanged``: linked again to every member of the table, from ``address``."""

    address: str
    peers: int


@dataclass(frozen=True, slots=True)
class Away:
    """This laptop did not run for ``seconds`` (a closed lid, a stopped process): the table may
    have gone on without it. ``BackAtTable`` or ``TableGone`` follows within seconds."""

    seconds: float


@dataclass(frozen=True, slots=True)
class BackAtTable:
    """After ``Away``: at the table again, in its seat (a bot played it if the table let this
    laptop go meanwhile; it rejoined and caught up)."""

    seconds: float
    """How long it was away."""


@dataclass(frozen=True, slots=True)
class TableGone:
    """After ``Away``: the table is not there any more (its match ended, or nobody of it answers):
    a window goes back to the lobby saying ``reason``, a headless peer stops."""

    reason: str


@dataclass(frozen=True, slots=True)
class PeerReturned:
    """A member that was gone is back and holds its seats again."""

    peer: str
    players: tuple[str, ...]
    name: str = ""
    """The member's name (its player's)."""


@dataclass(frozen=True, slots=True)
class PeerWentSilent:
    """A member's link went quiet (about a second): the others see who is missing. The table
    keeps its seats until it lets the member go (``PeerGone``)."""

    peer: str
    name: str


@dataclass(frozen=True, slots=True)
class PeerHeardAgain:
    """A member that went silent is heard again (before the table let it go)."""

    peer: str
    name: str


@dataclass(frozen=True, slots=True)
class ClockLags:
    """Member ``peer``'s moves reach the table later than their stamps say, by ``lag`` seconds
    (its clock is held back or its link is slow one way: nobody can tell which). Its moves are
    ordered as they arrive, less a small bound, so it gains nothing by it; a flag to show, never
    a verdict, once per laptop and incarnation."""

    peer: str
    name: str
    lag: float


class IgnoredKind(str, Enum):
    """Why a stable entry was ignored, for a program to branch on."""

    MALFORMED = "malformed"
    """Not of a table command's form (bytes or fields wrong)."""
    REFUSED = "refused"
    """A well-formed command against the table's rules at its place in the log."""

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class EntryIgnored:
    """A stable entry that did not fit the table at its place in the log (same on every peer)."""

    peer: str
    reason: str
    kind: IgnoredKind = IgnoredKind.REFUSED
    command: str = field(default="", compare=False)
    """The kind of the refused command (``Sit.KIND``...), "" when unknown or malformed."""


@dataclass(frozen=True, slots=True)
class CursorMoved:
    """Another player's pointer (ephemeral, outside the ordered log), in table units 0..1.

    ``holding`` names the cards it drags (bottom first), empty when it holds nothing.
    """

    player: str
    x: float
    y: float
    holding: tuple[str, ...] = ()


SessionEvent: TypeAlias = (
    ActionApplied
    | ActionRejected
    | RoundEnded
    | RoundStarted
    | MatchEnded
    | PeerGone
    | PeerReturned
    | PeerWentSilent
    | PeerHeardAgain
    | ClockLags
    | EntryIgnored
    | LeftBehind
    | Unreachable
    | TablePaused
    | CursorMoved
    | AddressChanged
    | Reconnected
    | Away
    | BackAtTable
    | TableGone
)


class Session(Protocol):
    """One machine's seat(s) at a table."""

    @property
    def local_players(self) -> tuple[str, ...]:
        """The players this machine controls (a person, usually one)."""
        ...

    @property
    def table(self) -> Table:
        """Teams, players and options of the current round."""
        ...

    @property
    def view(self) -> State:
        """The current round as this machine sees it (optimistic: local actions show at once)."""
        ...

    @property
    def match(self) -> Match:
        """Scores of the finished rounds."""
        ...

    def submit(self, action: Action) -> None:
        """Send a local player's intent; its fate arrives as an event from ``poll``."""
        ...

    def send_cursor(self, player: str, x: float, y: float, holding: tuple[str, ...]) -> None:
        """Share a local player's pointer with the table (best effort, never ordered)."""
        ...

    def poll(self, now: float) -> list[SessionEvent]:
        """Advance to time ``now`` (seconds, monotonic) and return what changed since the last
        call, in order."""
        ...

    def close(self) -> None:
        """Leave the table."""
        ...


@runtime_checkable
class PacedSession(Session, Protocol):
    """A session whose next round waits for its player (practice, a replay): the table screen
    offers "next round" only on these."""

    @property
    def waiting_for_next_round(self) -> bool:
        """True between a round's end and the next deal."""
        ...

    def next_round(self) -> None:
        """Deal (or play back) the next round now."""
        ...


@runtime_checkable
class DealOnSession(Session, Protocol):
    """A LAN session whose next deal waits for its players: the scoreboard's "next round" says
    this laptop's player is ready (the deal comes once all are, or after a stated time)."""

    def deal_on(self) -> None:
        """This laptop's player is ready for the next round."""
        ...

    @property
    def deal_waits_for(self) -> tuple[str, ...]:
        """Between two rounds: the names of those the next deal still waits for."""
        ...

    @property
    def countdown(self) -> float:
        """Seconds every laptop holds still after each deal ("3, 2, 1, go!"; 0: none)."""
        ...


@runtime_checkable
class PausableSession(Session, Protocol):
    """A session whose game can stop while its player reads (practice: no one else waits)."""

    def pause(self, now: float) -> None:
        """Stop the game at time ``now``: nothing moves until ``resume``."""
        ...

    def resume(self, now: float) -> None:
        """Go on from where ``pause`` stopped, as if no time had passed in between."""
        ...
