"""Reactions' one rule: at most one per player per second of table time.

A reaction (``React``) is an action in the ordered log like any other, so every peer receives it
and a replay shows it again, but it changes nothing of the round: ``engine.apply`` accepts it
with the state as it was (after the usual checks: the round in play, a player at the table). How
often a player may react is judged here from the log's own timestamps, never a clock: the fold
keeps each player's last accepted reaction, and one stamped less than ``REACTION_GAP_US`` after
it is refused, the same on every peer. Standard library only, deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, TypeAlias

from nerts_lan.rules.state import Rejection, RejectionKind

__all__ = ["REACTION_GAP_US", "Reacted", "react"]

REACTION_GAP_US: Final = 1_000_000
"""The least gap between two reactions of a player, in microseconds of table time (1 s)."""

Reacted: TypeAlias = Mapping[str, int]
"""Each player's last accepted reaction: its timestamp. Never changed in place: ``react``
returns a new one."""


def react(reacted: Reacted, player: str, timestamp: int) -> Reacted | Rejection:
    """``reacted`` with ``player``'s reaction stamped ``timestamp``, or the refusal of one that
    comes too soon after their last (or before it: a log's order is its timestamps')."""
    last = reacted.get(player)
    if last is not None and timestamp - last < REACTION_GAP_US:
        return Rejection(f"{player} reacted less than a second ago", RejectionKind.TOO_SOON)
    return {**reacted, player: timestamp}
