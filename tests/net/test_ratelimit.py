"""Token buckets and the per-connection meter, in simulated time."""

from __future__ import annotations

import pytest

from net._mesh.ratelimit import DEFAULT_RATE_LIMITS, Meter, RateLimits, TokenBucket

TIGHT = RateLimits(frames_per_second=100, frame_burst=10, ephemeral_per_second=1, ephemeral_burst=5)


def test_a_bucket_gives_its_burst_then_runs_into_debt_at_its_rate() -> None:
    bucket = TokenBucket(rate=10, burst=5, now=0.0)
    assert [bucket.take(1, 0.0) for _ in range(5)] == [0.0] * 5
    assert bucket.take(1, 0.0) == pytest.approx(0.1)  # one token owed, at 10 a second
    assert bucket.take(2, 0.0) == pytest.approx(0.3)
    assert bucket.take(0, 0.3) == 0.0  # paid back
    assert bucket.take(1, 10.0) == 0.0 and bucket.tokens == pytest.approx(4)  # refilled to burst


def test_take_if_there_never_runs_into_debt() -> None:
    bucket = TokenBucket(rate=1, burst=2, now=0.0)
    assert bucket.take_if_there(1, 0.0) and bucket.take_if_there(1, 0.0)
    assert not bucket.take_if_there(1, 0.5)
    assert bucket.take_if_there(1, 1.0)


def test_a_reader_that_waits_as_told_takes_no_more_than_burst_plus_rate() -> None:
    """A flooder in simulated time: the reader reads a frame, waits what the meter says, and
    so on for ten seconds; what it let through is the burst plus the rate, never more."""
    meter = Meter(DEFAULT_RATE_LIMITS, now=0.0)
    now, read = 0.0, 0
    while now < 10.0:
        read += 1
        now += meter.charge(100, now)
    limits = DEFAULT_RATE_LIMITS
    assert read <= limits.frame_burst + limits.frames_per_second * 10.0 + 1
    assert read >= limits.frames_per_second * 10.0


def test_sixty_frames_over_a_tight_limit_take_half_a_second() -> None:
    meter = Meter(TIGHT, now=0.0)
    now = 0.0
    for _ in range(60):
        now += meter.charge(10, now)
    assert now == pytest.approx(0.5)  # 10 at once, then 50 at 100 a second


def test_the_meters_of_two_connections_are_independent() -> None:
    """A flooder's debt is its own: the honest connection of the same mesh reads on."""
    flooder, honest = Meter(TIGHT, now=0.0), Meter(TIGHT, now=0.0)
    assert sum(flooder.charge(100, 0.0) > 0 for _ in range(1000)) == 990
    assert [honest.charge(100, 0.0) for _ in range(10)] == [0.0] * 10


def test_ephemeral_frames_over_their_bucket_are_dropped() -> None:
    meter = Meter(TIGHT, now=0.0)
    assert sum(meter.allow_ephemeral(0.0) for _ in range(50)) == 5
    assert meter.allow_ephemeral(1.0) and not meter.allow_ephemeral(1.0)


def test_no_limits_means_no_wait_and_no_drop() -> None:
    meter = Meter(None, now=0.0)
    assert all(meter.charge(1 << 20, 0.0) == 0.0 for _ in range(10_000))
    assert all(meter.allow_ephemeral(0.0) for _ in range(10_000))


def test_every_rate_and_burst_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        RateLimits(frame_burst=0)
