"""The records of a view change in progress. Private to `net.core`; see "Membership (views)"
in docs/protocol.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from net.messages import Message, Removal

__all__ = ["ChangeSignature", "SentProposal", "ViewChange", "Vote", "Withdrawal"]


class ChangeSignature(NamedTuple):
    """What makes two proposals of a view change the same: whom they remove (with which
    incarnation) and whom they add."""

    removals: tuple[tuple[str, int], ...]
    additions: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, removals: Mapping[str, Removal], additions: Mapping[str, int]) -> ChangeSignature:
        return cls(
            tuple(sorted((p, r.incarnation) for p, r in removals.items())),
            tuple(sorted(additions.items())),
        )


class SentProposal(NamedTuple):
    """What our last proposal said: the change and our own observations."""

    change: ChangeSignature
    observed: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Vote:
    """The content of a set we proposed this epoch, and the number of withdrawals before it
    was last sent."""

    withdrawals: int
    clock: int
    removals: dict[str, Removal]


class Withdrawal(NamedTuple):
    """After a withdrawn view change: the stability limit kept until every member acknowledged
    the withdrawal (the timestamp of the withdrawal sent to each)."""

    limit: int
    acks: dict[str, int]


@dataclass
class ViewChange:
    """Our view change in progress: its epoch, our clock when it started, the members we
    freeze (with our frontier of each) and add, and the frames kept from frozen members."""

    epoch: int
    clock: int
    removals: dict[str, Removal] = field(default_factory=dict)
    additions: dict[str, int] = field(default_factory=dict)
    held: dict[str, list[Message]] = field(default_factory=dict)
    sent: SentProposal | None = None
    no_quorum_since: float | None = None
    unbacked_since: float | None = None

    def signature(self) -> ChangeSignature:
        return ChangeSignature.of(self.removals, self.additions)
