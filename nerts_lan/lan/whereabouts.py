"""Where this laptop is: a new address mid-game, or back from a sleep.

``Whereabouts`` runs beside a seat's ``TableAgent`` in the network thread and tells the front end,
as session events, what a player notices of a laptop that moves or sleeps:

- its address changed (``AddressChanged``: the mesh dials every member again from the new one),
  then ``Reconnected`` once every member of the table is linked again;
- it did not run for a while (``Away``: a closed lid, a stopped process; noticed as a jump of
  ``awake_clock``, which counts the time a machine spends suspended too), then, once the table
  has had time to answer, ``BackAtTable`` (the others waited, or let it go and it rejoined: a bot
  played its seat meanwhile) or, after ``GIVE_UP`` seconds without the table, ``TableGone``.

It decides from what the agent tells it (``tick``, ``moved``, ``linked``) and posts through the
callable it is given: no sockets, and the time comes with each call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from nerts_lan.lan.by_address import async_start_on_default_port
from nerts_lan.table.session import AddressChanged, Away, BackAtTable, Reconnected, TableGone
from net import CoreConfig, Node, interface_addresses

__all__ = [
    "CHECK_INTERVAL",
    "ENDED_WHILE_AWAY",
    "GIVE_UP",
    "MATCH_ENDED_WHILE_AWAY",
    "AtTable",
    "Whereabouts",
    "async_start_here",
    "awake_clock",
]

CHECK_INTERVAL: Final = 0.5
"""Seconds between two looks at the clock."""
GIVE_UP: Final = 10.0
"""Seconds after waking up that a laptop waits for its table before it says the table is gone
(the others let a silent member go after ``exclude_timeout``, 3 s, and take it back at once)."""
ENDED_WHILE_AWAY: Final = "The table ended while you were away"
MATCH_ENDED_WHILE_AWAY: Final = "The match ended while you were away"


def awake_clock() -> float:
    """Seconds on a clock that goes on while the machine sleeps (Linux's boot time; the wall
    clock elsewhere): ``time.monotonic`` stops during a suspend on Linux and macOS."""
    boottime = getattr(time, "CLOCK_BOOTTIME", None)
    if boottime is not None:
        return time.clock_gettime(boottime)
    return time.time()


async def async_start_here(
    node: Node, address: str | None, interface: str | None
) -> tuple[int, str | None]:
    """Start ``node`` listening on ``address`` (None: on every interface); the port and the
    address it listens on. While ``address`` is gone (a seat rejoining the table in the middle
    of a lease renewal), it listens on the new address of ``interface`` (its name) once there
    is one: until then it waits, unless the node is closed meanwhile."""
    while True:
        try:
            return await async_start_on_default_port(node, address or "0.0.0.0"), address
        except OSError:
            if address is None or interface is None or node.closed:
                raise
            now = interface_addresses(interface)
            if now and address not in now:
                address = now[0]
            else:
                await asyncio.sleep(CHECK_INTERVAL)


@dataclass(frozen=True)
class AtTable:
    """Where the seat stands, as the agent sees it at one look."""

    seated: bool
    """A member of the table whose core takes submissions, hearing every other member."""
    over: bool
    """The match is over (the table keeps no seat to come back to)."""


class Whereabouts:
    """Notices moves and sleeps, and posts what became of them (see the module)."""

    def __init__(
        self,
        post: Callable[[object], None],
        table: CoreConfig,
        give_up: float = GIVE_UP,
    ) -> None:
        """``table``: the table's timers. A gap between two looks longer than its
        ``exclude_timeout`` is an absence (a shorter one the table does not act on either);
        once awake, what the seat looks like is trusted after ``suspect_timeout`` and a half:
        members silent by then are suspected, and a table that let us go has told us so."""
        self._post = post
        self._last: float | None = None
        """The last look (None: none yet)."""
        self._away_after = table.exclude_timeout
        self._settle = 1.5 * table.suspect_timeout
        self._give_up = give_up
        self._woke: tuple[float, float] | None = None
        """When we woke up and how long we were away, until we know what became of it."""
        self._moving: tuple[str, frozenset[str]] | None = None
        """After a move: the new address and the members to link again."""

    @property
    def away(self) -> bool:
        """Woke up from an absence and not yet back at the table (nor told it is gone)."""
        return self._woke is not None

    def tick(self, now: float, seat: AtTable) -> None:
        """A look at the clock (``now``: ``awake_clock``), with where the seat stands."""
        last, self._last = self._last, now
        gap = 0.0 if last is None else now - last
        if gap > self._away_after:
            self._woke = (now, round(gap, 1))
            self._post(Away(round(gap, 1)))
            return
        if self._woke is None:
            return
        woke, seconds = self._woke
        if now - woke >= self._settle and (seat.seated or seat.over):
            self._woke = None
            self._post(TableGone(MATCH_ENDED_WHILE_AWAY) if seat.over else BackAtTable(seconds))
        elif now - woke >= self._give_up:
            self._woke = None
            self._post(TableGone(ENDED_WHILE_AWAY))

    def moved(self, old: str, new: str, members: Iterable[str], connected: Iterable[str]) -> None:
        """Our address ``old`` changed to ``new``; ``members``: the others at the table;
        ``connected``: the peers linked again already (or still: alone, nobody to wait for)."""
        members = frozenset(members)
        self._moving = (new, members)
        self._post(AddressChanged(old, new))
        self.linked(connected, members)

    def linked(self, connected: Iterable[str], members: Iterable[str]) -> None:
        """A link came up: ``connected`` are the peers linked now, ``members`` the others at the
        table now (a member the table let go meanwhile is no longer waited for)."""
        if self._moving is None:
            return
        address, before = self._moving
        waited = before & set(members)
        if waited <= set(connected):
            self._moving = None
            self._post(Reconnected(address, len(waited)))
