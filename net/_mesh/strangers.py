"""What a stranger may cost a mesh, per source address: pure bookkeeping, the clock passed in.

- ``CodeCheckGates``: the wrong-code penalty, charged to the source address of the failed check,
  so guessers on one laptop never hold back a joiner or a returning member on another.
- ``HandshakeBudgets``: how many key exchanges (some 10 to 20 ms of CPU each) one source address
  may start, as a token bucket per address.
- ``StrangerPool``: the connections not yet known to belong to a member, at most so many in all
  and from one address; the oldest gives way to a newcomer when the pool is full.

Every table is bounded: entries that no longer hold anything back are forgotten first, and when
a flood from more addresses than the table holds fills it, the addresses left out share one
overflow entry (a peer id this mesh knows has an overflow entry of its own, so strangers cannot
queue a returning member behind them even then).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from net._mesh.ratelimit import TokenBucket

__all__ = [
    "MAX_SOURCES",
    "CodeCheckGates",
    "HandshakeBudgets",
    "SourceGate",
    "StrangerPool",
    "descriptor_share",
]

MAX_SOURCES = 4096
"""Most source addresses a table remembers (a laptop's /24 holds 254)."""

Clock = Callable[[], float]
K = TypeVar("K")


class CodeCheckGates:
    """Spaces out failed code checks per source address: a failure from an address holds back
    every other check from that address for ``penalty`` seconds, and no other address, so online
    guessing gets about one guess per penalty per address."""

    def __init__(self, penalty: float, clock: Clock, capacity: int = MAX_SOURCES) -> None:
        self.penalty = penalty
        self.clock = clock
        self._capacity = capacity
        self._open_at: OrderedDict[str, float] = OrderedDict()
        """Held addresses, in the order they open (each hold opens last)."""
        self._overflow = {False: float("-inf"), True: float("-inf")}

    def of(self, address: str, known: bool) -> SourceGate:
        """The gate of checks from ``address`` (for a peer id this mesh knows, if ``known``)."""
        return SourceGate(self, address, known)

    def open_at(self, address: str, known: bool) -> float:
        """Before this time no code from ``address`` is checked."""
        held = self._open_at.get(address)
        if held is not None:
            return held
        return self._overflow[known] if self._full() else float("-inf")

    def hold(self, address: str, known: bool) -> None:
        """A check from ``address`` failed: hold that address back for the penalty from now."""
        until = self.clock() + self.penalty
        if address in self._open_at or not self._full():
            self._open_at[address] = max(self._open_at.get(address, until), until)
            self._open_at.move_to_end(address)
        else:
            self._overflow[known] = max(self._overflow[known], until)

    def __len__(self) -> int:
        return len(self._open_at)

    def _full(self) -> bool:
        now = self.clock()
        while self._open_at and next(iter(self._open_at.values())) <= now:
            self._open_at.popitem(last=False)  # open again: nothing to remember
        return len(self._open_at) >= self._capacity


class SourceGate:
    """The gate of one source address, as ``net._mesh.connection.code_check_turn`` waits on it."""

    def __init__(self, gates: CodeCheckGates, address: str, known: bool) -> None:
        self.penalty = gates.penalty
        self._gates = gates
        self._address = address
        self._known = known

    def wait(self) -> float:
        """Seconds until a check may run (0: now)."""
        return max(0.0, self._gates.open_at(self._address, self._known) - self.now())

    def hold(self) -> None:
        self._gates.hold(self._address, self._known)

    def too_late(self, give_up_at: float) -> bool:
        """Whether the gate stays closed past ``give_up_at`` (the handshake had better give up)."""
        return self._gates.open_at(self._address, self._known) > give_up_at

    def now(self) -> float:
        return self._gates.clock()


class HandshakeBudgets:
    """A token bucket of key exchanges per source address: ``burst`` at once, then ``rate`` a
    second. An address whose bucket has refilled is forgotten."""

    def __init__(self, rate: float, burst: float, capacity: int = MAX_SOURCES) -> None:
        self.rate = rate
        self.burst = burst
        self._capacity = capacity
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()
        """In the order of their last use."""
        self._overflow: TokenBucket | None = None

    def allow(self, address: str, now: float) -> bool:
        """Whether ``address`` may start one more key exchange now (it is counted if so)."""
        bucket = self._buckets.get(address)
        if bucket is None:
            bucket = self._new_bucket(address, now)
        else:
            self._buckets.move_to_end(address)
        return bucket.take_if_there(1, now)

    def __len__(self) -> int:
        return len(self._buckets)

    def _new_bucket(self, address: str, now: float) -> TokenBucket:
        refilled_since = now - self.burst / self.rate
        while self._buckets and next(iter(self._buckets.values())).stamp <= refilled_since:
            self._buckets.popitem(last=False)
        if len(self._buckets) < self._capacity:
            bucket = self._buckets[address] = TokenBucket(self.rate, self.burst, now)
            return bucket
        if self._overflow is None:
            self._overflow = TokenBucket(self.rate, self.burst, now)
        return self._overflow


class StrangerPool(Generic[K]):
    """The connections (``K``) not yet known to belong to a member: at most ``total`` of them,
    at most ``per_address`` from one address. A newcomer over the address's share is turned
    away; one over the total displaces the oldest stranger that has not named a known peer id
    (a returning member names one in its hello, then is ``shielded``)."""

    def __init__(self, total: int, per_address: int) -> None:
        self.total = total
        self.per_address = per_address
        self._open: OrderedDict[K, str] = OrderedDict()
        """Strangers that may be displaced, oldest first."""
        self._shielded: dict[K, str] = {}
        self._counts: dict[str, int] = {}

    def admit(self, key: K, address: str) -> tuple[bool, K | None]:
        """Whether ``key`` from ``address`` may stay, and the stranger it displaces, if any."""
        if self._counts.get(address, 0) >= self.per_address:
            return False, None
        displaced = None
        if len(self._open) >= self.total:
            displaced = next(iter(self._open))
            self.release(displaced)
        self._open[key] = address
        self._counts[address] = self._counts.get(address, 0) + 1
        return True, displaced

    def shield(self, key: K) -> None:
        """``key`` named a peer id this mesh knows: newcomers no longer displace it (unless the
        shielded ones fill the pool too). It still counts against its address."""
        if key in self._open and len(self._shielded) < self.total:
            self._shielded[key] = self._open.pop(key)

    def release(self, key: K) -> None:
        """``key`` closed, or turned out to be a member's."""
        address = self._open.pop(key, None) or self._shielded.pop(key, None)
        if address is not None:
            left = self._counts[address] - 1
            if left:
                self._counts[address] = left
            else:
                del self._counts[address]

    def __contains__(self, key: object) -> bool:
        return key in self._open or key in self._shielded

    def __len__(self) -> int:
        return len(self._open) + len(self._shielded)


def descriptor_share() -> int:
    """The most connections strangers may hold: a quarter of this process's file limit, so
    most descriptors stay for the members (no limit known, as on Windows: no cap from it)."""
    try:
        import resource  # POSIX only
    except ImportError:
        return 1 << 30
    files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if files == resource.RLIM_INFINITY:
        return 1 << 30
    return max(1, files // 4)
