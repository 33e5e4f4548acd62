"""Named fault generators over the simulator, and the stable-is-final oracle that judges them.

Every generator builds, from a seed, a table of simulated laptops running the real table peer
(``nerts_lan.simgame``: the table fold, its duties, the lobby and bots) on ``net.simnet``,
schedules its faults, runs them, then a healing period of a perfect network, and returns a
`FaultResult`: forks (a stable entry undone, reordered or told differently), divergences (one
stable index, two states), whether the table ended as one (final agreement), the worst stall of
stability at a member with actions pending, and the honest members that were excluded::

    result = run_generator("partial", 839)
    result.failed, result.to_json()

``nerts-lan faults GENERATOR --seeds A-B`` runs one over a range of seeds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from net.core import CoreConfig

from .honest import asymmetric, churn, duplicates, partial, partners12, pauses, rolling, stalls
from .malicious import clock_holder, equivocate, forged, frozen_seen, sparse
from .oracle import StableOracle
from .table import FAST_TIMERS, FaultResult, FaultTable

__all__ = [
    "FAST_TIMERS",
    "GENERATORS",
    "MALICIOUS",
    "FaultResult",
    "FaultTable",
    "Generator",
    "StableOracle",
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
