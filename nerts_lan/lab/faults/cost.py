"""``nerts-lan bench --only faults``: what one seed of the fault sweep costs, per generator.

Issue 24's goal for the sweep is a median fast-timer seed of at most 0.1 s of CPU, so that an hour
proves something. The figures say where a seed's time goes: the simulated seconds it covers, the
frames its laptops send, and the CPU per frame (every frame is encoded, delivered, decoded and
handled by a real core and a real table). The seeds are fixed (`FIRST_SEED` on), so two trees
compare seed for seed; a process's CPU time, not the wall clock, so other jobs weigh little.
`bench_faults_compiled` measures the same seeds on the mypyc build that ``nerts-lan faults
--compiled`` runs (``nerts_lan.lab.faults.compiled``), the sweep's own cost.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from nerts_lan.lab.faults.generators import GENERATORS
from nerts_lan.lab.faults.run import FAST_TIMERS
from net import CoreConfig

__all__ = ["FIRST_SEED", "bench_faults", "bench_faults_compiled", "seed_cost"]

FIRST_SEED: Final = 70_000
"""The seeds measured (beyond every sweep's so far: none of them is special)."""

GOAL_MEDIAN_FAST_S: Final = 0.1


def bench_faults(quick: bool = False, generators: Sequence[str] | None = None) -> dict[str, Any]:
    """Per generator, the median CPU seconds of its seeds with the fast timers (6 seeds, or 2
    when `quick`) and with the real ones (2, or 1); over all of them, the median and the 90th
    percentile, and what a seed is made of (simulated seconds, frames, CPU per frame)."""
    names = list(generators or GENERATORS)
    fast_seeds, real_seeds = (2, 1) if quick else (6, 2)
    fast: dict[str, list[dict[str, float]]] = {}
    real: dict[str, list[dict[str, float]]] = {}
    for name in names:
        fast[name] = [seed_cost(name, FIRST_SEED + i) for i in range(fast_seeds)]
        real[name] = [seed_cost(name, FIRST_SEED + i, real_timers=True) for i in range(real_seeds)]
    every_fast = [cost for costs in fast.values() for cost in costs]
    every_real = [cost for costs in real.values() for cost in costs]
    return {
        "seeds_per_generator": {"fast": fast_seeds, "real": real_seeds},
        "fast_cpu_s_by_generator": {n: _median(c, "cpu_s") for n, c in fast.items()},
        "real_cpu_s_by_generator": {n: _median(c, "cpu_s") for n, c in real.items()},
        "fast_seed_cpu_s": _spread(every_fast, "cpu_s"),
        "real_seed_cpu_s": _spread(every_real, "cpu_s"),
        "fast_seed_simulated_s": _median(every_fast, "simulated_s"),
        "fast_seed_frames": _median(every_fast, "frames"),
        "fast_cpu_us_per_frame": _median(every_fast, "cpu_us_per_frame"),
        "goal": f"median fast seed <= {GOAL_MEDIAN_FAST_S} s",
    }


def bench_faults_compiled(cache: Path, quick: bool = False) -> dict[str, Any]:
    """`bench_faults` on the mypyc build of this source (``nerts-lan faults --compiled``, what
    the sweep runs), in a child process, after the build's canary; ``{"error": ...}`` when it
    cannot be built here or computes otherwise than the source."""
    from nerts_lan.lab.faults.compiled import CompileError, build_tree, canary, run_on_build

    try:
        tree = build_tree(cache)
        differences = canary(tree, list(GENERATORS))
        if differences:
            return {"error": "the build disagrees with the source: " + differences[0]}
        code = f"from nerts_lan.lab.faults.cost import bench_faults\nresult = bench_faults({quick})"
        figures: dict[str, Any] = run_on_build(tree, code)
    except CompileError as error:
        return {"error": str(error)}
    return {"canary": "one seed of each generator: the same result as the source", **figures}


def seed_cost(generator: str, seed: int, *, real_timers: bool = False) -> dict[str, float]:
    """One seed's CPU seconds, simulated seconds and frames sent (``KeyError``: no such
    generator)."""
    config = CoreConfig() if real_timers else FAST_TIMERS
    started = time.process_time()
    table = GENERATORS[generator](seed, config)
    table.run()
    cpu = time.process_time() - started
    frames = table.sim.frames_sent
    return {
        "cpu_s": cpu,
        "simulated_s": table.sim.now,
        "frames": float(frames),
        "cpu_us_per_frame": cpu / frames * 1e6 if frames else 0.0,
    }


# --- helpers ---------------------------------------------------------------------------------


def _median(costs: list[dict[str, float]], key: str) -> float:
    return round(statistics.median(cost[key] for cost in costs), 3)


def _spread(costs: list[dict[str, float]], key: str) -> dict[str, float]:
    values = sorted(cost[key] for cost in costs)
    p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
    return {
        "seeds": len(values),
        "median": round(statistics.median(values), 3),
        "p90": round(p90, 3),
        "max": round(values[-1], 3),
    }
