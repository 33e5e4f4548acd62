"""When a seat the table keeps letting go should ask to join again, and what its player is told.

A laptop that the others cannot hear (a firewall, a one-way Wi-Fi problem) is let go by the
table after a few seconds, rejoins at once, is let go again, and so on: it never plays, and
while it is a member nothing the others play becomes final (every member must be heard for an
entry to be stable: docs/protocol.md), so their game stalls a few seconds at each of its visits.
``RejoinPacer`` counts the exclusions in a row (an exclusion after the seat stayed at the table
for ``steady`` seconds starts the count again): the first ones are answered by rejoining at once,
as a laptop back from a short sleep or a blip should; from the ``limit``-th in a row the seat
waits, longer each time, and says why in plain words (``Unreachable``, for the window and the
headless JSON line), naming the members it could not hear.

It is pure: the time comes with each call, and the agent (``nerts_lan.lan.agent``) runs the wait.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from nerts_lan.table.session import Unreachable

__all__ = [
    "FIRST_WAIT",
    "MAX_WAIT",
    "STREAK_LIMIT",
    "RejoinPacer",
    "backoff",
    "unreachable_line",
    "unreachable_text",
]

STREAK_LIMIT: Final = 3
"""Exclusions in a row after which the seat stops rejoining at once."""
FIRST_WAIT: Final = 20.0
"""Seconds of the first wait; each later one in the same streak doubles, up to ``MAX_WAIT``."""
MAX_WAIT: Final = 160.0


def backoff(
    streak: int, limit: int = STREAK_LIMIT, first: float = FIRST_WAIT, most: float = MAX_WAIT
) -> float:
    """Seconds to wait before rejoining after the ``streak``-th exclusion in a row (0: at once)."""
    if streak < limit:
        return 0.0
    return min(first * 2.0 ** (streak - limit), most)


def unreachable_text(unheard: Sequence[str], seconds: float) -> str:
    """What the player is told while the seat waits: what fails, in plain words, and when it
    tries again. ``unheard``: the names of the members this laptop could not hear."""
    again = f"Trying again in {seconds:.0f} s."
    if not unheard:
        return (
            "Your laptop can hear the table but the others can't hear it — a firewall or a "
            f"one-way Wi-Fi problem. {again}"
        )
    names = _listed(unheard)
    return (
        f"Your laptop can't hear {names}, so the table keeps letting it go — a firewall or a "
        f"one-way Wi-Fi problem. {again}"
    )


def unreachable_line(unheard: Sequence[str], seconds: float) -> str:
    """``unreachable_text`` short enough for one line of the window's message strip."""
    who = f"Your laptop can't hear {_listed(unheard)}" if unheard else "The others can't hear you"
    return f"{who} (a firewall or one-way Wi-Fi?): trying again in {seconds:.0f} s"


class RejoinPacer:
    """Counts the exclusions in a row and says how long to wait before the next join."""

    def __init__(
        self,
        steady: float,
        limit: int = STREAK_LIMIT,
        first: float = FIRST_WAIT,
        most: float = MAX_WAIT,
    ) -> None:
        """``steady``: seconds at the table after which an exclusion no longer counts as one
        more in a row (the seat played: it was a real member, not a visitor let go again)."""
        self._steady = steady
        self._limit = limit
        self._first = first
        self._most = most
        self.streak = 0
        """Exclusions in a row so far."""
        self._since: float | None = None
        """When the seat was last admitted (None: not at the table now)."""
        self._unheard: dict[str, str] = {}
        """Members this laptop could not hear during its current stay: peer id to name."""

    def admitted(self, now: float) -> None:
        """The table has the seat again (its core takes submissions)."""
        self._since = now

    def went_silent(self, peer: str, name: str) -> None:
        self._unheard[peer] = name

    def heard_again(self, peer: str) -> None:
        self._unheard.pop(peer, None)

    def expelled(self, now: float) -> Unreachable | None:
        """The table let the seat go at ``now``: None to rejoin at once, else how long to wait
        and what to tell the player."""
        since, self._since = self._since, None
        if since is not None and now - since >= self._steady:
            self.streak = 0  # it stayed and played: a fresh fault, not the same one again
        self.streak += 1
        unheard = tuple(sorted(set(self._unheard.values())))
        self._unheard.clear()
        seconds = backoff(self.streak, self._limit, self._first, self._most)
        if seconds == 0:
            return None
        return Unreachable(seconds, self.streak, unheard, unreachable_text(unheard, seconds))


def _listed(names: Sequence[str]) -> str:
    """``Bo``, ``Bo and Cy``, ``Bo, Cy and Di``."""
    if len(names) == 1:
        return names[0]
    return f"{', '.join(names[:-1])} and {names[-1]}"
