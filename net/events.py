"""Log entries and the events the ordering core reports to the application.

Every event is a frozen dataclass with a past-tense name. Events that belong to the stable log
(`EntriesStabilized`, `MemberJoined`, `MemberReturned`, `MemberLeft`, `MemberExcluded`) come in
the same order on every peer; the others (`EntryReceived`, `EntriesRetracted`, `MemberSuspected`,
...) are local observations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

__all__ = [
    "ClockSuspected",
    "DivergenceDetected",
    "EntriesRetracted",
    "EntriesStabilized",
    "EntryReceived",
    "Event",
    "Expelled",
    "LogEntry",
    "MemberExcluded",
    "MemberJoined",
    "MemberLeft",
    "MemberRecovered",
    "MemberReturned",
    "MemberSuspected",
    "Payload",
    "ProtocolViolated",
    "SnapshotInstalled",
    "SnapshotRequested",
]

Payload: TypeAlias = Any
"""An opaque msgpack-ready value: None, bool, int, str, bytes, lists and str-keyed dicts of them."""


@dataclass(frozen=True, order=True)
class LogEntry:
    """One action in the total order; entries sort by (ts, peer), the payload and proof are not
    compared."""

    ts: int
    peer: str
    payload: Payload = field(compare=False)
    proof: bytes | None = field(default=None, compare=False, repr=False)
    """Its author's signature and public key (see ``net._order.signatures``), or None unsigned."""

    @property
    def key(self) -> tuple[int, str]:
        """The (timestamp, author) pair that places this entry in the log."""
        return (self.ts, self.peer)


@dataclass(frozen=True)
class EntryReceived:
    """A remote entry arrived; it is tentative and may still be preceded by others."""

    entry: LogEntry


@dataclass(frozen=True)
class EntriesStabilized:
    """These entries are final, in order; the first has stable index `first_index` (1-based)."""

    first_index: int
    entries: tuple[LogEntry, ...]

    @property
    def last_index(self) -> int:
        """Stable index of the last entry of the batch."""
        return self.first_index + len(self.entries) - 1


@dataclass(frozen=True)
class EntriesRetracted:
    """Tentative entries of a removed member that the group cut off; they will never be stable."""

    entries: tuple[LogEntry, ...]


@dataclass(frozen=True)
class MemberSuspected:
    """Nothing was heard from `peer` for `CoreConfig.suspect_timeout` seconds."""

    peer: str


@dataclass(frozen=True)
class ClockSuspected:
    """`peer`'s stamps lagged the table time at which they arrive by more than
    `CoreConfig.clock_bound` for a whole measuring span (`lag` seconds at the frame that ended
    it), whether they reached us late or it raised them itself (see "Clocks and table time"
    in docs/protocol.md): its clock is held back or its links are asymmetric (nobody can tell
    which). Its stamps are bounded; this is a flag, never a verdict: once per incarnation."""

    peer: str
    lag: float


@dataclass(frozen=True)
class MemberRecovered:
    """A suspected member was heard from again before it was excluded."""

    peer: str


@dataclass(frozen=True)
class MemberJoined:
    """Stable: `peer` joined for the first time (incarnation 0) after `stable_index` entries."""

    peer: str
    incarnation: int
    epoch: int
    stable_index: int


@dataclass(frozen=True)
class MemberReturned:
    """Stable: `peer` came back with a new incarnation after `stable_index` entries."""

    peer: str
    incarnation: int
    epoch: int
    stable_index: int


@dataclass(frozen=True)
class MemberLeft:
    """Stable: `peer` left on purpose after `stable_index` entries."""

    peer: str
    incarnation: int
    epoch: int
    stable_index: int


@dataclass(frozen=True)
class MemberExcluded:
    """Stable: the group excluded a silent `peer`; its entries up to timestamp `cut` are kept."""

    peer: str
    incarnation: int
    cut: int
    epoch: int
    stable_index: int


@dataclass(frozen=True)
class Expelled:
    """The group removed this very core; to play on, start a new incarnation and join again."""

    epoch: int


@dataclass(frozen=True)
class SnapshotRequested:
    """Call `provide_snapshot(peer, stable_index, state)` with the stable state as of now: the
    state after `stable_index` entries and the membership changes up to `epoch`, the position
    the snapshot is labelled with when it is installed."""

    peer: str
    stable_index: int
    epoch: int = 0


@dataclass(frozen=True)
class SnapshotInstalled:
    """Replace the stable state with `snapshot` (taken after `stable_index` entries and the
    membership changes up to `epoch`) and the tentative tail with `tentative`."""

    stable_index: int
    epoch: int
    snapshot: Payload
    tentative: tuple[LogEntry, ...]


@dataclass(frozen=True)
class DivergenceDetected:
    """`peer` reported a state hash at `stable_index` that differs from the agreed one."""

    peer: str
    stable_index: int
    digest: bytes
    expected: bytes


@dataclass(frozen=True)
class ProtocolViolated:
    """`peer` sent a bad frame; the transport should close its connection."""

    peer: str
    field: str
    reason: str


Event: TypeAlias = (
    EntryReceived
    | EntriesStabilized
    | EntriesRetracted
    | MemberSuspected
    | MemberRecovered
    | ClockSuspected
    | MemberJoined
    | MemberReturned
    | MemberLeft
    | MemberExcluded
    | Expelled
    | SnapshotRequested
    | SnapshotInstalled
    | DivergenceDetected
    | ProtocolViolated
)
