"""Generators of honest faults: cuts, delays, stalls, duplicates, pauses, restarts and churn.

Each takes a seed and the core's timers and returns a `FaultTable` with its faults scheduled
inside the table's window; times are multiples of the exclusion timeout (``table.unit``) unless
they model something that does not scale with it (a TCP retransmission stall)."""

from __future__ import annotations

import random
from functools import partial as later

from nerts_lan.lab.faults.run import FaultTable
from net import CoreConfig
from net.testing import FrameFilter, LinkModel

__all__ = [
    "asymmetric",
    "churn",
    "duplicates",
    "partial",
    "partners12",
    "pauses",
    "rolling",
    "stalls",
]


def partial(seed: int, config: CoreConfig) -> FaultTable:
    """Random partial cuts: 3 to 5 laptops, 1 to 4 single links cut one way or both (sometimes
    every link of one laptop, healing one by one), as the suite's partial-cut generator."""
    rng = random.Random(seed)
    peers = rng.choice([3, 3, 4, 5])
    link = LinkModel(delay_min=0.001, delay_max=rng.choice([0.004, 0.02]))
    table = FaultTable("partial", seed, config, peers, link=link)
    random_cuts(table, rng, table.names)
    return table


def asymmetric(seed: int, config: CoreConfig) -> FaultTable:
    """One-way delays (20-400 ms on some directed links, for a while) and one-way cuts."""
    rng = random.Random(seed)
    peers = rng.choice([3, 4, 4, 5])
    table = FaultTable("asymmetric", seed, config, peers)
    slow: dict[str, list[tuple[float, float, str, float]]] = {}
    for _ in range(rng.randint(1, 3)):
        src, dest = rng.sample(table.names, 2)
        start = rng.uniform(0.5, table.window * 0.5)
        end = min(table.window, start + rng.uniform(1.0, 5.0) * table.unit)
        slow.setdefault(src, []).append((start, end, dest, rng.uniform(0.02, 0.4)))
        table.events += 1
    for src, spans in slow.items():
        table.filter_frames(src, _one_way_delays(table, spans))
    for _ in range(rng.randint(0, 2)):
        src, dest = rng.sample(table.names[1:] if peers > 3 else table.names, 2)
        at = rng.uniform(0.5, table.window * 0.6)
        duration = min(rng.uniform(0.3, 3.0) * table.unit, table.window - at)
        table.at(at, later(table.sim.cut_link, src, dest, duration, directed=True))
    return table


def stalls(seed: int, config: CoreConfig) -> FaultTable:
    """Heavy jitter, 0.5-1 s retransmission stalls, single links stalled 0.5-1 s, and laptops
    silent for just below or just above the suspicion or the exclusion timeout."""
    rng = random.Random(seed)
    peers = rng.choice([3, 4, 4, 5])
    link = LinkModel(
        delay_min=0.001,
        delay_max=rng.uniform(0.02, 0.06),
        loss=rng.uniform(0.01, 0.05),
        retransmit_delay=rng.uniform(0.5, 1.0),
    )
    table = FaultTable("stalls", seed, config, peers, link=link)
    for _ in range(rng.randint(1, 3)):
        a, b = rng.sample(table.names, 2)
        at = rng.uniform(0.5, table.window * 0.8)
        table.at(at, later(table.sim.cut_link, a, b, rng.uniform(0.5, 1.0)))
    for _ in range(rng.randint(1, 2)):
        victim = rng.choice(table.names)
        timeout = rng.choice([config.suspect_timeout, config.exclude_timeout])
        silence = timeout * rng.choice([0.9, 0.97, 1.03, 1.1])
        at = rng.uniform(0.5, table.window * 0.7)
        table.at(at, later(table.sim.isolate, victim, silence))
    return table


def duplicates(seed: int, config: CoreConfig) -> FaultTable:
    """Some frames arrive twice (a resend bug): 1 in 2,000 to 1 in 100."""
    rng = random.Random(seed)
    peers = rng.choice([3, 4, 5])
    chance = rng.choice([0.0005, 0.002, 0.01])
    link = LinkModel(delay_min=0.001, delay_max=rng.choice([0.005, 0.02]), duplicate=chance)
    table = FaultTable("duplicates", seed, config, peers, link=link)
    table.events += 1
    return table


def pauses(seed: int, config: CoreConfig) -> FaultTable:
    """1 to 3 process pauses (a lid closed, a debugger) of 0.2 to 3 exclusion timeouts, possibly
    overlapping."""
    rng = random.Random(seed)
    peers = rng.choice([3, 4, 5, 6])
    table = FaultTable("pauses", seed, config, peers)
    for _ in range(rng.randint(1, 3)):
        victim = rng.choice(table.names)
        at = rng.uniform(0.5, table.window * 0.7)
        duration = rng.uniform(0.2, 3.0) * table.unit
        table.at(at, later(table.sim.pause, victim, duration))
    return table


def rolling(seed: int, config: CoreConfig) -> FaultTable:
    """Rolling restarts with overlapping downtimes: up to five laptops restarted one after
    another, each down 1.6 s, 1.5 s apart (with the real timers; scaled with them)."""
    rng = random.Random(seed)
    peers = rng.choice([4, 5, 5, 6])
    table = FaultTable("rolling", seed, config, peers)
    per_second = table.unit / CoreConfig().exclude_timeout
    order = rng.sample(table.names, min(5, peers))
    at = rng.uniform(1.0, 2.0) * table.unit
    for victim in order:
        down = 1.6 * per_second * rng.uniform(0.95, 1.05)
        table.at(at, later(table.sim.kill, victim))
        table.at(at + down, later(table.restart, victim))
        at += 1.5 * per_second * rng.uniform(0.95, 1.05)
    return table


def churn(seed: int, config: CoreConfig) -> FaultTable:
    """Laptops leave, new ones join, and those gone come back (2 to 5 such events); two of the
    founders stay throughout."""
    rng = random.Random(seed)
    peers = rng.choice([3, 4, 5])
    table = FaultTable("churn", seed, config, peers)
    movers = list(table.names[2:]) + rng.sample(table.names[:2], 1)
    newcomers = 0
    at = rng.uniform(0.5, 1.5) * table.unit
    for _ in range(rng.randint(2, 5)):
        kind = rng.choice(["leave", "crash", "join"])
        if kind == "join" or not movers:
            peer = f"q{newcomers}"
            newcomers += 1
            table.at(at, later(table.restart, peer))
        else:
            peer = movers.pop(rng.randrange(len(movers)))
            gone = table.leave if kind == "leave" else table.sim.kill
            table.at(at, later(gone, peer))
            if rng.random() < 0.7:
                back = at + rng.uniform(0.2, 3.0) * table.unit
                table.at(min(back, table.window), later(table.restart, peer))
        at += rng.uniform(0.3, 2.0) * table.unit
        if at >= table.window:
            break
    return table


def partners12(seed: int, config: CoreConfig) -> FaultTable:
    """Twelve laptops in six partnerships, with random partial cuts or a partition in two."""
    rng = random.Random(seed)
    table = FaultTable("partners12", seed, config, 12, partnership=True)
    if rng.random() < 0.5:
        random_cuts(table, rng, table.names)
    else:
        size = rng.choice([3, 4, 5, 6])
        cut_off = rng.sample(table.names[1:], size)
        rest = [p for p in table.names if p not in cut_off]
        at = rng.uniform(0.5, table.window * 0.5)
        duration = min(rng.uniform(0.3, 3.0) * table.unit, table.window - at)
        table.at(at, later(table.sim.partition, [rest, cut_off], duration))
    return table


def random_cuts(table: FaultTable, rng: random.Random, peers: list[str]) -> None:
    """1 to 4 random link cuts, one way or both, that heal before the window ends; each touches
    one of a minority of victims (sometimes every link of one, healing one by one), never the
    lowest id (as ``tests/net/test_partition.py``'s ``_random_cuts``)."""
    victims = rng.sample(peers[1:], 1 if len(peers) < 5 else 2)
    end = table.window
    for _ in range(rng.randint(1, 4)):
        at = rng.uniform(0.5, end * 0.6)
        duration = min(rng.uniform(0.1, 4.0) * table.unit, end - at)
        victim = rng.choice(victims)
        others = [p for p in peers if p != victim]
        chosen = others if rng.random() < 0.3 else [rng.choice(others)]
        for other in chosen:
            d = duration * rng.uniform(0.3, 1.0) if len(chosen) > 1 else duration
            src, dest = (victim, other) if rng.random() < 0.5 else (other, victim)
            one_way = rng.random() < 0.5
            table.at(at, later(table.sim.cut_link, src, dest, d, directed=one_way))


def _one_way_delays(table: FaultTable, spans: list[tuple[float, float, str, float]]) -> FrameFilter:
    """A filter adding `extra` seconds to frames towards `dest` between `start` and `end`."""

    def delay(dest: str, data: bytes) -> list[tuple[float, bytes]]:
        now = table.sim.now
        extra = sum(e for start, end, d, e in spans if d == dest and start <= now < end)
        return [(extra, data)]

    return delay
