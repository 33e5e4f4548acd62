"""Generators of one malicious member among honest ones. The malicious laptop runs an honest core
and table peer; only the frames it sends are rewritten (decoded, changed, encoded again) by a
frame filter on the simulated network, from a seeded moment until the healing period.

The oracle watches the honest members only: these runs report what an honest member suffered
(forks, divergences, honest members excluded, the worst stall), whether or not the malicious
member is caught."""

from __future__ import annotations

import random
from dataclasses import replace

from nerts_lan.lab.faults.run import FaultTable
from net import CoreConfig
from net.events import LogEntry, Payload
from net.testing import (
    REASON_EXCLUDED,
    REASON_LEFT,
    Accept,
    Action,
    Expulsion,
    Heartbeat,
    Message,
    Removal,
    Seen,
    ViewDecision,
    change_digest,
    decode_message,
    encode_message,
)

__all__ = ["clock_holder", "equivocate", "forged", "frozen_seen", "sparse"]

SPARSE_PERIOD = 2.9 / 3.0
"""The sparse member speaks once per this many exclusion timeouts (2.9 s with the real ones)."""

FORGERIES = ("proposal", "decision", "expulsion", "relay")

FORGED_BALLOT = 1_000_000
"""The forger's ballot number: far above any honest one."""


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
    third party left, a decision removing it, an expulsion of the receiver (each decision with
    the one vote the liar can sign, its own), or a proposal that relays an entry 'by' a third
    party."""
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
        # A real cheater signs the other payload too: a right proof, a different entry.
        lie = replace(message, payload=other, proof=_own_proof(table, bad, message, other))
        return [(0.0, encode_message(lie))]

    table.filter_frames(bad, lie)
    return table


# --- helpers ---------------------------------------------------------------------------------


def _table(name: str, seed: int, config: CoreConfig) -> tuple[FaultTable, str, random.Random]:
    """A table of 3 to 5 signing laptops (as in the real game), one of them (any, the host
    included) malicious: it signs what it sends with its own key, and with nobody else's."""
    rng = random.Random(seed)
    peers = rng.choice([3, 4, 4, 5])
    index = rng.randrange(peers)
    table = FaultTable(name, seed, config, peers, malicious=frozenset({index}), signed=True)
    return table, table.names[index], rng


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
        if target is None:
            return None
        # The receiver removed "as excluded", with the one vote the liar can sign: its own.
        gone = {dest: Removal(target, seen.get(dest, (target, 0))[1], REASON_EXCLUDED)}
        kept = {p: i for p, i in members.items() if p != dest}
        certificate = _own_vote(table, bad, core.epoch, ts, gone)
        return Expulsion(ts, inc, seen, core.epoch + 1, target, ts, kept, gone, {}, *certificate)
    if not victims:
        return None
    victim = rng.choice(victims)
    victim_ts = seen.get(victim, (members[victim], 0))[1]
    removal = {victim: Removal(members[victim], victim_ts, REASON_LEFT)}
    if kind == "decision":
        kept = {p: i for p, i in members.items() if p != victim}
        removal = {victim: replace(removal[victim], reason=REASON_EXCLUDED)}
        certificate = _own_vote(table, bad, core.epoch, ts, removal)
        return ViewDecision(ts, inc, seen, core.epoch + 1, ts, kept, removal, {}, (), *certificate)
    entries: tuple[LogEntry, ...] = ()
    if kind == "relay":
        earlier = _earlier_entry(table, victim, None, rng)
        if earlier is not None:
            # The victim's real proof of an earlier entry: the best the liar can attach.
            entries = (LogEntry(victim_ts + 1, victim, earlier.payload, earlier.proof),)
    # A phase-2 ballot of its own, far above any honest one, removing the victim.
    return Accept(ts, inc, seen, core.epoch, FORGED_BALLOT, ts, removal, {}, entries)


def _own_vote(
    table: FaultTable, bad: str, epoch: int, marker: int, removals: dict[str, Removal]
) -> tuple[int, str, dict[str, bytes]]:
    """A forged decision's ballot and certificate: the liar's own signed vote (the only one it
    can sign) for its change, under a ballot far above any honest one."""
    identity = table.sim.nodes[bad].identity
    if identity is None:
        return (FORGED_BALLOT, bad, {})
    digest = change_digest(marker, removals, {})
    return (FORGED_BALLOT, bad, {bad: identity.sign_vote(epoch, (FORGED_BALLOT, bad), digest)})


def _earlier_payload(
    table: FaultTable, author: str, unlike: Payload, rng: random.Random
) -> Payload | None:
    """A payload `author` really submitted before, other than `unlike` (None if there is none)."""
    entry = _earlier_entry(table, author, unlike, rng)
    return None if entry is None else entry.payload


def _earlier_entry(
    table: FaultTable, author: str, unlike: Payload, rng: random.Random
) -> LogEntry | None:
    """An entry `author` really submitted before, whose payload is not `unlike`."""
    submitted = table.sim.nodes[author].submitted
    choices = [entry for _, entry in submitted[-20:] if entry.payload != unlike]
    return rng.choice(choices) if choices else None


def _own_proof(table: FaultTable, bad: str, action: Action, payload: Payload) -> bytes | None:
    """The malicious member's own proof of `payload` in place of its action's (None when the
    table is unsigned): the one key it may sign with."""
    identity = table.sim.nodes[bad].identity
    if identity is None:
        return None
    return identity.sign(action.incarnation, LogEntry(action.ts, bad, payload)).proof
