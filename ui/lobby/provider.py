"""What the lobby screen needs from the network: a small interface, and a stand-in without one.

The lobby lists the tables found on the LAN, lets the player host one or join one, pick a team
and say ready. The network plugs in by implementing ``LobbyProvider`` (``ui.lobby.lan.LanLobby``);
``NoNetwork`` finds nothing and the lobby shows its "no tables found yet" state (practice works).
Nothing here imports pyglet.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from nerts_lan.rules.state import Options
from nerts_lan.table.lobby_view import LobbyView
from nerts_lan.table.session import Session

__all__ = ["HostRequest", "ListedTable", "LobbyProvider", "NoNetwork"]


@dataclass(frozen=True, slots=True)
class ListedTable:
    """A table seen on the LAN."""

    table_id: str
    name: str
    host: str
    options: Options
    partnership: bool
    seats: int
    """Teams the host allows (1 to 8)."""
    teams: tuple[tuple[str, ...], ...] = ()
    """Players already seated, per team."""
    ready: tuple[str, ...] = ()
    """Players who said they are ready."""
    started: bool = False
    taken: int = 0
    """Seats taken (when the advert says, without names)."""
    total: int = 0
    """Seats at the table (teams times players per team)."""
    needs_code: bool = False
    """The host made the table private: joining takes its code."""


@dataclass(frozen=True, slots=True)
class HostRequest:
    """A table the player wants to host."""

    name: str
    options: Options = field(default_factory=Options)
    partnership: bool = False
    seats: int = 4
    code: str | None = None
    """A code the joiners must type (None: an open table)."""
    countdown: int = 3
    """The prep countdown after each deal, in seconds: everyone starts on "go!"."""


class LobbyProvider(Protocol):
    """The network side of the lobby. Every call returns at once; ``poll`` is called each frame."""

    def tables(self) -> list[ListedTable]:
        """The tables found so far (the lobby redraws when this list changes)."""
        ...

    def host(self, player: str, request: HostRequest) -> None:
        """Open a table and sit at it."""
        ...

    def join(
        self, player: str, table_id: str, team: int | None = None, code: str | None = None
    ) -> None:
        """Sit at a table, on ``team`` (None: the first team with a free seat), with the
        table's ``code`` if it has one."""
        ...

    def join_address(self, player: str, typed: str) -> None:
        """Ask the address the player typed (``192.168.1.20:7777`` or a host name, the port
        optional) which table is there, and join it (``code_wanted`` first if it is private)."""
        ...

    @property
    def looking(self) -> str | None:
        """The address being asked which table is there (None: none)."""
        ...

    @property
    def code_wanted(self) -> ListedTable | None:
        """The private table found at the typed address: its code is wanted (then ``join``)."""
        ...

    def join_addresses(self) -> list[str]:
        """What others may type to join the player's table (``ADDRESS:PORT``, the likely
        Wi-Fi's first); [] when at none."""
        ...

    def set_ready(self, ready: bool) -> None:
        """Say the player is (not) ready; the host starts once everyone is."""
        ...

    def sit(self, team: int) -> None:
        """Move to team ``team`` (0-based)."""
        ...

    def add_bot(self, team: int, level: str) -> None:
        """Host only: a bot on team ``team``."""
        ...

    def start(self) -> None:
        """Host only: start the match."""
        ...

    def lobby(self) -> LobbyView | None:
        """The lobby of the table the player is at (None before it is known, or at none)."""
        ...

    @property
    def active(self) -> bool:
        """The player is at a table (or on the way to one)."""
        ...

    @property
    def problem(self) -> str:
        """Why the last host or join failed ("" when it did not)."""
        ...

    @property
    def notice(self) -> str:
        """What the player should know of the last host or join ("Back to your table NAME":
        hosting took them back to the table their crashed game was at; "Continuing the match
        of NAME from round N": it brought that table's match back from its log), "" when
        nothing."""
        ...

    @property
    def table_code(self) -> str | None:
        """The code of the table the player is at (None: an open table, or at none)."""
        ...

    def leave(self) -> None:
        """Leave the table the player sits at."""
        ...

    def poll(self, now: float) -> Session | None:
        """Advance the discovery; the game's session once the table the player sits at starts."""
        ...

    def close(self) -> None: ...


class NoNetwork:
    """A provider that finds no tables: the lobby before the network lands (and offline)."""

    def __init__(self, status: Callable[[str], None] | None = None) -> None:
        self._status = status

    def tables(self) -> list[ListedTable]:
        return []

    def host(self, player: str, request: HostRequest) -> None:
        if self._status:
            self._status("hosting a LAN table is not available yet: try Practice")

    def join(
        self, player: str, table_id: str, team: int | None = None, code: str | None = None
    ) -> None:
        if self._status:
            self._status("joining a LAN table is not available yet")

    def join_address(self, player: str, typed: str) -> None:
        if self._status:
            self._status("joining a LAN table is not available yet")

    @property
    def looking(self) -> str | None:
        return None

    @property
    def code_wanted(self) -> ListedTable | None:
        return None

    def join_addresses(self) -> list[str]:
        return []

    def set_ready(self, ready: bool) -> None:
        pass

    def sit(self, team: int) -> None:
        pass

    def add_bot(self, team: int, level: str) -> None:
        pass

    def start(self) -> None:
        pass

    def lobby(self) -> LobbyView | None:
        return None

    @property
    def active(self) -> bool:
        return False

    @property
    def problem(self) -> str:
        return ""

    @property
    def notice(self) -> str:
        return ""

    @property
    def table_code(self) -> str | None:
        return None

    def leave(self) -> None:
        pass

    def poll(self, now: float) -> Session | None:
        return None

    def close(self) -> None:
        pass
