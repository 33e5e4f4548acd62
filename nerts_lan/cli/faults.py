"""``nerts-lan faults GENERATOR --seeds A-B``: run a named fault generator over a range of seeds
in the simulator, with the stable-is-final oracle, one result per seed and a summary.

The parser part loads nothing of the simulator; the generators load when the command runs.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from typing import Any

from ..usage import UsageError

__all__ = ["parse_seeds", "register", "run_faults"]

MAX_SEEDS = 1_000_000


def register(subcommands: Any) -> None:
    """Add the ``faults`` subcommand to the ``nerts-lan`` parser."""
    parser = subcommands.add_parser(
        "faults",
        help="run a fault generator over seeds in the simulator and judge every run",
        description=(
            "Simulated laptops play the real table under a named fault generator, then a "
            "perfect network heals them. Per seed: forks (a stable entry undone, reordered or "
            "told differently), divergences (one stable index, two states), final agreement "
            "(one view, one state in the end), the worst stall of stability, honest members "
            "excluded. Exit status 1 when any seed forks, diverges or does not agree."
        ),
    )
    parser.add_argument("generator", help="the generator's name (an unknown one lists them)")
    parser.add_argument(
        "--seeds", default="0-9", metavar="A-B", help="seeds A to B, both included (0-9)"
    )
    parser.add_argument(
        "--real-timers",
        action="store_true",
        help="the real game's timers (suspect after 1 s, exclude after 3 s), not the fast ones",
    )
    parser.add_argument(
        "--jobs", type=int, default=1, metavar="N", help="run N seeds at once (processes) (1)"
    )
    parser.add_argument(
        "--json", action="store_true", help="one JSON object per seed, then the summary's"
    )
    parser.set_defaults(command="faults", run=run_faults)


def run_faults(args: argparse.Namespace) -> int:
    """Run the generator over the seeds; 1 if any seed failed, else 0."""
    from ..faults import GENERATORS

    if args.generator not in GENERATORS:
        known = ", ".join(GENERATORS)
        raise UsageError("faults", f"unknown generator {args.generator!r} (known: {known})")
    seeds = parse_seeds(args.seeds)
    if args.jobs < 1:
        raise UsageError("faults", f"--jobs must be at least 1, not {args.jobs}")
    summary = _Summary(args.generator, "real" if args.real_timers else "fast")
    for result in _results(args.generator, seeds, args.real_timers, args.jobs):
        summary.add(result)
        line = json.dumps(result) if args.json else _text(result)
        print(line, flush=True)
    print(json.dumps(summary.to_json()) if args.json else summary.text(), flush=True)
    return 1 if summary.failing else 0


def parse_seeds(text: str) -> range:
    """``"A-B"`` (both included) or ``"A"`` as a range; ``UsageError`` names a bad one."""
    first, dash, last = text.strip().partition("-")
    try:
        low = int(first)
        high = int(last) if dash else low
    except ValueError:
        raise UsageError(
            "faults", f"--seeds wants A-B or A (whole numbers), not {text!r}"
        ) from None
    if low < 0 or high < low:
        raise UsageError("faults", f"--seeds {text!r}: A-B with 0 <= A <= B")
    if high - low + 1 > MAX_SEEDS:
        raise UsageError("faults", f"--seeds {text!r}: at most {MAX_SEEDS:,} seeds at once")
    return range(low, high + 1)


# --- helpers ---------------------------------------------------------------------------------


def _run_one(task: tuple[str, int, bool]) -> dict[str, Any]:
    from ..faults import run_generator

    name, seed, real = task
    result = run_generator(name, seed, real)
    record = result.to_json()
    record["failed"] = result.failed
    return record


def _results(name: str, seeds: range, real: bool, jobs: int) -> Iterator[dict[str, Any]]:
    tasks = [(name, seed, real) for seed in seeds]
    if jobs == 1 or len(tasks) == 1:
        yield from map(_run_one, tasks)
        return
    import multiprocessing

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    with multiprocessing.get_context(method).Pool(min(jobs, len(tasks))) as pool:
        yield from pool.imap(_run_one, tasks)


def _text(record: dict[str, Any]) -> str:
    verdict = "FAILED" if record["failed"] else "ok"
    agreement = "yes" if record["final_agreement"] else f"no ({record['disagreement']})"
    return (
        f"{record['generator']} seed {record['seed']}: {verdict}; forks {record['forks']},"
        f" divergences {record['divergences']}, final agreement {agreement},"
        f" worst stall {record['worst_stall_s']:.2f} s,"
        f" honest members excluded {record['honest_excluded']}, faults {record['events']}"
    )


class _Summary:
    """Counts over the seeds run so far."""

    def __init__(self, generator: str, timers: str) -> None:
        self.generator = generator
        self.timers = timers
        self.seeds = 0
        self.forks: list[int] = []
        self.divergences: list[int] = []
        self.disagreements: list[int] = []
        self.failing: list[int] = []
        self.worst_stall = 0.0

    def add(self, record: dict[str, Any]) -> None:
        seed = int(record["seed"])
        self.seeds += 1
        if record["forks"]:
            self.forks.append(seed)
        if record["divergences"]:
            self.divergences.append(seed)
        if not record["final_agreement"]:
            self.disagreements.append(seed)
        if record["failed"]:
            self.failing.append(seed)
        self.worst_stall = max(self.worst_stall, float(record["worst_stall_s"]))

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": True,
            "generator": self.generator,
            "timers": self.timers,
            "seeds": self.seeds,
            "forks": len(self.forks),
            "divergences": len(self.divergences),
            "no_final_agreement": len(self.disagreements),
            "failed": len(self.failing),
            "failing_seeds": self.failing,
            "worst_stall_s": self.worst_stall,
        }

    def text(self) -> str:
        failing = ", ".join(map(str, self.failing)) or "none"
        return (
            f"{self.generator} ({self.timers} timers): {self.seeds} seeds, {len(self.forks)} with"
            f" forks, {len(self.divergences)} with divergences, {len(self.disagreements)}"
            f" without final agreement; worst stall {self.worst_stall:.2f} s;"
            f" failing seeds: {failing}"
        )
