"""A LAN seat for the window tests without a network: its replica, in table time."""

from __future__ import annotations

from typing import Any

from nerts_lan.rules.actions import Action
from nerts_lan.rules.scoring import Match
from nerts_lan.rules.state import State, Table
from nerts_lan.table.replica import EntryKey, Replica
from nerts_lan.table.session import RoundStarted, SessionEvent

__all__ = ["TableTimeSession"]


class TableTimeSession:
    """A LAN seat reduced to its replica: this laptop's intents are stamped in table time (the
    core's microseconds), and the test delivers another laptop's entries as the network would."""

    def __init__(self, state: State, stamp: int) -> None:
        self.replica = Replica(state, "me", table_time=True)
        self._table = state.table
        self._match = Match(state.table.team_names, 100)
        self._events: list[Any] = [RoundStarted(1, state)]
        self.stamp = stamp

    @property
    def local_players(self) -> tuple[str, ...]:
        return ("You",)

    @property
    def table(self) -> Table:
        return self._table

    @property
    def view(self) -> State:
        return self.replica.view

    @property
    def match(self) -> Match:
        return self._match

    def submit(self, action: Action) -> None:
        """This laptop's intent, stamped ``stamp`` (the next one a millisecond later)."""
        self._events.extend(self.replica.add((self.stamp, "me"), action))
        self.stamp += 1000

    def arrive(self, key: EntryKey, action: Action) -> None:
        """Another laptop's entry reaches this one."""
        self._events.extend(self.replica.add(key, action))

    def send_cursor(self, player: str, x: float, y: float, holding: tuple[str, ...]) -> None:
        pass

    def poll(self, now: float) -> list[SessionEvent]:
        events, self._events = self._events, []
        return events

    def close(self) -> None:
        pass
