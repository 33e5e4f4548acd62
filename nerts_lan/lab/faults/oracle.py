"""The stable-is-final oracle: every peer's stable prefix, recorded over time, across
incarnations, and what contradicts it.

What a player saw as final is every entry their laptop delivered as stable, at its stable index,
whichever incarnation of the laptop delivered it. So the oracle keeps one record for the whole
run: the first entry (key and payload) delivered at each stable index, and the index each entry
was first delivered at. A **fork** is a delivery that contradicts that record, by any peer (the
same peer's own later incarnation included): another entry at an index (an entry undone, or two
groups with two logs), the same key with another payload (an author that told peers different
things), or an entry at another index (reordered); and a membership change (who was excluded,
left, joined or returned in an epoch, with which cut, at which stable index) that contradicts the
changes first delivered for that epoch (two decisions for one epoch). A table that ends with
fewer stable entries than some peer once delivered has lost the rest: a fork too (`check_final`).

A **divergence** is the same stable index with a different state hash, where no fork explains it
(the logs agree up to there): a fold that is not deterministic, or a joiner that took its state
from somewhere else than its place in the log.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

import msgpack

from net.events import (
    EntriesStabilized,
    Event,
    LogEntry,
    MemberExcluded,
    MemberJoined,
    MemberLeft,
    MemberReturned,
    SnapshotInstalled,
)

__all__ = ["StableOracle"]

EXAMPLES = 5
"""Descriptions kept of each kind of finding (the counts count them all)."""


@dataclass
class StableOracle:
    """Feed it every peer's core events (`observe`) and state hashes (`observe_state`); read
    `forks`, `divergences()` and `violations` (the first few descriptions).

    Peers in `ignored` (malicious members) are not recorded: the oracle says what the honest
    members saw."""

    ignored: frozenset[str] = frozenset()
    membership: bool = True
    """Check membership changes too (see the module docstring)."""
    delivered: dict[int, tuple[int, str]] = field(default_factory=dict)
    """Stable index -> the key of the entry first delivered there."""
    violations: list[str] = field(default_factory=list)
    """Descriptions of the first forks found (at most `EXAMPLES` per kind)."""
    forked: set[int] = field(default_factory=set)
    """Stable indices at which some delivery contradicted the record."""
    highest: int = 0
    """The highest stable index any recorded peer delivered or installed."""
    _payloads: dict[int, bytes] = field(default_factory=dict)
    _placed: dict[tuple[int, str], int] = field(default_factory=dict)
    _states: dict[tuple[int, Hashable], bytes] = field(default_factory=dict)
    _divergent: dict[int, str] = field(default_factory=dict)
    _kinds: dict[str, int] = field(default_factory=dict)
    _changes: dict[int, tuple[str, set[tuple[object, ...]]]] = field(default_factory=dict)
    forked_epochs: dict[int, int] = field(default_factory=dict)
    """Epochs with two decisions -> the stable index the contradicted change sits after."""
    installs: list[tuple[str, float, int, int, bytes]] = field(default_factory=list)
    """Every snapshot an honest peer installed: (peer, time, stable index, epoch, the digest
    of the state it holds); see `observe_snapshot`."""
    _provided: dict[bytes, set[tuple[int, int]]] = field(default_factory=dict)

    @property
    def forks(self) -> int:
        """How many stable indices and epochs were contradicted (0 when stable is final)."""
        return len(self.forked) + len(self.forked_epochs)

    def observe(self, peer: str, now: float, events: Iterable[Event]) -> None:
        """Record what `peer` (e.g. ``"p01#2"`` for its incarnation 2) delivered at `now`."""
        if _author(peer) in self.ignored:
            return
        for event in events:
            if isinstance(event, EntriesStabilized):
                for index, entry in enumerate(event.entries, start=event.first_index):
                    self._deliver(peer, now, index, entry)
            elif isinstance(event, SnapshotInstalled):
                self.highest = max(self.highest, event.stable_index)
            elif isinstance(event, _CHANGES) and self.membership:
                self._change(peer, now, event)

    def observe_state(
        self, peer: str, now: float, index: int, digest: bytes, view: Hashable = None
    ) -> None:
        """Record the state hash `peer` had right after stable entry `index`, as a member of
        `view` (states are compared within one view: a member that has not yet learnt that it
        was removed holds the removed view's state)."""
        if _author(peer) in self.ignored:
            return
        first = self._states.setdefault((index, view), digest)
        if first != digest and index not in self._divergent:
            self._divergent[index] = (
                f"at {now:.3f} {peer} had state {digest.hex()[:12]} after stable entry {index},"
                f" where {first.hex()[:12]} had been reported"
            )

    def observe_provided(self, digest: bytes, index: int, epoch: int) -> None:
        """An honest member answered a snapshot request with the state `digest`, its table as of
        stable index `index` and epoch `epoch` (its own stream's position when asked)."""
        self._provided.setdefault(digest, set()).add((index, epoch))

    def observe_snapshot(
        self, peer: str, now: float, index: int, epoch: int, digest: bytes
    ) -> None:
        """`peer` installed a snapshot of state `digest` that the core labelled the fold at
        stable index `index` and epoch `epoch`: the snapshot check. A state some honest member
        provided as of another position (a marker folded or missing) is a divergence: the
        joiner would fold from the wrong place."""
        if _author(peer) in self.ignored:
            return
        self.installs.append((peer, now, index, epoch, digest))
        held = self._provided.get(digest)
        if held and (index, epoch) not in held and index not in self._divergent:
            self._divergent[index] = (
                f"at {now:.3f} {peer} installed a snapshot labelled stable index {index}, epoch"
                f" {epoch}, holding the table as of {sorted(held)}"
            )

    def divergences(self) -> list[str]:
        """State hashes that differ at one stable index where the logs agree up to there."""
        below = min([*self.forked, *(i + 1 for i in self.forked_epochs.values())], default=None)
        return [
            text
            for index, text in sorted(self._divergent.items())
            if below is None or index < below
        ]

    def check_final(self, final_index: int, now: float) -> None:
        """The table ended at `final_index`: entries delivered beyond it are lost (a fork)."""
        if final_index >= self.highest:
            return
        for index in range(final_index + 1, self.highest + 1):
            self.forked.add(index)
        self._note(
            "lost",
            f"at {now:.3f} the table ends with {final_index} stable entries, where"
            f" {self.highest} had been delivered",
        )

    def _deliver(self, peer: str, now: float, index: int, entry: LogEntry) -> None:
        self.highest = max(self.highest, index)
        payload = _digest(entry)
        first = self.delivered.setdefault(index, entry.key)
        first_payload = self._payloads.setdefault(index, payload)
        if first != entry.key:
            self.forked.add(index)
            self._note(
                "undone",
                f"at {now:.3f} {peer} delivered {entry.key} as stable entry {index},"
                f" where {first} had been delivered",
            )
        elif first_payload != payload:
            self.forked.add(index)
            self._note(
                "payload",
                f"at {now:.3f} {peer} delivered {entry.key} as stable entry {index} with"
                " another payload than had been delivered",
            )
        placed = self._placed.setdefault(entry.key, index)
        if placed != index:
            self.forked.add(index)
            self._note(
                "reordered",
                f"at {now:.3f} {peer} delivered {entry.key} as stable entry {index},"
                f" where it had been delivered as entry {placed}",
            )

    def _change(
        self,
        observer: str,
        now: float,
        event: MemberExcluded | MemberJoined | MemberLeft | MemberReturned,
    ) -> None:
        # Every change of one epoch comes in one batch: the first observer's set is complete
        # before anyone else's change of that epoch is compared with it.
        cut = event.cut if isinstance(event, MemberExcluded) else None
        change = (type(event).__name__, event.peer, event.incarnation, cut, event.stable_index)
        first, changes = self._changes.setdefault(event.epoch, (observer, set()))
        if first == observer:
            changes.add(change)
        elif change not in changes:
            self.forked_epochs.setdefault(event.epoch, event.stable_index)
            self._note(
                "membership",
                f"at {now:.3f} {observer} delivered {type(event).__name__} of {event.peer}"
                f" (incarnation {event.incarnation}) in epoch {event.epoch} after stable entry"
                f" {event.stable_index}, which {first} did not",
            )

    def _note(self, kind: str, text: str) -> None:
        seen = self._kinds.get(kind, 0)
        self._kinds[kind] = seen + 1
        if seen < EXAMPLES:
            self.violations.append(text)


_CHANGES = (MemberExcluded, MemberJoined, MemberLeft, MemberReturned)


def _author(peer: str) -> str:
    return peer.split("#", 1)[0]


def _digest(entry: LogEntry) -> bytes:
    data: bytes = _PACKER.pack(entry.payload)
    return hashlib.blake2b(data, digest_size=16).digest()


_PACKER = msgpack.Packer(use_bin_type=True)
"""One Packer for every digest (``msgpack.packb`` makes one, with a 256 KiB buffer, per call);
an oracle runs in its simulation's one thread."""
