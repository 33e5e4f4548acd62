"""The named fault generators, honest and malicious, and how to run one over a seed::

result = run_generator("partial", 839)
result.failed, result.to_json()
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from nerts_lan.lab.faults.honest import (
    asymmetric,
    churn,
    duplicates,
    partial,
    partners12,
    pauses,
    rolling,
    stalls,
)
from nerts_lan.lab.faults.malicious import clock_holder, equivocate, forged, frozen_seen, sparse
from nerts_lan.lab.faults.run import FAST_TIMERS, FaultResult, FaultTable
from net import CoreConfig

__all__ = [
    "GENERATORS",
    "MALICIOUS",
    "Generator",
    "run_generator",
]

Generator = Callable[[int, CoreConfig], FaultTable]
"""Builds one seeded run with its faults scheduled, for the given timers."""

GENERATORS: Final[dict[str, Generator]] = {
    "partial": partial,
    "asymmetric": asymmetric,
    "stalls": stalls,
    "duplicates": duplicates,
    "pauses": pauses,
    "rolling": rolling,
    "churn": churn,
    "partners12": partners12,
    "clock-holder": clock_holder,
    "frozen-seen": frozen_seen,
    "sparse": sparse,
    "forged": forged,
    "equivocate": equivocate,
}
"""Every generator by name; the first line of each one's docstring says what it does."""

MALICIOUS: Final = frozenset({"clock-holder", "frozen-seen", "sparse", "forged", "equivocate"})
"""The generators with a malicious member."""


def run_generator(name: str, seed: int, real_timers: bool = False) -> FaultResult:
    """Run generator `name` for `seed` with the fast or the real timers (``KeyError`` names an
    unknown generator)."""
    config = CoreConfig() if real_timers else FAST_TIMERS
    return GENERATORS[name](seed, config).run()
