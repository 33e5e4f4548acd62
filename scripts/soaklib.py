"""What the soak scripts share (``soak.py`` on 127.0.0.1, ``soak_faults.py`` in namespaces):
reading a peer process's resources from /proc, comparing the round hashes the peers printed,
and turning a host's command line into a joiner's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "HashComparison",
    "compare_hashes",
    "cpu_seconds",
    "open_descriptors",
    "resident_kib",
    "without_host_options",
]


@dataclass(frozen=True)
class HashComparison:
    """The round hashes of several peers, side by side."""

    rounds_played: int
    """The highest round any peer saw end."""
    compared: int
    """Hashes checked against another peer's hash of the same round."""
    diverged_rounds: list[int]
    """Rounds where two peers printed different hashes (a divergence: must stay empty)."""


def compare_hashes(rounds_by_peer: Mapping[str, Mapping[int, str]]) -> HashComparison:
    """Compare, round by round, the state hash each peer printed at the round's end."""
    by_round: dict[int, set[str]] = {}
    counts: dict[int, int] = {}
    for rounds in rounds_by_peer.values():
        for number, digest in rounds.items():
            by_round.setdefault(number, set()).add(digest)
            counts[number] = counts.get(number, 0) + 1
    return HashComparison(
        rounds_played=max(by_round, default=0),
        compared=sum(count - 1 for count in counts.values()),
        diverged_rounds=sorted(n for n, hashes in by_round.items() if len(hashes) > 1),
    )


def resident_kib(pid: int) -> int | None:
    """The resident memory of a live process, in KiB (None once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time of a live process, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def open_descriptors(pid: int) -> int | None:
    """How many files (sockets included) a live process holds open."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def without_host_options(command: list[str]) -> list[str]:
    """A host's command line as a join: the options only a host takes are dropped."""
    kept: list[str] = []
    skip = False
    for argument in command:
        if skip:
            skip = False
        elif argument in ("--players", "--target"):
            skip = True
        elif argument == "--private":
            continue
        else:
            kept.append(argument)
    return kept
