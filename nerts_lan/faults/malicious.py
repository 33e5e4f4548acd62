"""Generators of one malicious member among honest ones. The malicious laptop runs an honest core
and table peer; only the frames it sends are rewritten (decoded, changed, encoded again) by a
frame filter on the simulated network, from a seeded moment until the healing period.

The oracle watches the honest members only: these runs report what an honest member suffered
(forks, divergences, honest members excluded, the worst stall), whether or not the malicious
member is caught."""

from __future__ import annotations

import random
from dataclasses import replace

from net.core import CoreConfig
from net.events import LogEntry, Payload
from net.messages import (
    REASON_LEFT,
    Accept,
    Action,
    Expulsion,
    Heartbeat,
    Message,
    Removal,
    Seen,
    ViewDecision,
    decode_message,
    encode_message,
)

from .table import FaultTable

__all__ = ["clock_holder", "equivocate", "forged", "frozen_seen", "sparse"]

SPARSE_PERIOD = 2.9 / 3.0
"""The sparse member speaks once per this many exclusion timeouts (2.9 s with the real ones)."""

FORGERIES = ("proposal", "decision", "expulsion", "relay")


def clock_holder(seed: int, config: CoreConfig) -> FaultTable:
    """An honest core behind a delay line: every frame it sends leaves 5 to 150 ms late, so its
    actions carry clocks older than the frames they race."""
    table, bad, rng = _table("clock-holder", seed, config)
    lag = rng.uniform(0.005, 0.15)
    table.filter_frames(bad, lambda dest, data: [(lag, data)])
    table.events += 1
    return table


def frozen_seen(seed: int, config: CoreConfig) -> FaultTable:
    """From a moment on, every frame reports the same `seen` vector as then."""
    table, bad, rng = _table("frozen-seen", seed, config)
    start = rng.uniform(0.5, 0.5 * table.window)
    frozen: dict[str, Seen] = {}

    def freeze(dest: str, data: bytes) -> list[tuple[float, bytes]]:
        message = decode_message(data)
        if table.sim.now < start:
            return [(0.0, data)]
        if "seen" not in frozen:
            frozen["seen"] = message.seen
            table.events += 1
        return [(0.0, encode_message(replace(message, seen=frozen["seen"])))]

    table.filter_frames(bad, freeze)
    return table


def sparse(seed: int, config: CoreConfig) -> FaultTable:
    """From a moment on, the member's frames leave in bursts, one every 2.9 s (real timers):
    it is never silent for the exclusion timeout, but every stability waits for it."""
    table, bad, rng = _table("sparse", seed, config)
    start = rng.uniform(0.5, 0.5 * table.window)
    period = SPARSE_PERIOD * table.unit

    def hold(dest: str, data: bytes) -> list[tuple[float, bytes]]:
        now = table.sim.now
        if now < start:
            return [(0.0, data)]
        release = start + period * (int((now - start) / period) + 1)
        return [(release - now, data)]

    table.filter_frames(bad, hold)
    table.events += 1
    return table


def forged(seed: int, config: CoreConfig) -> FaultTable:
    """Now and then a heartbeat becomes a forgery with the same header: a proposal claiming a
    third party left, a decision removing it, an expulsion of the receiver, or a proposal that
    relays an entry 'by' a third party."""
    table, bad, rng = _table("forged", seed, config)
    start = rng.uniform(0.5, 0.4 * table.window)
    every = rng.uniform(0.5, 1.5) * table.unit
    state = {"next": start}

    def forge(dest: str, data: bytes) -> list[tuple[float, bytes]]:
        now = table.sim.now
        if now < state["next"]:
            return [(0.0, data)]
        message = decode_message(data)
        if not isinstance(message, Heartbeat):
            return [(0.0, data)]
        forgery = _forgery(table, bad, dest, message, rng)
        if forgery is None:
            return [(0.0, data)]
        state["next"] = now + every
        table.events += 1
        return [(0.0, encode_message(forgery))]

    table.filter_frames(bad, forge)
    return table


def equivocate(seed: int, config: CoreConfig) -> FaultTable:
    """From a moment on, half of the peers get another payload (an earlier action of the member)
    than the rest for each of its actions: different entries under one key."""
    table, bad, rng = _table("equivocate", seed, config)
    start = rng.uniform(0.5, 0.4 * table.window)
    others = [p for p in table.names if p != bad]
    fooled = set(rng.sample(others, max(1, len(others) // 2)))

    def lie(dest: str, data: bytes) -> list[tuple[float, bytes]]:
        if table.sim.now < start or dest not in fooled:
            return [(0.0, data)]
        message = decode_message(data)
        if not isinstance(message, Action):
            return [(0.0, data)]
        other = _earlier_payload(table, bad, message.payload, rng)
        if other is None:
            return [(0.0, data)]
        table.events += 1
        return [(0.0, encode_message(replace(message, payload=other)))]

    table.filter_frames(bad, lie)
    return table


# --- helpers ---------------------------------------------------------------------------------


def _table(name: str, seed: int, config: CoreConfig) -> tuple[FaultTable, str, random.Random]:
    """A table of 3 to 5 laptops, one of them (any, the host included) malicious."""
    rng = random.Random(seed)
    peers = rng.choice([3, 4, 4, 5])
    bad = f"p{rng.randrange(peers):02d}"
    table = FaultTable(name, seed, config, peers, malicious=frozenset({bad}))
    return table, bad, rng


def _forgery(
    table: FaultTable, bad: str, dest: str, header: Heartbeat, rng: random.Random
) -> Message | None:
    core = table.sim.nodes[bad].core
    members = core.members
    victims = sorted(p for p in members if p not in (bad, dest))
    kind = rng.choice(FORGERIES)
    ts, inc, seen = header.ts, header.incarnation, header.seen
    if kind == "expulsion":
        target = members.get(dest)
        return None if target is None else Expulsion(ts, inc, seen, core.epoch, target)
    if not victims:
        return None
    victim = rng.choice(victims)
    victim_ts = seen.get(victim, (members[victim], 0))[1]
    removal = {victim: Removal(members[victim], victim_ts, REASON_LEFT)}
    if kind == "decision":
        kept = {p: i for p, i in members.items() if p != victim}
        return ViewDecision(ts, inc, seen, core.epoch + 1, ts, kept, removal, {}, ())
    entries: tuple[LogEntry, ...] = ()
    if kind == "relay":
        payload = _earlier_payload(table, victim, None, rng)
        if payload is not None:
            entries = (LogEntry(victim_ts + 1, victim, payload),)
    # A phase-2 ballot of its own, far above any honest one, removing the victim.
    return Accept(ts, inc, seen, core.epoch, 1_000_000, ts, removal, {}, entries)


def _earlier_payload(
    table: FaultTable, author: str, unlike: Payload, rng: random.Random
) -> Payload | None:
    """A payload `author` really submitted before, other than `unlike` (None if there is none)."""
    submitted = table.sim.nodes[author].submitted
    choices = [entry.payload for _, entry in submitted[-20:] if entry.payload != unlike]
    return rng.choice(choices) if choices else None
