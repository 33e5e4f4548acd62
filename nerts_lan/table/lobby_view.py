"""The snapshots a seat's network thread posts to the main thread, besides the session events.

The main thread learns everything about its seat from these and from the session events, never by
reading the network thread's objects: ``SeatStatus`` (this peer's place: joined, port, refused...),
``LobbyView`` (the table's lobby) and ``ViewChanged`` (what to draw). ``LanSession.poll`` keeps
the latest of each and returns the session events.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nerts_lan.rules.scoring import Match
from nerts_lan.rules.state import State, Table
from nerts_lan.table.commands import TableSettings
from nerts_lan.table.machine import TableMachine
from nerts_lan.table.seating import Seat

__all__ = ["LobbyView", "SeatStatus", "ViewChanged"]


@dataclass(frozen=True)
class SeatStatus:
    """This peer's place at the table, posted by the network thread whenever it changes."""

    peer_id: str
    name: str
    table_code: str | None
    """The code this peer hosts or joins with (None: an open table)."""
    table_id: str = ""
    port: int = 0
    """The TCP port this peer listens on (0 until it started)."""
    joined: bool = False
    """The table has this peer as a member (False again while it rejoins)."""
    log_path: Path | None = None
    """Where this peer appends the match log (None: no log)."""
    refused: str | None = None
    """Why the table refused this peer (a code problem), once it did."""


@dataclass(frozen=True)
class LobbyView:
    """The table's lobby as the main thread sees it: a snapshot taken in the network thread."""

    me: str
    settings: TableSettings | None
    host: str | None
    members: tuple[tuple[str, str], ...]
    """(peer id, display name) of the present members, host first."""
    seats: tuple[Seat, ...]
    ready: frozenset[str]
    phase: str
    round_number: int
    start_problem: str | None
    """``TableMachine.can_start()``: None when the host may start."""
    deal_waits_for: tuple[str, ...] = ()
    """Between two rounds: the peer ids whose commit to the next deal has not come yet (a
    player still reading the scores), in id order; () otherwise."""

    @property
    def is_host(self) -> bool:
        return self.host == self.me

    @property
    def my_seat(self) -> Seat | None:
        return next((seat for seat in self.seats if seat.owner == self.me), None)

    def team(self, team: int) -> tuple[Seat, ...]:
        """The seats of team number ``team`` (0-based, as the host's settings count them)."""
        return tuple(seat for seat in self.seats if seat.team == team)

    def name_of(self, peer: str) -> str:
        return dict(self.members).get(peer, peer)

    @classmethod
    def of(cls, machine: TableMachine) -> LobbyView:
        host = machine.host
        members = sorted(machine.members.items(), key=lambda item: (item[0] != host, item[1]))
        return cls(
            machine.local_peer,
            machine.settings,
            host,
            tuple(members),
            tuple(machine.seats),
            frozenset(machine.ready),
            machine.phase,
            machine.round_number,
            machine.can_start(),
            machine.deal_waits_for(),
        )


@dataclass(frozen=True)
class ViewChanged:
    """Internal: the view, match and table the main thread should show now."""

    view: State
    match: Match | None
    table: Table | None
