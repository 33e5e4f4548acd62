"""What one connection may send us: token buckets with a sustained rate and a burst.

Pure: every method takes the time ``now`` (seconds, any monotonic origin), so the limits are
tested in simulated time.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_RATE_LIMITS", "Meter", "RateLimits", "TokenBucket"]


@dataclass(frozen=True)
class RateLimits:
    """What one connection may send us, as token buckets (a sustained rate and a burst).

    The defaults are far above what an honest game sends on one link (heartbeats every 100 ms, a
    few actions a second, acknowledgements, pointer updates at 30 a second, a rare snapshot of
    up to 4 MiB, and a burst of resends after a reconnect)."""

    frames_per_second: float = 500.0
    frame_burst: float = 2000.0
    bytes_per_second: float = 8 << 20
    byte_burst: float = 16 << 20
    ephemeral_per_second: float = 90.0
    """Ephemeral frames over this bucket are dropped (never delivered) instead of waited for."""
    ephemeral_burst: float = 180.0

    def __post_init__(self) -> None:
        if min(vars(self).values()) <= 0:
            raise ValueError(f"every rate and burst must be positive: {self}")


DEFAULT_RATE_LIMITS = RateLimits()


class TokenBucket:
    """Tokens refill at ``rate`` a second up to ``burst``; taking may run into debt."""

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = now

    def take(self, amount: float, now: float) -> float:
        """Take ``amount`` tokens; the seconds until the debt, if any, is paid back."""
        self._refill(now)
        self.tokens -= amount
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate

    def take_if_there(self, amount: float, now: float) -> bool:
        """Take ``amount`` tokens if there are that many; whether it did."""
        self._refill(now)
        if self.tokens < amount:
            return False
        self.tokens -= amount
        return True

    def _refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now


class Meter:
    """The rate limits of what one connection sends us (none when ``limits`` is None)."""

    def __init__(self, limits: RateLimits | None, now: float) -> None:
        self._buckets: tuple[TokenBucket, TokenBucket, TokenBucket] | None = None
        if limits is not None:
            self._buckets = (
                TokenBucket(limits.frames_per_second, limits.frame_burst, now),
                TokenBucket(limits.bytes_per_second, limits.byte_burst, now),
                TokenBucket(limits.ephemeral_per_second, limits.ephemeral_burst, now),
            )

    def charge(self, size: int, now: float) -> float:
        """Count one frame of ``size`` bytes; the seconds to stop reading for."""
        if self._buckets is None:
            return 0.0
        frames, octets, _ = self._buckets
        return max(frames.take(1, now), octets.take(size, now))

    def allow_ephemeral(self, now: float) -> bool:
        """Whether one more ephemeral frame may be delivered now (else it is dropped)."""
        return self._buckets is None or self._buckets[2].take_if_there(1, now)
